/**
 * A fair (FIFO) async reader/writer lock. Reads of one file may run
 * together; a write (read-modify-write of blocks, truncate) runs alone.
 */
interface Waiter {
  write: boolean;
  grant: () => void;
}

export class RwLock {
  private readers = 0;
  private writer = false;
  private readonly queue: Waiter[] = [];

  async read<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire(false);
    try {
      return await fn();
    } finally {
      this.readers--;
      this.drain();
    }
  }

  async write<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire(true);
    try {
      return await fn();
    } finally {
      this.writer = false;
      this.drain();
    }
  }

  private acquire(write: boolean): Promise<void> {
    if (this.queue.length === 0 && !this.writer && (!write || this.readers === 0)) {
      if (write) this.writer = true;
      else this.readers++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push({ write, grant: resolve }));
  }

  private drain(): void {
    while (this.queue.length > 0 && !this.writer) {
      const head = this.queue[0]!;
      if (head.write) {
        if (this.readers > 0) return;
        this.queue.shift();
        this.writer = true;
        head.grant();
        return;
      }
      this.queue.shift();
      this.readers++;
      head.grant();
    }
  }
}
