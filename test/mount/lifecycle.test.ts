/**
 * Mounting and unmounting MOUNT_IMPL (see test/helpers/mount.ts), and how
 * it fails: missing mount point (exit 10), missing cipher directory (6),
 * wrong password (12), non-empty or busy mount point (10), unmount while
 * busy; -ro; SIGTERM/SIGINT and fusermount -u end the daemon cleanly with
 * every byte written before on disk. Each failure must leave nothing
 * mounted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { constants as C, promises as fsp } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fsSide, prng, readManifest } from '../helpers/tree.js';
import {
  cleanupMountsUnder,
  daemonPids,
  FUSERMOUNT,
  initCipherdir,
  isAlive,
  isMounted,
  mountEntries,
  mountForeground,
  mountImpl,
  MOUNT_IMPL,
  run,
  tryMount,
  unmountAndReap,
  waitFor,
  withMount,
} from '../helpers/mount.js';
import { assertBytes, assertFsckClean, rejectsWith, useCipherdir } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 60_000, ...needs('mount', 'gocryptfs') };
const impl = MOUNT_IMPL;
const fx = useCipherdir('lifecycle', impl);

function assertNothingMounted(mnt: string): void {
  assert.equal(isMounted(mnt), false, `${mnt} must not be mounted`);
  assert.deepEqual(daemonPids(mnt), [], `no daemon may be left for ${mnt}`);
}

test('a missing mount point: exit 10, a message naming it, nothing mounted', T, async () => {
  const mnt = join(fx.tmp, 'does-not-exist');
  const a = await tryMount(impl, fx.cipherdir, mnt, { createMountpoint: false });
  assert.equal(a.code, 10, `${a.command}\n${a.output}`);
  assert.match(a.output, /does-not-exist/);
  assertNothingMounted(mnt);
});

test('a missing cipher directory: exit 6, nothing mounted', T, async () => {
  const mnt = join(fx.tmp, 'mnt-nocipher');
  const a = await tryMount(impl, join(fx.tmp, 'no-cipher'), mnt);
  assert.equal(a.code, 6, `${a.command}\n${a.output}`);
  assertNothingMounted(mnt);
  assert.deepEqual(await fsp.readdir(mnt), []);
});

test('a wrong password: exit 12, "Password incorrect", nothing mounted', T, async () => {
  const mnt = join(fx.tmp, 'mnt-wrongpw');
  const a = await tryMount(impl, fx.cipherdir, mnt, { password: 'wrong' });
  assert.equal(a.code, 12, `${a.command}\n${a.output}`);
  assert.match(a.output, /password incorrect/i);
  assertNothingMounted(mnt);
});

test('a non-empty mount point: exit 10 without -nonempty; with it the mount hides the files until unmounted', T, async () => {
  const mnt = join(fx.tmp, 'mnt-nonempty');
  await fsp.mkdir(mnt);
  await fsp.writeFile(join(mnt, 'underneath.txt'), 'shadowed');
  const a = await tryMount(impl, fx.cipherdir, mnt);
  assert.equal(a.code, 10, `${a.command}\n${a.output}`);
  assert.match(a.output, /not empty/i);
  assertNothingMounted(mnt);
  await withMount(impl, fx.cipherdir, mnt, { flags: ['-nonempty'] }, async (m) => {
    assert.ok(!(await fsp.readdir(m)).includes('underneath.txt'), 'the mount covers the directory');
  });
  assert.deepEqual(await fsp.readdir(mnt), ['underneath.txt']);
});

test('a second mount on a busy mount point fails with exit 10; the first mount is unaffected', T, async () => {
  const mnt = join(fx.tmp, 'mnt-busy');
  await withMount(impl, fx.cipherdir, mnt, {}, async (m) => {
    await fsp.writeFile(join(m, 'first.txt'), 'from the first mount');
    const a = await tryMount(impl, fx.cipherdir, m);
    assert.equal(a.code, 10, `${a.command}\n${a.output}`);
    assert.equal(mountEntries(m).length, 1, 'still exactly one mount');
    assert.equal(await fsp.readFile(join(m, 'first.txt'), 'utf8'), 'from the first mount');
    await fsp.writeFile(join(m, 'second.txt'), 'still writable');
    assert.equal(daemonPids(m).length, 1, 'one daemon serves it');
  });
  assertNothingMounted(mnt);
});

test('unmount while a file is open or a process has its cwd inside: "Device or resource busy", the mount stays usable, then unmounts', T, async () => {
  assert.ok(FUSERMOUNT, 'fusermount3 is needed');
  const mnt = join(fx.tmp, 'mnt-open');
  await mountImpl(impl, fx.cipherdir, mnt);
  try {
    const h = await fsp.open(join(mnt, 'held-open.txt'), 'w+');
    try {
      await h.write('written before the unmount attempt\n');
      const r = await run(FUSERMOUNT, ['-u', mnt]);
      assert.notEqual(r.code, 0, 'fusermount -u fails while a file is open');
      assert.match(r.stderr, /Device or resource busy/);
      assert.ok(isMounted(mnt), 'still mounted');
      await h.write('and after it\n');
      await fsp.writeFile(join(mnt, 'new-after-busy.txt'), 'the mount still works');
      assert.equal(await fsp.readFile(join(mnt, 'new-after-busy.txt'), 'utf8'), 'the mount still works');
    } finally {
      await h.close();
    }
    // A process whose working directory is inside the mount.
    const sleeper = spawn('sleep', ['60'], { cwd: mnt, stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 100));
      const r = await run(FUSERMOUNT, ['-u', mnt]);
      assert.notEqual(r.code, 0, 'fusermount -u fails while a cwd is inside');
      assert.match(r.stderr, /Device or resource busy/);
    } finally {
      sleeper.kill('SIGKILL');
      await new Promise((r) => sleeper.once('exit', r));
    }
    let r = await run(FUSERMOUNT, ['-u', mnt]);
    if (r.code !== 0) {
      await new Promise((res) => setTimeout(res, 300)); // a just-released file can hold it for a moment
      r = await run(FUSERMOUNT, ['-u', mnt]);
    }
    assert.equal(r.code, 0, `fusermount -u once nothing is open: ${r.stderr}`);
    assert.ok(await waitFor(() => daemonPids(mnt).length === 0, 5000), 'the daemon exits after the unmount');
  } finally {
    await unmountAndReap(mnt).catch(() => undefined);
  }
  assertNothingMounted(mnt);
  await withMount(impl, fx.cipherdir, mnt, {}, async (m) => {
    assert.equal(await fsp.readFile(join(m, 'held-open.txt'), 'utf8'), 'written before the unmount attempt\nand after it\n');
  });
});

test('-ro: reading works; writing, creating, removing fail with EROFS', T, async () => {
  const mnt = join(fx.tmp, 'mnt-ro');
  await withMount(impl, fx.cipherdir, mnt, {}, async (m) => {
    await fsp.writeFile(join(m, 'ro.txt'), 'read me');
  });
  await withMount(impl, fx.cipherdir, mnt, { flags: ['-ro'] }, async (m) => {
    assert.ok(mountEntries(m)[0]!.options.split(',').includes('ro'), 'mounted ro');
    assert.equal(await fsp.readFile(join(m, 'ro.txt'), 'utf8'), 'read me');
    await rejectsWith(fsp.writeFile(join(m, 'ro.txt'), 'x'), 'EROFS', 'write');
    await rejectsWith(fsp.writeFile(join(m, 'new.txt'), 'x'), 'EROFS', 'create');
    await rejectsWith(fsp.mkdir(join(m, 'd')), 'EROFS', 'mkdir');
    await rejectsWith(fsp.unlink(join(m, 'ro.txt')), 'EROFS', 'unlink');
    await rejectsWith(fsp.chmod(join(m, 'ro.txt'), 0o600), 'EROFS', 'chmod');
    await rejectsWith(fsp.access(join(m, 'ro.txt'), C.W_OK), 'EROFS', 'access(W_OK)');
    await fsp.access(join(m, 'ro.txt'), C.R_OK);
  });
});

/** Writes a mix of files (no fsync) and returns the manifest the mount shows. */
async function writeMix(m: string, tag: string): Promise<Awaited<ReturnType<typeof readManifest>>> {
  await fsp.mkdir(join(m, tag));
  for (let i = 0; i < 20; i++) await fsp.writeFile(join(m, tag, `f${i}.bin`), prng(`${tag}-${i}`, i * 997));
  const h = await fsp.open(join(m, tag, 'big.bin'), 'w');
  for (let off = 0; off < 3 << 20; off += 128 * 1024) await h.write(prng(`${tag}-big-${off}`, 128 * 1024), 0, 128 * 1024, off);
  await h.close();
  await fsp.symlink('big.bin', join(m, tag, 'link'));
  return readManifest(fsSide(join(m, tag)));
}

test('SIGTERM to the background daemon unmounts and ends it; all data written before is there after a remount', T, async () => {
  const mnt = join(fx.tmp, 'mnt-sigterm');
  await mountImpl(impl, fx.cipherdir, mnt);
  let written;
  try {
    written = await writeMix(mnt, 'sigterm');
    const pids = daemonPids(mnt);
    assert.equal(pids.length, 1, `exactly one daemon process mentions ${mnt}: ${pids.join(', ')}`);
    process.kill(pids[0]!, 'SIGTERM');
    assert.ok(await waitFor(() => !isMounted(mnt), 10_000), 'unmounted after SIGTERM');
    assert.ok(await waitFor(() => !isAlive(pids[0]!), 10_000), 'the daemon exited after SIGTERM');
  } finally {
    await unmountAndReap(mnt).catch(() => undefined);
  }
  await withMount(impl, fx.cipherdir, mnt, {}, async (m) => {
    assert.deepEqual(await readManifest(fsSide(join(m, 'sigterm'))), written, 'everything written before SIGTERM is there');
  });
  await assertFsckClean(fx.cipherdir);
});

test('two background mounts: ps names each daemon\'s cipher directory and mount point, so pgrep finds the daemon of one mount; each has one malloc arena per CPU from its start', T, async () => {
  const cipher2 = join(fx.tmp, 'cipher-title');
  await initCipherdir(impl, cipher2);
  const [mntA, mntB] = [join(fx.tmp, 'mnt-title-a'), join(fx.tmp, 'mnt-title-b')];
  await mountImpl(impl, fx.cipherdir, mntA);
  try {
    await mountImpl(impl, cipher2, mntB);
    try {
      const ps = await run('ps', ['-eo', 'pid=,args=']);
      assert.equal(ps.code, 0, ps.stderr);
      for (const [cipher, mnt, other] of [[fx.cipherdir, mntA, mntB], [cipher2, mntB, mntA]] as const) {
        const lines = ps.stdout.split('\n').filter((l) => l.includes(` ${mnt}`) && !/\b(fusermount3?|umount|mount)\b/.test(l.split(' ').filter(Boolean)[1] ?? ''));
        assert.equal(lines.length, 1, `one process names ${mnt}:\n${lines.join('\n')}`);
        const pid = Number(lines[0]!.trim().split(' ')[0]);
        assert.deepEqual(daemonPids(mnt), [pid], 'the process that serves it');
        const args = await run('ps', ['-o', 'args=', '-p', String(pid)]);
        assert.ok(args.stdout.includes(cipher) && args.stdout.includes(mnt) && !args.stdout.includes(other), `ps -o args= -p ${pid}: ${args.stdout}`);
        if (impl === 'tscryptfs') {
          // glibc reads the arena limit at the daemon's start, before V8's threads make arenas of their own.
          const env = (await fsp.readFile(`/proc/${pid}/environ`, 'latin1')).split('\0');
          const want = process.env.MALLOC_ARENA_MAX ?? String(Math.max(2, availableParallelism()));
          assert.ok(env.includes(`MALLOC_ARENA_MAX=${want}`), `the daemon's MALLOC_ARENA_MAX: ${env.filter((e) => e.startsWith('MALLOC_')).join(' ') || 'none'}`);
        }
      }
    } finally {
      await unmountAndReap(mntB);
    }
  } finally {
    await unmountAndReap(mntA);
  }
});

for (const how of ['SIGINT', 'SIGTERM', 'fusermount -u'] as const) {
  test(`-fg: ${how} unmounts, the process exits 0 (gocryptfs: 15 after a signal), and the data is there`, T, async () => {
    const mnt = join(fx.tmp, `mnt-fg-${how.replace(/\W+/g, '')}`);
    const fg = await mountForeground(impl, fx.cipherdir, mnt);
    try {
      const data = prng(`fg-${how}`, 200_000);
      await fsp.writeFile(join(mnt, `fg-${how}.bin`), data);
      if (how === 'fusermount -u') {
        const r = await run(FUSERMOUNT!, ['-u', mnt]);
        assert.equal(r.code, 0, r.stderr);
      } else {
        fg.child.kill(how);
      }
      const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000));
      const res = await Promise.race([fg.exited, timeout]);
      assert.notEqual(res, 'timeout', `the -fg process exits after ${how}`);
      // The issue asks for exit 0 after a signal too; gocryptfs 2.3 exits 15 (exitcodes.SigInt)
      // after SIGINT or SIGTERM once it has unmounted, and 0 after an external unmount.
      const code = how !== 'fusermount -u' && impl === 'gocryptfs' ? 15 : 0;
      assert.deepEqual(res, { code, signal: null }, `exit status after ${how}\n${fg.log()}`);
      assert.equal(isMounted(mnt), false, 'unmounted');
      await withMount(impl, fx.cipherdir, mnt, {}, async (m) => {
        assertBytes(await fsp.readFile(join(m, `fg-${how}.bin`)), data, `data written before ${how}`);
      });
    } finally {
      if (fg.child.exitCode === null && fg.child.signalCode === null) fg.child.kill('SIGKILL');
      await unmountAndReap(mnt).catch(() => undefined);
    }
  });
}

test('nothing left mounted or running', async () => {
  assert.deepEqual(await cleanupMountsUnder(fx.tmp), []);
});
