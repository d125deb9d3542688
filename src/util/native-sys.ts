/**
 * System calls Node lacks, through the optional native addon
 * (native/sys/sys.c): fallocate(2), lseek(SEEK_DATA), and fstatat(2) plus
 * llistxattr(2) for a whole listing. Without the addon (no compiler at
 * install time) `fallocate` returns 'unavailable', `seekData` and
 * `statListing` null, and callers do without.
 */
import { loadNativeAddon } from './native-addon.js';
import { errnoName, sameCode } from './errors.js';
import { STAT_WORDS } from './stat-words.js';

interface SysBinding {
  fallocate(fd: number, mode: number, offset: number, length: number): number;
  seekData(fd: number, offset: number): number;
  statListing(dir: string, names: string[]): ArrayBuffer;
  lock(fd: number, set: number, type: number, start: number, len: number, out: Float64Array): number;
  flock(fd: number, op: number): number;
  returnMemory(collect: boolean): number;
  limitMallocArenas(arenas: number): number;
}

/** Reserve without changing the file size. */
export const FALLOC_FL_KEEP_SIZE = 0x01;

/** Loaded once per process; null when unavailable (the file cannot change while we run). */
let cached: SysBinding | null | undefined;

function binding(): SysBinding | null {
  if (cached === undefined) cached = loadNativeAddon<SysBinding>('tscryptfs_sys.node');
  return cached;
}

/** True when fallocate can be called at all. */
export function fallocateAvailable(): boolean {
  return binding() !== null;
}

/** 'ok', 'unavailable' (no addon), or the errno code of the failure as errnoName gives it ('ENOSPC', 'ENOTSUP', ...). */
export function fallocate(fd: number, mode: number, offset: number, length: number): string {
  const b = binding();
  if (!b) return 'unavailable';
  const rc = b.fallocate(fd, mode, offset, length);
  return rc === 0 ? 'ok' : errnoName(rc);
}

/** A record lock as fcntl(2) describes one: F_RDLCK 0, F_WRLCK 1, F_UNLCK 2; length 0 reaches to the end of the file. */
export interface RecordLock {
  type: number;
  start: number;
  len: number;
  pid: number;
}

/**
 * An open file description lock on `fd` (F_OFD_SETLK with `set`, else
 * F_OFD_GETLK, which gives the lock that conflicts, type F_UNLCK for none).
 * Never waits: 'EAGAIN' when another holder conflicts. Throws ENOSYS
 * without the addon.
 */
export function ofdLock(fd: number, set: boolean, lock: Omit<RecordLock, 'pid'>): RecordLock | 'ok' | string {
  const b = binding();
  if (!b) return 'ENOSYS';
  const out = new Float64Array(4);
  const rc = b.lock(fd, set ? 1 : 0, lock.type, lock.start, lock.len, out);
  if (rc !== 0) return errnoName(rc);
  return set ? 'ok' : { type: out[0]!, start: out[1]!, len: out[2]!, pid: out[3]! };
}

/** flock(2) of `fd` ('ok' or the errno code; 'ENOSYS' without the addon). */
export function flockFd(fd: number, op: number): string {
  const b = binding();
  if (!b) return 'ENOSYS';
  const rc = b.flock(fd, op);
  return rc === 0 ? 'ok' : errnoName(rc);
}

/**
 * Where the next data at or after `offset` starts: a number; 'hole' when
 * only a hole follows (ENXIO); null when it cannot be known (no addon, the
 * filesystem has no SEEK_DATA, any other error): then read on.
 */
export function seekData(fd: number, offset: number): number | 'hole' | null {
  const b = binding();
  if (!b) return null;
  const r = b.seekData(fd, offset);
  if (r >= 0) return r;
  return sameCode(errnoName(r), 'ENXIO') ? 'hole' : null;
}

/**
 * Gives the memory V8 and malloc hold but do not use back to the system,
 * and unmaps the clean pages of read-only file mappings such as the node
 * executable's code (native/sys/memory.cc): a full collection that shrinks
 * the heap (unless `collect` is false), malloc_trim, then madvise. Tens of
 * milliseconds; for a process with nothing else to do. Returns the kB of
 * file pages unmapped; null without the addon (nothing is done).
 */
export function returnMemory(collect = true): number | null {
  const b = binding();
  if (!b) return null;
  return b.returnMemory(collect);
}

/**
 * Lets malloc keep at most `arenas` arenas (mallopt M_ARENA_MAX), for a
 * mount daemon whose libfuse threads come and go (native/sys/memory.cc;
 * src/cli/daemon.ts's mallocArenaLimit). True when set, false when
 * glibc refused, null without the addon.
 */
export function limitMallocArenas(arenas: number): boolean | null {
  const b = binding();
  return b ? b.limitMallocArenas(arenas) === 1 : null;
}

/** What statListing found for each entry of a listing. */
export interface ListingStats {
  /** STAT_WORDS words per entry (./stat-words.ts) as lstat gave them; all zero where it failed. */
  words: Uint32Array;
  /** The size of each entry's list of extended attribute names (0: none), or -errno. */
  xattrSizes: Int32Array;
}

/**
 * lstat and llistxattr of each `dir/name` in one call (fstatat on one
 * descriptor of `dir`, not a walk of the whole path per entry); null
 * without the addon.
 */
export function statListing(dir: string, names: string[]): ListingStats | null {
  const b = binding();
  if (!b) return null;
  const buf = b.statListing(dir, names);
  const n = names.length;
  return { words: new Uint32Array(buf, 0, n * STAT_WORDS), xattrSizes: new Int32Array(buf, n * STAT_WORDS * 4, n) };
}
