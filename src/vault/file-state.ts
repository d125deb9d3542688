/**
 * What all open handles of one backing file share (keyed by device and
 * inode, so hard links share it too): one lock around read-modify-write and
 * truncate, and the cached file ID from the header. An entry lives while at
 * least one handle is open; the cached file ID is dropped whenever the file
 * is truncated to zero (the next write makes a new header).
 */
import { RwLock } from './rwlock.js';

export class FileState {
  readonly lock = new RwLock();
  /** The header's file ID, once read or written; null when unknown. */
  fileId: Buffer | null = null;
  refs = 0;
}

export class FileStateTable {
  private readonly entries = new Map<string, FileState>();

  acquire(dev: number, ino: number): FileState {
    const key = `${dev}:${ino}`;
    let st = this.entries.get(key);
    if (!st) {
      st = new FileState();
      this.entries.set(key, st);
    }
    st.refs++;
    return st;
  }

  release(dev: number, ino: number): void {
    const key = `${dev}:${ino}`;
    const st = this.entries.get(key);
    if (st && --st.refs === 0) this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}
