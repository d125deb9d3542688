/**
 * Cache of directory IVs by cipher directory path. A diriv never changes
 * while its directory exists, so entries are invalidated exactly when this
 * vault removes or renames a directory (`forgetTree`); a short time-to-live
 * bounds staleness when another program (gocryptfs, a second mount) changes
 * the cipher directory behind our back.
 */
export class DirIVCache {
  private readonly entries = new Map<string, { iv: Buffer; expires: number }>();

  constructor(
    private readonly ttlMs = 1000,
    private readonly maxEntries = 4096,
  ) {}

  get(cipherDir: string): Buffer | undefined {
    const e = this.entries.get(cipherDir);
    if (!e) return undefined;
    if (e.expires < Date.now()) {
      this.entries.delete(cipherDir);
      return undefined;
    }
    return e.iv;
  }

  set(cipherDir: string, iv: Buffer): void {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(cipherDir, { iv, expires: Date.now() + this.ttlMs });
  }

  /** Drops a directory and everything below it. */
  forgetTree(cipherDir: string): void {
    const prefix = cipherDir.endsWith('/') ? cipherDir : cipherDir + '/';
    for (const key of this.entries.keys()) {
      if (key === cipherDir || key.startsWith(prefix)) this.entries.delete(key);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
