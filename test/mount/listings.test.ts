/**
 * Listings that carry their entries (READDIRPLUS) on a real mount of
 * MOUNT_IMPL: ls -l of a directory whose entries the kernel no longer
 * trusts needs no LOOKUP per name, and names handed over that way still
 * show every change made through the mount at once, hard links included,
 * also after the kernel forgot them and got them again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { logPathFor, sleep, withMount, initCipherdir } from '../helpers/mount.js';
import { ok, rejectsWith, useMountFixture } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';
import { NATIVE } from '../helpers/native-paths.js';
import { countKernelRequests, kernelRequestsProblem } from '../helpers/kernel-requests.js';

const fx = useMountFixture('listings');
const T = { timeout: 60_000, ...needs('mount') };

/** Longer than both implementations keep a name's entry (1 s). */
const ENTRY_TIMEOUT_MS = 1200;

/** A directory of `n` files of distinct sizes, three subdirectories and a symlink. */
async function fill(dir: string, n: number): Promise<Map<string, number>> {
  await fsp.mkdir(dir);
  const sizes = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    await fsp.writeFile(join(dir, `file-${i}`), Buffer.alloc(i * 7, 1));
    sizes.set(`file-${i}`, i * 7);
  }
  for (const d of ['sub-a', 'sub-b', 'sub-c']) await fsp.mkdir(join(dir, d));
  await fsp.symlink('file-1', join(dir, 'link'));
  return sizes;
}

/** `ls -ln` of `dir`: name -> [mode letters, size]. */
async function lsLong(dir: string): Promise<Map<string, [string, number]>> {
  const out = await ok('ls', ['-ln', dir]);
  const rows = new Map<string, [string, number]>();
  for (const line of out.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 9) continue;
    const name = f[8]!;
    rows.set(name, [f[0]!.slice(0, 10), Number(f[4])]);
  }
  return rows;
}

/** The LOOKUPs and listing requests of one `ls -ln dir`, after the kernel's entries for its names timed out. */
async function lookupsOfLs(mnt: string, dir: string, n: number): Promise<{ lookups: number; plus: number }> {
  const sizes = await fill(dir, n);
  await sleep(ENTRY_TIMEOUT_MS);
  let rows = new Map<string, [string, number]>();
  const counts = await countKernelRequests(mnt, async () => {
    rows = await lsLong(dir);
  });
  for (const [name, size] of sizes) assert.deepEqual(rows.get(name), ['-rw-r--r--', size], `ls -l shows ${name}`);
  for (const d of ['sub-a', 'sub-b', 'sub-c']) assert.equal(rows.get(d)?.[0], 'drwxr-xr-x', `ls -l shows ${d}`);
  assert.equal(rows.get('link')?.[0], 'lrwxrwxrwx');
  assert.equal(rows.size, n + 4);
  return { lookups: counts.FUSE_LOOKUP ?? 0, plus: counts.FUSE_READDIRPLUS ?? 0 };
}

const counting = kernelRequestsProblem();

test('ls -l of a directory whose entries timed out looks up none of its names: the listing carries them (READDIRPLUS)', { ...T, skip: counting ?? T.skip }, async () => {
  const n = 120;
  const { lookups, plus } = await lookupsOfLs(fx.mnt, fx.p('plus'), n);
  assert.ok(plus >= 1, `READDIRPLUS requests: ${plus}`);
  // ls itself looks up the directory it was given (its entry timed out too).
  assert.ok(lookups <= 2, `LOOKUPs for ${n + 4} listed names: ${lookups}`);
});

test('ls -l of a directory of more names than the binding keeps attributes for (4,096) looks up none of them either', { ...T, skip: counting ?? T.skip }, async () => {
  const dir = fx.p('plus-many');
  const n = 5000;
  await fsp.mkdir(dir);
  for (let i = 0; i < n; i++) await fsp.writeFile(join(dir, `f${i}`), i % 7 === 0 ? 'x' : '');
  await sleep(ENTRY_TIMEOUT_MS);
  let rows = new Map<string, [string, number]>();
  const counts = await countKernelRequests(fx.mnt, async () => {
    rows = await lsLong(dir);
  });
  assert.equal(rows.size, n);
  for (let i = 0; i < n; i += 997) assert.deepEqual(rows.get(`f${i}`), ['-rw-r--r--', i % 7 === 0 ? 1 : 0], `ls -l shows f${i}`);
  assert.ok((counts.FUSE_READDIRPLUS ?? 0) >= 1);
  // Past its attribute cache the binding looks each name up in the fast path.
  if (fx.impl !== 'tscryptfs' || NATIVE.lookups) assert.ok((counts.FUSE_LOOKUP ?? 0) <= 2, `LOOKUPs for ${n} listed names: ${counts.FUSE_LOOKUP}`);
});

test('without READDIRPLUS (TSCRYPTFS_READDIRPLUS=0) the same ls -l looks up every name: what the test above counts is real', { ...T, skip: counting ?? (fx.impl !== 'tscryptfs' ? 'the switch exists only in tscryptfs' : T.skip) }, async () => {
  const cipherdir = join(fx.tmp, 'plain-cipher');
  await initCipherdir(fx.impl, cipherdir);
  process.env.TSCRYPTFS_READDIRPLUS = '0';
  try {
    const mnt = join(fx.tmp, 'plain-mnt');
    const n = 40;
    const { lookups, plus } = await withMount(fx.impl, cipherdir, mnt, {}, () => lookupsOfLs(mnt, join(mnt, 'plain'), n));
    assert.equal(plus, 0);
    assert.ok(lookups >= n + 4, `LOOKUPs for ${n + 4} listed names: ${lookups}`);
  } finally {
    delete process.env.TSCRYPTFS_READDIRPLUS;
  }
});

test('every listing starts with . and .., with their inode numbers, as gocryptfs lists them (ls -fai, getdents)', T, async () => {
  const d = fx.p('dots');
  await fsp.mkdir(d);
  await fsp.writeFile(join(d, 'x'), 'x');
  await fsp.mkdir(join(d, 'sub'));
  for (const [dir, names] of [[d, ['sub', 'x']], [join(d, 'sub'), []]] as const) {
    for (let round = 0; round < 2; round++) {
      // `ls -fai`: directory order, no sorting, with each entry's d_ino.
      const rows = (await ok('ls', ['-fai', dir])).trim().split('\n').map((l) => l.trim().split(/\s+/));
      assert.deepEqual(rows.slice(0, 2).map((r) => r[1]), ['.', '..'], `${dir}: . and .. come first (listing ${round})`);
      assert.equal(rows[0]![0], String((await fsp.stat(dir, { bigint: true })).ino), `${dir}: . has the directory's inode number`);
      if (dir !== d) assert.equal(rows[1]![0], String((await fsp.stat(d, { bigint: true })).ino), `${dir}: .. has its parent's`);
      assert.deepEqual(rows.slice(2).map((r) => r[1]).sort(), [...names], `${dir}: then the entries, once each`);
    }
  }
  assert.deepEqual((await fsp.readdir(d)).sort(), ['sub', 'x'], 'fs.readdir leaves . and .. out, as everywhere');
});

test('names a listing handed over show every later change at once: hard links, chmod, rename, unlink, and after the kernel forgot them', T, async () => {
  const dir = fx.p('changes');
  await fsp.mkdir(dir);
  await fsp.writeFile(join(dir, 'a'), Buffer.alloc(100, 2));
  await fsp.link(join(dir, 'a'), join(dir, 'b'));
  await fsp.writeFile(join(dir, 'c'), 'c');
  await fsp.mkdir(join(dir, 'sub'));
  await sleep(ENTRY_TIMEOUT_MS);
  await fsp.readdir(dir); // hands over a, b, c and sub
  await fsp.appendFile(join(dir, 'a'), Buffer.alloc(50, 3));
  let st = await fsp.stat(join(dir, 'b'));
  assert.deepEqual([st.size, st.nlink], [150, 2], 'the other name of a hard link, right after an append');
  await fsp.chmod(join(dir, 'b'), 0o600);
  assert.equal((await fsp.stat(join(dir, 'a'))).mode & 0o777, 0o600, 'chmod through the other name');
  await fsp.readdir(dir);
  await fsp.rename(join(dir, 'c'), join(dir, 'sub', 'd'));
  await rejectsWith(fsp.stat(join(dir, 'c')), 'ENOENT', 'the old name right after a rename');
  assert.equal(await fsp.readFile(join(dir, 'sub', 'd'), 'utf8'), 'c');
  await fsp.readdir(dir);
  await fsp.unlink(join(dir, 'a'));
  st = await fsp.stat(join(dir, 'b'));
  assert.deepEqual([st.size, st.nlink], [150, 1], 'the last name, right after the other was unlinked');

  // The kernel lets go of every name it holds no reference to (a FORGET for
  // each, which the mount must count against the lookups listings made),
  // then gets them back by listing again, several times.
  for (let round = 0; round < 3; round++) {
    writeFileSync('/proc/sys/vm/drop_caches', '2');
    assert.deepEqual((await fsp.readdir(dir)).sort(), ['b', 'sub']);
    assert.deepEqual((await fsp.readdir(join(dir, 'sub'))), ['d']);
    assert.equal((await fsp.readFile(join(dir, 'b'))).length, 150);
    assert.equal((await fsp.stat(join(dir, 'sub', 'd'))).size, 1);
  }
  const log = await fsp.readFile(logPathFor(fx.impl, fx.mnt), 'utf8').catch(() => '');
  assert.doesNotMatch(log, /internal error|underflow/i, 'the mount counted every lookup it was given');
  await fx.teardown();
});
