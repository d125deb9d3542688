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
   * fstat of an open directory after it was removed is ENOENT through any
   * libfuse2/go-fuse path-based file system (gocryptfs 2.3 too): the
   * kernel asks by path and there is none. The tester opens files only.
   */
  'open-directory': 'open of a directory (fstat after rmdir is ENOENT on FUSE, gocryptfs too)',
  /**
   * libfuse2's path API gives every name of a hard-linked file its own
   * kernel inode, so each has its own page cache: a handle kept open on
   * one name does not see writes made through another name (gocryptfs
   * shares one inode). Not fixed yet; see the issue-6 report.
   */
  'hardlink-open': 'a handle kept open on a file with several names (separate page caches per name, tscryptfs only)',
  /**
   * libfuse2 remembers an open file that was unlinked under its old
   * directory; once that directory is removed it has no path for the file
   * and answers fstat (and, without a file handle, anything else) with
   * ENOENT without asking us (gocryptfs has no such problem).
   */
  'rmdir-with-unlinked-open': 'rmdir while an unlinked file is still open (fstat then ENOENT, tscryptfs only)',
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

function openFiles(side: FsxSide): fs.Stats[] {
  const out: fs.Stats[] = [];
  for (const fd of side.slots) {
    if (fd === null) continue;
    try {
      out.push(fs.fstatSync(fd));
    } catch {
      // closed meanwhile
    }
  }
  return out;
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
    if (st?.isFile() && st.nlink > 1) return 'hardlink-open';
  }
  if (op.k === 'link') {
    const st = lstat(join(reference.root, op.from));
    if (st && openFiles(reference).some((o) => o.ino === st.ino)) return 'hardlink-open';
  }
  if (op.k === 'rmdir' && openFiles(reference).some((o) => o.nlink === 0)) return 'rmdir-with-unlinked-open';
  return null;
}
