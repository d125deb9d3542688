/**
 * Where a background mount sends its messages once the terminal is gone,
 * as gocryptfs does: syslog, through one long-lived logger(1) process
 * (Node cannot write to /dev/log itself). If logger is missing or dies,
 * messages are dropped rather than crashing the filesystem.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../util/logger.js';

export class SyslogLogger implements Logger {
  private proc: ChildProcess | null = null;
  private broken = false;

  constructor(private readonly tag: string) {}

  warn(message: string): void {
    this.write(`WARNING: ${message}`);
  }

  info(message: string): void {
    this.write(message);
  }

  private write(line: string): void {
    if (this.broken) return;
    if (!this.proc) {
      this.proc = spawn('logger', ['-t', this.tag], { stdio: ['pipe', 'ignore', 'ignore'], detached: false });
      this.proc.on('error', () => (this.broken = true));
      this.proc.on('exit', () => (this.broken = true));
      this.proc.stdin!.on('error', () => (this.broken = true));
      this.proc.unref();
      (this.proc.stdin as unknown as { unref?: () => void }).unref?.();
    }
    this.proc.stdin!.write(`${line.replace(/\n/g, ' ')}\n`);
  }

  close(): void {
    this.proc?.stdin?.end();
  }
}
