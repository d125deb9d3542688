/**
 * What the forward and reverse operation tables share: counting the calls
 * that reach JS (for -idle and TSCRYPTFS_OPSTATS), answering a fuse-native
 * callback from a promise, and the statfs reply.
 */
import type { StatsFs } from 'node:fs';
import type { Logger } from '../util/logger.js';
import { toErrno } from './errno.js';
import type { FuseCallback } from './fuse-native.js';

/** Calls that reached JS: when the last one came, and how many of each. */
export class CallCounter {
  last = Date.now();
  private readonly counts: Record<string, number> = {};

  arrived(op: string): void {
    this.last = Date.now();
    this.counts[op] = (this.counts[op] ?? 0) + 1;
  }

  snapshot(): Record<string, number> {
    return { ...this.counts };
  }
}

export type Answer = <T>(op: string, path: string, cb: FuseCallback, work: () => Promise<T>, reply?: (v: T) => unknown[]) => void;

/**
 * Runs `work` and answers the callback: 0 (plus a value) on success, -errno
 * on failure. `before` runs first, for every request (the native rmdir's
 * news for the vault: native-fast-path.ts, syncRemovedDirs).
 */
export function makeAnswer(calls: CallCounter, log: Logger, before?: () => void): Answer {
  return (op, path, cb, work, reply) => {
    calls.arrived(op);
    before?.();
    work().then(
      (v) => cb(0, ...(reply ? reply(v) : [])),
      (err: unknown) => cb(toErrno(err, op, path, log)),
    );
  };
}

/** statfs(2) as fuse-native wants it back. */
export function statfsReply(s: StatsFs): Record<string, number> {
  return { bsize: s.bsize, frsize: s.bsize, blocks: s.blocks, bfree: s.bfree, bavail: s.bavail, files: s.files, ffree: s.ffree, favail: s.ffree, fsid: 0, flag: 0, namemax: 255 };
}
