/**
 * Long names (Documentation/format.md §7.8): an encrypted name longer than LongNameMax is
 * stored as `gocryptfs.longname.<b64(sha256(cname))>`, with the full
 * encrypted name in a sibling `<hashed>.name` file (mode 0444).
 */
import { createHash } from 'node:crypto';
import { b64Encode } from './b64.js';
import { hasCode } from '../util/errors.js';
import { readHeadAt, writeNewFileAt } from '../util/fd-io.js';
import type { AtCalls } from '../util/sys-at.js';

export const LONGNAME_PREFIX = 'gocryptfs.longname.';
export const LONGNAME_SUFFIX = '.name';
export const LONGNAME_FILE_MODE = 0o444;
/** A .name file holds at most 344 bytes (255-byte name, padded b64). */
export const LONGNAME_FILE_MAX = 344;

export type LongNameKind = 'none' | 'content' | 'name-file';

/** Whether a cipher directory entry is a hashed object, its .name file, or neither. */
export function longNameKind(cname: string): LongNameKind {
  if (!cname.startsWith(LONGNAME_PREFIX)) return 'none';
  return cname.endsWith(LONGNAME_SUFFIX) ? 'name-file' : 'content';
}

export function hashLongName(cname: string, raw64: boolean): string {
  return LONGNAME_PREFIX + b64Encode(createHash('sha256').update(cname, 'ascii').digest(), raw64);
}

/** Reads the full encrypted name behind hashed entry `hashed` of directory `dirfd`; null when the .name file is missing or implausible. */
export async function readLongName(at: AtCalls, dirfd: number, hashed: string): Promise<string | null> {
  let buf: Buffer;
  try {
    buf = await readHeadAt(at, dirfd, hashed + LONGNAME_SUFFIX, LONGNAME_FILE_MAX + 1);
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return null;
    throw err;
  }
  if (buf.length < 1 || buf.length > LONGNAME_FILE_MAX) return null;
  return buf.toString('latin1');
}

/**
 * Writes `<hashed>.name` into directory `dirfd`. An existing file with the
 * same content is fine (it belongs to an existing link or an earlier
 * interrupted create).
 */
export async function writeLongName(at: AtCalls, dirfd: number, hashed: string, cname: string): Promise<void> {
  try {
    await writeNewFileAt(at, dirfd, hashed + LONGNAME_SUFFIX, Buffer.from(cname, 'latin1'), LONGNAME_FILE_MODE);
  } catch (err) {
    if (hasCode(err, 'EEXIST') && (await readLongName(at, dirfd, hashed)) === cname) return;
    throw err;
  }
}

/** Removes `<hashed>.name` from directory `dirfd`, if it is there. */
export async function deleteLongName(at: AtCalls, dirfd: number, hashed: string): Promise<void> {
  await at.unlinkat(dirfd, hashed + LONGNAME_SUFFIX, 0).catch((err: unknown) => {
    if (!hasCode(err, 'ENOENT')) throw err;
  });
}
