/**
 * The native unlink (native/fastpath/remove.c, the binding's attr_cipher_path):
 * a listing leaves each entry's cipher path in the binding, and an UNLINK of
 * a listed name is an unlinkat on the libfuse thread. What a user sees must
 * be what JS gives: rm -r of a tree with long names, symlinks, hard links
 * and a file still open leaves a cipher directory gocryptfs -fsck finds
 * clean, with no .name file behind; the other name of a hard-linked file
 * shows one link after the first goes; the open file stays readable.
 *
 * The cipher paths must never point at the wrong file: after a rename of
 * the listed directory (the binding forgets every cipher path, and finds
 * the name again by the native lookup), and after the directory was
 * removed and made again (a new IV: new cipher names, so the old path is
 * not found and JS answers), the unlink removes the file the user named
 * and nothing else. TSCRYPTFS_NATIVE_UNLINK=0 sends every unlink to JS.
 *
 * TSCRYPTFS_OPSTATS (written at unmount) tells which path served them:
 * `unlink` counts those that reached JS, `nativeUnlink` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir } from '../helpers/mount.js';
import { assertFsckClean, cipherEntries, MOUNT_IMPL, py, useMountTmp, withCallCounts } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-unlink');
const T = { timeout: 180_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
const withGocryptfs = { ...tsOnly, ...needs('mount', 'python3', 'gocryptfs') };

/** Mounts `cipherdir` with `env` set, runs `fn`, and returns the call counts of the mount. */
async function counted(label: string, cipherdir: string, env: Record<string, string>, fn: (mnt: string) => Promise<void>): Promise<Record<string, number>> {
  return (await withCallCounts(dir.tmp, label, cipherdir, { env }, fn))[1];
}

const LONG = 'l'.repeat(200);

/**
 * Makes under A[0]: 3 directories of 40 files (every fourth with a long
 * name), a symlink, and a hard-linked pair "a"/"b" in the first; keeps
 * "open-me" open, lists the tree (rm -r does too), removes the whole tree
 * with shutil.rmtree, and reports what a user sees afterwards: whether the
 * tree is gone, and the open file's content read through its descriptor.
 */
const TREE_RM = `
import shutil
top = A[0]
names = []
for d in range(3):
    p = os.path.join(top, 'd%d' % d, 'sub')
    os.makedirs(p)
    for i in range(40):
        n = ('${LONG}%d' % i) if i % 4 == 0 else 'f%d' % i
        with open(os.path.join(p, n), 'w') as f:
            f.write('%d/%d' % (d, i))
os.symlink('f1', os.path.join(top, 'd0', 'sub', 'link'))
with open(os.path.join(top, 'd0', 'a'), 'w') as f:
    f.write('linked')
os.link(os.path.join(top, 'd0', 'a'), os.path.join(top, 'd0', 'b'))
with open(os.path.join(top, 'd1', 'open-me'), 'w') as f:
    f.write('still here')
fd = os.open(os.path.join(top, 'd1', 'open-me'), os.O_RDONLY)
for root, dirs, files in os.walk(top):
    pass
shutil.rmtree(top)
out([os.path.exists(top), os.pread(fd, 100, 0).decode()])
os.close(fd)`;

test('rm -r of a listed tree (long names, a symlink, hard links, an open file) goes native and leaves a clean cipher directory', withGocryptfs, async () => {
  const cipherdir = join(dir.tmp, 'tree-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const calls = await counted('tree', cipherdir, {}, async (m) => {
    const [exists, content] = await py<[boolean, string]>(TREE_RM, [join(m, 'top')]);
    assert.equal(exists, false, 'the tree is gone');
    assert.equal(content, 'still here', 'the unlinked open file still reads');
    assert.deepEqual(await fsp.readdir(m), []);
  });
  // 120 files, the symlink and the two links; the open file was hidden by libfuse (a rename) and let go in JS.
  if (NATIVE.unlinks) assert.ok((calls['nativeUnlink'] ?? 0) >= 100, `most unlinks were native: ${JSON.stringify(calls)}`);
  assert.deepEqual(await cipherEntries(cipherdir), [], 'nothing left in the cipher directory (no .name files)');
  await assertFsckClean(cipherdir);
});

test('unlinking one name of a hard-linked file natively: the other name shows one link, and its content', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'links-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const calls = await counted('links', cipherdir, {}, async (m) => {
    const r = await py<[number, number, string]>(
      `
a, b = A[0] + '/a', A[0] + '/b'
with open(a, 'w') as f:
    f.write('shared')
os.link(a, b)
before = os.stat(b).st_nlink
os.listdir(A[0])
os.stat(a)
os.unlink(a)
out([before, os.stat(b).st_nlink, open(b).read()])`,
      [m],
    );
    assert.deepEqual(r, [2, 1, 'shared']);
  });
  assert.equal(calls['nativeUnlink'], NATIVE.unlinks ? 1 : undefined, JSON.stringify(calls));
});

test('after a rename, or after its directory was removed and made again, an unlink removes the file named and nothing else', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'moved-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const calls = await counted('moved', cipherdir, {}, async (m) => {
    const r = await py<unknown[]>(
      `
top = A[0]
def make(d, *names):
    os.makedirs(d, exist_ok=True)
    for n in names:
        with open(os.path.join(d, n), 'w') as f:
            f.write(n)
res = []
# Renamed after the listing: the cipher paths listed under d are void.
make(top + '/d', 'f', 'g')
os.listdir(top + '/d')
os.rename(top + '/d', top + '/e')
make(top + '/d', 'f')
os.unlink(top + '/e/f')
res.append([sorted(os.listdir(top + '/e')), sorted(os.listdir(top + '/d')), open(top + '/d/f').read()])
# Removed and made again after the listing: f's old cipher name is not in the new directory.
make(top + '/x', 'f', 'g')
os.listdir(top + '/x')
os.unlink(top + '/x/f')
os.unlink(top + '/x/g')
os.rmdir(top + '/x')
make(top + '/x', 'f', 'g')
os.unlink(top + '/x/f')
res.append([sorted(os.listdir(top + '/x')), open(top + '/x/g').read()])
out(res)`,
      [m],
    );
    assert.deepEqual(r, [
      [['g'], ['f'], 'f'],
      [['g'], 'g'],
    ]);
  });
  // x/f and x/g right after the listing went native, and e/f too: the rename
  // voided its listed cipher path, so the native lookup found it again. The
  // new x/f went to JS: the listed cipher path under the old IV named nothing.
  if (NATIVE.unlinks) assert.ok((calls['nativeUnlink'] ?? 0) >= 3 && (calls['unlink'] ?? 0) >= 1, JSON.stringify(calls));
  await assertFsckClean(cipherdir);
});

/**
 * Each libfuse thread keeps the descriptors of the directories its last
 * unlinks used (native/fastpath/dirs.c). With -plaintextnames a directory
 * renamed away and made again under its old name has the same cipher path
 * as the old one, so a thread that kept the old one's descriptor would
 * unlink in the renamed directory: every mkdir, rmdir and rename through
 * the mount must void them. Thirty rounds, so that each thread has kept it.
 */
test('-plaintextnames: after a directory was renamed and made again under its name, unlinks remove the new one\'s files', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'kept-fd-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, ['-plaintextnames']);
  const calls = await counted('kept-fd', cipherdir, {}, async (m) => {
    const r = await py<unknown[]>(
      `
top = A[0]
def make(d, names):
    os.makedirs(d)
    for n in names:
        with open(os.path.join(d, n), 'w') as f:
            f.write(n)
res = []
for k in range(30):
    d = os.path.join(top, 'd')
    make(d, ['f%d' % i for i in range(8)])
    os.listdir(d)
    for i in range(4):
        os.unlink(os.path.join(d, 'f%d' % i))
    os.rename(d, os.path.join(top, 'e%d' % k))
    make(d, ['f%d' % i for i in range(4, 8)])
    os.listdir(d)
    for i in range(4, 8):
        os.unlink(os.path.join(d, 'f%d' % i))
    os.rmdir(d)
    res.append(sorted(os.listdir(os.path.join(top, 'e%d' % k))))
out(res)`,
      [m],
    );
    assert.deepEqual(r, Array.from({ length: 30 }, () => ['f4', 'f5', 'f6', 'f7']));
  });
  if (NATIVE.unlinks) assert.ok((calls['nativeUnlink'] ?? 0) >= 200, JSON.stringify(calls));
});

test('TSCRYPTFS_NATIVE_UNLINK=0 sends every unlink to JS', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'off-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const calls = await counted('off', cipherdir, { TSCRYPTFS_NATIVE_UNLINK: '0' }, async (m) => {
    for (let i = 0; i < 10; i++) await fsp.writeFile(join(m, `f${i}`), 'x');
    await fsp.readdir(m);
    for (let i = 0; i < 10; i++) await fsp.unlink(join(m, `f${i}`));
    assert.deepEqual(await fsp.readdir(m), []);
  });
  assert.deepEqual([calls['unlink'], calls['nativeUnlink']], [10, undefined], JSON.stringify(calls));
});
