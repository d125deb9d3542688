/**
 * Write fences: two counters per open file, shared with readers on other
 * threads (the mount's native read path, native/src/reader.c). A writer
 * bumps `started` before it touches the cipher file and `finished` after,
 * with Atomics, inside the file's write lock. Such a reader goes on only when
 * no write is under way at its start and none started before its end, so it
 * never returns a mix of old and new blocks; otherwise it leaves the request
 * to the JS path, which takes the lock.
 *
 * The counters live in memory the reader owns (an ArrayBuffer it created);
 * slots are handed out per file state and reused once that file's last
 * handle is closed. Out of slots, a file simply gets none (-1): its reads
 * stay in JS.
 */
export class WriteFences {
  private readonly counters: Int32Array;
  private readonly free: number[] = [];
  private next = 0;

  /** The reader's memory the counters live in: a file's slot means something only to that reader. */
  constructor(readonly buffer: ArrayBuffer) {
    this.counters = new Int32Array(buffer);
  }

  /** A free slot, or -1 when all are taken. */
  claim(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    return this.next < this.counters.length / 2 ? this.next++ : -1;
  }

  /** Gives a slot back (its counters stay as they are: equal, as no write is under way). */
  release(slot: number): void {
    if (slot >= 0) this.free.push(slot);
  }

  begin(slot: number): void {
    Atomics.add(this.counters, 2 * slot, 1);
  }

  end(slot: number): void {
    Atomics.add(this.counters, 2 * slot + 1, 1);
  }
}
