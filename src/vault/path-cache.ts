/**
 * Cache of where plaintext directories live in the cipher tree, and of the
 * entries looked up in them.
 *
 * A plaintext path's cipher path is a pure function of the names on it and
 * of the directory IVs above it (Documentation/format.md §7.3, §7.7), so an entry can only go
 * stale when a directory on the path is removed or replaced, which changes
 * an IV. The Vault does that only in rmdir and rename and then calls
 * `forgetTree` with the cipher path; a change made by another program (a
 * second mount, gocryptfs on the same directory) is bounded by a
 * one-second lifetime, as in gocryptfs's DirIV cache. A stale entry cannot point at the
 * wrong file: names sealed with an old IV do not exist under a new one, so
 * the worst case is ENOENT until the slot expires.
 *
 * Slots are per directory, so invalidating a subtree walks the directories,
 * not every file below them.
 */
import type { CipherEntry } from './path-mapper.js';

export interface DirSlot {
  /** Cipher path of the directory. */
  readonly cipherDir: string;
  /** Its name IV. */
  readonly iv: Buffer;
  /** Entries looked up in it, by plaintext name. */
  readonly names: Map<string, CipherEntry>;
  readonly expires: number;
}

export class PathCache {
  private readonly dirs = new Map<string, DirSlot>();
  /** Entries held by all slots, so that memory stays bounded however wide or deep the tree. */
  private names = 0;

  constructor(
    private readonly ttlMs = 1000,
    private readonly maxDirs = 4096,
    /** Entries kept in all slots together (about 0.5 KB each). */
    private readonly maxNames = 16384,
  ) {}

  /** The slot of a plaintext directory path ("" is the root). */
  get(plainDir: string): DirSlot | undefined {
    const slot = this.dirs.get(plainDir);
    if (slot === undefined) return undefined;
    if (slot.expires < Date.now()) {
      this.names -= slot.names.size;
      this.dirs.delete(plainDir);
      return undefined;
    }
    return slot;
  }

  set(plainDir: string, cipherDir: string, iv: Buffer): DirSlot {
    if (this.dirs.size >= this.maxDirs) this.clear();
    const old = this.dirs.get(plainDir);
    if (old !== undefined) this.names -= old.names.size;
    const slot = { cipherDir, iv, names: new Map(), expires: Date.now() + this.ttlMs };
    this.dirs.set(plainDir, slot);
    return slot;
  }

  /** Records an entry looked up in `slot`. */
  remember(slot: DirSlot, name: string, e: CipherEntry): void {
    if (this.names >= this.maxNames) {
      this.clear(); // `slot` is gone with the rest: nothing left to remember the entry in
      return;
    }
    if (!slot.names.has(name)) this.names++;
    slot.names.set(name, e);
  }

  /** Drops the directory at `cipherDir` and every directory below it. */
  forgetTree(cipherDir: string): void {
    const prefix = cipherDir.endsWith('/') ? cipherDir : cipherDir + '/';
    for (const [key, slot] of this.dirs) {
      if (slot.cipherDir === cipherDir || slot.cipherDir.startsWith(prefix)) {
        this.names -= slot.names.size;
        this.dirs.delete(key);
      }
    }
  }

  clear(): void {
    this.dirs.clear();
    this.names = 0;
  }

  /** Directories and entries held (for tests). */
  get size(): { dirs: number; names: number } {
    return { dirs: this.dirs.size, names: this.names };
  }
}
