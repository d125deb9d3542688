/**
 * "." and ".." at the head of every listing the kernel gets, as ext4 and
 * gocryptfs (go-fuse) list them: `ls -a`, `ls -f` and getdents(2) show
 * them. The vault's own readdir leaves them out, as fs.readdir does. With
 * a packed listing they carry the inode numbers of the cipher directory
 * and of its parent on disk, as gocryptfs gives them; without one (or
 * where that lstat failed) libfuse's "unknown" inode number (d_ino 0 would
 * make glibc's readdir skip the entry). Neither goes into the binding's
 * attribute cache (flags 0), and the READDIRPLUS reply looks neither up.
 */
import type { PackedListing } from '../vault/index.js';
import { STAT_WORDS } from '../util/stat-words.js';

export function withDots(names: string[]): string[] {
  return ['.', '..', ...names];
}

/** A packed listing with "." and ".." in front, with the attributes the listing read for them. */
export function withDotsPacked(l: PackedListing): PackedListing {
  const n = l.names.length;
  const words = new Uint32Array((n + 2) * STAT_WORDS);
  words.set(l.dots.subarray(0, 2 * STAT_WORDS), 0);
  words.set(l.words.subarray(0, n * STAT_WORDS), 2 * STAT_WORDS);
  const flags = new Uint8Array(n + 2);
  flags.set(l.flags, 2);
  return { ...l, names: withDots(l.names), words, flags, diskNames: withDots(l.diskNames) };
}
