/**
 * The key-independent "shape" of a cipher directory: what an observer of
 * CIPHERDIR sees apart from random bytes — cipher sizes, which blocks are
 * all-zero holes, modes of diriv and .name files, long-name hashing,
 * stored symlink target lengths, stored xattr name/value lengths — and an
 * inventory of the whole directory (orphans, leftovers).
 */
import { promises as fsp } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import * as xattr from '../../src/util/xattr-io.js';

export const HEADER_LEN = 18;
export const PLAIN_BS = 4096;
export const LONGNAME_PREFIX = 'gocryptfs.longname.';
export const DIRIV = 'gocryptfs.diriv';

export interface FileMeta {
  mode: string;
  size: number;
}

export interface CipherShape {
  /** Plaintext path. */
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  mode: string;
  /** The on-disk name is a gocryptfs.longname.* hash. */
  long: boolean;
  /** Its .name file, when long. */
  nameFile?: FileMeta;
  /** Length of the on-disk name. */
  diskNameLength: number;
  /** Files: backing size; symlinks: stored target length. */
  size?: number;
  /** Files: the 2 version bytes of the header, hex. */
  headerVersion?: string;
  /** Files: numbers of the full-size all-zero cipher blocks (holes). */
  zeroBlocks?: number[];
  /** Directories: their gocryptfs.diriv, or null when absent. */
  diriv?: FileMeta | null;
  /** Stored xattrs: [name length, value length], sorted. */
  xattrs?: [number, number][];
}

const oct = (m: number): string => (m & 0o7777).toString(8);

async function meta(p: string): Promise<FileMeta | null> {
  try {
    const st = await fsp.lstat(p);
    return { mode: oct(st.mode), size: st.size };
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null;
    throw err;
  }
}

/** Indices of full-size blocks that are entirely zero bytes. */
export function zeroBlocks(data: Buffer, overhead: number): number[] {
  const cbs = PLAIN_BS + overhead;
  const out: number[] = [];
  for (let n = 0, off = HEADER_LEN; off + cbs <= data.length; n++, off += cbs) {
    const blk = data.subarray(off, off + cbs);
    if (blk.every((b) => b === 0)) out.push(n);
  }
  return out;
}

/**
 * Shapes of the cipher objects behind the given plaintext paths.
 * `cipherPaths` maps plaintext path -> path relative to `cipherdir`.
 */
export async function cipherShapes(cipherdir: string, cipherPaths: Map<string, string>, overhead: number): Promise<CipherShape[]> {
  const out: CipherShape[] = [];
  for (const [path, rel] of [...cipherPaths].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const p = join(cipherdir, rel);
    const st = await fsp.lstat(p);
    const disk = basename(p);
    const long = disk.startsWith(LONGNAME_PREFIX);
    const s: CipherShape = {
      path,
      type: st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'symlink' : 'other',
      mode: oct(st.mode),
      long,
      diskNameLength: Buffer.byteLength(disk),
    };
    if (long) {
      const m = await meta(join(dirname(p), disk + '.name'));
      if (m) s.nameFile = m;
    }
    if (s.type === 'file') {
      const data = await fsp.readFile(p);
      s.size = data.length;
      if (data.length > 0) s.headerVersion = data.subarray(0, 2).toString('hex');
      s.zeroBlocks = zeroBlocks(data, overhead);
    } else if (s.type === 'symlink') {
      s.size = Buffer.byteLength(await fsp.readlink(p));
    } else if (s.type === 'dir') {
      s.diriv = await meta(join(p, DIRIV));
    }
    if (s.type === 'file' || s.type === 'dir') {
      const names = await xattr.listAttributes(p);
      const xs: [number, number][] = [];
      for (const n of names) xs.push([Buffer.byteLength(n), (await xattr.getAttribute(p, n)).length]);
      if (xs.length > 0) s.xattrs = xs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    }
    out.push(s);
  }
  return out;
}

export interface CipherInventory {
  files: number;
  dirs: number;
  symlinks: number;
  /** gocryptfs.longname.*.name files. */
  nameFiles: number;
  /** gocryptfs.diriv files. */
  dirivs: number;
  /** Directories lacking a diriv (relative paths; '' = root). */
  dirsWithoutDiriv: string[];
  /** .name files without their object, or hashed objects without a .name. */
  orphans: string[];
  /** gocryptfs.diriv.rmdir.* and other gocryptfs.* leftovers. */
  leftovers: string[];
  /** Modes of every diriv / .name file found, with counts. */
  dirivModes: Record<string, number>;
  nameFileModes: Record<string, number>;
  confMode: string | null;
}

/** Walks the whole cipher directory and counts what is in it. */
export async function cipherInventory(cipherdir: string): Promise<CipherInventory> {
  const inv: CipherInventory = {
    files: 0,
    dirs: 0,
    symlinks: 0,
    nameFiles: 0,
    dirivs: 0,
    dirsWithoutDiriv: [],
    orphans: [],
    leftovers: [],
    dirivModes: {},
    nameFileModes: {},
    confMode: null,
  };
  const conf = await meta(join(cipherdir, 'gocryptfs.conf'));
  inv.confMode = conf ? conf.mode : null;
  const walk = async (rel: string): Promise<void> => {
    const abs = rel === '' ? cipherdir : join(cipherdir, rel);
    const names = (await fsp.readdir(abs)).sort();
    const set = new Set(names);
    if (!set.has(DIRIV)) inv.dirsWithoutDiriv.push(rel);
    for (const n of names) {
      const r = rel === '' ? n : `${rel}/${n}`;
      const st = await fsp.lstat(join(abs, n));
      if (rel === '' && (n === 'gocryptfs.conf' || n === 'gocryptfs.conf.tmp')) continue;
      if (n === DIRIV) {
        inv.dirivs++;
        inv.dirivModes[oct(st.mode)] = (inv.dirivModes[oct(st.mode)] ?? 0) + 1;
        continue;
      }
      if (n.startsWith(LONGNAME_PREFIX) && n.endsWith('.name')) {
        inv.nameFiles++;
        inv.nameFileModes[oct(st.mode)] = (inv.nameFileModes[oct(st.mode)] ?? 0) + 1;
        if (!set.has(n.slice(0, -'.name'.length))) inv.orphans.push(r);
        continue;
      }
      if (n.startsWith(LONGNAME_PREFIX) && !set.has(n + '.name')) inv.orphans.push(r);
      else if (n.startsWith('gocryptfs.') && !n.startsWith(LONGNAME_PREFIX)) inv.leftovers.push(r);
      if (st.isDirectory()) {
        inv.dirs++;
        await walk(r);
      } else if (st.isSymbolicLink()) inv.symlinks++;
      else inv.files++;
    }
  };
  await walk('');
  return inv;
}
