/**
 * The mount options, as the mount shows them in /proc/mounts and as they
 * behave: -fsname, -ko, -o (mount(8) syntax), -allow_other, -noexec, -suid,
 * -passfile, -config, -masterkey, -idle, -sharedstorage, and the default
 * background mount (messages to syslog) that must return with its output
 * pipes closed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import {
  daemonPids,
  isMounted,
  logPathFor,
  mountEntries,
  MOUNT_IMPL,
  unmountAndReap,
  waitFor,
  withMount,
} from '../helpers/mount.js';
import { useCipherdir } from '../helpers/mount-suite.js';
import { BIN } from '../helpers/paths.js';
import { GOCRYPTFS_BIN as GOCRYPTFS, needs } from '../helpers/requirements.js';
import { internalAccess } from '../../src/vault/internal-access.js';

const T = { timeout: 60_000, ...needs('mount') };
const impl = MOUNT_IMPL;
const fx = useCipherdir('options', impl);

const options = (mnt: string): string[] => mountEntries(mnt)[0]!.options.split(',');

test('-fsname, -ko, -noexec, -suid and -allow_other reach the kernel', T, async () => {
  await withMount(impl, fx.cipherdir, join(fx.tmp, 'm1'), { flags: ['-fsname', 'myvault', '-ko', 'noatime', '-noexec', '-suid', '-allow_other'] }, async (mnt) => {
    const e = mountEntries(mnt)[0]!;
    assert.equal(e.source, 'myvault');
    const o = options(mnt);
    for (const want of ['noatime', 'noexec', 'allow_other']) assert.ok(o.includes(want), `${want} in ${o.join(',')}`);
    assert.ok(!o.includes('nosuid'), `suid: ${o.join(',')}`);
    await fsp.writeFile(join(mnt, 'f'), 'x');
    assert.equal(await fsp.readFile(join(mnt, 'f'), 'utf8'), 'x');
  });
});

test('-o in mount(8) syntax: passfile=..., ro, generic kernel options', T, async () => {
  const pw = join(fx.tmp, 'pw');
  await fsp.writeFile(pw, 'test\n');
  await withMount(impl, fx.cipherdir, join(fx.tmp, 'm2'), { password: false, flags: ['-o', `passfile=${pw},ro,noatime`] }, async (mnt) => {
    const o = options(mnt);
    assert.ok(o.includes('ro') && o.includes('noatime'), o.join(','));
    await assert.rejects(fsp.writeFile(join(mnt, 'g'), 'x'), { code: 'EROFS' });
  });
});

test('-config and -masterkey mount the same filesystem', T, async () => {
  const moved = join(fx.tmp, 'elsewhere.conf');
  await fsp.copyFile(join(fx.cipherdir, 'gocryptfs.conf'), moved);
  await withMount(impl, fx.cipherdir, join(fx.tmp, 'm3'), { flags: ['-config', moved] }, async (mnt) => {
    await fsp.writeFile(join(mnt, 'via-config'), 'c');
  });
  const v = await Vault.open(fx.cipherdir, { password: 'test' });
  const key = Buffer.from(internalAccess(v).masterKey()).toString('hex');
  await v.close();
  await withMount(impl, fx.cipherdir, join(fx.tmp, 'm4'), { password: false, flags: [`-masterkey=${key}`] }, async (mnt) => {
    assert.equal(await fsp.readFile(join(mnt, 'via-config'), 'utf8'), 'c');
  });
});

test('-sharedstorage mounts and works', T, async () => {
  await withMount(impl, fx.cipherdir, join(fx.tmp, 'm5'), { flags: ['-sharedstorage'] }, async (mnt) => {
    await fsp.writeFile(join(mnt, 'shared'), 'data');
    assert.equal((await fsp.stat(join(mnt, 'shared'))).size, 4);
  });
});

test('-idle unmounts after the quiet period, not while a file is open', T, async () => {
  const mnt = join(fx.tmp, 'm6');
  await withMount(impl, fx.cipherdir, mnt, { flags: ['-idle', '1s'] }, async () => {
    // Made, then opened for reading: with the native fast path both handles are the libfuse threads' (JS never sees them).
    const fh = await fsp.open(join(mnt, 'held'), 'w');
    await fh.write('x');
    await new Promise((r) => setTimeout(r, 2500));
    assert.ok(isMounted(mnt), 'a file open for writing keeps the mount');
    const reader = await fsp.open(join(mnt, 'held'), 'r');
    await fh.close();
    await new Promise((r) => setTimeout(r, 2500));
    assert.ok(isMounted(mnt), 'a file open for reading keeps the mount');
    await reader.close();
    assert.ok(await waitFor(() => !isMounted(mnt), 10_000), 'idle unmount');
    assert.ok(await waitFor(() => daemonPids(mnt).length === 0, 5_000), 'the daemon exits');
  }).catch(async (err) => {
    if (isMounted(mnt)) await unmountAndReap(mnt);
    throw err;
  });
});

test('-idle: lookups keep the mount, also those the libfuse threads answer', T, async () => {
  const mnt = join(fx.tmp, 'm6b');
  await withMount(impl, fx.cipherdir, mnt, { flags: ['-idle', '2s'] }, async () => {
    // A new name every 50 ms for 4 s: each a lookup that reaches the daemon (no cache holds it).
    for (let i = 0; i < 80; i++) {
      await assert.rejects(fsp.stat(join(mnt, `missing-${i}`)), { code: 'ENOENT' });
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(isMounted(mnt), 'lookups are activity');
    assert.ok(await waitFor(() => !isMounted(mnt), 10_000), 'idle unmount once they stop');
    assert.ok(await waitFor(() => daemonPids(mnt).length === 0, 5_000), 'the daemon exits');
  }).catch(async (err) => {
    if (isMounted(mnt)) await unmountAndReap(mnt);
    throw err;
  });
});

test('the default background mount returns with its output closed, and logs go to syslog', T, async () => {
  const mnt = join(fx.tmp, 'm7');
  await fsp.mkdir(mnt);
  const args = impl === 'tscryptfs' ? [BIN] : [];
  const cmd = impl === 'tscryptfs' ? process.execPath : GOCRYPTFS;
  // Pipes, not files: the command must not hold them open after it returns.
  const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(cmd, [...args, '-extpass', 'echo test', fx.cipherdir, mnt], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
  try {
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /Filesystem mounted and ready/);
    assert.ok(isMounted(mnt));
    await fsp.writeFile(join(mnt, 'bg'), 'background');
  } finally {
    await unmountAndReap(mnt);
  }
});

test('-notifypid: the waiting process gets SIGUSR1 once the mount is ready', T, async () => {
  let got = 0;
  const onUsr1 = (): void => {
    got++;
  };
  process.on('SIGUSR1', onUsr1);
  try {
    await withMount(impl, fx.cipherdir, join(fx.tmp, 'm8'), { flags: ['-notifypid', String(process.pid)] }, async (mnt) => {
      assert.ok(await waitFor(() => got === 1, 5_000), 'SIGUSR1 arrived');
      assert.ok(isMounted(mnt));
    });
  } finally {
    process.off('SIGUSR1', onUsr1);
  }
});

test('-kernel_cache mounts and reads back; -fusedebug logs the FUSE requests', T, async () => {
  const mnt = join(fx.tmp, 'm9');
  await withMount(impl, fx.cipherdir, mnt, { flags: ['-kernel_cache', '-fusedebug'] }, async () => {
    await fsp.writeFile(join(mnt, 'kc'), 'cached');
    assert.equal(await fsp.readFile(join(mnt, 'kc'), 'utf8'), 'cached');
  });
  const log = await fsp.readFile(logPathFor(impl, mnt), 'utf8');
  assert.match(log, /unique: \d+/, 'libfuse debug lines in the log');
});
