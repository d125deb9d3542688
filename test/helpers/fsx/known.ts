/**
 * Known divergences the random-operation tester steps around, each named
 * and explained, so that a run finds new problems instead of these again.
 * An operation that would run into one is skipped on both sides (and
 * counted); `--all` in `npm run fsx` turns the skipping off.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { Op } from './ops.js';
import type { FsxSide } from './side.js';
import type { MountImpl } from '../mount.js';

export const KNOWN = {
  /**
   * fstat of an open directory after it was removed is ENOENT through
   * gocryptfs 2.3 (tscryptfs answers it as ext4 does, see
   * test/mount/removed-open.test.ts). The tester opens files only.
   */
  'open-directory': 'open of a directory (fstat after rmdir is ENOENT on FUSE, gocryptfs too)',
  /** gocryptfs 2.3 answers fsync/fdatasync on an open file that was unlinked with ENOENT (only checked with --impl gocryptfs). */
  'gocryptfs-fsync-unlinked': 'fsync of an unlinked open file (ENOENT, gocryptfs 2.3 only)',
} as const;

export type KnownIssue = keyof typeof KNOWN;

function lstat(p: string): fs.Stats | null {
  try {
    return fs.lstatSync(p);
  } catch {
    return null;
  }
}

/** The known divergence `op` would run into on the reference side's current state, or null. */
export function knownIssue(op: Op, reference: FsxSide, impl: MountImpl): KnownIssue | null {
  if (op.k === 'fsync' && impl === 'gocryptfs') {
    const fd = reference.slots[op.slot];
    if (fd !== null && fd !== undefined && fs.fstatSync(fd).nlink === 0) return 'gocryptfs-fsync-unlinked';
  }
  if (op.k === 'open') {
    const st = lstat(join(reference.root, op.path));
    if (st?.isDirectory()) return 'open-directory';
  }
  return null;
}
