/**
 * The random-operation tester's operations: what they are, how they print,
 * and how a seeded generator picks the next one from what exists now.
 *
 * An operation names everything it needs (paths, offsets, lengths, the
 * seed of the bytes written, the handle slot), so a recorded sequence
 * replays identically on fresh directories, which is what shrinking needs.
 */
import { Rng } from './rng.js';

export const BLOCK = 4096;
/** Handle slots: files kept open across operations. */
export const SLOTS = 3;

export type OpenMode = 'r' | 'r+' | 'w+' | 'a+' | 'wx';

export type Op =
  | { k: 'write'; path: string; off: number; len: number; seed: number }
  | { k: 'append'; path: string; len: number; seed: number }
  | { k: 'truncate'; path: string; size: number }
  | { k: 'read'; path: string; off: number; len: number }
  | { k: 'open'; slot: number; path: string; mode: OpenMode }
  | { k: 'close'; slot: number }
  | { k: 'hwrite'; slot: number; off: number; len: number; seed: number }
  | { k: 'hread'; slot: number; off: number; len: number }
  | { k: 'ftruncate'; slot: number; size: number }
  | { k: 'fsync'; slot: number; data: boolean }
  | { k: 'rename'; from: string; to: string }
  | { k: 'link'; from: string; to: string }
  | { k: 'unlink'; path: string }
  | { k: 'mkdir'; path: string }
  | { k: 'rmdir'; path: string }
  | { k: 'symlink'; target: string; path: string }
  /** A directory's names and types; `probe`: one getdents first, closed, as rm -r does before it reads a directory. */
  | { k: 'list'; path: string; probe: boolean };

export type OpKind = Op['k'];

/** One line per operation, in a form a person can replay by hand. */
export function describeOp(op: Op): string {
  switch (op.k) {
    case 'write':
      return `write ${op.path} off=${op.off} len=${op.len} seed=${op.seed}`;
    case 'append':
      return `append ${op.path} len=${op.len} seed=${op.seed}`;
    case 'truncate':
      return `truncate ${op.path} size=${op.size}`;
    case 'read':
      return `read ${op.path} off=${op.off} len=${op.len}`;
    case 'open':
      return `open #${op.slot} ${op.path} ${op.mode}`;
    case 'close':
      return `close #${op.slot}`;
    case 'hwrite':
      return `pwrite #${op.slot} off=${op.off} len=${op.len} seed=${op.seed}`;
    case 'hread':
      return `pread #${op.slot} off=${op.off} len=${op.len}`;
    case 'ftruncate':
      return `ftruncate #${op.slot} size=${op.size}`;
    case 'fsync':
      return `${op.data ? 'fdatasync' : 'fsync'} #${op.slot}`;
    case 'rename':
      return `rename ${op.from} ${op.to}`;
    case 'link':
      return `link ${op.from} ${op.to}`;
    case 'unlink':
      return `unlink ${op.path}`;
    case 'mkdir':
      return `mkdir ${op.path}`;
    case 'rmdir':
      return `rmdir ${op.path}`;
    case 'symlink':
      return `symlink ${op.target} ${op.path}`;
    case 'list':
      return `${op.probe ? 'probe, then list' : 'list'} ${op.path || '.'}`;
  }
}

/** What the generator knows about the tree now (from the reference side). */
export interface TreeView {
  files: string[];
  dirs: string[];
  /** Which handle slots hold an open file. */
  openSlots: boolean[];
}

/** The name space the generator draws from: a few names in a few directories. */
const DIRS = ['', 'd0', 'd1', 'd0/e0'];
const FILE_NAMES = ['f0', 'f1', 'f2', 'f3'];
const ALL_DIR_PATHS = DIRS.filter((d) => d !== '');

const join = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);

/** Offsets around block edges, sometimes far out (a hole). */
function offset(r: Rng): number {
  if (r.chance(0.05)) return r.range(8, 40) * BLOCK + r.range(-1, 1);
  const block = r.range(0, 6) * BLOCK;
  const delta = r.pick([-1, 0, 1, -17, 17, r.int(BLOCK), -r.int(BLOCK)]);
  return Math.max(0, block + delta);
}

function length(r: Rng): number {
  return r.pick([1, 2, 17, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK - 1, 2 * BLOCK + 1, r.range(1, 3 * BLOCK), r.range(1, 64)]);
}

function size(r: Rng): number {
  return r.pick([0, 1, BLOCK - 1, BLOCK, BLOCK + 1, offset(r), offset(r)]);
}

/** An existing file most of the time, otherwise any name (it may be created, or fail). */
function filePath(r: Rng, v: TreeView): string {
  if (v.files.length > 0 && r.chance(0.8)) return r.pick(v.files);
  return join(r.pick(DIRS), r.pick(FILE_NAMES));
}

function dirPath(r: Rng, v: TreeView): string {
  if (v.dirs.length > 0 && r.chance(0.6)) return r.pick(v.dirs);
  return r.pick(ALL_DIR_PATHS);
}

function anyPath(r: Rng, v: TreeView): string {
  return r.chance(0.8) ? filePath(r, v) : dirPath(r, v);
}

/** A slot holding an open file if there is one (else any slot: the operation then finds none). */
function usedSlot(r: Rng, v: TreeView): number {
  const open = v.openSlots.map((o, i) => (o ? i : -1)).filter((i) => i >= 0);
  return open.length > 0 && r.chance(0.9) ? r.pick(open) : r.int(SLOTS);
}

const WEIGHTS: Record<OpKind, number> = {
  write: 16,
  append: 5,
  truncate: 7,
  read: 5,
  open: 6,
  close: 4,
  hwrite: 12,
  hread: 5,
  ftruncate: 4,
  fsync: 2,
  rename: 5,
  link: 3,
  unlink: 4,
  mkdir: 3,
  rmdir: 3,
  symlink: 1,
  list: 4,
};

/** The next operation, chosen by `r` from what `v` says exists. */
export function nextOp(r: Rng, v: TreeView): Op {
  const k = r.weighted(WEIGHTS);
  const seed = r.int(2 ** 31);
  switch (k) {
    case 'write':
      return { k, path: filePath(r, v), off: offset(r), len: length(r), seed };
    case 'append':
      return { k, path: filePath(r, v), len: length(r), seed };
    case 'truncate':
      return { k, path: filePath(r, v), size: size(r) };
    case 'read':
      return { k, path: filePath(r, v), off: offset(r), len: length(r) };
    case 'open':
      return { k, slot: r.int(SLOTS), path: filePath(r, v), mode: r.pick(['r', 'r+', 'r+', 'w+', 'a+', 'wx'] as const) };
    case 'close':
      return { k, slot: usedSlot(r, v) };
    case 'hwrite':
      return { k, slot: usedSlot(r, v), off: offset(r), len: length(r), seed };
    case 'hread':
      return { k, slot: usedSlot(r, v), off: offset(r), len: length(r) };
    case 'ftruncate':
      return { k, slot: usedSlot(r, v), size: size(r) };
    case 'fsync':
      return { k, slot: usedSlot(r, v), data: r.chance(0.5) };
    case 'rename':
      return { k, from: anyPath(r, v), to: r.chance(0.5) ? anyPath(r, v) : join(r.pick(DIRS), r.pick([...FILE_NAMES, 'd0', 'd1'])) };
    case 'link':
      return { k, from: filePath(r, v), to: join(r.pick(DIRS), r.pick(FILE_NAMES)) };
    case 'unlink':
      return { k, path: anyPath(r, v) };
    case 'mkdir':
      return { k, path: r.chance(0.8) ? r.pick(ALL_DIR_PATHS) : join(r.pick(DIRS), r.pick(FILE_NAMES)) };
    case 'rmdir':
      return { k, path: dirPath(r, v) };
    case 'symlink':
      return { k, target: r.pick(['f0', '../f1', '/abs/target', 'd0/e0/f2']), path: join(r.pick(DIRS), r.pick(FILE_NAMES)) };
    case 'list':
      return { k, path: r.chance(0.8) ? r.pick(DIRS) : dirPath(r, v), probe: r.chance(0.5) };
  }
}
