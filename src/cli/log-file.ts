/**
 * Where a background mount's messages go when there is no syslog to take
 * them (containers and minimal systems have no /dev/log, and logger(1) then
 * drops every line without a word): a file named after the mount point,
 * appended to, one line per message with the time and the daemon's PID.
 * They go to $XDG_STATE_HOME/tscryptfs/ where that is set; otherwise root's
 * to /var/log/tscryptfs/ and other users' to ~/.local/state/tscryptfs/.
 */
import { appendFileSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../util/logger.js';

/** The syslog socket logger(1) writes to. */
export const SYSLOG_SOCKET = '/dev/log';

/** Whether syslog can take messages: its socket exists (a symlink to journald's is followed). */
export function syslogReachable(): boolean {
  try {
    return statSync(SYSLOG_SOCKET).isSocket();
  } catch {
    return false;
  }
}

/** The folder of the log files of this user's mounts. */
export function logDir(): string {
  const state = process.env.XDG_STATE_HOME;
  if (state) return join(state, 'tscryptfs');
  return process.getuid?.() === 0 ? '/var/log/tscryptfs' : join(homedir(), '.local', 'state', 'tscryptfs');
}

/** The log file of the mount at `mountpoint` (an absolute path): "/mnt/my vault" -> DIR/mnt-my_vault.log. */
export function logFileFor(mountpoint: string): string {
  const name = mountpoint.replace(/^\/+|\/+$/g, '').replace(/\//g, '-').replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
  return join(logDir(), `${name}.log`);
}

/**
 * Appends each message to `path` (made 0600, in a folder made 0700). A file
 * that cannot be written drops the message, as a full syslog would: the
 * filesystem goes on serving.
 */
export class FileLogger implements Logger {
  private made = false;

  constructor(readonly path: string) {}

  warn(message: string): void {
    this.write(`WARNING: ${message}`);
  }

  info(message: string): void {
    this.write(message);
  }

  private write(text: string): void {
    try {
      if (!this.made) {
        mkdirSync(join(this.path, '..'), { recursive: true, mode: 0o700 });
        this.made = true;
      }
      appendFileSync(this.path, `${new Date().toISOString()} tscryptfs[${process.pid}]: ${text.replace(/\n/g, ' ')}\n`, { mode: 0o600 });
    } catch {
      /* nowhere left to say it */
    }
  }
}
