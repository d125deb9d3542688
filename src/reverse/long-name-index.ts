/**
 * Hashed long names → plaintext names, per plaintext directory of the
 * reverse view. Resolving `gocryptfs.longname.<hash>` means encrypting the
 * directory's long plaintext names until one hashes to it; doing that for
 * every lookup makes `ls -l` of a directory with n long names O(n²).
 *
 * Invalidation: none is needed for correctness. The mapping hash → name is
 * fixed for a given directory (the hash is of the name's encryption under
 * the directory's derived IV), so a cached answer is never a wrong name,
 * only possibly one that no longer exists — which the caller's lstat of
 * that name reports (ENOENT). A miss rescans the directory, so new entries
 * are found at once. The index is dropped whole when it holds too many
 * directories.
 */
export interface LongNameEntry {
  name: Buffer;
  /** The full encrypted name (the .name file's content). */
  full: string;
}

const MAX_DIRS = 256;

export class LongNameIndex {
  private readonly dirs = new Map<string, Map<string, LongNameEntry>>();

  /** The entry for `hashed` in the directory (`key` names it: cipher path and plaintext path); `scan` rebuilds it on a miss. */
  find(key: string, hashed: string, scan: () => Map<string, LongNameEntry>): LongNameEntry | undefined {
    const hit = this.dirs.get(key)?.get(hashed);
    if (hit) return hit;
    const fresh = scan();
    this.remember(key, fresh);
    return fresh.get(hashed);
  }

  /** Stores a directory's complete index (readdir builds one anyway). */
  remember(key: string, index: Map<string, LongNameEntry>): void {
    if (this.dirs.size >= MAX_DIRS && !this.dirs.has(key)) this.dirs.clear();
    this.dirs.set(key, index);
  }
}
