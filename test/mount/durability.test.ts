/**
 * What the kernel acknowledged is on the backing store: fsync(2) and
 * fdatasync(2) of a file through the mount reach the same call on its
 * cipher file, after its write; of a directory, on its cipher directory, after the backing renameat of the rename it is meant
 * to make durable (the write-temp, fsync, rename-over, fsync-the-directory
 * pattern of editors, git and sqlite). Shown by tracing the daemon with
 * strace; and the library's Vault.fsyncDir answers as fsync(2) would.
 */
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { daemonPids, isAlive, PASSWORD, sleep, waitFor } from '../helpers/mount.js';
import { cipherPathOf, MOUNT_IMPL, py, rejectsWith, useMountFixture } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const fx = useMountFixture('durability');
const STRACE = '/usr/bin/strace';
const T = { timeout: 60_000, ...needs('mount', 'gocryptfs', 'python3'), ...(existsSync(STRACE) ? {} : { skip: `${STRACE} is not installed (Debian package strace)` }) };

/** Runs `fn` with strace following the daemon's threads, and gives back the trace's lines. */
async function traced(calls: string, fn: () => Promise<void>): Promise<string[]> {
  const pids = daemonPids(fx.mnt);
  assert.equal(pids.length, 1, `one daemon serves ${fx.mnt}: ${pids.join(' ')}`);
  const out = join(fx.tmp, `strace-${Date.now()}.txt`);
  const st = spawn(STRACE, ['-f', '-qq', '-y', '-e', `trace=${calls}`, '-o', out, '-p', String(pids[0])], { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((res) => st.on('exit', () => res()));
  try {
    // strace attaches to every thread before it writes the file; a request made earlier would be missed.
    assert.ok(await waitFor(() => existsSync(out), 10_000), 'strace started');
    await sleep(300);
    await fn();
    await sleep(200);
  } finally {
    if (st.pid !== undefined && isAlive(st.pid)) st.kill('SIGINT');
    await exited;
  }
  return readFileSync(out, 'utf8').split('\n');
}

/** Index of the first line at or after `from` that calls `call` on a descriptor of `path` (as strace -y shows it). */
function findCall(lines: string[], call: RegExp, path: string, from = 0): number {
  for (let i = from; i < lines.length; i++) if (call.test(lines[i]!) && lines[i]!.includes(`<${path}>`)) return i;
  return -1;
}

test('fsync of a directory reaches fsync(2) of its cipher directory, after the backing renameat', T, async (t) => {
  if (MOUNT_IMPL !== 'tscryptfs') return t.skip('traces the tscryptfs daemon');
  await fsp.mkdir(fx.p('docs'));
  const cipherDir = await cipherPathOf(fx.cipherdir, '/docs');
  const lines = await traced('fsync,fdatasync,renameat,renameat2', async () => {
    await py(
      `
d = A[0]
fd = os.open(d + '/draft.tmp', os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b'saved')
os.fsync(fd)
os.close(fd)
os.rename(d + '/draft.tmp', d + '/draft.txt')
dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
os.fsync(dfd)
os.fdatasync(dfd)
os.close(dfd)
out(1)
`,
      [fx.p('docs')],
    );
  });
  const rename = findCall(lines, /renameat2?\(/, cipherDir);
  assert.ok(rename >= 0, `a backing renameat in ${cipherDir}:\n${lines.join('\n')}`);
  const fsync = findCall(lines, /\bfsync\(/, cipherDir, rename + 1);
  assert.ok(fsync > rename, `fsync of ${cipherDir} after the renameat:\n${lines.join('\n')}`);
  assert.match(lines[fsync]!, /= 0$/);
  const fdatasync = findCall(lines, /\bfdatasync\(/, cipherDir, fsync + 1);
  assert.ok(fdatasync > fsync, `fdatasync of ${cipherDir}:\n${lines.join('\n')}`);
  assert.equal(await fsp.readFile(fx.p('docs', 'draft.txt'), 'utf8'), 'saved');
});

test('fsync and fdatasync of a file reach fsync(2) and fdatasync(2) of its cipher file, after its write', T, async (t) => {
  if (MOUNT_IMPL !== 'tscryptfs') return t.skip('traces the tscryptfs daemon');
  await fsp.writeFile(fx.p('ledger.txt'), '');
  const cipherFile = await cipherPathOf(fx.cipherdir, '/ledger.txt');
  const lines = await traced('fsync,fdatasync,pwrite64,write', async () => {
    await py(
      `
fd = os.open(A[0], os.O_WRONLY)
os.write(fd, b'entry')
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)
out(1)
`,
      [fx.p('ledger.txt')],
    );
  });
  const write = findCall(lines, /\b(pwrite64|write)\(/, cipherFile);
  assert.ok(write >= 0, `a write to ${cipherFile}:\n${lines.join('\n')}`);
  const fsync = findCall(lines, /\bfsync\(/, cipherFile, write + 1);
  assert.ok(fsync > write, `fsync of ${cipherFile} after the write:\n${lines.join('\n')}`);
  assert.match(lines[fsync]!, /= 0$/);
  const fdatasync = findCall(lines, /\bfdatasync\(/, cipherFile, fsync + 1);
  assert.ok(fdatasync > fsync, `fdatasync of ${cipherFile}:\n${lines.join('\n')}`);
  assert.equal(await fsp.readFile(fx.p('ledger.txt'), 'utf8'), 'entry');
});

test('fsync of the root directory and of a directory removed while open answer as ext4 does', T, async () => {
  const r = await py<Record<string, string>>(
    `
root = A[0]
res = {}
fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
res['root'] = t(lambda: os.fsync(fd))
os.close(fd)
os.mkdir(root + '/gone')
fd = os.open(root + '/gone', os.O_RDONLY | os.O_DIRECTORY)
os.rmdir(root + '/gone')
res['removed'] = t(lambda: os.fsync(fd))
os.close(fd)
out(res)
`,
    [fx.mnt],
  );
  assert.deepEqual(r, { root: 'OK', removed: 'OK' });
});

test('Vault.fsyncDir: a directory and the root flush; a missing path is ENOENT, a file ENOTDIR', T, async () => {
  await fx.teardown();
  const v = await Vault.open(fx.cipherdir, { password: PASSWORD });
  try {
    await v.mkdir('/lib-dir');
    await v.writeFile('/lib-dir/f', 'x');
    await v.fsyncDir('/lib-dir');
    await v.fsyncDir('/', { datasync: true });
    await rejectsWith(v.fsyncDir('/nothing-here'), 'ENOENT', 'missing directory');
    await rejectsWith(v.fsyncDir('/lib-dir/f'), 'ENOTDIR', 'a file');
  } finally {
    await v.close();
  }
});
