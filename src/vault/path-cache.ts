/**
 * Cache of where plaintext directories live in the cipher tree, and of the
 * entries looked up in them.
 *
 * A plaintext path's cipher path is a pure function of the names on it and
 * of the directory IVs above it (FORMAT.md §5), so an entry can only go
 * stale when a directory on the path is removed or replaced, which changes
 * an IV. The Vault does that only in rmdir and rename and then calls
 * `forgetTree` with the cipher path; a change made by another program (a
 * second mount, gocryptfs on the same directory) is bounded by the same
 * one-second lifetime as the DirIV cache. A stale entry cannot point at the
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

  constructor(
    private readonly ttlMs = 1000,
    private readonly maxDirs = 4096,
    /** Entries kept per directory. */
    readonly maxNames = 4096,
  ) {}

  /** The slot of a plaintext directory path ("" is the root). */
  get(plainDir: string): DirSlot | undefined {
    const slot = this.dirs.get(plainDir);
    if (slot === undefined) return undefined;
    if (slot.expires < Date.now()) {
      this.dirs.delete(plainDir);
      return undefined;
    }
    return slot;
  }

  set(plainDir: string, cipherDir: string, iv: Buffer): DirSlot {
    if (this.dirs.size >= this.maxDirs) this.dirs.clear();
    const slot = { cipherDir, iv, names: new Map(), expires: Date.now() + this.ttlMs };
    this.dirs.set(plainDir, slot);
    return slot;
  }

  /** Records an entry looked up in `slot`. */
  remember(slot: DirSlot, name: string, e: CipherEntry): void {
    if (slot.names.size >= this.maxNames) slot.names.clear();
    slot.names.set(name, e);
  }

  /** Drops the directory at `cipherDir` and every directory below it. */
  forgetTree(cipherDir: string): void {
    const prefix = cipherDir.endsWith('/') ? cipherDir : cipherDir + '/';
    for (const [key, slot] of this.dirs) {
      if (slot.cipherDir === cipherDir || slot.cipherDir.startsWith(prefix)) this.dirs.delete(key);
    }
  }

  clear(): void {
    this.dirs.clear();
  }
}
