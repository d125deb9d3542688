/**
 * Long names (Documentation/format.md §7.8): an encrypted name longer than LongNameMax is
 * stored as `gocryptfs.longname.<b64(sha256(cname))>`, with the full
 * encrypted name in a sibling `<hashed>.name` file (mode 0444).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { b64Encode } from './b64.js';
import { hasCode } from '../util/errors.js';
import { fsx } from '../util/fs-ops.js';
import { writeNewFile } from '../util/fd-io.js';

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

/** Reads the full encrypted name behind a hashed entry; null when the .name file is missing or implausible. */
export async function readLongName(dir: string, hashed: string): Promise<string | null> {
  let buf: Buffer;
  try {
    buf = (await fsx.readFile(join(dir, hashed + LONGNAME_SUFFIX))) as Buffer;
  } catch (err) {
    if (hasCode(err, 'ENOENT')) return null;
    throw err;
  }
  if (buf.length < 1 || buf.length > LONGNAME_FILE_MAX) return null;
  return buf.toString('latin1');
}

/**
 * Writes `<hashed>.name`. An existing file with the same content is fine
 * (it belongs to an existing link or an earlier interrupted create).
 */
export async function writeLongName(dir: string, hashed: string, cname: string): Promise<void> {
  const path = join(dir, hashed + LONGNAME_SUFFIX);
  try {
    await writeNewFile(path, Buffer.from(cname, 'latin1'), LONGNAME_FILE_MODE);
  } catch (err) {
    if (hasCode(err, 'EEXIST') && (await readLongName(dir, hashed)) === cname) return;
    throw err;
  }
}

export async function deleteLongName(dir: string, hashed: string): Promise<void> {
  await fsx.rm(join(dir, hashed + LONGNAME_SUFFIX), { force: true });
}
