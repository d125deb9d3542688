/**
 * Checking the content of one cipher file, read-only: the header, then
 * every block, runs of blocks at a time. Every bad block is reported (not
 * only the first). Holes are skipped with SEEK_DATA where possible, and
 * all-zero runs are recognised without decrypting.
 */
import { constants as C, readSync } from 'node:fs';
import { BlockError, HEADER_LEN, parseHeader, type ContentCipher } from '../../content/index.js';
import { hasCode } from '../../util/errors.js';
import { seekData } from '../../util/native-sys.js';
import type { AtCalls } from '../../util/sys-at.js';

/** Blocks read per step (about 1 MiB of cipher text). */
const RUN = 256;

export interface ContentProblem {
  kind: 'header' | 'block';
  detail: string;
}

export interface ContentHooks {
  /** Checked between runs of blocks: stop early when true. */
  shouldStop?: () => boolean;
  /** Called after each run with the cipher bytes read so far in this file. */
  onBytes?: (bytes: number) => void;
}

export interface ContentCheck {
  problems: ContentProblem[];
  /** Cipher bytes read. */
  bytes: number;
}

/**
 * Opens entry `name` of directory `dirfd` read-only (never through a
 * symlink), without updating the access time where the kernel lets us
 * (O_NOATIME needs ownership or CAP_FOWNER; otherwise a plain O_RDONLY).
 */
export async function openReadOnlyAt(at: AtCalls, dirfd: number, name: string): Promise<number> {
  try {
    return await at.openat(dirfd, name, C.O_RDONLY | C.O_NOATIME, 0);
  } catch (err) {
    if (!hasCode(err, 'EPERM')) throw err;
    return at.openat(dirfd, name, C.O_RDONLY, 0);
  }
}

function readAt(fd: number, buf: Buffer, pos: number): number {
  let done = 0;
  while (done < buf.length) {
    const n = readSync(fd, buf, done, buf.length - done, pos + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * Checks the open cipher file `fd` (`size` bytes, from lstat). An empty
 * file is fine; a header-only file is an empty file with a header; a file
 * of 1..17 bytes is an incomplete header. Throws only on I/O errors.
 */
export async function checkContent(fd: number, size: number, cipher: ContentCipher, hooks: ContentHooks = {}): Promise<ContentCheck> {
  const problems: ContentProblem[] = [];
  if (size === 0) return { problems, bytes: 0 };
  {
    const hdr = Buffer.alloc(HEADER_LEN);
    const got = readAt(fd, hdr, 0);
    if (got < HEADER_LEN) {
      problems.push({ kind: 'header', detail: `file is ${got} bytes, shorter than the ${HEADER_LEN}-byte header` });
      return { problems, bytes: got };
    }
    let fileId: Buffer;
    try {
      fileId = parseHeader(hdr);
    } catch (err) {
      problems.push({ kind: 'header', detail: `bad header: ${(err as Error).message}` });
      return { problems, bytes: got };
    }
    const { cipherBlockSize } = cipher.layout;
    const buf = Buffer.alloc(RUN * cipherBlockSize);
    const zeros = Buffer.alloc(buf.length);
    let bytes = HEADER_LEN;
    const lastBlock = Math.floor((size - HEADER_LEN - 1) / cipherBlockSize);
    for (let first = 0; ; first += RUN) {
      // Let signal handlers and progress timers run between runs (a file may be huge).
      if (first > 0) await new Promise((r) => setImmediate(r));
      if (hooks.shouldStop?.()) break;
      first = skipHoles(fd, first, size, lastBlock, cipherBlockSize);
      const off = HEADER_LEN + first * cipherBlockSize;
      const n = readAt(fd, buf, off);
      bytes += n;
      if (n === 0) break;
      const run = buf.subarray(0, n);
      // A run of whole all-zero blocks is a hole: nothing to decrypt.
      if (n % cipherBlockSize !== 0 || !run.equals(zeros.subarray(0, n))) checkRun(cipher, first, fileId, run, problems);
      hooks.onBytes?.(bytes);
      if (n < buf.length) break;
    }
    return { problems, bytes };
  }
}

/**
 * The first block at or after `first` that holds data (SEEK_DATA, as
 * gocryptfs -fsck does), never past the last block (which is always read:
 * a file cannot end in a partial hole). `first` itself when unknown.
 */
function skipHoles(fd: number, first: number, size: number, lastBlock: number, cipherBlockSize: number): number {
  const next = seekData(fd, HEADER_LEN + first * cipherBlockSize);
  if (next === null) return first;
  const target = next === 'hole' ? size : next;
  return Math.max(first, Math.min(Math.floor((target - HEADER_LEN) / cipherBlockSize), lastBlock));
}

/** Opens a run of blocks; after a bad block, carries on with the next one. */
function checkRun(cipher: ContentCipher, first: number, fileId: Buffer, run: Buffer, problems: ContentProblem[]): void {
  const { cipherBlockSize } = cipher.layout;
  let start = 0;
  while (start < run.length) {
    const n = first + start / cipherBlockSize;
    try {
      cipher.openBlocks(n, fileId, run.subarray(start));
      return;
    } catch (err) {
      if (!(err instanceof BlockError)) throw err;
      const at = HEADER_LEN + err.blockNo * cipherBlockSize;
      problems.push({ kind: 'block', detail: `${err.message}, cipher offset ${at}` });
      start = (err.blockNo - first + 1) * cipherBlockSize;
    }
  }
}
