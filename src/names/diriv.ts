/**
 * Per-directory name IVs (Documentation/format.md §7.7): `gocryptfs.diriv`, exactly 16
 * random non-zero bytes, mode 0444, written once when the directory is made.
 */
import { join } from 'node:path';
import { randomBytes } from '../crypto/index.js';
import { fsError } from '../util/errors.js';
import { readHead } from '../util/fs-ops.js';
import { writeNewFile } from '../util/fd-io.js';

export const DIRIV_NAME = 'gocryptfs.diriv';
export const DIRIV_LEN = 16;
export const DIRIV_MODE = 0o444;
/** The IV of every directory when there are no diriv files (deterministic names). */
export const ZERO_IV: Buffer = Buffer.alloc(DIRIV_LEN);

/** Reads a directory's IV. A missing, short, long or all-zero file is EIO. */
export async function readDirIV(cipherDir: string): Promise<Buffer> {
  const path = join(cipherDir, DIRIV_NAME);
  const iv = await readHead(path, DIRIV_LEN + 1);
  if (iv.length !== DIRIV_LEN) throw fsError('EIO', 'open', path, `diriv is ${iv.length === DIRIV_LEN + 1 ? 'too long' : `${iv.length} bytes`}`);
  if (iv.every((b) => b === 0)) throw fsError('EIO', 'open', path, 'diriv is all zero');
  return iv;
}

/** Creates the IV file of a new directory (the directory must be writable). */
export async function createDirIV(cipherDir: string): Promise<Buffer> {
  const iv = Buffer.from(randomBytes(DIRIV_LEN));
  await writeNewFile(join(cipherDir, DIRIV_NAME), iv, DIRIV_MODE, true);
  return iv;
}
