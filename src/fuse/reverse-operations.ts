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
import { CallCounter, makeAnswer, statfsReply } from './answer.js';
import type { FuseCallback } from './fuse-native.js';
import { HandleTable } from './handle-table.js';
import type { FuseOperations } from './operations.js';
import { wordsOf } from '../util/stat-words.js';
import { withDots } from './dot-entries.js';

export function makeReverseOperations(view: ReverseView, log: Logger, forceOwner?: { uid: number; gid: number }): FuseOperations {
  /** The attributes as the binding takes them; with -force_owner, that owner. */
  const shown = (st: BigIntStats): Uint32Array => {
    const w = wordsOf(st);
    if (forceOwner) [w[1], w[2]] = [forceOwner.uid, forceOwner.gid];
    return w;
  };
  const handles = new HandleTable<ReverseFile>();
  const calls = new CallCounter();
  const answer = makeAnswer(calls, log);
  const handle = (fh: number): ReverseFile => handles.need(fh);

  const ops = {
    init(cb: FuseCallback): void {
      cb(0);
    },
    statfs(path: string, cb: FuseCallback): void {
      answer('statfs', path, cb, () => view.statfs(), (s) => [statfsReply(s)]);
    },
    getattr(path: string, cb: FuseCallback): void {
      answer('getattr', path, cb, () => view.stat(path), (st: BigIntStats) => [shown(st)]);
    },
    fgetattr(path: string, _fh: number, cb: FuseCallback): void {
      answer('fgetattr', path, cb, () => view.stat(path), (st: BigIntStats) => [shown(st)]);
    },
    access(path: string, mode: number, cb: FuseCallback): void {
      answer('access', path, cb, () => view.access(path, mode));
    },
    readdir(path: string, cb: FuseCallback): void {
      answer('readdir', path, cb, () => view.readdir(path), (names) => [withDots(names)]);
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
      calls.arrived('read');
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

  return { ops: ops as unknown as FuseOperations['ops'], handles, openFiles: () => handles.size, lastActivity: () => calls.last, calls: () => calls.snapshot(), useAttrCache: () => undefined, listsAttributes: false, dropsSetIdBits: false };
}
