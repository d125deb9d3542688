/**
 * Per-directory name IVs (Documentation/format.md §7.7): `gocryptfs.diriv`, exactly 16
 * random non-zero bytes, mode 0444, written once when the directory is made.
 */
import { randomBytes } from '../crypto/random.js';
import { fsError } from '../util/errors.js';
import { readHeadAt, writeNewFileAt } from '../util/fd-io.js';
import type { AtCalls } from '../util/sys-at.js';

export const DIRIV_NAME = 'gocryptfs.diriv';
export const DIRIV_LEN = 16;
export const DIRIV_MODE = 0o444;
/** The IV of every directory when there are no diriv files (deterministic names). */
export const ZERO_IV: Buffer = Buffer.alloc(DIRIV_LEN);

/**
 * Reads the IV of the directory `dirfd` (`where` names it in messages). A
 * short, long or all-zero file is EIO; a missing one is ENOENT.
 */
export async function readDirIV(at: AtCalls, dirfd: number, where: string): Promise<Buffer> {
  const iv = await readHeadAt(at, dirfd, DIRIV_NAME, DIRIV_LEN + 1);
  const path = `${where}/${DIRIV_NAME}`;
  if (iv.length !== DIRIV_LEN) throw fsError('EIO', 'open', path, `diriv is ${iv.length === DIRIV_LEN + 1 ? 'too long' : `${iv.length} bytes`}`);
  if (iv.every((b) => b === 0)) throw fsError('EIO', 'open', path, 'diriv is all zero');
  return iv;
}

/** Creates the IV file of the new directory `dirfd` (which must be writable). */
export async function createDirIV(at: AtCalls, dirfd: number): Promise<Buffer> {
  const iv = Buffer.from(randomBytes(DIRIV_LEN));
  await writeNewFileAt(at, dirfd, DIRIV_NAME, iv, DIRIV_MODE, true);
  return iv;
}
