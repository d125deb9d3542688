/**
 * The native rmdir (native/fastpath/remove.c, the binding's fuse_native_rmdir_fast):
 * an RMDIR of a directory a listing showed less than a second ago is
 * answered on the libfuse thread when the directory holds nothing but its
 * IV; anything else goes to JS. What a user sees must be what JS gives:
 * - rm -r of a tree (long, UTF-8 and nested directory names, a symlink)
 *   leaves nothing behind, gocryptfs -fsck clean, with the rmdirs native
 *   (and with TSCRYPTFS_NATIVE_RMDIR=0 none);
 * - a directory removed natively and made again at once takes new files:
 *   the vault, which keeps descriptors of the directories it walked, has
 *   forgotten the removed one (native-fast-path.ts, syncRemovedDirs);
 * - a directory with a name in it, or with a file another program put in
 *   the cipher directory, gives ENOTEMPTY and keeps everything, its IV too.
 *
 * TSCRYPTFS_OPSTATS (written at unmount) tells which path served them:
 * `rmdir` counts the rmdirs that reached JS, `nativeRmdir` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, run, sleep, withMount } from '../helpers/mount.js';
import { assertFsckClean, callCounter, cipherPathOf, MOUNT_IMPL, py, rejectsWith, useMountTmp } from '../helpers/mount-suite.js';
import { native, NATIVE } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-rmdir');
const T = { timeout: 180_000, ...needs('mount', 'python3'), skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : undefined };
const withGocryptfs = { ...T, ...needs('mount', 'python3', 'gocryptfs') };

const counted = callCounter(dir);

const LONG = 'D'.repeat(200);
const DIRS = ['t', 't/a', 't/a/b', 't/a/b/c', `t/${LONG}`, `t/${LONG}/in`, 't/é€😀', 't/日本語', 't/empty', 't/links'];
const MAKE_TREE = `
for d in ${JSON.stringify(DIRS)}:
    os.makedirs(os.path.join(A[0], d), exist_ok=True)
for d in ${JSON.stringify(DIRS.filter((d) => !d.endsWith('empty')))}:
    with open(os.path.join(A[0], d, 'f'), 'w') as f:
        f.write(d)
os.symlink('../a/f', os.path.join(A[0], 't/links/s'))
out(0)`;

test('rm -r of a tree removes every directory natively and leaves a clean cipher directory; TSCRYPTFS_NATIVE_RMDIR=0 sends them to JS', withGocryptfs, async () => {
  for (const [label, env] of [['native', {}], ['js', { TSCRYPTFS_NATIVE_RMDIR: '0' }]] as const) {
    const cipherdir = join(dir.tmp, `tree-${label}-cipher`);
    await initCipherdir(MOUNT_IMPL, cipherdir, []);
    await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, `tree-${label}-make-mnt`), {}, (m) => py(MAKE_TREE, [m]));
    const [left, calls] = await counted(`tree-${label}`, cipherdir, env, async (m) => {
      await fsp.readdir(m); // the root's listing gives t's cipher path too
      const r = await run('rm', ['-r', join(m, 't')]);
      assert.equal(r.code, 0, r.stderr);
      return fsp.readdir(m);
    });
    assert.deepEqual(left, [], label);
    assert.deepEqual((await fsp.readdir(cipherdir)).sort(), ['gocryptfs.conf', 'gocryptfs.diriv'], label);
    if (native(env).rmdirs) {
      assert.equal(calls['nativeRmdir'], DIRS.length, `every rmdir was native: ${JSON.stringify(calls)}`);
      assert.equal(calls['rmdir'], undefined, JSON.stringify(calls));
    } else {
      assert.equal(calls['nativeRmdir'], undefined, JSON.stringify(calls));
      assert.equal(calls['rmdir'], DIRS.length, JSON.stringify(calls));
    }
    await assertFsckClean(cipherdir);
  }
});

test('a directory removed natively and made again at once takes new files and names at once', withGocryptfs, async () => {
  const cipherdir = join(dir.tmp, 'again-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [, calls] = await counted('again', cipherdir, {}, async (m) => {
    const a = join(m, 'a');
    for (let i = 0; i < 5; i++) {
      await fsp.mkdir(join(a, 'b', 'c'), { recursive: true });
      await fsp.writeFile(join(a, 'b', 'f'), `one ${i}`); // the vault now keeps a/b's descriptor
      await fsp.writeFile(join(a, 'b', 'c', 'f'), `one ${i}`);
      await fsp.readdir(a); // a/b's cipher path for the native rmdir
      await fsp.rm(join(a, 'b'), { recursive: true });
      await rejectsWith(fsp.stat(join(a, 'b')), 'ENOENT', `round ${i}: gone`);
      await fsp.mkdir(join(a, 'b', 'c'), { recursive: true });
      await fsp.writeFile(join(a, 'b', 'g'), `two ${i}`);
      await fsp.writeFile(join(a, 'b', 'c', 'g'), `two ${i}`);
      assert.deepEqual((await fsp.readdir(join(a, 'b'))).sort(), ['c', 'g'], `round ${i}`);
      assert.equal(await fsp.readFile(join(a, 'b', 'c', 'g'), 'utf8'), `two ${i}`, `round ${i}`);
      await fsp.rm(a, { recursive: true });
    }
  });
  if (NATIVE.rmdirs) assert.ok((calls['nativeRmdir'] ?? 0) >= 10, `a/b and a/b/c went natively: ${JSON.stringify(calls)}`);
  await assertFsckClean(cipherdir);
});

test('a directory holding a name, or a file put into the cipher directory, gives ENOTEMPTY and keeps everything', T, async () => {
  const cipherdir = join(dir.tmp, 'full-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'full-make-mnt'), {}, async (m) => {
    await fsp.mkdir(join(m, 'full'));
    await fsp.writeFile(join(m, 'full', 'f'), 'f');
    await fsp.mkdir(join(m, 'planted'));
  });
  const planted = await cipherPathOf(cipherdir, 'planted');
  await fsp.writeFile(join(planted, 'junk'), 'not ours');
  await sleep(50);
  const [, calls] = await counted('full', cipherdir, {}, async (m) => {
    assert.deepEqual((await fsp.readdir(m)).sort(), ['full', 'planted']);
    await rejectsWith(fsp.rmdir(join(m, 'full')), 'ENOTEMPTY', 'a directory with a name');
    await rejectsWith(fsp.rmdir(join(m, 'planted')), 'ENOTEMPTY', 'a directory with a foreign file');
    assert.equal(await fsp.readFile(join(m, 'full', 'f'), 'utf8'), 'f');
    assert.deepEqual(await fsp.readdir(join(m, 'planted')), [], 'the foreign file is no name');
  });
  assert.deepEqual((await fsp.readdir(planted)).sort(), ['gocryptfs.diriv', 'junk'], 'the IV is back in place');
  assert.equal(calls['nativeRmdir'], undefined, JSON.stringify(calls));
  assert.equal(calls['rmdir'], 2, `JS gave both errors: ${JSON.stringify(calls)}`);
});

test('-plaintextnames: a directory holding a file named gocryptfs.diriv gives ENOTEMPTY and keeps it; an empty one goes natively', T, async () => {
  const cipherdir = join(dir.tmp, 'plain-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, ['-plaintextnames']);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'plain-make-mnt'), {}, async (m) => {
    await fsp.mkdir(join(m, 'd'));
    await fsp.writeFile(join(m, 'd', 'gocryptfs.diriv'), 'a user file');
    await fsp.mkdir(join(m, 'e'));
  });
  await sleep(50);
  const [, calls] = await counted('plain', cipherdir, {}, async (m) => {
    assert.deepEqual((await fsp.readdir(m)).sort(), ['d', 'e']);
    await rejectsWith(fsp.rmdir(join(m, 'd')), 'ENOTEMPTY', 'a file named gocryptfs.diriv is a name here');
    assert.equal(await fsp.readFile(join(m, 'd', 'gocryptfs.diriv'), 'utf8'), 'a user file');
    await fsp.rmdir(join(m, 'e'));
    assert.deepEqual(await fsp.readdir(m), ['d']);
  });
  assert.equal(calls['nativeRmdir'], NATIVE.rmdirs ? 1 : undefined, JSON.stringify(calls));
  assert.equal(calls['rmdir'], NATIVE.rmdirs ? 1 : 2, JSON.stringify(calls));
});
