/**
 * Real FUSE mounts in tests, for either implementation, and the machinery
 * that makes sure none of them outlives a test.
 *
 *   TSCRYPTFS_MOUNT_IMPL=tscryptfs   (default; what CI runs) mounts with `node bin/tscryptfs`
 *   TSCRYPTFS_MOUNT_IMPL=gocryptfs   mounts with /usr/bin/gocryptfs 2.3 instead
 *
 * test/mount/* runs against MOUNT_IMPL; the interop tests pair it with the
 * real gocryptfs. Running the suite with TSCRYPTFS_MOUNT_IMPL=gocryptfs
 * validates the tests' expectations against the reference implementation:
 *
 *   npx tsc -p . && TSCRYPTFS_MOUNT_IMPL=gocryptfs node --test --test-concurrency=1 dist/test/mount/
 *
 * Both programs take the same command line (`[options] CIPHERDIR MOUNTPOINT`),
 * daemonize, and return once the mount is ready. The daemon gets a log file
 * (`<mountpoint>.<impl>.log`), never our pipes (a Go program dies of
 * SIGPIPE writing to a closed stdout/stderr, and a pipe held open by the
 * daemon would keep us waiting).
 *
 * Teardown: fusermount -u (retried), then umount -l, verified through
 * /proc/mounts; then the daemon serving the mount must exit. Only as a last
 * resort is that daemon — a process one of our mounts started, found by the
 * mount point's absolute path (inside our own temp dir) on its command
 * line — killed, and that is reported as an error.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, readdirSync, promises as fsp } from 'node:fs';
import { basename, resolve } from 'node:path';
import { BIN } from './paths.js';
import { GOCRYPTFS_BIN } from './requirements.js';

export const GOCRYPTFS = GOCRYPTFS_BIN;
export const PASSWORD = 'test';
/** gocryptfs splits -extpass on spaces and runs it without a shell. */
export const EXTPASS = ['-extpass', `echo ${PASSWORD}`];
/** Cheap scrypt for tests (N = 2^10, the minimum gocryptfs accepts). */
export const SCRYPTN = ['-scryptn', '10'];

export const FUSERMOUNT = ['/usr/bin/fusermount3', '/bin/fusermount3', '/usr/bin/fusermount', '/bin/fusermount'].find((p) => existsSync(p));

// ------------------------------------------------------------ processes

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOpts {
  input?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Runs a program to completion (no shell) and collects its output. */
export function run(cmd: string, args: string[], opts: RunOpts = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const spawnOpts: SpawnOptions = { stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: opts.timeoutMs ?? 60_000, killSignal: 'SIGKILL' };
    if (opts.env) spawnOpts.env = opts.env;
    if (opts.cwd) spawnOpts.cwd = opts.cwd;
    const child = spawn(cmd, args, spawnOpts);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    if (child.stdin) {
      child.stdin.on('error', () => undefined); // EPIPE if the program does not read its input
      child.stdin.end(opts.input);
    }
  });
}

export function describeRun(what: string, r: RunResult): string {
  return `${what} failed (exit ${r.code}${r.signal ? `, signal ${r.signal}` : ''})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every `stepMs` until it holds or `timeoutMs` passed; returns its last value. */
export async function waitFor(cond: () => boolean, timeoutMs: number, stepMs = 50): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (cond()) return true;
    if (Date.now() >= end) return false;
    await sleep(stepMs);
  }
}

function procArgs(pid: number): string[] | null {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8'); // empty for zombies
    if (raw.length === 0) return null;
    return raw.replace(/\0$/, '').split('\0');
  } catch {
    return null; // gone meanwhile
  }
}

function procEnviron(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Every mount command gets this variable (the absolute mount point) in its
 * environment; daemons inherit it. That finds a daemon that does not show
 * the mount point on its command line (tscryptfs hands it over by IPC).
 */
export const MOUNT_MARKER = 'TSCRYPTFS_TEST_MOUNTPOINT';

/** A process that exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** PIDs of live (non-zombie) processes whose command line mentions `needle`. */
export function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const args = procArgs(Number(e));
    if (args && args.join('\0').includes(needle)) out.push(Number(e));
  }
  return out;
}

/** PIDs of processes whose MOUNT_MARKER points below `dir`. */
function processesWithMarkerUnder(dir: string): number[] {
  const needle = `${MOUNT_MARKER}=${resolve(dir)}/`;
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    if (procEnviron(Number(e)).includes(needle)) out.push(Number(e));
  }
  return out;
}

const HELPER_PROGRAMS = new Set(['fusermount', 'fusermount3', 'umount', 'mount', 'mount.fuse', 'mount.fuse3']);

/**
 * The daemon(s) serving `mnt`: live processes with the mount point's
 * absolute path as one of their arguments (or as `--x=PATH`), or with
 * MOUNT_MARKER=path in their environment, other than fusermount/umount and
 * this process. For gocryptfs that is the `gocryptfs -fg -notifypid=...`
 * child it re-executes; for tscryptfs the background node process (whose
 * command line is just `node bin/tscryptfs`).
 */
export function daemonPids(mnt: string): number[] {
  const abs = resolve(mnt);
  const marker = `${MOUNT_MARKER}=${abs}\0`;
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const args = procArgs(Number(e));
    if (!args || HELPER_PROGRAMS.has(basename(args[0] ?? ''))) continue;
    if (args.some((a) => a === abs || a === abs + '/' || a.endsWith('=' + abs)) || procEnviron(Number(e)).includes(marker)) {
      if (isAlive(Number(e))) out.push(Number(e));
    }
  }
  return out;
}

// ---------------------------------------------------------------- mounts

/** Mount points listed in /proc/mounts (octal escapes decoded). */
export function listMounts(): { source: string; target: string; fstype: string; options: string }[] {
  const text = readFileSync('/proc/mounts', 'utf8');
  const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const [source = '', target = '', fstype = '', options = ''] = l.split(' ');
      return { source: unescape(source), target: unescape(target), fstype, options };
    });
}

export function isMounted(mnt: string): boolean {
  const abs = resolve(mnt);
  return listMounts().some((m) => m.target === abs);
}

/** The /proc/mounts entries for `mnt` (more than one if mounts are stacked). */
export function mountEntries(mnt: string): { source: string; target: string; fstype: string; options: string }[] {
  const abs = resolve(mnt);
  return listMounts().filter((m) => m.target === abs);
}

/** Mount points at or below `dir`, deepest first. */
export function mountsUnder(dir: string): string[] {
  const abs = resolve(dir);
  return listMounts()
    .map((m) => m.target)
    .filter((t) => t === abs || t.startsWith(abs + '/'))
    .sort((a, b) => b.length - a.length);
}

/**
 * Unmounts `mnt`, whatever it takes: fusermount -u (retried, a just-closed
 * file can keep it busy for a moment), then umount -l as a last resort.
 * Throws if it is still listed in /proc/mounts afterwards. Then waits a
 * little for the daemon serving it to exit (never kills anything; see
 * unmountAndReap for that).
 */
export async function unmount(mnt: string): Promise<void> {
  const abs = resolve(mnt);
  const errors: string[] = [];
  for (let i = 0; i < 5 && isMounted(abs); i++) {
    if (i > 0) await sleep(100 * i);
    if (!FUSERMOUNT) break;
    const r = await run(FUSERMOUNT, ['-u', abs]);
    if (r.code !== 0) errors.push(r.stderr.trim());
  }
  if (isMounted(abs)) {
    const r = await run('umount', ['-l', abs]);
    if (r.code !== 0) errors.push(r.stderr.trim());
  }
  if (isMounted(abs)) throw new Error(`could not unmount ${abs}: ${errors.join('; ')}`);
  for (let i = 0; i < 50 && daemonPids(abs).length > 0; i++) await sleep(50);
}

/**
 * Unmounts (see unmount), then makes sure the daemon serving the mount is
 * gone: it gets `graceMs` to exit by itself; a daemon still running then
 * is killed (SIGKILL; it is one our mount started, identified by the
 * mount point) and reported by throwing.
 */
export async function unmountAndReap(mnt: string, graceMs = 5000): Promise<void> {
  const abs = resolve(mnt);
  let problem = '';
  try {
    await unmount(abs);
  } catch (err) {
    problem = (err as Error).message;
  }
  if (!(await waitFor(() => daemonPids(abs).length === 0, graceMs))) {
    const pids = daemonPids(abs);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    // Killing the daemon aborts its FUSE connection; a lazy unmount may still be needed.
    if (isMounted(abs)) await run('umount', ['-l', abs]);
    problem += `${problem ? '; ' : ''}daemon(s) ${pids.join(', ')} for ${abs} still running ${graceMs} ms after unmount (killed)`;
  }
  if (problem) throw new Error(problem);
}

// ------------------------------------------------------- implementations

export type MountImpl = 'gocryptfs' | 'tscryptfs';

function implFromEnv(): MountImpl {
  const v = process.env.TSCRYPTFS_MOUNT_IMPL ?? 'tscryptfs';
  if (v !== 'gocryptfs' && v !== 'tscryptfs') throw new Error(`TSCRYPTFS_MOUNT_IMPL must be gocryptfs or tscryptfs, not ${JSON.stringify(v)}`);
  return v;
}

/** The implementation under test (TSCRYPTFS_MOUNT_IMPL, default tscryptfs). */
export const MOUNT_IMPL: MountImpl = implFromEnv();

/** Program and leading arguments that run `impl`. */
export function implCommand(impl: MountImpl): { cmd: string; pre: string[] } {
  return impl === 'gocryptfs' ? { cmd: GOCRYPTFS, pre: [] } : { cmd: process.execPath, pre: [BIN] };
}

/** Runs `impl ARGS` to completion (for -init, -fsck, ...). */
export function runImpl(impl: MountImpl, args: string[], opts: RunOpts = {}): Promise<RunResult> {
  const { cmd, pre } = implCommand(impl);
  return run(cmd, [...pre, ...args], opts);
}

/** `impl -init -q -extpass 'echo test' -scryptn 10 FLAGS... dir` (creates dir). */
export async function initCipherdir(impl: MountImpl, cipherdir: string, flags: string[] = []): Promise<void> {
  await fsp.mkdir(cipherdir, { recursive: true });
  const r = await runImpl(impl, ['-init', '-q', ...EXTPASS, ...SCRYPTN, ...flags, cipherdir]);
  if (r.code !== 0) throw new Error(describeRun(`${impl} -init ${flags.join(' ')}`, r));
}

export interface MountOptions {
  /** Extra flags (e.g. -ro, -dev, -masterkey=...). */
  flags?: string[];
  /** Password for -extpass (default "test"); false: no -extpass (with -masterkey etc.). */
  password?: string | false;
  /** Control socket path (-ctlsock). */
  ctlsock?: string;
  /** Create the mount point first (default true). */
  createMountpoint?: boolean;
  /** Pass -q (default true). */
  quiet?: boolean;
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
}

function mountArgs(cipherdir: string, mnt: string, opts: MountOptions, extra: string[] = []): string[] {
  const args: string[] = [];
  if (opts.quiet !== false) args.push('-q');
  args.push('-nosyslog', ...extra);
  const pw = opts.password ?? PASSWORD;
  if (pw !== false) args.push('-extpass', `echo ${pw}`);
  if (opts.ctlsock) args.push('-ctlsock', opts.ctlsock);
  args.push(...(opts.flags ?? []), resolve(cipherdir), resolve(mnt));
  return args;
}

function markedEnv(mnt: string): NodeJS.ProcessEnv {
  return { ...process.env, [MOUNT_MARKER]: resolve(mnt) };
}

export function logPathFor(impl: MountImpl, mnt: string): string {
  return `${resolve(mnt)}.${impl}.log`;
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

export interface MountAttempt {
  /** Exit code of the mounting (foreground) process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Its output (and, for a successful mount, the daemon's so far). */
  output: string;
  /** Whether the mount point is in /proc/mounts afterwards. */
  mounted: boolean;
  /** The command line, for messages. */
  command: string;
}

/**
 * Runs the mount command and reports what happened, without judging:
 * for the failure tests. A mount that did appear is left in place (the
 * caller unmounts it).
 */
export async function tryMount(impl: MountImpl, cipherdir: string, mnt: string, opts: MountOptions = {}): Promise<MountAttempt> {
  if (opts.createMountpoint !== false) await fsp.mkdir(mnt, { recursive: true });
  const args = mountArgs(cipherdir, mnt, opts);
  const { cmd, pre } = implCommand(impl);
  const logPath = logPathFor(impl, mnt);
  const start = readLog(logPath).length;
  const logFd = openSync(logPath, 'a');
  let code: number | null;
  let signal: NodeJS.Signals | null;
  try {
    ({ code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res, rej) => {
      const child = spawn(cmd, [...pre, ...args], { stdio: ['ignore', logFd, logFd], env: markedEnv(mnt) });
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
      child.on('error', (e) => {
        clearTimeout(timer);
        rej(e);
      });
      child.on('exit', (c, s) => {
        clearTimeout(timer);
        res({ code: c, signal: s });
      });
    }));
  } finally {
    closeSync(logFd);
  }
  return { code, signal, output: readLog(logPath).slice(start), mounted: isMounted(mnt), command: `${impl} ${args.join(' ')}` };
}

/** Mounts `cipherdir` on `mnt` with `impl` and returns once the mount is ready; throws (leaving nothing mounted) if it fails. */
export async function mountImpl(impl: MountImpl, cipherdir: string, mnt: string, opts: MountOptions = {}): Promise<void> {
  const a = await tryMount(impl, cipherdir, mnt, opts);
  if (a.code !== 0 || !a.mounted) {
    // A half-made mount must not survive a failure.
    if (isMounted(mnt)) await unmountAndReap(mnt).catch(() => undefined);
    throw new Error(
      `mount failed: ${a.command}\n(exit ${a.code}${a.signal ? `, ${a.signal}` : ''}${a.code === 0 ? ', but nothing in /proc/mounts' : ''})\n${a.output}`,
    );
  }
}

/** Mounts, runs `fn` on the mount point, and unmounts (and reaps the daemon) whatever happens. */
export async function withMount<T>(impl: MountImpl, cipherdir: string, mnt: string, opts: MountOptions, fn: (mnt: string) => Promise<T>): Promise<T> {
  await mountImpl(impl, cipherdir, mnt, opts);
  let result: T;
  try {
    result = await fn(mnt);
  } catch (err) {
    await unmountAndReap(mnt).catch(() => undefined);
    throw err;
  }
  await unmountAndReap(mnt);
  return result;
}

export interface ForegroundMount {
  child: ChildProcess;
  /** Resolves when the foreground process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  log: () => string;
}

/**
 * `impl -fg ... CIPHERDIR MNT` as our own child; resolves once the mount
 * shows up in /proc/mounts. Throws (and cleans up) if the process exits
 * first or the mount does not appear within the timeout.
 */
export async function mountForeground(impl: MountImpl, cipherdir: string, mnt: string, opts: MountOptions = {}): Promise<ForegroundMount> {
  if (opts.createMountpoint !== false) await fsp.mkdir(mnt, { recursive: true });
  const args = mountArgs(cipherdir, mnt, opts, ['-fg']);
  const { cmd, pre } = implCommand(impl);
  const logPath = logPathFor(impl, mnt);
  const start = readLog(logPath).length;
  const logFd = openSync(logPath, 'a');
  const child = spawn(cmd, [...pre, ...args], { stdio: ['ignore', logFd, logFd], env: markedEnv(mnt) });
  closeSync(logFd);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.on('exit', (code, signal) => {
      done = true;
      res({ code, signal });
    });
    child.on('error', () => {
      done = true;
      res({ code: null, signal: null });
    });
  });
  const log = (): string => readLog(logPath).slice(start);
  const ok = await waitFor(() => done || isMounted(mnt), opts.timeoutMs ?? 30_000);
  if (!ok || done || !isMounted(mnt)) {
    if (isMounted(mnt)) await unmount(mnt).catch(() => undefined);
    if (!done) child.kill('SIGKILL');
    const r = await exited;
    throw new Error(`foreground mount failed: ${impl} ${args.join(' ')}\n(exit ${r.code}${r.signal ? `, ${r.signal}` : ''})\n${log()}`);
  }
  return { child, exited, log };
}

// ------------------------------------------------------- emergency cleanup

const guarded = new Set<string>();
let handlersInstalled = false;

function emergencyUnmountAll(): void {
  for (const dir of guarded) {
    for (const m of mountsUnder(dir)) {
      if (FUSERMOUNT) spawnSync(FUSERMOUNT, ['-u', m], { stdio: 'ignore' });
      if (isMounted(m)) spawnSync('umount', ['-l', m], { stdio: 'ignore' });
    }
  }
}

/**
 * Makes sure mounts below `dir` (a test's own temp dir) are gone even if
 * the process exits without running its after hooks: on exit, and on
 * SIGINT/SIGTERM/SIGHUP (then exiting as the signal would have).
 */
export function guardMountsUnder(dir: string): void {
  guarded.add(resolve(dir));
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', emergencyUnmountAll);
  for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
    process.once(sig, () => {
      emergencyUnmountAll();
      process.exit(code);
    });
  }
}

/** Stops guarding `dir` (after it was cleaned up normally). */
export function unguardMountsUnder(dir: string): void {
  guarded.delete(resolve(dir));
}

/**
 * End-of-file cleanup: unmounts everything below `dir` (reaping daemons),
 * and reports what had been left mounted or running. Never throws before
 * it has tried everything.
 */
export async function cleanupMountsUnder(dir: string): Promise<string[]> {
  const problems: string[] = [];
  for (const m of mountsUnder(dir)) {
    problems.push(`still mounted at the end: ${m}`);
    try {
      await unmountAndReap(m);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  const abs = resolve(dir);
  const ours = (): number[] => [...new Set([...processesMentioning(abs + '/'), ...processesWithMarkerUnder(abs)])].filter(isAlive);
  if (!(await waitFor(() => ours().length === 0, 5000))) {
    for (const pid of ours()) {
      const args = procArgs(pid);
      if (!args || HELPER_PROGRAMS.has(basename(args[0] ?? ''))) continue;
      problems.push(`process ${pid} still running (killed): ${args.join(' ')}`);
      try {
        process.kill(pid, 'SIGKILL'); // started by this test (it mentions our own temp dir)
      } catch {
        // gone meanwhile
      }
    }
  }
  const left = mountsUnder(dir);
  if (left.length > 0) problems.push(`could not unmount: ${left.join(', ')}`);
  return problems;
}
