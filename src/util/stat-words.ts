/**
 * A file's attributes as 22 uint32 words, many entries back to back in one
 * Uint32Array: how a listing's attributes travel from the native listing
 * call (native/src/sys.c, statListing) to the patched fuse-native binding
 * (populate_stat in its C code reads the same layout), with no JavaScript
 * object per entry. 64-bit values are (low, high) word pairs, times
 * (seconds low, seconds high, nanoseconds).
 *
 *   0 mode  1 uid  2 gid  3-4 size  5 dev  6 nlink  7-8 ino  9 rdev
 *   10 blksize  11-12 blocks  13-15 atime  16-18 mtime  19-21 ctime
 */
import type { BigIntStats } from 'node:fs';

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
