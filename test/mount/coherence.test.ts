/**
 * Attribute coherence on a real mount of MOUNT_IMPL: a stat right after any
 * change made through the mount shows that change (the mount answers
 * repeated getattrs, and xattr queries after a listing, from a cache; every
 * change must empty it), a change made
 * through a second mount of the same cipher directory shows within about a
 * second, and at once with -sharedstorage. Listings the kernel keeps show
 * every change at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import * as xattr from '../../src/util/xattr-io.js';
import { initCipherdir, mountImpl, run, sleep, unmountAndReap, withMount } from '../helpers/mount.js';
import { rejectsWith, useMountFixture } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';
import { NATIVE } from '../helpers/native-paths.js';

const fx = useMountFixture('coherence');
const T = { timeout: 60_000, ...needs('mount') };

test('a stat right after a change through the mount shows it: write, truncate, chmod, utimes, link, rename, unlink, mkdir', T, async () => {
  const dir = fx.p('c');
  await fsp.mkdir(dir);
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  await fsp.writeFile(a, '');
  await fsp.link(a, b);
  const ha = await fsp.open(a, 'r+');
  const hb = await fsp.open(b, 'r');
  try {
    for (let i = 1; i <= 40; i++) {
      await fsp.stat(a); // fill whatever cache there is
      await fsp.stat(b);
      await ha.write(Buffer.alloc(100, i), 0, 100, (i - 1) * 100);
      assert.equal((await fsp.stat(a)).size, i * 100, `size after write ${i}`);
      assert.equal((await fsp.stat(b)).size, i * 100, `size under the other name after write ${i}`);
      assert.equal((await hb.stat()).size, i * 100, `fstat of the other name's handle after write ${i}`);
      const mode = i % 2 ? 0o640 : 0o604;
      await fsp.chmod(b, mode);
      assert.equal((await fsp.stat(a)).mode & 0o777, mode, `mode after chmod ${i}`);
      const when = new Date(Date.UTC(2020, 0, 1, 0, 0, i));
      await fsp.utimes(a, when, when);
      assert.equal((await fsp.stat(b)).mtimeMs, when.getTime(), `mtime after utimes ${i}`);
    }
    await ha.truncate(10);
    assert.equal((await fsp.stat(b)).size, 10, 'size after ftruncate');
    await fsp.truncate(b, 5000);
    assert.equal((await hb.stat()).size, 5000, 'size after truncate');
  } finally {
    await ha.close();
    await hb.close();
  }
  assert.equal((await fsp.stat(a)).nlink, 2);
  await fsp.unlink(b);
  await rejectsWith(fsp.stat(b), 'ENOENT', 'stat after unlink');
  assert.equal((await fsp.stat(a)).nlink, 1, 'link count after unlinking the other name');
  await fsp.rename(a, join(dir, 'c'));
  await rejectsWith(fsp.stat(a), 'ENOENT', 'stat of the old name after rename');
  assert.equal((await fsp.stat(join(dir, 'c'))).size, 5000, 'stat of the new name after rename');
  await rejectsWith(fsp.stat(join(dir, 'sub')), 'ENOENT', 'before mkdir');
  await fsp.mkdir(join(dir, 'sub'));
  assert.ok((await fsp.stat(join(dir, 'sub'))).isDirectory(), 'stat after mkdir');
  await fsp.rm(dir, { recursive: true });
  await rejectsWith(fsp.stat(dir), 'ENOENT', 'stat after rm -r');
});

test('a file that gets a second name shows it at once under its first: link count, and changes made through the new name', T, async () => {
  const dir = fx.p('l');
  await fsp.mkdir(dir);
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  await fsp.writeFile(a, 'x');
  const ha = await fsp.open(a, 'r');
  try {
    assert.equal((await fsp.stat(a)).nlink, 1); // one name: the kernel may keep these attributes
    assert.equal((await ha.stat()).nlink, 1);
    await fsp.link(a, b);
    assert.equal((await fsp.stat(a)).nlink, 2, 'link count under the first name right after link');
    assert.equal((await ha.stat()).nlink, 2, 'fstat of the first name\'s handle right after link');
    await fsp.appendFile(b, Buffer.alloc(100, 7));
    assert.equal((await fsp.stat(a)).size, 101, 'size under the first name after a write through the second');
    assert.deepEqual(await fsp.readFile(a), Buffer.concat([Buffer.from('x'), Buffer.alloc(100, 7)]));
    await fsp.chmod(b, 0o600);
    assert.equal((await fsp.stat(a)).mode & 0o777, 0o600, 'mode under the first name after chmod of the second');
  } finally {
    await ha.close();
  }
});

test('after a listing, xattrs and sizes still show every change made through the mount', T, async () => {
  const dir = fx.p('xa');
  await fsp.mkdir(dir);
  for (let i = 0; i < 5; i++) await fsp.writeFile(join(dir, `f${i}`), 'content');
  for (let round = 0; round < 3; round++) {
    const names = await fsp.readdir(dir); // the listing fills the mount's caches
    assert.equal(names.length, 5);
    const f = join(dir, `f${round}`);
    assert.deepEqual(await xattr.listAttributes(f), [], 'no xattrs yet');
    await rejectsWith(xattr.getAttribute(f, 'user.k'), 'ENODATA', 'absent xattr');
    await xattr.setAttribute(f, 'user.k', `v${round}`);
    assert.equal((await xattr.getAttribute(f, 'user.k')).toString(), `v${round}`, 'set right after a listing');
    assert.deepEqual(await xattr.listAttributes(f), ['user.k']);
    await fsp.readdir(dir);
    await fsp.appendFile(f, 'more');
    assert.equal((await fsp.stat(f)).size, 11, 'size right after a listing and an append');
    await xattr.removeAttribute(f, 'user.k');
    await fsp.readdir(dir);
    await rejectsWith(xattr.getAttribute(f, 'user.k'), 'ENODATA', 'removed xattr');
  }
});

test('after a listing, unlink and rmdir show at once, also to the other names of a hard-linked file', T, async () => {
  const dir = fx.p('ul');
  await fsp.mkdir(dir);
  await fsp.mkdir(join(dir, 'sub'));
  for (let i = 0; i < 4; i++) await fsp.writeFile(join(dir, `f${i}`), `file ${i}`);
  await fsp.link(join(dir, 'f0'), join(dir, 'g0'));
  await fsp.readdir(dir); // fills the caches with every entry, g0 and f0 with nlink 2
  assert.equal((await fsp.stat(join(dir, 'g0'))).nlink, 2);
  await fsp.unlink(join(dir, 'f0'));
  assert.equal((await fsp.stat(join(dir, 'g0'))).nlink, 1, 'the other name of a hard link right after unlink');
  await rejectsWith(fsp.stat(join(dir, 'f0')), 'ENOENT', 'stat right after unlink');
  for (let i = 1; i < 4; i++) {
    await fsp.readdir(dir);
    await fsp.unlink(join(dir, `f${i}`));
    await rejectsWith(fsp.stat(join(dir, `f${i}`)), 'ENOENT', `stat of f${i} right after unlink`);
    assert.equal(await fsp.readFile(join(dir, 'g0'), 'utf8'), 'file 0', 'a sibling still reads');
  }
  await fsp.readdir(dir);
  await fsp.rmdir(join(dir, 'sub'));
  await rejectsWith(fsp.stat(join(dir, 'sub')), 'ENOENT', 'stat right after rmdir');
  assert.deepEqual((await fsp.readdir(dir)).sort(), ['g0']);
});

/** Polls `probe` until it returns true; resolves to the milliseconds that took. */
async function settle(probe: () => Promise<boolean>, limitMs: number): Promise<number> {
  const start = Date.now();
  while (!(await probe())) {
    if (Date.now() - start > limitMs) return Infinity;
    await sleep(20);
  }
  return Date.now() - start;
}

/** What tar does with each file: create, write, futimens, fchown, fchmod; an fstat and a stat after each step must show it. */
async function untarLike(dir: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const f = join(dir, `f${i}`);
    const h = await fsp.open(f, 'wx', 0o600);
    try {
      const size = 1000 * (i + 1);
      await h.write(Buffer.alloc(size, i), 0, size, 0);
      const when = new Date(Date.UTC(2021, 0, 1, 0, 0, i));
      await h.utimes(when, when);
      let st = await h.stat();
      assert.equal(st.size, size, `size after futimens ${i}`);
      assert.equal(st.mtimeMs, when.getTime(), `mtime after futimens ${i}`);
      await h.chown(0, 1000 + i);
      st = await h.stat();
      assert.equal(st.gid, 1000 + i, `group after fchown ${i}`);
      assert.equal(st.mtimeMs, when.getTime(), `mtime after fchown ${i}`);
      await h.chmod(0o640);
      st = await fsp.stat(f);
      assert.deepEqual([st.mode & 0o7777, st.size, st.gid, st.mtimeMs], [0o640, size, 1000 + i, when.getTime()], `stat after fchmod ${i}`);
      await h.write(Buffer.alloc(10, 1), 0, 10, size);
      assert.equal((await h.stat()).size, size + 10, `size after a write past fchmod ${i}`);
      await h.truncate(7);
      assert.equal((await fsp.stat(f)).size, 7, `size after ftruncate ${i}`);
    } finally {
      await h.close();
    }
  }
}

test('each step of an untar (create, write, futimens, fchown, fchmod, write, ftruncate) shows at once in fstat and stat', T, async () => {
  const dir = fx.p('untar-like');
  await fsp.mkdir(dir);
  await untarLike(dir, 40);
  assert.equal((await fsp.readdir(dir)).length, 40);
});

test('the attributes a change hands back answer the GETATTR the kernel sends before a chown, without a trip to JS', { ...T, skip: fx.impl !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip }, async () => {
  const cipherdir = join(fx.tmp, 'counted-cipher');
  const stats = join(fx.tmp, 'counted-ops.json');
  await initCipherdir(fx.impl, cipherdir);
  process.env.TSCRYPTFS_OPSTATS = stats;
  try {
    await withMount(fx.impl, cipherdir, join(fx.tmp, 'counted-mnt'), {}, (mnt) => untarLike(mnt, 50));
  } finally {
    delete process.env.TSCRYPTFS_OPSTATS;
  }
  const calls = JSON.parse(await fsp.readFile(stats, 'utf8')) as Record<string, number>;
  // made on the libfuse thread when the native create is there (native-create.test.ts), else in JS
  assert.equal((calls.create ?? 0) + (calls.nativeCreate ?? 0), 50, JSON.stringify(calls));
  // futimens, fchown and fchmod of each file: answered on the libfuse thread
  // when the native read path is there (open-file-attrs.test.ts), else in JS
  const changes = (calls.utimens ?? 0) + (calls.chown ?? 0) + (calls.chmod ?? 0);
  assert.equal(changes + (calls.nativeAttr ?? 0), 150, JSON.stringify(calls));
  // One fgetattr per file is the fstat right after the second write (a WRITE
  // hands back no attributes). Without the cache entries left by futimens it
  // is two: the kernel's GETATTR before each fchown came here too.
  assert.ok((calls.fgetattr ?? 0) <= 55, `fgetattr calls in JS: ${calls.fgetattr}`);
});

test('a name the kernel was just told is missing shows at once when it is made through the mount: create, mkdir, symlink, link, rename, mknod', T, async () => {
  // The kernel remembers a missing name for a second (negative_timeout=1, as
  // gocryptfs): each way of making a name through the mount must replace that.
  const dir = fx.p('neg');
  await fsp.mkdir(dir);
  await fsp.writeFile(join(dir, 'src'), 'source');
  await fsp.writeFile(join(dir, 'moved'), 'moved');
  const makers: [string, (p: string) => Promise<unknown>][] = [
    ['create', (p) => fsp.writeFile(p, 'x')],
    ['exclusive create', async (p) => (await fsp.open(p, 'wx')).close()],
    ['mkdir', (p) => fsp.mkdir(p)],
    ['symlink', (p) => fsp.symlink('src', p)],
    ['link', (p) => fsp.link(join(dir, 'src'), p)],
    ['rename', (p) => fsp.rename(join(dir, 'moved'), p)],
    ['mkfifo', (p) => run('mkfifo', [p]).then((r) => assert.equal(r.code, 0, r.stderr))],
  ];
  for (const [what, make] of makers) {
    const p = join(dir, `n-${what.replace(' ', '-')}`);
    for (let i = 0; i < 3; i++) await rejectsWith(fsp.lstat(p), 'ENOENT', `${what}: lstat before`);
    await rejectsWith(fsp.readFile(p), 'ENOENT', `${what}: open before`);
    await make(p);
    assert.ok(await fsp.lstat(p), `${what}: seen at once`);
    assert.ok((await fsp.readdir(dir)).includes(`n-${what.replace(' ', '-')}`), `${what}: listed`);
  }
  await rejectsWith(fsp.lstat(join(dir, 'moved')), 'ENOENT', 'the renamed name is gone');
  await fsp.rm(dir, { recursive: true });
});

test('a listing the kernel keeps is listed again from memory only while the cipher directory is unchanged: changes here and through another mount show at once', { ...T, skip: fx.impl !== 'tscryptfs' ? 'kept listings and call counts exist only for tscryptfs' : T.skip }, async () => {
  const cipherdir = join(fx.tmp, 'kept-cipher');
  const stats = join(fx.tmp, 'kept-ops.json');
  const other = join(fx.tmp, 'kept-other');
  await initCipherdir(fx.impl, cipherdir);
  let listings = 0;
  process.env.TSCRYPTFS_OPSTATS = stats;
  try {
    await withMount(fx.impl, cipherdir, join(fx.tmp, 'kept-mnt'), {}, async (mnt) => {
      delete process.env.TSCRYPTFS_OPSTATS;
      await mountImpl(fx.impl, cipherdir, other, { flags: ['-sharedstorage'] });
      try {
        const d = join(mnt, 'd');
        const od = join(other, 'd');
        const list = async (where = d): Promise<string[]> => {
          if (where === d) listings++;
          return (await fsp.readdir(where)).sort();
        };
        // A listing read within 20 ms of a change is not kept (listing-state.ts): each step waits that long.
        const quiet = () => sleep(40);
        await fsp.mkdir(d);
        for (const n of ['a', 'b']) await fsp.writeFile(join(d, n), n);
        await quiet();
        for (let i = 0; i < 20; i++) assert.deepEqual(await list(), ['a', 'b'], `unchanged, listing ${i}`);
        const steps: [string, () => Promise<unknown>, string[]][] = [
          ['create through the other mount', () => fsp.writeFile(join(od, 'c'), 'c'), ['a', 'b', 'c']],
          ['unlink through the other mount', () => fsp.rm(join(od, 'a')), ['b', 'c']],
          ['rename through the other mount', () => fsp.rename(join(od, 'b'), join(od, 'e')), ['c', 'e']],
          ['mkdir through the other mount', () => fsp.mkdir(join(od, 'sub')), ['c', 'e', 'sub']],
          ['a file made inside sub (d itself unchanged)', () => fsp.writeFile(join(od, 'sub', 'x'), 'x'), ['c', 'e', 'sub']],
          ['create here', () => fsp.writeFile(join(d, 'f'), 'f'), ['c', 'e', 'f', 'sub']],
          ['unlink here', () => fsp.rm(join(d, 'c')), ['e', 'f', 'sub']],
          ['rename here', () => fsp.rename(join(d, 'e'), join(d, 'g')), ['f', 'g', 'sub']],
          ['rmdir here', () => fsp.rm(join(d, 'sub'), { recursive: true }), ['f', 'g']],
        ];
        for (const [what, change, after] of steps) {
          await quiet();
          await list(); // kept from here on
          await list();
          await change();
          assert.deepEqual(await list(), after, `${what}: the next listing`);
          assert.deepEqual(await list(od), after, `${what}: the -sharedstorage mount's listing`);
        }
        // A directory removed and made again by another program has a new IV,
        // which the mount, like gocryptfs, learns within a second (until then
        // its names do not decrypt and stay hidden); the kept listing must not
        // outlive that.
        await quiet();
        await list();
        await list();
        await fsp.rm(od, { recursive: true });
        await fsp.mkdir(od);
        await fsp.writeFile(join(od, 'h'), 'h');
        const shows = async () => JSON.stringify(await list()) === '["h"]';
        assert.ok((await settle(shows, 3000)) < 2000, 'd made again shows its new name within 2 s');
      } finally {
        await unmountAndReap(other);
      }
    });
  } finally {
    delete process.env.TSCRYPTFS_OPSTATS;
  }
  const calls = JSON.parse(await fsp.readFile(stats, 'utf8')) as Record<string, number>;
  // The 20 listings of the unchanged directory come from one read. Each step
  // reads twice (the listing right after a change is too young to keep; the
  // one after the pause is kept for the next) in three listings: 19 of 47,
  // then the listings until d's new name shows.
  // Read by JS (readdir) or by the native fast path (nativeList).
  const read = (calls.readdir ?? 0) + (calls.nativeList ?? 0);
  if (NATIVE.keptListings) assert.ok(read > 0 && read <= listings - 25, `${read} listings read of ${listings}: ${JSON.stringify(calls)}`);
});

test('a change through a second mount of the same cipher directory shows within about a second, at once with -sharedstorage', T, async () => {
  const second = join(fx.tmp, 'second');
  const shared = join(fx.tmp, 'shared');
  await mountImpl(fx.impl, fx.cipherdir, second, { flags: ['-sharedstorage'] });
  await mountImpl(fx.impl, fx.cipherdir, shared, { flags: ['-sharedstorage'] });
  try {
    // A name both mounts were just told is missing, then made through the third.
    for (const mnt of [fx.mnt, shared]) await rejectsWith(fsp.stat(join(mnt, 'x')), 'ENOENT', `missing in ${mnt}`);
    await fsp.writeFile(join(second, 'x'), 'one');
    let size = 3;
    assert.equal((await fsp.stat(join(shared, 'x'))).size, size, '-sharedstorage sees the new file at once');
    const sees = (mnt: string) => async () => (await fsp.stat(join(mnt, 'x')).catch(() => null))?.size === size;
    assert.ok((await settle(sees(fx.mnt), 3000)) < 2000, 'the default mount sees the new file within 2 s');
    for (let i = 0; i < 5; i++) {
      await fsp.stat(join(fx.mnt, 'x'));
      await fsp.stat(join(shared, 'x'));
      size += 4096;
      await fsp.appendFile(join(second, 'x'), Buffer.alloc(4096, i));
      assert.ok(await sees(shared)(), `-sharedstorage sees append ${i} at once`);
      assert.ok((await settle(sees(fx.mnt), 3000)) < 2000, `the default mount sees append ${i} within 2 s`);
    }
  } finally {
    await unmountAndReap(second);
    await unmountAndReap(shared);
  }
  await fx.teardown();
});
