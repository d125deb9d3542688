/**
 * Checking the content of one cipher file, read-only: the header, then
 * every block, runs of blocks at a time. Every bad block is reported (not
 * only the first), holes (all-zero cipher blocks) are skipped cheaply.
 */
import { constants as C, openSync, closeSync, readSync } from 'node:fs';
import { BlockError, HEADER_LEN, parseHeader, type ContentCipher } from '../../content/index.js';

/** Blocks read per step (about 1 MiB of cipher text). */
const RUN = 256;

export interface ContentProblem {
  kind: 'header' | 'block';
  detail: string;
}

export interface ContentCheck {
  problems: ContentProblem[];
  /** Cipher bytes read. */
  bytes: number;
}

/**
 * Opens read-only, without updating the access time where the kernel lets
 * us (O_NOATIME needs ownership or CAP_FOWNER; otherwise a plain O_RDONLY).
 */
export function openReadOnly(path: string): number {
  try {
    return openSync(path, C.O_RDONLY | C.O_NOATIME | C.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
    return openSync(path, C.O_RDONLY | C.O_NOFOLLOW);
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
 * Checks the cipher file at `path` (`size` bytes, from lstat). An empty
 * file is fine; a header-only file is an empty file with a header; a file
 * of 1..17 bytes is an incomplete header. Throws only on I/O errors.
 */
export function checkContent(path: string, size: number, cipher: ContentCipher, shouldStop: () => boolean = () => false): ContentCheck {
  const problems: ContentProblem[] = [];
  if (size === 0) return { problems, bytes: 0 };
  const fd = openReadOnly(path);
  try {
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
    for (let first = 0; ; first += RUN) {
      if (shouldStop()) break;
      const off = HEADER_LEN + first * cipherBlockSize;
      const n = readAt(fd, buf, off);
      bytes += n;
      if (n === 0) break;
      const run = buf.subarray(0, n);
      // A run of whole all-zero blocks is a hole: nothing to decrypt.
      if (n % cipherBlockSize !== 0 || !run.equals(zeros.subarray(0, n))) checkRun(cipher, first, fileId, run, problems);
      if (n < buf.length) break;
    }
    return { problems, bytes };
  } finally {
    closeSync(fd);
  }
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
