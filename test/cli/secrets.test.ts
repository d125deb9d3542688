/**
 * Secrets stay secret: the master key given with -masterkey is gone from
 * /proc/PID/cmdline of a running mount (foreground and background), is
 * never echoed in errors or -d output, and gocryptfs's warning is shown;
 * passwords never appear in output; the config file and its temporary file
 * are created 0400 (checked with strace on the real system calls); key
 * buffers are zeroed when the mount starts and when it ends.
 * The no-echo password prompt is covered by test/cli/tty.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { redactArgs } from '../../src/cli/redact.js';
import { daemonPids, isMounted, mountForeground, mountImpl, PASSWORD, unmountAndReap, waitFor } from '../helpers/mount.js';
import { startServing, type ServePlan } from '../../src/cli/serve.js';
import { Vault } from '../../src/index.js';
import { useCipherdir } from '../helpers/mount-suite.js';
import { dumpMasterKey } from '../helpers/gocryptfs.js';
import { BIN, initVault, modeOf, tscryptfs } from './helpers.js';
import { needs } from '../helpers/requirements.js';
import { internalAccess } from '../../src/vault/internal-access.js';

const T = { timeout: 60_000, ...needs('mount', 'gocryptfs') };
const fx = useCipherdir('secrets', 'tscryptfs');

function cmdline(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
}

test('redactArgs: every spelling of -masterkey, and -o masterkey=; "stdin" is no secret', () => {
  const k = 'ab'.repeat(32);
  assert.deepEqual(redactArgs(['-masterkey', k, 'c', 'm']), ['-masterkey', '***', 'c', 'm']);
  assert.deepEqual(redactArgs(['--masterkey=' + k, '-fg']), ['--masterkey=***', '-fg']);
  assert.deepEqual(redactArgs(['-o', `ro,masterkey=${k}`, 'c']), ['-o', 'ro,masterkey=***', 'c']);
  assert.deepEqual(redactArgs(['-masterkey=stdin', '-extpass', 'echo x']), ['-masterkey=stdin', '-extpass', 'echo x']);
  assert.deepEqual(redactArgs(['--', '-masterkey', k]), ['--', '-masterkey', k]);
});

test('-masterkey: the warning, and the key never in errors or -d output', needs('gocryptfs'), async () => {
  const key = await dumpMasterKey(join(fx.cipherdir, 'gocryptfs.conf'));
  const bad = await tscryptfs(['-masterkey', key, '-bogus', fx.cipherdir]);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Invalid command line: .*"-masterkey" "\*\*\*" "-bogus"/);
  const r = await tscryptfs(['-fsck', '-d', '-masterkey', key, fx.cipherdir]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /cli args: .*"-masterkey" "\*\*\*"/);
  assert.match(r.stdout, /THE MASTER KEY IS VISIBLE VIA "ps ax" AND MAY BE STORED IN YOUR SHELL HISTORY!\nONLY USE THIS MODE FOR EMERGENCIES/);
  for (const out of [bad.stdout, bad.stderr, r.stdout, r.stderr]) assert.ok(!out.toLowerCase().includes(key), out);
});

test('-masterkey: gone from /proc/PID/cmdline of a running foreground mount and of a background daemon', T, async () => {
  const key = await dumpMasterKey(join(fx.cipherdir, 'gocryptfs.conf'));
  const dashed = key.match(/.{8}/g)!.join('-');
  const mnt = join(fx.tmp, 'mnt-fg');
  const fg = await mountForeground('tscryptfs', fx.cipherdir, mnt, { password: false, flags: ['-masterkey', dashed] });
  try {
    const pid = fg.child.pid!;
    assert.ok(await waitFor(() => cmdline(pid).includes('-masterkey ***'), 5000), cmdline(pid));
    assert.ok(!cmdline(pid).includes(dashed) && !cmdline(pid).includes(key), cmdline(pid));
    assert.ok(!readFileSync(`/proc/${pid}/environ`, 'latin1').includes(key));
    await fsp.writeFile(join(mnt, 'f'), 'through the fg mount');
  } finally {
    await unmountAndReap(mnt);
  }
  await fg.exited;
  const mnt2 = join(fx.tmp, 'mnt-bg');
  await mountImpl('tscryptfs', fx.cipherdir, mnt2, { password: false, flags: ['-masterkey', key] });
  try {
    const pids = daemonPids(mnt2);
    assert.equal(pids.length, 1);
    const text = cmdline(pids[0]!) + readFileSync(`/proc/${pids[0]}/environ`, 'latin1');
    assert.ok(!text.includes(key), 'the daemon got the key over IPC, not on its command line or environment');
    assert.equal(await fsp.readFile(join(mnt2, 'f'), 'utf8'), 'through the fg mount');
  } finally {
    await unmountAndReap(mnt2);
  }
});

test('passwords never reach the output, also when wrong', async () => {
  const pwfile = join(fx.tmp, 'pw');
  await fsp.writeFile(pwfile, 'Secret-Password-42\n');
  const dir = await initVault(fx.tmp, 'pwvault', [], 'Secret-Password-42');
  for (const args of [
    ['-info', dir],
    ['-fsck', '-d', '-passfile', pwfile, dir],
    ['-fsck', '-d', '-extpass', 'echo Wrong-Password-43', dir],
  ]) {
    const r = await tscryptfs(args, { input: 'Secret-Password-42\n' });
    assert.ok(r.code === 0 || r.code === 12, `${args.join(' ')}: ${r.code} ${r.stderr}`);
    for (const out of [r.stdout, r.stderr]) assert.doesNotMatch(out, /Secret-Password-42/);
  }
});

test('the config file and its temporary file are created 0400 (init and passwd)', async () => {
  const dir = join(fx.tmp, 'modes');
  await fsp.mkdir(dir);
  const trace = join(fx.tmp, 'strace.out');
  const init = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat,rename,chmod,fchmod,fchmodat', '-o', trace, process.execPath, BIN, '-init', '-q', '-scryptn', '10', dir], { input: 'pw\n', encoding: 'utf8' });
  assert.equal(init.status, 0, init.stderr);
  const calls = readFileSync(trace, 'utf8');
  assert.match(calls, /openat\(AT_FDCWD, "[^"]*\/gocryptfs\.conf\.tmp", O_WRONLY\|O_CREAT\|O_EXCL(?:\|O_CLOEXEC)?, 0400\) = \d+/);
  assert.doesNotMatch(calls, /chmod\([^)]*gocryptfs\.conf/, 'no chmod after the fact');
  assert.equal(await modeOf(join(dir, 'gocryptfs.conf')), 0o400);
  const passwd = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat', '-o', trace, process.execPath, BIN, '-passwd', '-q', dir], { input: 'pw\nnew\n', encoding: 'utf8' });
  assert.equal(passwd.status, 0, passwd.stderr);
  assert.match(readFileSync(trace, 'utf8'), /gocryptfs\.conf\.tmp", O_WRONLY\|O_CREAT\|O_EXCL(?:\|O_CLOEXEC)?, 0400\)/);
  assert.equal(await modeOf(join(dir, 'gocryptfs.conf')), 0o400);
  assert.deepEqual((await fsp.readdir(dir)).sort(), ['gocryptfs.conf', 'gocryptfs.diriv']);
});

test('key buffers are zeroed: the serving plan\'s copy once the vault has its own, the vault\'s on close (unmount)', T, async () => {
  const v = await Vault.open(fx.cipherdir, { password: PASSWORD });
  const plan: ServePlan = {
    cipherdir: fx.cipherdir,
    mountpoint: join(fx.tmp, 'mnt-wipe'),
    format: v.format,
    masterKey: Buffer.from(internalAccess(v).masterKey()),
    backend: 'node',
    readOnly: true,
    noPrealloc: false,
    mount: {},
    idleMs: 0,
  };
  const inner = (v as unknown as { masterKey: Uint8Array }).masterKey;
  assert.ok(inner.some((b) => b !== 0));
  await v.close();
  assert.ok(inner.every((b) => b === 0), 'Vault.close zeroes the master key');
  await fsp.mkdir(plan.mountpoint);
  const { mounted, done } = await startServing(plan, { warn: () => undefined });
  try {
    assert.ok(plan.masterKey.every((b) => b === 0), 'startServing zeroes the plan\'s key');
    assert.ok(isMounted(plan.mountpoint));
  } finally {
    await mounted.unmount();
    await done;
  }
  assert.equal(isMounted(plan.mountpoint), false);
});
