/** Positional I/O on raw file descriptors, complete (no short reads/writes left to the caller). */
import * as fs from 'node:fs';
import { promisify } from 'node:util';

const read = promisify(fs.read);
const write = promisify(fs.write);
export const fstat = promisify(fs.fstat);
export const fstatBig = (fd: number): Promise<fs.BigIntStats> =>
  new Promise((resolve, reject) => fs.fstat(fd, { bigint: true }, (err, st) => (err ? reject(err) : resolve(st))));
export const ftruncate = promisify(fs.ftruncate);
export const fsync = promisify(fs.fsync);
export const fdatasync = promisify(fs.fdatasync);
export const closeFd = promisify(fs.close);
export const openFd = promisify(fs.open);

/** Reads up to `length` bytes at `position`; fewer only at end of file. */
export async function preadFull(fd: number, length: number, position: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await read(fd, buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done === length ? buf : buf.subarray(0, done);
}

export async function pwriteFull(fd: number, data: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await write(fd, data, done, data.length - done, position + done);
    done += bytesWritten;
  }
}
