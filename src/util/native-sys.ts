/**
 * System calls Node lacks, through the optional native addon
 * (native/src/sys.c): fallocate(2), lseek(SEEK_DATA) and llistxattr(2) sizes
 * for a whole listing. Without the addon (no compiler at install time)
 * `fallocate` returns 'unavailable', `seekData` and `xattrListSizes` null,
 * and callers do without.
 */
import { loadNativeAddon } from './native-addon.js';
import { constants as osConstants } from 'node:os';

interface SysBinding {
  fallocate(fd: number, mode: number, offset: number, length: number): number;
  seekData(fd: number, offset: number): number;
  xattrListSizes(dir: string, names: string[]): Int32Array;
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

function errnoCode(errno: number): string {
  const table = osConstants.errno as Record<string, number>;
  return Object.keys(table).find((k) => table[k] === errno) ?? 'EIO';
}

/** 'ok', 'unavailable' (no addon), or the errno code of the failure ('ENOSPC', 'EOPNOTSUPP', ...). */
export function fallocate(fd: number, mode: number, offset: number, length: number): string {
  const b = binding();
  if (!b) return 'unavailable';
  const rc = b.fallocate(fd, mode, offset, length);
  return rc === 0 ? 'ok' : errnoCode(-rc);
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
  return errnoCode(-r) === 'ENXIO' ? 'hole' : null;
}

/**
 * For each `dir/name`, the size of its list of extended attribute names
 * (llistxattr(2), not following symlinks; 0: it has none) or -errno; null
 * without the addon.
 */
export function xattrListSizes(dir: string, names: string[]): Int32Array | null {
  const b = binding();
  return b ? b.xattrListSizes(dir, names) : null;
}
