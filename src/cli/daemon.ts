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
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { CliError, EXIT } from './exit-codes.js';
import type { Output } from './output.js';
import type { ServePlan } from './serve.js';
import { SyslogLogger } from './syslog.js';
import { FileLogger, logFileFor, SYSLOG_SOCKET, syslogReachable } from './log-file.js';
import type { Logger } from '../util/logger.js';
import { envSwitch, type SwitchName } from '../util/switches.js';

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
 * Node's flags for the background process: V8's young generation at most
 * two 4 MiB semi-spaces instead of two of 16. A listing or an untar grows
 * it to its limit, and the default's room made up most of what the
 * daemon's peak had above its peers' (18 MB); the CPU it costs is within
 * this machine's noise, 2-5 % at most in the metadata phases
 * (Documentation/performance.md, "Memory given back when idle"). A mount
 * with -fg runs with the flags it was started with.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

/**
 * How far V8 lets the daemon's old generation grow past what survived its
 * last full collection before the next: 1.2 times (and at least 8 MB more,
 * V8's floor) instead of up to 4 times, V8's factor when the machine's
 * memory allows a large heap. What a request keeps across I/O for more
 * than two scavenges (a few tens of milliseconds) is promoted, and the
 * buffers such objects hold stay on malloc's heap until a full collection.
 * Under fsstress's mix a daemon had one full collection in three cycles
 * (13 s), its old generation growing by 1.7 MB a cycle; with 1.2, one a
 * cycle, 2-3 ms each (Documentation/performance.md, "Memory under a mixed
 * load"). Set at run time, so that a mount with -fg has it too, and a V8
 * that lacks the flag only says so (a flag on the command line it did not
 * know would stop Node from starting). TSCRYPTFS_HEAP_GROWTH=0 leaves
 * V8's own factor.
 */
export function limitOldGenerationGrowth(): void {
  if (envSwitch('TSCRYPTFS_HEAP_GROWTH')) setFlagsFromString('--heap-growing-percent=20');
}

/**
 * The mount process's JavaScript runs without V8's optimizing compiler
 * (TurboFan), on its interpreter and baseline code, when the content
 * cipher's arithmetic runs in OpenSSL or the native addons: JavaScript
 * then passes requests and buffers between C calls, which optimized code
 * does not run measurably faster (A/B in Documentation/performance.md,
 * "Memory under a mixed load"), while the compiler's code pages in the
 * node executable and its jobs on V8's worker threads added 6-7 MB to the
 * daemon's VmRSS under fsstress. Where JavaScript computes (the noble
 * backend, AEGIS in TypeScript, AES-SIV) the compiler stays. Set at run
 * time, once the cipher is known; functions already optimized keep their
 * code. TSCRYPTFS_BASELINE_JS=0 keeps the compiler.
 */
export function leaveOptimizingCompilerOut(): void {
  if (envSwitch('TSCRYPTFS_BASELINE_JS')) setFlagsFromString('--no-turbofan');
}

/**
 * glibc's variable for how many malloc arenas a process may have, and the
 * daemon's value of it: one per CPU (at least two) instead of eight per
 * CPU. libfuse starts and ends threads all the time, and each arena keeps
 * the pages its live allocations sit in (native/sys/memory.cc). In the
 * background process's environment it holds from the process's start,
 * for V8's worker threads too, which have their arenas before a mount
 * begins (under fsstress 4-6 MB, Documentation/performance.md, "Memory
 * under a mixed load"); serve.ts sets it again with mallopt(3) for a mount
 * run with -fg. A value the user set is kept.
 */
export const MALLOC_ARENA_ENV = 'MALLOC_ARENA_MAX';
export function mallocArenaLimit(): number {
  return Math.max(2, availableParallelism());
}

/** What the background process is started with before the password is known: it shows in ps, and says where messages go. */
export interface DaemonStart {
  cipherdir: string;
  mountpoint: string;
  reverse: boolean;
  readOnly: boolean;
  nosyslog: boolean;
  quiet: boolean;
}

/** The background process between its start and the plan. */
export interface Daemon {
  /** Sends the plan (wiping our copy of the key) and waits until the mount is ready or failed. */
  serve(plan: ServePlan): Promise<void>;
  /** The command failed before the plan (a wrong password, ...): ends the process, which has nothing to say, and waits for it. */
  abort(): Promise<void>;
}

/**
 * Parent side: start the daemon now, before the password is read, so that
 * its own start (Node and the modules a mount needs) runs while this
 * process reads the password and derives the key. Without a syslog to take
 * the daemon's messages, says (on stderr) which file gets them once the
 * plan goes to the daemon.
 */
export function startDaemon(start: DaemonStart, out: Output): Daemon {
  const logFile = logFileFor(start.mountpoint);
  const stdio = start.nosyslog ? 'inherit' : 'pipe';
  // The child takes its plan from the IPC channel, not from these
  // arguments: they are there so that ps, top and pgrep tell mounts apart,
  // as gocryptfs's "gocryptfs -fg ... CIPHERDIR MOUNTPOINT" child does.
  const title = ['-fg', ...(start.reverse ? ['-reverse'] : []), ...(start.readOnly ? ['-ro'] : []), start.cipherdir, start.mountpoint];
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, process.argv[1]!, ...title], {
    detached: true,
    stdio: ['ignore', stdio, stdio, 'ipc'],
    // Structured clone instead of JSON: the master key crosses as bytes, not as a hex string we could not wipe.
    serialization: 'advanced',
    env: { ...process.env, [DAEMON_ENV]: '1', [MALLOC_ARENA_ENV]: process.env[MALLOC_ARENA_ENV] ?? String(mallocArenaLimit()) },
  });
  child.stdout?.pipe(process.stdout, { end: false });
  child.stderr?.pipe(process.stderr, { end: false });
  // Settles once: the child's report after the plan, or its end (also one before the plan).
  const outcome = new Promise<void>((resolve, reject) => {
    const finish = (err?: CliError): void => {
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
  });
  outcome.catch(() => undefined); // awaited by serve() or abort()
  return {
    serve(plan) {
      if (child.connected) {
        if (!start.nosyslog && !syslogReachable()) out.notice(`no syslog (${SYSLOG_SOCKET} is missing): the background process writes its messages to ${logFile}`);
        const msg: ParentMessage = { plan, nosyslog: start.nosyslog, quiet: start.quiet, logFile };
        child.send(msg); // serialized synchronously: our copy of the key can go now
      }
      plan.masterKey.fill(0);
      return outcome;
    },
    abort() {
      // It holds nothing yet (no plan, no mount), so it can simply end; the command returns once it has.
      child.kill('SIGTERM');
      return outcome.then(
        () => undefined,
        () => undefined,
      );
    },
  };
}

/**
 * Child side (bin/tscryptfs with DAEMON_ENV set; its arguments only name
 * the mount): load what serving needs while the parent derives the key,
 * then mount, report, serve until unmounted. A channel that closes before
 * the plan came means the parent gave up and reports why itself.
 */
export async function runDaemonChild(): Promise<never> {
  delete process.env[DAEMON_ENV];
  const serveModule = import('./serve.js').then((m) => (m.preloadServing(), m));
  serveModule.catch(() => undefined); // reported below, once there is a parent to tell
  const msg = await new Promise<ParentMessage | null>((resolve) => {
    process.once('message', (m) => resolve(m as ParentMessage));
    process.once('disconnect', () => resolve(null));
  });
  if (!msg) process.exit(0);
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
    serving = await (await serveModule).startServing(msg.plan, switching);
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
