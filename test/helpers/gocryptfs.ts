/**
 * Driving the real gocryptfs 2.3 from tests: -init, mount, unmount (always,
 * even after failures), -fsck, the master key via gocryptfs-xray, and the
 * control socket.
 *
 * gocryptfs splits -extpass on spaces and runs it without a shell, so the
 * password program is `echo test` (password "test").
 */
import { createConnection } from 'node:net';
import { join } from 'node:path';
import {
  describeRun,
  EXTPASS,
  GOCRYPTFS,
  mountImpl,
  PASSWORD,
  run,
  SCRYPTN,
  unmount,
  type MountOptions as ImplMountOptions,
  type RunResult,
} from './mount.js';

// The generic mount machinery lives in mount.ts; these re-exports keep this module's API.
export {
  EXTPASS,
  GOCRYPTFS,
  guardMountsUnder,
  isMounted,
  listMounts,
  mountsUnder,
  PASSWORD,
  run,
  SCRYPTN,
  unguardMountsUnder,
  unmount,
  type RunResult,
} from './mount.js';

import { GOCRYPTFS_XRAY_BIN as GOCRYPTFS_XRAY } from './requirements.js';
export { GOCRYPTFS_XRAY };

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

export interface MountOptions {
  /** Extra gocryptfs flags (e.g. -masterkey=..., -ro). */
  flags?: string[];
  /** Create a control socket at this path (-ctlsock). */
  ctlsock?: string;
  /** Pass -extpass (default true; false with -masterkey). */
  password?: boolean;
}

/**
 * Mounts `cipherdir` on `mnt` with gocryptfs (see mountImpl in mount.ts).
 * gocryptfs daemonizes and its foreground process exits only once the
 * mount is ready.
 */
export async function mountGocryptfs(cipherdir: string, mnt: string, opts: MountOptions = {}): Promise<void> {
  const o: ImplMountOptions = { flags: opts.flags ?? [] };
  if (opts.password === false) o.password = false;
  if (opts.ctlsock) o.ctlsock = opts.ctlsock;
  await mountImpl('gocryptfs', cipherdir, mnt, o);
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

/** One request on a gocryptfs control socket (Documentation/format.md §11.2). */
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
