/**
 * fuse-native callbacks → ReverseView calls, for `-reverse` mounts: only
 * the read side exists (the mount is read-only, as gocryptfs's reverse
 * mounts always are; the kernel refuses writes with EROFS before they
 * reach us).
 */
import { constants as C, type BigIntStats } from 'node:fs';
import type { ReverseView, ReverseFile } from '../reverse/index.js';
import type { Logger } from '../util/logger.js';
import { toErrno } from './errno.js';
import type { FuseCallback } from './fuse-native.js';
import { HandleTable } from './handle-table.js';
import type { FuseOperations } from './operations.js';

export function makeReverseOperations(view: ReverseView, log: Logger): FuseOperations {
  const handles = new HandleTable<ReverseFile>();
  let last = Date.now();
  const calls: Record<string, number> = {};

  const answer = <T>(op: string, path: string, cb: FuseCallback, work: () => Promise<T>, reply?: (v: T) => unknown[]): void => {
    last = Date.now();
    calls[op] = (calls[op] ?? 0) + 1;
    work().then(
      (v) => cb(0, ...(reply ? reply(v) : [])),
      (err: unknown) => cb(toErrno(err, op, path, log)),
    );
  };
  const handle = (fh: number): ReverseFile => {
    const f = handles.get(fh);
    if (!f) throw Object.assign(new Error('bad file handle'), { code: 'EBADF' });
    return f;
  };

  const ops = {
    init(cb: FuseCallback): void {
      cb(0);
    },
    statfs(path: string, cb: FuseCallback): void {
      answer('statfs', path, cb, () => view.statfs(), (s) => [
        { bsize: s.bsize, frsize: s.bsize, blocks: s.blocks, bfree: s.bfree, bavail: s.bavail, files: s.files, ffree: s.ffree, favail: s.ffree, fsid: 0, flag: 0, namemax: 255 },
      ]);
    },
    getattr(path: string, cb: FuseCallback): void {
      answer('getattr', path, cb, () => view.stat(path), (st: BigIntStats) => [st]);
    },
    fgetattr(path: string, _fh: number, cb: FuseCallback): void {
      answer('fgetattr', path, cb, () => view.stat(path), (st: BigIntStats) => [st]);
    },
    access(path: string, mode: number, cb: FuseCallback): void {
      answer('access', path, cb, () => view.access(path, mode));
    },
    readdir(path: string, cb: FuseCallback): void {
      answer('readdir', path, cb, () => view.readdir(path), (names) => [names]);
    },
    opendir(path: string, _flags: number, cb: FuseCallback): void {
      answer('opendir', path, cb, async () => {
        const st = await view.stat(path);
        if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      }, () => [0]);
    },
    releasedir(_path: string, _fh: number, cb: FuseCallback): void {
      cb(0);
    },
    readlink(path: string, cb: FuseCallback): void {
      answer('readlink', path, cb, () => view.readlink(path), (t) => [t]);
    },
    open(path: string, flags: number, cb: FuseCallback): void {
      answer('open', path, cb, async () => handles.add(await view.open(path, flags & ~(C.O_APPEND | C.O_EXCL))), (fh) => [fh]);
    },
    read(path: string, fh: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void): void {
      last = Date.now();
      calls.read = (calls.read ?? 0) + 1;
      (async () => handle(fh).read(len, pos))().then(
        (data) => cb(data.copy(buf, 0, 0, Math.min(data.length, len))),
        (err: unknown) => cb(toErrno(err, 'read', path, log)),
      );
    },
    flush(path: string, fh: number, cb: FuseCallback): void {
      answer('flush', path, cb, async () => void handle(fh));
    },
    release(path: string, fh: number, cb: FuseCallback): void {
      answer('release', path, cb, async () => {
        await handles.remove(fh)?.close();
      });
    },
  };

  return { ops: ops as unknown as FuseOperations['ops'], handles, lastActivity: () => last, calls: () => ({ ...calls }) };
}
