/**
 * A file's attributes as 22 uint32 words, many entries back to back in one
 * Uint32Array: how a listing's attributes travel from the native listing
 * call (native/sys/sys.c, statListing) to the fuse-native binding
 * (populate_stat in its C code reads the same layout), with no JavaScript
 * object per entry. 64-bit values are (low, high) word pairs, times
 * (seconds low, seconds high, nanoseconds).
 *
 *   0 mode  1 uid  2 gid  3-4 size  5 dev  6 nlink  7-8 ino  9 rdev
 *   10 blksize  11-12 blocks  13-15 atime  16-18 mtime  19-21 ctime
 */
import type { BigIntStats, Stats } from 'node:fs';

export const STAT_WORDS = 22;

const TWO32 = 0x1_0000_0000;

function put64(w: Uint32Array, at: number, v: bigint): void {
  const u = BigInt.asUintN(64, v);
  w[at] = Number(u & 0xffff_ffffn);
  w[at + 1] = Number(u >> 32n);
}

function putTime(w: Uint32Array, at: number, ns: bigint): void {
  let sec = ns / 1_000_000_000n;
  let rem = ns % 1_000_000_000n;
  if (rem < 0n) {
    rem += 1_000_000_000n;
    sec -= 1n;
  }
  put64(w, at, sec);
  w[at + 2] = Number(rem);
}

/** Entry `i` of `w` from a bigint lstat (the listing's fallback without the native addon). */
export function putStatWords(w: Uint32Array, i: number, st: BigIntStats): void {
  const at = i * STAT_WORDS;
  w[at] = Number(st.mode);
  w[at + 1] = Number(st.uid);
  w[at + 2] = Number(st.gid);
  put64(w, at + 3, st.size);
  w[at + 5] = Number(BigInt.asUintN(32, st.dev));
  w[at + 6] = Number(st.nlink);
  put64(w, at + 7, st.ino);
  w[at + 9] = Number(BigInt.asUintN(32, st.rdev));
  w[at + 10] = Number(st.blksize);
  put64(w, at + 11, st.blocks);
  putTime(w, at + 13, st.atimeNs);
  putTime(w, at + 16, st.mtimeNs);
  putTime(w, at + 19, st.ctimeNs);
}

/** Attributes as the words the binding takes: as they are, or packed from a (bigint) Stats object. */
export function wordsOf(st: Uint32Array | BigIntStats | Stats): Uint32Array {
  if (st instanceof Uint32Array) return st;
  const w = new Uint32Array(STAT_WORDS);
  const big = typeof st.mode === 'bigint' ? (st as BigIntStats) : toBig(st as Stats);
  putStatWords(w, 0, big);
  return w;
}

/** The fields putStatWords reads, of a Stats object with number fields. */
function toBig(st: Stats): BigIntStats {
  const ns = (ms: number): bigint => BigInt(Math.round(ms * 1e6));
  return {
    mode: BigInt(st.mode), uid: BigInt(st.uid), gid: BigInt(st.gid), size: BigInt(st.size), dev: BigInt(st.dev), nlink: BigInt(st.nlink),
    ino: BigInt(st.ino), rdev: BigInt(st.rdev), blksize: BigInt(st.blksize), blocks: BigInt(st.blocks),
    atimeNs: ns(st.atimeMs), mtimeNs: ns(st.mtimeMs), ctimeNs: ns(st.ctimeMs),
  } as unknown as BigIntStats;
}

/** Copies entry 0 of `src` into entry `i` of `dst`. */
export function putWords(dst: Uint32Array, i: number, src: Uint32Array): void {
  dst.set(src.subarray(0, STAT_WORDS), i * STAT_WORDS);
}

/** st_mode of entry `i` (0: no attributes). */
export function modeWord(w: Uint32Array, i: number): number {
  return w[i * STAT_WORDS]!;
}

/** st_size of entry `i` (exact below 2^53). */
export function sizeWords(w: Uint32Array, i: number): number {
  return w[i * STAT_WORDS + 3]! + w[i * STAT_WORDS + 4]! * TWO32;
}

export function setSizeWords(w: Uint32Array, i: number, size: number): void {
  w[i * STAT_WORDS + 3] = size % TWO32;
  w[i * STAT_WORDS + 4] = Math.floor(size / TWO32);
}

/** st_ino of entry `i`. */
export function inoWords(w: Uint32Array, i: number): bigint {
  return BigInt(w[i * STAT_WORDS + 7]!) | (BigInt(w[i * STAT_WORDS + 8]!) << 32n);
}

const S_IFMT = 0o170000;

/**
 * Attributes in words as the Stats or BigIntStats object node:fs would have
 * made for the same lstat (`bigint`: every number a bigint, times with
 * their nanoseconds). Node's classes cannot be built from outside, so this
 * is a look-alike with the same fields and is*() methods; birthtime, which
 * lstat(2) does not report, is the epoch.
 */
class WordStats {
  [field: string]: unknown;

  constructor(w: Uint32Array, i: number, bigint: boolean) {
    const at = i * STAT_WORDS;
    const u64 = (k: number): bigint => BigInt(w[at + k]!) | (BigInt(w[at + k + 1]!) << 32n);
    const ns = (k: number): bigint => BigInt.asIntN(64, u64(k)) * 1_000_000_000n + BigInt(w[at + k + 2]!);
    const fields: Record<string, bigint> = {
      dev: BigInt(w[at + 5]!),
      ino: u64(7),
      mode: BigInt(w[at]!),
      nlink: BigInt(w[at + 6]!),
      uid: BigInt(w[at + 1]!),
      gid: BigInt(w[at + 2]!),
      rdev: BigInt(w[at + 9]!),
      size: u64(3),
      blksize: BigInt(w[at + 10]!),
      blocks: u64(11),
    };
    for (const [k, v] of Object.entries(fields)) this[k] = bigint ? v : Number(v);
    for (const [name, k] of [['atime', 13], ['mtime', 16], ['ctime', 19], ['birthtime', -1]] as const) {
      const t = k < 0 ? 0n : ns(k);
      const ms = Number(t / 1_000_000n) + Number(t % 1_000_000n) / 1e6;
      this[`${name}Ms`] = bigint ? t / 1_000_000n : ms;
      if (bigint) this[`${name}Ns`] = t;
      this[name] = new Date(Math.floor(ms));
    }
  }

  private type(): number {
    return Number(this.mode) & S_IFMT;
  }
  isFile(): boolean {
    return this.type() === 0o100000;
  }
  isDirectory(): boolean {
    return this.type() === 0o040000;
  }
  isSymbolicLink(): boolean {
    return this.type() === 0o120000;
  }
  isFIFO(): boolean {
    return this.type() === 0o010000;
  }
  isSocket(): boolean {
    return this.type() === 0o140000;
  }
  isCharacterDevice(): boolean {
    return this.type() === 0o020000;
  }
  isBlockDevice(): boolean {
    return this.type() === 0o060000;
  }
}

/** Entry `i` of `w` as a Stats object (numbers). */
export function statsFromWords(w: Uint32Array, i: number, bigint: false): Stats;
/** Entry `i` of `w` as a BigIntStats object. */
export function statsFromWords(w: Uint32Array, i: number, bigint: true): BigIntStats;
export function statsFromWords(w: Uint32Array, i: number, bigint: boolean): Stats | BigIntStats;
export function statsFromWords(w: Uint32Array, i: number, bigint: boolean): Stats | BigIntStats {
  return new WordStats(w, i, bigint) as unknown as Stats | BigIntStats;
}
