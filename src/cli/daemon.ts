/**
 * Running a mount in the background, as gocryptfs does: the command the
 * user typed checks everything and reads the password, then starts a
 * detached child that mounts. The command returns once the child reports
 * the mount ready (exit 0) or has failed (with the child's exit code).
 * The plan, master key included, travels over the private IPC channel as
 * bytes (zeroed on both sides once used), never on the command line or in
 * the environment.
 */
import { spawn } from 'node:child_process';
import { CliError, EXIT } from './exit-codes.js';
import type { Output } from './output.js';
import type { ServePlan } from './serve.js';
import { startServing } from './serve.js';
import { SyslogLogger } from './syslog.js';
import { FileLogger, logFileFor, SYSLOG_SOCKET, syslogReachable } from './log-file.js';
import type { Logger } from '../util/logger.js';
import type { SwitchName } from '../util/switches.js';

export const DAEMON_ENV: SwitchName = 'TSCRYPTFS_DAEMON_CHILD';

type ChildMessage = { ready: true } | { error: string; exitCode: number };
interface ParentMessage {
  plan: ServePlan;
  nosyslog: boolean;
  quiet: boolean;
  /** Where messages go instead of syslog (see log-file.ts). */
  logFile: string;
}

/**
 * Parent side: start the daemon and wait until it is mounted or failed.
 * Without a syslog to take the daemon's messages, says first (on stderr)
 * which file gets them.
 */
export function runInBackground(plan: ServePlan, opts: { nosyslog: boolean; quiet: boolean }, out: Output): Promise<void> {
  const logFile = logFileFor(plan.mountpoint);
  if (!opts.nosyslog && !syslogReachable()) out.notice(`no syslog (${SYSLOG_SOCKET} is missing): the background process writes its messages to ${logFile}`);
  return new Promise((resolve, reject) => {
    const stdio = opts.nosyslog ? 'inherit' : 'pipe';
    // The child takes its plan from the IPC channel, not from these
    // arguments: they are there so that ps, top and pgrep tell mounts apart,
    // as gocryptfs's "gocryptfs -fg ... CIPHERDIR MOUNTPOINT" child does.
    const title = ['-fg', ...(plan.reverse ? ['-reverse'] : []), ...(plan.readOnly ? ['-ro'] : []), plan.cipherdir, plan.mountpoint];
    const child = spawn(process.execPath, [process.argv[1]!, ...title], {
      detached: true,
      stdio: ['ignore', stdio, stdio, 'ipc'],
      // Structured clone instead of JSON: the master key crosses as bytes, not as a hex string we could not wipe.
      serialization: 'advanced',
      env: { ...process.env, [DAEMON_ENV]: '1' },
    });
    child.stdout?.pipe(process.stdout, { end: false });
    child.stderr?.pipe(process.stderr, { end: false });
    let settled = false;
    const finish = (err?: CliError): void => {
      if (settled) return;
      settled = true;
      child.stdout?.unpipe();
      child.stderr?.unpipe();
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (child.connected) child.disconnect();
      child.unref();
      if (err) reject(err);
      else resolve();
    };
    child.on('message', (m: ChildMessage) => {
      if ('ready' in m) {
        out.info('Filesystem mounted and ready.');
        finish();
      } else {
        finish(new CliError(m.exitCode, m.error));
      }
    });
    child.on('error', (err) => finish(new CliError(EXIT.ForkChild, `cannot start the background process: ${err.message}`)));
    child.on('exit', (code, signal) => {
      finish(new CliError(code ?? EXIT.Other, code === null ? `the background process died (${signal})` : ''));
    });
    const msg: ParentMessage = { plan, nosyslog: opts.nosyslog, quiet: opts.quiet, logFile };
    child.send(msg); // serialized synchronously: our copy of the key can go now
    plan.masterKey.fill(0);
  });
}

/** Child side (bin/tscryptfs with DAEMON_ENV set; its arguments only name the mount): mount, report, serve until unmounted. */
export async function runDaemonChild(): Promise<never> {
  delete process.env[DAEMON_ENV];
  const msg = await new Promise<ParentMessage>((resolve) => process.once('message', (m) => resolve(m as ParentMessage)));
  // The parent's pipes go away when it exits; never die of writing to them.
  for (const s of [process.stdout, process.stderr]) s.on('error', () => undefined);
  let log: Logger = {
    warn: (m) => process.stderr.write(`tscryptfs: ${m}\n`),
    info: (m) => (msg.quiet ? undefined : process.stdout.write(`${m}\n`)),
  };
  const stderrLog = log;
  const file = new FileLogger(msg.logFile);
  const syslog = msg.nosyslog ? null : syslogReachable() ? new SyslogLogger(`tscryptfs-${process.pid}`, file) : file;
  const switching: Logger = { warn: (m) => log.warn(m), info: (m) => log.info?.(m) };
  let serving;
  try {
    serving = await startServing(msg.plan, switching);
  } catch (err) {
    const exitCode = err instanceof CliError ? err.exitCode : EXIT.Other;
    process.send?.({ error: (err as Error).message, exitCode });
    process.exit(exitCode);
  }
  process.send?.({ ready: true });
  if (process.connected) process.disconnect();
  if (syslog === file) file.info(`serving ${msg.plan.cipherdir} at ${msg.plan.mountpoint}`);
  if (syslog) log = syslog;
  else log = stderrLog;
  await serving.done;
  if (syslog instanceof SyslogLogger) syslog.close();
  process.exit(0);
}
