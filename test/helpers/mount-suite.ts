/**
 * Shared pieces of the mount tests (test/mount/*): a per-file fixture (temp
 * dir, cipher directory, one mount of MOUNT_IMPL, guaranteed teardown),
 * errno assertions, a Python runner for the system calls node:fs lacks
 * (mknod, setxattr flags, utimensat with nanoseconds, statvfs), and the
 * cipher-side look-ups (cipher path of a plaintext path, expected sizes).
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { gocryptfsFsck } from './gocryptfs.js';
import {
  cleanupMountsUnder,
  guardMountsUnder,
  initCipherdir,
  mountImpl,
  MOUNT_IMPL,
  PASSWORD,
  run,
  unguardMountsUnder,
  unmountAndReap,
  withMount,
  type MountImpl,
  type MountOptions,
} from './mount.js';
import { PYTHON3_BIN, unmet } from './requirements.js';
import { makeTempDir, removeTempDir } from './tmp.js';

export { MOUNT_IMPL } from './mount.js';

/** /usr/bin/python3 (Debian's; not a pyenv shim). */
export const PYTHON = PYTHON3_BIN;

/** Plaintext block size and the default per-block overhead (AES-GCM: 16-byte IV + 16-byte tag). */
export const BS = 4096;
export const OVERHEAD = 32;
export const HEADER = 18;

/** Size of the cipher file holding `plain` bytes (Documentation/format.md §6.5). */
export function cipherSize(plain: number, overhead = OVERHEAD): number {
  return plain === 0 ? 0 : HEADER + plain + Math.ceil(plain / BS) * overhead;
}

export interface MountFixture {
  /** The test file's own temp dir. */
  tmp: string;
  cipherdir: string;
  mnt: string;
  impl: MountImpl;
  /** Absolute path inside the mount. */
  p: (...parts: string[]) => string;
}

/**
 * A temp dir for one mount test file: made (umask 022, crash guard) before
 * its tests, and after them every mount below it is cleaned up and the dir
 * removed. A mount still there at the end is normal when the file's last
 * test was filtered out; failing to remove one is an error.
 */
export function useMountTmp(label: string): { readonly tmp: string } {
  const dir = { tmp: '' };
  before(() => {
    process.umask(0o022);
    dir.tmp = makeTempDir(`tscryptfs-mount-${label}-`);
    guardMountsUnder(dir.tmp);
  });
  after(async () => {
    if (!dir.tmp) return;
    const problems = await cleanupMountsUnder(dir.tmp);
    removeTempDir(dir.tmp);
    unguardMountsUnder(dir.tmp);
    const serious = problems.filter((m) => !m.startsWith('still mounted at the end'));
    if (serious.length > 0) throw new Error(`cleanup found: ${serious.join('; ')}`);
  });
  return dir;
}

/**
 * useMountTmp plus a cipher directory `<tmp>/cipher` made by `impl -init`
 * with `initFlags`, for test files that mount it in several ways.
 */
export function useCipherdir(label: string, impl: MountImpl, initFlags: string[] = []): { readonly tmp: string; readonly cipherdir: string } {
  const dir = useMountTmp(label);
  const fx = { tmp: '', cipherdir: '' };
  before(async () => {
    fx.tmp = dir.tmp;
    fx.cipherdir = join(fx.tmp, 'cipher');
    // Hooks run even when every test of the file is skipped for a missing tool.
    if (impl === 'gocryptfs' && unmet('gocryptfs')) return;
    await initCipherdir(impl, fx.cipherdir, initFlags);
  });
  return fx;
}

/**
 * Sets up one test file: a temp dir, a cipher directory made by the
 * implementation under test (`-init` flags given), and a mount of it
 * (mount flags given). `teardown()` (called by the file's last test)
 * unmounts and checks that nothing is left; the after hook cleans up
 * whatever a failure left behind.
 */
export function useMountFixture(label: string, opts: { initFlags?: string[]; mount?: MountOptions; mountNow?: boolean } = {}): MountFixture & {
  teardown: () => Promise<void>;
} {
  const fx = {
    tmp: '',
    cipherdir: '',
    mnt: '',
    impl: MOUNT_IMPL,
    p: (...parts: string[]): string => join(fx.mnt, ...parts),
    async teardown(): Promise<void> {
      await unmountAndReap(fx.mnt);
      const problems = await cleanupMountsUnder(fx.tmp);
      assert.deepEqual(problems, [], 'nothing may stay mounted or running');
    },
  };
  const dir = useMountTmp(label);
  before(async () => {
    fx.tmp = dir.tmp;
    fx.cipherdir = join(fx.tmp, 'cipher');
    fx.mnt = join(fx.tmp, 'mnt');
    // Hooks run even when every test of the file is skipped for a missing tool.
    if (unmet('mount')) return;
    await initCipherdir(MOUNT_IMPL, fx.cipherdir, opts.initFlags ?? []);
    if (opts.mountNow !== false) await mountImpl(MOUNT_IMPL, fx.cipherdir, fx.mnt, opts.mount ?? {});
  });
  return fx;
}

/** Byte equality with a short message (first difference, lengths) instead of a dump of both buffers. */
export function assertBytes(actual: Buffer, expected: Buffer, what = 'content'): void {
  if (actual.equals(expected)) return;
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i++;
  const show = (b: Buffer): string => b.subarray(i, i + 16).toString('hex');
  assert.fail(`${what}: ${actual.length} bytes, expected ${expected.length}; first difference at offset ${i}: ${show(actual)} vs expected ${show(expected)}`);
}

/**
 * Mounts `cipherdir` at TMP/LABEL-mnt of MOUNT_IMPL with mount `flags` and
 * with `env` set (and TSCRYPTFS_OPSTATS), runs `fn` and unmounts; gives back
 * `fn`'s result and the mount's calls by FUSE operation ({} for another
 * implementation, which does not count them).
 */
export async function withCallCounts<R>(
  tmp: string,
  label: string,
  cipherdir: string,
  o: { env?: Record<string, string>; flags?: string[] },
  fn: (mnt: string) => Promise<R>,
): Promise<[R, Record<string, number>]> {
  const stats = join(tmp, `${label}-ops.json`);
  const set = { TSCRYPTFS_OPSTATS: stats, ...o.env };
  for (const [k, v] of Object.entries(set)) process.env[k] = v;
  let r: R;
  try {
    r = await withMount(MOUNT_IMPL, cipherdir, join(tmp, `${label}-mnt`), { flags: o.flags ?? [] }, fn);
  } finally {
    for (const k of Object.keys(set)) delete process.env[k];
  }
  if (MOUNT_IMPL !== 'tscryptfs') return [r, {}];
  return [r, JSON.parse(await fsp.readFile(stats, 'utf8')) as Record<string, number>];
}

/**
 * withCallCounts in `dir`'s temporary directory, with the mount's
 * environment and flags as arguments: how the tests of the native fast
 * path count which requests reached JS.
 */
export function callCounter(dir: { readonly tmp: string }) {
  return <R>(label: string, cipherdir: string, env: Record<string, string>, fn: (mnt: string) => Promise<R>, flags: string[] = []): Promise<[R, Record<string, number>]> =>
    withCallCounts(dir.tmp, label, cipherdir, { env, flags }, fn);
}

/** gocryptfs -fsck on an unmounted cipher directory must be clean. */
export async function assertFsckClean(cipherdir: string): Promise<void> {
  const r = await gocryptfsFsck(cipherdir);
  const out = r.stdout + r.stderr;
  assert.equal(r.code, 0, `gocryptfs -fsck exit ${r.code}:\n${out}`);
  assert.match(out, /no problems found/, out);
}

/** Asserts that `p` rejects with the given errno code (e.g. 'EEXIST'). */
export async function rejectsWith(p: Promise<unknown>, code: string, what: string): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err, `${what}: expected ${code}, but it succeeded`);
  assert.equal((err as { code?: string }).code, code, `${what}: expected ${code}, got ${(err as Error).message}`);
}

/**
 * Runs a Python snippet with a prelude: `t(fn)` returns "OK" or the errno
 * name; `out(x)` prints x as JSON (call it once). Arguments are in `A`.
 */
export async function py<T = unknown>(code: string, args: string[] = []): Promise<T> {
  const prelude = [
    'import os, sys, json, errno, stat',
    'A = sys.argv[1:]',
    'def t(f):',
    '    try:',
    '        f()',
    '        return "OK"',
    '    except OSError as e:',
    '        return errno.errorcode.get(e.errno, str(e.errno))',
    'def out(x):',
    '    print(json.dumps(x))',
    '',
  ].join('\n');
  const r = await run(PYTHON, ['-c', prelude + code, ...args]);
  if (r.code !== 0) throw new Error(`python failed (${r.code}):\n${r.stderr}\n${code}`);
  return JSON.parse(r.stdout) as T;
}

/** The cipher path (absolute) behind a plaintext path, computed by the library from the cipher directory alone. */
export async function cipherPathOf(cipherdir: string, plain: string): Promise<string> {
  const v = await Vault.open(cipherdir, { password: PASSWORD, readOnly: true });
  try {
    return await v.cipherPath(plain.startsWith('/') ? plain : '/' + plain);
  } finally {
    await v.close();
  }
}

/** Runs a program and asserts it exited 0. */
export async function ok(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {}): Promise<string> {
  const r = await run(cmd, args, opts);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} exited ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout.slice(0, 4000)}\nstderr: ${r.stderr.slice(0, 4000)}`);
  return r.stdout;
}

/** Names in a cipher directory other than gocryptfs's own files. */
export async function cipherEntries(dir: string): Promise<string[]> {
  return (await fsp.readdir(dir)).filter((n) => n !== 'gocryptfs.diriv' && n !== 'gocryptfs.conf').sort();
}
