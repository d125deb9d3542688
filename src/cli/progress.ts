/**
 * A one-line progress display for a terminal: redrawn in place at most
 * every `intervalMs` (the first time only after that long, so quick runs
 * show nothing), cut to the terminal width, erased before other output.
 */
export interface TtyStream {
  write(s: string): unknown;
  columns?: number;
}

export class Progress {
  private readonly started = Date.now();
  private last = 0;
  private shown = false;

  constructor(
    private readonly stream: TtyStream,
    private readonly intervalMs: number,
  ) {}

  update(text: string): void {
    const now = Date.now();
    if (now - this.started < this.intervalMs || now - this.last < this.intervalMs) return;
    this.last = now;
    const width = Math.max(20, (this.stream.columns || 80) - 1);
    this.stream.write(`\r\x1b[K${text.length > width ? text.slice(0, width - 1) + '…' : text}`);
    this.shown = true;
  }

  /** Erases the line (before other output and at the end). */
  clear(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[K');
    this.shown = false;
  }
}
