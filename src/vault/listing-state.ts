/**
 * When a mount's kernel may keep a directory's listing (kept listings,
 * Documentation/fuse-native.md): the binding compares the cipher
 * directory's attributes at the next opendir with those the listing was
 * read under, and lets the kernel keep the listing only if nothing changed.
 * That holds only if any change made after the listing was read gives the
 * directory another ctime. A file system stamps a change with its clock's
 * coarse time (one tick, 1-10 ms, behind the real time) cut to its own
 * granularity (1 ns on ext4, XFS, Btrfs and tmpfs, 10 ms on exFAT, 1-2 s
 * on FAT, HFS+ and ext4 with small inodes). A change right after the read,
 * in the same tick or granule as the last one, would keep the old ctime.
 * So a listing is offered for keeping only when its directory's ctime lay
 * further in the past than that: 20 ms, or 2 s where the ctime and mtime
 * have no sub-second part (a coarse file system, as far as one can tell).
 * Native twin, for listings the mount's fast path reads: keepable in
 * native/fastpath/list.c.
 */
import { STAT_WORDS } from '../util/stat-words.js';

/** How far in the past a directory's ctime must lie, in ms, on a file system with sub-second times. */
export const KEEP_MARGIN_MS = 20;
/** The same where the times have whole seconds only. */
export const COARSE_KEEP_MARGIN_MS = 2000;

const TWO32 = 0x1_0000_0000;

/**
 * A directory's attributes (STAT_WORDS words, read before its names), when
 * a listing read under them may be kept at `nowMs` (Date.now()); else null.
 */
export function keepableState(words: Uint32Array, nowMs: number): Uint32Array | null {
  if (words.length < STAT_WORDS) return null;
  const ctimeMs = (words[19]! + words[20]! * TWO32) * 1000 + words[21]! / 1e6;
  const coarse = words[21] === 0 && words[18] === 0;
  return nowMs - ctimeMs > (coarse ? COARSE_KEEP_MARGIN_MS : KEEP_MARGIN_MS) ? words : null;
}
