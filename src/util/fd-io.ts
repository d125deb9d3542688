/**
 * Positional I/O on raw file descriptors, complete (no short reads/writes
 * left to the caller), in the style src/util/fs-ops.ts chose: direct system
 * calls, or the libuv thread pool. fsync and fdatasync always go to the
 * thread pool: they wait for the disk.
 */
import * as fs from 'node:fs';
import { promisify } from 'node:util';
import { DIRECT_IO } from './fs-ops.js';
import type { AtCalls } from './sys-at.js';

const readAsync = promisify(fs.read);
const writeAsync = promisify(fs.write);
const read = async (fd: number, buf: Buffer, off: number, len: number, pos: number): Promise<number> =>
  DIRECT_IO ? fs.readSync(fd, buf, off, len, pos) : (await readAsync(fd, buf, off, len, pos)).bytesRead;
const write = async (fd: number, data: Uint8Array, off: number, len: number, pos: number): Promise<number> =>
  DIRECT_IO ? fs.writeSync(fd, data, off, len, pos) : (await writeAsync(fd, data, off, len, pos)).bytesWritten;

const fstatAsync = promisify(fs.fstat);
export const fstat = async (fd: number): Promise<fs.Stats> => (DIRECT_IO ? fs.fstatSync(fd) : fstatAsync(fd));
export const fstatBig = (fd: number): Promise<fs.BigIntStats> =>
  DIRECT_IO
    ? Promise.resolve().then(() => fs.fstatSync(fd, { bigint: true }))
    : new Promise((resolve, reject) => fs.fstat(fd, { bigint: true }, (err, st) => (err ? reject(err) : resolve(st))));
const ftruncateAsync = promisify(fs.ftruncate);
export const ftruncate = async (fd: number, len: number): Promise<void> => (DIRECT_IO ? fs.ftruncateSync(fd, len) : ftruncateAsync(fd, len));
const closeAsync = promisify(fs.close);
export const closeFd = async (fd: number): Promise<void> => (DIRECT_IO ? fs.closeSync(fd) : closeAsync(fd));
const openAsync = promisify(fs.open);
export const openFd = async (path: string, flags: number, mode?: number): Promise<number> =>
  DIRECT_IO ? fs.openSync(path, flags, mode) : openAsync(path, flags, mode);
export const fsync = promisify(fs.fsync);
export const fchmod = promisify(fs.fchmod);
export const fchown = promisify(fs.fchown);
export const fdatasync = promisify(fs.fdatasync);

/**
 * Reads up to `length` bytes at `position`; fewer only at end of file. Into
 * `into` (at least `length` bytes) when given, else into a new buffer.
 */
export async function preadFull(fd: number, length: number, position: number, into?: Buffer): Promise<Buffer> {
  const buf = into ?? Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = await read(fd, buf, done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done === buf.length ? buf : buf.subarray(0, done);
}

export async function pwriteFull(fd: number, data: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) done += await write(fd, data, done, data.length - done, position + done);
}

/**
 * Creates entry `name` of directory `dirfd` (O_EXCL: EEXIST if it exists)
 * holding `data`, with mode `mode`, flushed with fsync when `sync` is set.
 * A file left incomplete by a failed write (ENOSPC) is removed again, as
 * gocryptfs does for a diriv.
 */
export async function writeNewFileAt(at: AtCalls, dirfd: number, name: string, data: Uint8Array, mode: number, sync = false): Promise<void> {
  const fd = await at.openat(dirfd, name, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, mode);
  try {
    await pwriteFull(fd, data, 0);
    if (sync) await fsync(fd);
  } catch (err) {
    await closeFd(fd).catch(() => undefined);
    await at.unlinkat(dirfd, name, 0).catch(() => undefined);
    throw err;
  }
  await closeFd(fd);
}

/** The first `n` bytes of entry `name` of directory `dirfd` (fewer if it is shorter). */
export async function readHeadAt(at: AtCalls, dirfd: number, name: string, n: number): Promise<Buffer> {
  const fd = await at.openat(dirfd, name, fs.constants.O_RDONLY, 0);
  try {
    return await preadFull(fd, n, 0);
  } finally {
    await closeFd(fd);
  }
}
