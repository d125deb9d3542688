/**
 * The filesystem that holds the cipher directory: its statfs(2) magic
 * number, for the policies that depend on it (no preallocation on btrfs),
 * and its type, source and mount point as /proc/self/mountinfo gives them,
 * for naming it in warnings ("fuse.sshfs root@host:/vault on /mnt/remote").
 * Looked up once when a Vault opens; anything that cannot be read leaves
 * the matching field empty.
 */
import { readFileSync, realpathSync, statfsSync } from 'node:fs';
import { sep } from 'node:path';

/** statfs f_type of btrfs (linux/magic.h). */
export const BTRFS_SUPER_MAGIC = 0x9123683e;

export interface BackingStore {
  /** statfs f_type, or null when statfs failed. */
  readonly magic: number | null;
  /** The mount's filesystem type ("ext4", "fuse.sshfs", "fuseblk"), or "" when unknown. */
  readonly type: string;
  /** What is mounted ("/dev/loop3", "root@host:/vault"), or "". */
  readonly source: string;
  /** Where it is mounted, or "". */
  readonly mountPoint: string;
}

/** mountinfo escapes space, tab, newline and backslash as \ooo. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** The mountinfo entry whose mount point is the longest prefix of `path` (the last one mounted wins a tie). */
function mountOf(path: string): { type: string; source: string; mountPoint: string } | null {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return null;
  }
  let best: { type: string; source: string; mountPoint: string } | null = null;
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const dash = f.indexOf('-');
    if (f.length < 10 || dash < 6) continue;
    const mountPoint = unescape(f[4]!);
    const inside = path === mountPoint || mountPoint === '/' || path.startsWith(mountPoint + sep);
    if (inside && (best === null || mountPoint.length >= best.mountPoint.length)) {
      best = { type: unescape(f[dash + 1] ?? ''), source: unescape(f[dash + 2] ?? ''), mountPoint };
    }
  }
  return best;
}

export function describeStore(dir: string): BackingStore {
  let magic: number | null = null;
  try {
    magic = Number(statfsSync(dir).type);
  } catch {
    /* unknown: no policy depends on a guess */
  }
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    /* mountinfo by the given path */
  }
  const m = mountOf(real);
  return { magic, type: m?.type ?? '', source: m?.source ?? '', mountPoint: m?.mountPoint ?? '' };
}

/**
 * Local kernel filesystems: each gives a directory a new ctime for every
 * entry made, renamed or removed in it, which the kept-listing check of a
 * mount relies on (src/vault/listing-state.ts). FUSE and network stores
 * need not: rclone leaves a directory's times as they are when a file is
 * added, and sshfs and NFS clients show cached times.
 */
const DIRECTORY_TIMES_KEPT = new Set(['ext2', 'ext3', 'ext4', 'xfs', 'btrfs', 'tmpfs', 'ramfs', 'f2fs', 'zfs', 'bcachefs', 'jfs', 'nilfs2', 'reiserfs', 'overlay', 'exfat', 'vfat', 'msdos', 'hfsplus', 'ntfs3']);

/** Whether every change in a directory of this store changes the directory's ctime. */
export function directoryTimesFollowChanges(s: BackingStore): boolean {
  return DIRECTORY_TIMES_KEPT.has(s.type);
}

/** "fuse.sshfs root@host:/vault on /mnt/remote", for a log line. */
export function storeLabel(s: BackingStore): string {
  if (s.type === '') return s.magic === null ? 'unknown filesystem' : `filesystem 0x${s.magic.toString(16)}`;
  return `${s.type} ${s.source} on ${s.mountPoint}`.replace(/ {2,}/g, ' ').trim();
}
