/**
 * Open flags: fs-style strings ('r', 'w+', 'ax', ...) or O_* numbers, and
 * the flags we use on the backing file (Documentation/format.md §6.4 needs read access
 * for read-modify-write, and we place every write ourselves, so O_APPEND
 * and O_TRUNC never reach the backing file).
 */
import { constants as C } from 'node:fs';
import { fsError } from '../util/errors.js';

const STRING_FLAGS: Record<string, number> = {
  r: C.O_RDONLY,
  rs: C.O_RDONLY | C.O_SYNC,
  sr: C.O_RDONLY | C.O_SYNC,
  'r+': C.O_RDWR,
  'rs+': C.O_RDWR | C.O_SYNC,
  'sr+': C.O_RDWR | C.O_SYNC,
  w: C.O_TRUNC | C.O_CREAT | C.O_WRONLY,
  wx: C.O_TRUNC | C.O_CREAT | C.O_WRONLY | C.O_EXCL,
  xw: C.O_TRUNC | C.O_CREAT | C.O_WRONLY | C.O_EXCL,
  'w+': C.O_TRUNC | C.O_CREAT | C.O_RDWR,
  'wx+': C.O_TRUNC | C.O_CREAT | C.O_RDWR | C.O_EXCL,
  'xw+': C.O_TRUNC | C.O_CREAT | C.O_RDWR | C.O_EXCL,
  a: C.O_APPEND | C.O_CREAT | C.O_WRONLY,
  ax: C.O_APPEND | C.O_CREAT | C.O_WRONLY | C.O_EXCL,
  xa: C.O_APPEND | C.O_CREAT | C.O_WRONLY | C.O_EXCL,
  as: C.O_APPEND | C.O_CREAT | C.O_WRONLY | C.O_SYNC,
  sa: C.O_APPEND | C.O_CREAT | C.O_WRONLY | C.O_SYNC,
  'a+': C.O_APPEND | C.O_CREAT | C.O_RDWR,
  'ax+': C.O_APPEND | C.O_CREAT | C.O_RDWR | C.O_EXCL,
  'xa+': C.O_APPEND | C.O_CREAT | C.O_RDWR | C.O_EXCL,
  'as+': C.O_APPEND | C.O_CREAT | C.O_RDWR | C.O_SYNC,
  'sa+': C.O_APPEND | C.O_CREAT | C.O_RDWR | C.O_SYNC,
};

export function parseOpenFlags(flags: string | number): number {
  if (typeof flags === 'number') return flags;
  const n = STRING_FLAGS[flags];
  if (n === undefined) throw fsError('EINVAL', 'open', undefined, `unknown open flags '${flags}'`);
  return n;
}

export function accessMode(flags: number): number {
  return flags & (C.O_RDONLY | C.O_WRONLY | C.O_RDWR);
}

export function isWritable(flags: number): boolean {
  return accessMode(flags) !== C.O_RDONLY;
}

/**
 * Flags for the backing file: read access always, no O_APPEND/O_TRUNC, and
 * no O_DIRECT: cipher blocks sit 18 bytes past a block boundary, so direct
 * I/O on the cipher file fails with EINVAL wherever it demands alignment
 * (ext4, xfs). gocryptfs drops the flag too; the kernel already sends the
 * caller's O_DIRECT I/O to us uncached.
 */
export function backingFlags(flags: number): number {
  let f = flags & ~(C.O_APPEND | C.O_TRUNC | C.O_WRONLY | C.O_RDWR | C.O_DIRECT);
  f |= isWritable(flags) ? C.O_RDWR : C.O_RDONLY;
  return f;
}
