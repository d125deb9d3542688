/**
 * Write fences and the owner word: per open file, counters shared with the
 * mount's native read and write paths on libfuse's threads
 * (native/fastpath/fences.h, reader.c, writer.c), in memory the native
 * reader owns (an ArrayBuffer it created); four int32 per file slot:
 *
 *   started, finished  A writer bumps `started` before it touches the
 *                      cipher file and `finished` after. A native read goes
 *                      on only when no write is under way at its start and
 *                      none started before its end, so it never returns a
 *                      mix of old and new blocks; otherwise it leaves the
 *                      request to JS.
 *   owner              Who may touch the file's blocks: 0 nobody, -1 a
 *                      native writer, n > 0 JS, n times over (its reads run
 *                      together). A native writer takes it from 0 with one
 *                      compare-and-swap, or leaves the write to JS; JS waits
 *                      for a native writer, which holds it for one write
 *                      and never waits for anything.
 *
 * Slots are handed out per file state and reused once that file's last
 * handle is closed. Out of slots, a file simply gets none (-1): its reads
 * and writes stay in JS. A native reader that opens files itself
 * (native/fastpath/open.c) hands the slots out by device and inode, so that
 * its handles and JS's of one file share one: it is then the `slots` given.
 */
const STRIDE = 4;
const STARTED = 0;
const FINISHED = 1;
const OWNER = 2;

/** Spins on a native writer's owner word before each short sleep. */
const SPINS = 200;

/** A backing file, as its stat words give it. */
export interface FileKey {
  dev: number;
  ino: number | bigint;
}

/** Who hands out the slots, by file, when it is not this class. */
export interface FenceSlots {
  /** The file's slot, counted once more; -1 when none is free. */
  claim(file: FileKey): number;
  /** Counts the file's slot once less. */
  release(file: FileKey): void;
}

export class WriteFences {
  private readonly counters: Int32Array;
  private readonly free: number[] = [];
  private next = 0;
  /** Something to sleep on (Atomics.wait with a timeout): a native writer cannot wake JS, so JS looks again. */
  private readonly nap = new Int32Array(new SharedArrayBuffer(4));

  /** The reader's memory the counters live in: a file's slot means something only to that reader. */
  constructor(
    readonly buffer: ArrayBuffer | SharedArrayBuffer,
    private readonly slots: FenceSlots | null = null,
  ) {
    this.counters = new Int32Array(buffer);
  }

  /** A free slot for `file`, or -1 when all are taken (or when `slots` hands them out and no file is named). */
  claim(file?: FileKey): number {
    if (this.slots) return file ? this.slots.claim(file) : -1;
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    return this.next < this.counters.length / STRIDE ? this.next++ : -1;
  }

  /** Gives `file`'s slot back (its counters stay as they are: equal, as no write is under way, and the owner word 0). */
  release(slot: number, file?: FileKey): void {
    if (slot < 0) return;
    if (this.slots && file) this.slots.release(file);
    else this.free.push(slot);
  }

  begin(slot: number): void {
    Atomics.add(this.counters, STRIDE * slot + STARTED, 1);
  }

  end(slot: number): void {
    Atomics.add(this.counters, STRIDE * slot + FINISHED, 1);
  }

  /** JS takes the file once more, waiting while a native writer has it. */
  hold(slot: number): void {
    const i = STRIDE * slot + OWNER;
    for (let n = 1; ; n++) {
      const v = Atomics.load(this.counters, i);
      if (v >= 0 && Atomics.compareExchange(this.counters, i, v, v + 1) === v) return;
      if (n % SPINS === 0) Atomics.wait(this.nap, 0, 0, 0.05);
    }
  }

  /** Gives back what hold took. */
  unhold(slot: number): void {
    Atomics.sub(this.counters, STRIDE * slot + OWNER, 1);
  }
}
