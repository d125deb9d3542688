/**
 * Open directories of the cipher tree, by plaintext path: each slot holds an
 * O_PATH descriptor of the cipher directory, its name IV and the entries
 * looked up in it, so that an operation deep in the tree starts at its
 * directory's descriptor instead of walking from the root.
 *
 * A plaintext path's cipher name is a pure function of the names on it and
 * of the directory IVs above it (Documentation/format.md §7.3, §7.7), so a
 * slot can only go stale when a directory on the path is removed or
 * renamed. The Vault does that only in rmdir and rename and then calls
 * `forgetTree`; a change made by another program (a second mount, gocryptfs
 * on the same directory) is bounded by a one-second lifetime, as in
 * gocryptfs's DirIV cache, and by none with -sharedstorage (lifetime 0). A stale slot cannot reach outside the cipher
 * directory: its descriptor still holds the directory it was opened on,
 * wherever that has moved, and names sealed with an old IV do not exist
 * under a new one, so the worst case is ENOENT until the slot expires.
 *
 * Descriptors are counted: a slot dropped (forgotten, expired, evicted)
 * while an operation still uses it is closed when that operation releases
 * it, never under it. Bounded: 1024 directories (descriptors), 16384
 * entries; past either, everything not in use is dropped.
 *
 * A mount's native fast path keeps the same facts on its own side, for the
 * requests it answers on libfuse's threads, with the same lifetime:
 * directory IVs and cipher paths by plaintext path
 * (native/fastpath/walk.c) and open directories by cipher path
 * (native/fastpath/dirs.c). It forgets them at every mkdir, rmdir and
 * rename through the mount, and the mount hands this cache the directories
 * the fast path removed (takeRemovedDirs).
 */
import type { AtCalls } from '../../util/sys-at.js';

/** How long a directory's descriptor and IV are kept, in ms (0 with -sharedstorage: see VaultCommonOptions). */
export const DIR_LIFETIME_MS = 1000;

/** Where one plaintext name lives in its cipher directory. */
export interface CipherName {
  /** Full encrypted name (before hashing); the plaintext name itself in plaintext-names mode. */
  readonly cname: string;
  /** The name on disk: cname, or its gocryptfs.longname.* hash. */
  readonly diskName: string;
  /** True when diskName is a hash with a .name file beside it. */
  readonly long: boolean;
}

export class DirSlot {
  /** Entries looked up in this directory, by plaintext name. */
  readonly names = new Map<string, CipherName>();
  private refs = 0;
  private dropped = false;

  constructor(
    /** The cipher path, for log lines and the library's cipherPath(); never used to reach the directory. */
    readonly cipherDir: string,
    /** O_PATH descriptor of the directory. */
    readonly fd: number,
    /** Its name IV. */
    readonly iv: Buffer,
    readonly expires: number,
    private readonly at: AtCalls,
    /** The root's slot is owned by the Vault and never closed here. */
    private readonly permanent = false,
  ) {}

  acquire(): this {
    this.refs++;
    return this;
  }

  release(): void {
    this.refs--;
    this.closeIfDone();
  }

  /** Not to be handed out again; closed once no operation uses it. */
  drop(): void {
    this.dropped = true;
    this.closeIfDone();
  }

  private closeIfDone(): void {
    if (this.dropped && this.refs === 0 && !this.permanent) {
      this.dropped = false; // close once
      this.refs = -1;
      void this.at.close(this.fd).catch(() => undefined);
    }
  }
}

export class DirCache {
  private readonly dirs = new Map<string, DirSlot>();
  /** Entries held by all slots, so that memory stays bounded however wide or deep the tree. */
  private names = 0;
  /** When `set` next drops the slots that have expired (see sweep). */
  private nextSweep = 0;

  constructor(
    private readonly at: AtCalls,
    private readonly ttlMs = DIR_LIFETIME_MS,
    private readonly maxDirs = 1024,
    /** Entries kept in all slots together (about 0.5 KB each). */
    private readonly maxNames = 16384,
  ) {}

  /** The live slot of a plaintext directory path ("" is the root), or undefined. */
  get(plainDir: string): DirSlot | undefined {
    const slot = this.dirs.get(plainDir);
    if (slot === undefined) return undefined;
    if (slot.expires < Date.now()) {
      this.remove(plainDir, slot);
      return undefined;
    }
    return slot;
  }

  /** Keeps a new slot for `plainDir` (replacing an older one). */
  set(plainDir: string, cipherDir: string, fd: number, iv: Buffer): DirSlot {
    const now = Date.now();
    if (now >= this.nextSweep) this.sweep(now);
    if (this.dirs.size >= this.maxDirs) this.clear();
    const old = this.dirs.get(plainDir);
    if (old !== undefined) this.remove(plainDir, old);
    const slot = new DirSlot(cipherDir, fd, iv, now + this.ttlMs, this.at);
    this.dirs.set(plainDir, slot);
    return slot;
  }

  /** Records an entry looked up in `slot`. */
  remember(slot: DirSlot, name: string, e: CipherName): void {
    if (this.names >= this.maxNames) {
      for (const s of this.dirs.values()) {
        this.names -= s.names.size;
        s.names.clear();
      }
    }
    if (!slot.names.has(name)) this.names++;
    slot.names.set(name, e);
  }

  /** Drops the directory at `cipherDir` and every directory below it. */
  forgetTree(cipherDir: string): void {
    const prefix = cipherDir.endsWith('/') ? cipherDir : cipherDir + '/';
    for (const [key, slot] of this.dirs) {
      if (slot.cipherDir === cipherDir || slot.cipherDir.startsWith(prefix)) this.remove(key, slot);
    }
  }

  /**
   * Drops the slots that have expired, at most once per lifetime: `get`
   * drops only the slot it is asked for, so after a walk through a big tree
   * (an untar) the rest would keep their entries and descriptors until the
   * bounds are hit.
   */
  private sweep(now: number): void {
    this.nextSweep = now + this.ttlMs;
    for (const [key, slot] of this.dirs) {
      if (slot.expires < now) this.remove(key, slot);
    }
  }

  /** Drops every slot. */
  clear(): void {
    for (const [key, slot] of this.dirs) this.remove(key, slot);
  }

  private remove(key: string, slot: DirSlot): void {
    this.names -= slot.names.size;
    this.dirs.delete(key);
    slot.drop();
  }

  /** Directories and entries held (for tests). */
  get size(): { dirs: number; names: number } {
    return { dirs: this.dirs.size, names: this.names };
  }
}
