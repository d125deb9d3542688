/**
 * A few reusable buffers for ciphertext on its way from or to the cipher
 * file. A 128 KiB FUSE read or write moves about 132 KiB of it; allocating
 * that per request was most of the garbage the mount made (and of its peak
 * RSS, since V8 frees such buffers only at its next collection). Only
 * ciphertext goes in here, and at most `keep` buffers wait in the pool, so
 * memory stays bounded however many files are open.
 */
export class BufferPool {
  private readonly free: Buffer[] = [];

  constructor(
    /** Length of every pooled buffer. */
    readonly size: number,
    private readonly keep = 4,
  ) {}

  /** A buffer of at least `n` bytes: pooled when `n` fits, else a fresh one. */
  take(n: number): Buffer {
    if (n > this.size) return Buffer.allocUnsafe(n);
    return this.free.pop() ?? Buffer.allocUnsafe(this.size);
  }

  /** Returns a buffer from `take`; the caller must not use it afterwards. */
  give(buf: Buffer): void {
    if (buf.length === this.size && this.free.length < this.keep) this.free.push(buf);
  }
}
