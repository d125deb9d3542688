/**
 * Driving the real gocryptfs 2.3 from tests: -init, mount, unmount (always,
 * even after failures), -fsck, the master key via gocryptfs-xray, and the
 * control socket.
 *
 * gocryptfs splits -extpass on spaces and runs it without a shell, so the
 * password program is `echo test` (password "test").
 */
import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, readdirSync, promises as fsp } from 'node:fs';
import { createConnection } from 'node:net';
import { join, resolve } from 'node:path';

export const GOCRYPTFS = '/usr/bin/gocryptfs';
export const GOCRYPTFS_XRAY = '/usr/bin/gocryptfs-xray';
export const PASSWORD = 'test';
export const EXTPASS = ['-extpass', `echo ${PASSWORD}`];
/** Cheap scrypt for tests (N = 2^10, the minimum gocryptfs accepts). */
export const SCRYPTN = ['-scryptn', '10'];

const FUSERMOUNT = ['/usr/bin/fusermount3', '/bin/fusermount3', '/usr/bin/fusermount', '/bin/fusermount'].find((p) => existsSync(p));

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to completion (no shell) and collects its output. */
export function run(cmd: string, args: string[], opts: { input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const spawnOpts: SpawnOptions = { stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout: opts.timeoutMs ?? 60_000 };
    if (opts.env) spawnOpts.env = opts.env;
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

function describeRun(what: string, r: RunResult): string {
  return `${what} failed (exit ${r.code}${r.signal ? `, signal ${r.signal}` : ''})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
}

/** `gocryptfs -init -q -extpass 'echo test' -scryptn 10 FLAGS... dir`. */
export async function gocryptfsInit(cipherdir: string, flags: string[] = []): Promise<void> {
  const r = await run(GOCRYPTFS, ['-init', '-q', ...EXTPASS, ...SCRYPTN, ...flags, cipherdir]);
  if (r.code !== 0) throw new Error(describeRun(`gocryptfs -init ${flags.join(' ')}`, r));
}

/** The master key of a config as 64 hex digits (gocryptfs-xray -dumpmasterkey). */
export async function dumpMasterKey(confPath: string): Promise<string> {
  const r = await run(GOCRYPTFS_XRAY, ['-dumpmasterkey', confPath], { input: `${PASSWORD}\n` });
  const m = /\b([0-9a-f]{64})\b/.exec(r.stdout);
  if (r.code !== 0 || !m) throw new Error(describeRun('gocryptfs-xray -dumpmasterkey', r));
  return m[1]!;
}

/** `gocryptfs -fsck`: exit code and combined output. */
export async function gocryptfsFsck(cipherdir: string, flags: string[] = []): Promise<RunResult> {
  return run(GOCRYPTFS, ['-fsck', ...EXTPASS, ...flags, cipherdir], { timeoutMs: 120_000 });
}

// ------------------------------------------------------------------ mounts

/** Mount points listed in /proc/mounts (octal escapes decoded). */
export function listMounts(): { source: string; target: string; fstype: string }[] {
  const text = readFileSync('/proc/mounts', 'utf8');
  const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const [source = '', target = '', fstype = ''] = l.split(' ');
      return { source: unescape(source), target: unescape(target), fstype };
    });
}

export function isMounted(mnt: string): boolean {
  const abs = resolve(mnt);
  return listMounts().some((m) => m.target === abs);
}

/** Mount points at or below `dir`, deepest first. */
export function mountsUnder(dir: string): string[] {
  const abs = resolve(dir);
  return listMounts()
    .map((m) => m.target)
    .filter((t) => t === abs || t.startsWith(abs + '/'))
    .sort((a, b) => b.length - a.length);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** PIDs of live (non-zombie) processes whose command line mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8'); // empty for zombies
      if (cmd.includes(needle)) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export interface MountOptions {
  /** Extra gocryptfs flags (e.g. -masterkey=..., -ro). */
  flags?: string[];
  /** Create a control socket at this path (-ctlsock). */
  ctlsock?: string;
  /** Pass -extpass (default true; false with -masterkey). */
  password?: boolean;
}

/**
 * Mounts `cipherdir` on `mnt` with gocryptfs. gocryptfs daemonizes and its
 * foreground process exits only once the mount is ready. The daemon gets a
 * log file, never our pipes (a Go program dies of SIGPIPE writing to a
 * closed stdout/stderr).
 */
export async function mountGocryptfs(cipherdir: string, mnt: string, opts: MountOptions = {}): Promise<void> {
  await fsp.mkdir(mnt, { recursive: true });
  const args = ['-q', '-nosyslog'];
  if (opts.password !== false) args.push(...EXTPASS);
  if (opts.ctlsock) args.push('-ctlsock', opts.ctlsock);
  args.push(...(opts.flags ?? []), cipherdir, mnt);
  const logPath = `${resolve(mnt)}.gocryptfs.log`;
  const logFd = openSync(logPath, 'a');
  let code: number | null;
  let signal: NodeJS.Signals | null;
  try {
    ({ code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res, rej) => {
      const child = spawn(GOCRYPTFS, args, { stdio: ['ignore', logFd, logFd] });
      const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
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
  if (code !== 0 || !isMounted(mnt)) {
    // A half-made mount must not survive a failure.
    if (isMounted(mnt)) await unmount(mnt);
    const log = readFileSync(logPath, 'utf8');
    throw new Error(`gocryptfs mount ${args.join(' ')} failed (exit ${code}${signal ? `, ${signal}` : ''}):\n${log}`);
  }
}

/**
 * Unmounts `mnt`, whatever it takes: fusermount -u (retried, a just-closed
 * file can keep it busy for a moment), then umount -l as a last resort.
 * Throws if it is still listed in /proc/mounts afterwards. Then waits for
 * the gocryptfs daemon serving it to exit (never kills anything).
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
  for (let i = 0; i < 50 && processesMentioning(abs).length > 0; i++) await sleep(50);
}

/** Mounts, runs `fn` on the mount point, and unmounts whatever happens. */
export async function withGocryptfsMount<T>(cipherdir: string, mnt: string, opts: MountOptions, fn: (mnt: string) => Promise<T>): Promise<T> {
  await mountGocryptfs(cipherdir, mnt, opts);
  try {
    return await fn(mnt);
  } finally {
    await unmount(mnt);
  }
}

// ---------------------------------------------------------- control socket

export interface CtlSockResponse {
  Result: string;
  ErrNo: number;
  ErrText: string;
  WarnText: string;
}

/** One request on a gocryptfs control socket (FORMAT.md §11). */
export function ctlsockRequest(sock: string, req: { EncryptPath?: string; DecryptPath?: string }): Promise<CtlSockResponse> {
  return new Promise((res, rej) => {
    const c = createConnection(sock);
    let buf = '';
    c.setEncoding('utf8');
    c.setTimeout(10_000, () => c.destroy(new Error('ctlsock timeout')));
    c.on('connect', () => c.write(JSON.stringify(req)));
    c.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        c.end();
        try {
          res(JSON.parse(buf.slice(0, nl)) as CtlSockResponse);
        } catch (e) {
          rej(e);
        }
      }
    });
    c.on('error', rej);
  });
}

/** Cipher path (relative to CIPHERDIR) of a plaintext path, as gocryptfs computes it. */
export async function encryptPath(sock: string, plainPath: string): Promise<string> {
  const r = await ctlsockRequest(sock, { EncryptPath: plainPath });
  if (r.ErrNo !== 0) throw new Error(`ctlsock EncryptPath ${plainPath}: ${r.ErrNo} ${r.ErrText}`);
  return r.Result;
}

/** Absolute path under `cipherdir` for a relative cipher path. */
export function cipherJoin(cipherdir: string, rel: string): string {
  return rel === '' ? cipherdir : join(cipherdir, rel);
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
 * SIGINT/SIGTERM (then exiting as the signal would have).
 */
export function guardMountsUnder(dir: string): void {
  guarded.add(resolve(dir));
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', emergencyUnmountAll);
  for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
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
