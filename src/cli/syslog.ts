/**
 * Where a background mount sends its messages once the terminal is gone,
 * as gocryptfs does: syslog, through one long-lived logger(1) process
 * (Node cannot write to /dev/log itself). logger runs with
 * --socket-errors=on, so a syslog that stops taking messages ends it
 * instead of losing them quietly; from then on (and when logger is missing)
 * the messages go to the fallback logger (a file, see log-file.ts), the
 * last few lines written before the failure first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../util/logger.js';

/** Lines kept to hand to the fallback if logger turns out to have lost them. */
const RECENT = 32;

export class SyslogLogger implements Logger {
  private proc: ChildProcess | null = null;
  private broken = false;
  private readonly recent: string[] = [];

  constructor(
    private readonly tag: string,
    private readonly fallback: Logger,
  ) {}

  warn(message: string): void {
    this.write(`WARNING: ${message}`);
  }

  info(message: string): void {
    this.write(message);
  }

  private write(line: string): void {
    const text = line.replace(/\n/g, ' ');
    if (this.broken) return this.fallback.info?.(text);
    if (!this.proc) {
      this.proc = spawn('logger', ['--socket-errors=on', '-t', this.tag], { stdio: ['pipe', 'ignore', 'ignore'], detached: false });
      this.proc.on('error', (err) => this.fail(err.message));
      this.proc.on('exit', (code, signal) => this.fail(`logger exited (${signal ?? code})`));
      this.proc.stdin!.on('error', (err) => this.fail(err.message));
      this.proc.unref();
      (this.proc.stdin as unknown as { unref?: () => void }).unref?.();
    }
    this.recent.push(text);
    if (this.recent.length > RECENT) this.recent.shift();
    this.proc.stdin!.write(`${text}\n`);
  }

  private fail(why: string): void {
    if (this.broken) return;
    this.broken = true;
    this.fallback.warn(`syslog does not take messages (${why}); they go here from now on, starting with the last ${this.recent.length} sent to syslog`);
    for (const line of this.recent.splice(0)) this.fallback.info?.(line);
  }

  close(): void {
    this.proc?.stdin?.end();
  }
}
