/**
 * The native listing (native/fastpath/list.c, the binding's
 * fuse_native_readdir_fast): a READDIR of a directory whose names all
 * decrypt is read, decrypted and stat'ed on the libfuse thread. What a
 * user sees must be what JS gives:
 * - every kind of entry (files around the block boundaries, a long name
 *   and a long directory name, UTF-8 names, a symlink, a FIFO, hard links,
 *   a file with extended attributes) lists with the same names, types,
 *   inode numbers (".." and "." too), attributes and xattr lists with the
 *   native listing, with TSCRYPTFS_NATIVE_LIST=0, and through gocryptfs;
 * - a directory with a name that does not decrypt, or a long name without
 *   its .name file, goes to JS, which hides them (or shows them with
 *   -badname); the other directories stay native;
 * - a listing changed through the mount or beside it (a name planted in the
 *   cipher directory) shows the change at once;
 * - with -force_owner every listing goes to JS, which shows that owner.
 *
 * TSCRYPTFS_OPSTATS (written at unmount) tells which path served them:
 * `readdir` counts the listings that reached JS, `nativeList` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { assertFsckClean, callCounter, cipherPathOf, MOUNT_IMPL, py, useMountTmp } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-list');
const T = { timeout: 180_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
const withGocryptfs = { ...tsOnly, ...needs('mount', 'python3', 'gocryptfs') };

/** Mounts `cipherdir` with `env` set (and `flags`), runs `fn`, and returns its result and the call counts of the mount. */
const counted = callCounter(dir);

const LONG = 'l'.repeat(200);
const DIRS = ['', 'd1', `d1/${LONG}-dir`, 'd1/d2', 'd1/d2/empty'];

const MAKE_TREE = `
top = A[0]
os.makedirs(os.path.join(top, 'd1/${LONG}-dir'))
os.makedirs(os.path.join(top, 'd1/d2/empty'))
for n in [0, 1, 4095, 4096, 4097, 100000]:
    with open(os.path.join(top, 'd1/d2', 'size%d' % n), 'wb') as f:
        f.write(b'x' * n)
for n in ['${LONG}', 'é€😀', '日本語のファイル名', 'a']:
    with open(os.path.join(top, 'd1', n), 'w') as f:
        f.write(n)
os.link(os.path.join(top, 'd1', 'a'), os.path.join(top, 'd1', 'b'))
os.symlink('a', os.path.join(top, 'd1', 'link'))
os.mkfifo(os.path.join(top, 'd1', 'fifo'))
os.setxattr(os.path.join(top, 'd1', 'a'), 'user.k', b'v')
with open(os.path.join(top, 'top.txt'), 'w') as f:
    f.write('top')
out(0)`;

/** Per directory, in getdents order sorted by name: name, d_type, d_ino; then each entry's lstat and xattr list, and "." and ".."'s inode numbers. */
const LIST = `
import subprocess, stat
top = A[0]
res = {}
for d in A[1:]:
    p = os.path.join(top, d)
    ents = []
    with os.scandir(p) as it:
        for e in it:
            st = os.lstat(e.path)
            kind = 'l' if e.is_symlink() else 'd' if e.is_dir(follow_symlinks=False) else 'f' if e.is_file(follow_symlinks=False) else 'o'
            xs = sorted(os.listxattr(e.path, follow_symlinks=False))
            ents.append([e.name, kind, e.inode() == st.st_ino, st.st_ino, stat.S_IFMT(st.st_mode), st.st_mode & 0o7777, st.st_nlink, st.st_size if not stat.S_ISDIR(st.st_mode) else -1, xs])
    ents.sort()
    # "." and ".." as getdents gives them (ls -f: directory order, d_ino)
    dots = sorted(l.split()[0] + ' ' + l.split()[1] for l in subprocess.run(['ls', '-1fai', p], capture_output=True, text=True).stdout.splitlines() if l.split()[1] in ('.', '..'))
    res[d or '/'] = [ents, dots]
out(res)`;

test('every kind of entry lists the same with the native listing, with TSCRYPTFS_NATIVE_LIST=0 and through gocryptfs', withGocryptfs, async () => {
  const cipherdir = join(dir.tmp, 'tree-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'tree-mnt'), {}, (m) => py(MAKE_TREE, [m]));
  const [nativeList, nativeCounts] = await counted('tree-native', cipherdir, {}, (m) => py(LIST, [m, ...DIRS]));
  const [jsList, jsCounts] = await counted('tree-js', cipherdir, { TSCRYPTFS_NATIVE_LIST: '0' }, (m) => py(LIST, [m, ...DIRS]));
  const goList = await withMount('gocryptfs', cipherdir, join(dir.tmp, 'tree-go'), {}, (m) => py<Record<string, [unknown[][], string[]]>>(LIST, [m, ...DIRS]));
  assert.deepEqual(nativeList, jsList);
  const d1 = (nativeList as Record<string, [unknown[][], string[]]>)['d1']![0];
  assert.deepEqual(d1.map((e) => e[0]), ['a', 'b', 'd2', 'fifo', 'link', LONG, `${LONG}-dir`, 'é€😀', '日本語のファイル名']);
  assert.deepEqual(d1.find((e) => e[0] === 'a')!.slice(1, 3), ['f', true]);
  assert.deepEqual(d1.find((e) => e[0] === 'a')![8], ['user.k']);
  assert.deepEqual(d1.find((e) => e[0] === 'link')![1], 'l');
  assert.deepEqual(d1.find((e) => e[0] === 'fifo')![1], 'o');
  // gocryptfs shows the same names, types, modes, link counts and sizes (its inode numbers are its own)
  const shape = (l: Record<string, [unknown[][], string[]]>): unknown => Object.entries(l).map(([d, [ents]]) => [d, ents.map((e) => [e[0], e[1], e[4], e[5], e[6], e[7], e[8]])]);
  assert.deepEqual(shape(nativeList as Record<string, [unknown[][], string[]]>), shape(goList));
  assert.ok((jsCounts['readdir'] ?? 0) >= DIRS.length, `with the switch off JS lists: ${JSON.stringify(jsCounts)}`);
  assert.equal(jsCounts['nativeList'], undefined, JSON.stringify(jsCounts));
  if (NATIVE.lists) {
    assert.ok((nativeCounts['nativeList'] ?? 0) >= DIRS.length, `every directory listed natively: ${JSON.stringify(nativeCounts)}`);
    assert.equal(nativeCounts['readdir'], undefined, `none reached JS: ${JSON.stringify(nativeCounts)}`);
  }
  await assertFsckClean(cipherdir);
});

test('a directory with a name that does not decrypt or a long name without its .name file is listed by JS; the others stay native', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'bad-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'bad-mnt'), {}, (m) => py(`
for d in ['bad', 'long', 'good']:
    os.mkdir(os.path.join(A[0], d))
    with open(os.path.join(A[0], d, 'keep.txt'), 'w') as f:
        f.write(d)
out(0)`, [m]));
  await fsp.writeFile(join(await cipherPathOf(cipherdir, 'bad'), 'not-a-name.sync-conflict-x'), 'planted');
  await fsp.writeFile(join(await cipherPathOf(cipherdir, 'long'), 'gocryptfs.longname.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 'planted');
  const LS = `out([sorted(os.listdir(os.path.join(A[0], d))) for d in ['bad', 'long', 'good']])`;
  const [hidden, counts] = await counted('bad-native', cipherdir, {}, (m) => py(LS, [m]));
  assert.deepEqual(hidden, [['keep.txt'], ['keep.txt'], ['keep.txt']]);
  if (NATIVE.lists) {
    assert.equal(counts['readdir'], 2, `the two directories with such names went to JS: ${JSON.stringify(counts)}`);
    assert.equal(counts['nativeList'], 1, JSON.stringify(counts));
  }
  const [shown] = await counted('bad-badname', cipherdir, {}, (m) => py(LS, [m]), ['-badname', '*sync-conflict*']);
  assert.deepEqual(shown, [['keep.txt', 'not-a-name.sync-conflict-x GOCRYPTFS_BAD_NAME'], ['keep.txt'], ['keep.txt']]);
});

test('a change through the mount or beside it shows in the next listing', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'change-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [seen, counts] = await counted('change', cipherdir, {}, async (m) => {
    const lists: string[][] = [];
    const ls = async (): Promise<void> => void lists.push((await fsp.readdir(join(m, 'd'))).sort());
    await fsp.mkdir(join(m, 'd'));
    await fsp.writeFile(join(m, 'd', 'one'), '1');
    await ls();
    await fsp.writeFile(join(m, 'd', 'two'), '2');
    await ls();
    await fsp.rename(join(m, 'd', 'one'), join(m, 'd', 'uno'));
    await ls();
    // beside the mount: a copy of a cipher file under a name that does not decrypt, then its removal
    const cdir = await cipherPathOf(cipherdir, 'd');
    await new Promise((r) => setTimeout(r, 50));
    await fsp.writeFile(join(cdir, 'planted'), 'x');
    await ls();
    await fsp.unlink(join(cdir, 'planted'));
    await fsp.unlink(join(m, 'd', 'two'));
    await ls();
    return lists;
  });
  assert.deepEqual(seen, [['one'], ['one', 'two'], ['two', 'uno'], ['two', 'uno'], ['uno']]);
  if (NATIVE.lists) assert.ok((counts['nativeList'] ?? 0) >= 3, JSON.stringify(counts));
});

test('with -force_owner listings go to JS, which shows that owner', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'owner-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'owner-mnt'), {}, (m) => fsp.writeFile(join(m, 'f'), 'x'));
  const [owners, counts] = await counted('owner', cipherdir, {}, (m) => py(`
with os.scandir(A[0]) as it:
    out([[e.name, e.stat(follow_symlinks=False).st_uid, e.stat(follow_symlinks=False).st_gid] for e in it])`, [m]), ['-force_owner', '1234:5678']);
  assert.deepEqual(owners, [['f', 1234, 5678]]);
  assert.equal(counts['nativeList'], undefined, JSON.stringify(counts));
  assert.ok((counts['readdir'] ?? 0) >= 1, JSON.stringify(counts));
});
