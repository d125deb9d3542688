/**
 * What all open handles of one backing file share (keyed by device and
 * inode, so hard links share it too): one lock around read-modify-write and
 * truncate, the cached file ID from the header, and the file's write fence
 * slot when a native read and write path is attached (./write-fences.ts):
 * then JS also holds the slot's owner word whenever it reads or changes the
 * blocks, so that a native writer never runs beside it. An entry
 * lives while at least one handle is open; the cached file ID is dropped
 * whenever the file is truncated to zero (the next write makes a new header).
 */
import { closeSync } from 'node:fs';
import { RwLock } from './rwlock.js';
import type { FileKey, WriteFences } from './write-fences.js';

export class FileState {
  readonly lock = new RwLock();
  /** The header's file ID, once read or written; null when unknown. */
  fileId: Buffer | null = null;
  refs = 0;
  /**
   * Record lock owner → the open file description of the cipher file its
   * locks are taken on, and the handle they last came through (see
   * VaultFile.recordLock).
   */
  readonly lockOwners = new Map<string, { fd: number; via: object }>();

  /** This file's write fence slot; -1 for none. */
  readonly fence: number;

  constructor(
    private readonly fences: WriteFences | null = null,
    /** The backing file's device and inode, by which a native reader hands out its slot. */
    private readonly file: FileKey,
  ) {
    this.fence = fences ? fences.claim(file) : -1;
  }

  /** This file's slot in the counters of `buffer`; -1 when it has none there (no fences, or another reader's). */
  fenceIn(buffer: ArrayBuffer): number {
    return this.fences?.buffer === buffer ? this.fence : -1;
  }

  /** Runs `fn`, which reads the cipher file's blocks or size, under a read lock (and the owner word). */
  shared<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.read(() => this.owning(fn, false));
  }

  /** Runs `fn`, which changes the cipher file, under the write lock (and the owner word) and inside the write fence. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.lock.write(() => this.owning(fn, true));
  }

  /** Runs `fn` holding the file's owner word, when it has a fence slot; `change`: inside the write fence too. */
  private async owning<T>(fn: () => Promise<T>, change: boolean): Promise<T> {
    const fences = this.fences;
    const slot = this.fence;
    if (!fences || slot < 0) return fn();
    fences.hold(slot);
    if (change) fences.begin(slot);
    try {
      return await fn();
    } finally {
      if (change) fences.end(slot);
      fences.unhold(slot);
    }
  }

  /** @internal The table calls this when the last handle is gone. */
  dispose(): void {
    this.fences?.release(this.fence, this.file);
    // The last handle is closed: every owner's locks go with their descriptions, as at a process's last close.
    for (const { fd } of this.lockOwners.values()) closeSync(fd);
    this.lockOwners.clear();
  }
}

export class FileStateTable {
  private readonly entries = new Map<string, FileState>();
  private fences: WriteFences | null = null;

  /** Fences for the file states made from now on. */
  useFences(fences: WriteFences): void {
    this.fences = fences;
  }

  acquire(dev: number, ino: number | bigint): FileState {
    const key = `${dev}:${ino}`;
    let st = this.entries.get(key);
    if (!st) {
      st = new FileState(this.fences, { dev, ino });
      this.entries.set(key, st);
    }
    st.refs++;
    return st;
  }

  release(dev: number, ino: number | bigint): void {
    const key = `${dev}:${ino}`;
    const st = this.entries.get(key);
    if (st && --st.refs === 0) {
      this.entries.delete(key);
      st.dispose();
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
