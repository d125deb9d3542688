/**
 * The native rename (native/fastpath/rename.c fp_rename, the binding's
 * fuse_native_rename_fast): a rename(2) of anything but a directory, both
 * names short, is a renameat(2) on the libfuse thread. What a user sees
 * must be what JS gives:
 * - renames within a directory and across, over an existing file, of a
 *   symlink, a FIFO, a hard link, onto the file's other name, to a UTF-8
 *   name, leave the same tree as with TSCRYPTFS_NATIVE_RENAME=0, read back
 *   through gocryptfs; the renames that go to JS (a directory, a long name
 *   on either side, a target open at the time, which libfuse hides first)
 *   leave it the same too; stat and listings through the mount show each
 *   rename at once (the binding's attribute cache and kept listings);
 * - on a root mount with -allow_other another user renames their own file
 *   and keeps it, and cannot rename root's file out of a sticky directory;
 * - while a file unlinked while open is hidden (src/fuse/hidden-files.ts
 *   holds its path), the renames of other names stay native.
 *
 * TSCRYPTFS_OPSTATS (written at unmount): `rename` counts the renames that
 * reached JS, `nativeRename` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { assertFsckClean, callCounter, MOUNT_IMPL, py, useMountTmp } from '../helpers/mount-suite.js';
import { A, openForOthers, pyAs } from '../helpers/multiuser.js';
import { native } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-rename');
const T = { timeout: 180_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
const withGocryptfs = { ...tsOnly, ...needs('mount', 'python3', 'gocryptfs') };

const counted = callCounter(dir);

const LONG = 'l'.repeat(200);

/**
 * Makes a tree through the mount A[0] and renames in it; gives back what
 * stat and listings showed along the way. Eight renames a native rename
 * answers, then five that go to JS.
 */
const RENAMES = `
top = A[0]
P = lambda *n: os.path.join(top, *n)
seen = []
def look(*n):
    p = P(*n)
    try:
        st = os.lstat(p)
    except OSError as e:
        return errno.errorcode[e.errno]
    return [stat.S_IFMT(st.st_mode), st.st_size, st.st_nlink]
for d in ['d1', 'd2', 'd1/sub']:
    os.mkdir(P(d))
def write(n, data):
    with open(P(n), 'wb') as f:
        f.write(data)
write('d1/f1', b'one')
write('d1/f2', b'second')
write('d1/f3', bytes((i * 7) % 251 for i in range(9000)))
write('d1/h1', b'linked')
os.link(P('d1/h1'), P('d1/h2'))
os.symlink('f1', P('d1/s'))
os.mkfifo(P('d1/p'))
write('d1/sub/in', b'in sub')
write('d2/target', b'old target')
seen.append(sorted(os.listdir(P('d1'))))
os.rename(P('d1/f1'), P('d1/g1'))
seen.append([look('d1/f1'), look('d1/g1'), sorted(os.listdir(P('d1')))])
os.rename(P('d1/g1'), P('d2/g1'))
seen.append([look('d1/g1'), look('d2/g1'), sorted(os.listdir(P('d2')))])
os.rename(P('d1/f2'), P('d2/g1'))
seen.append([look('d2/g1'), open(P('d2/g1'), 'rb').read().decode()])
os.rename(P('d1/s'), P('d2/s'))
os.rename(P('d1/p'), P('d2/p'))
os.rename(P('d1/h1'), P('d2/h1'))
seen.append([look('d2/h1'), look('d1/h2')])
os.rename(P('d1/h2'), P('d2/h1'))
os.rename(P('d1/f3'), P('d1/é€😀'))
seen.append([look('d1/é€😀'), os.readlink(P('d2/s'))])
# to JS: a directory, a long name on either side, a target open meanwhile
os.rename(P('d1/sub'), P('d2/sub2'))
os.rename(P('d2/g1'), P('d2/${LONG}'))
os.rename(P('d2/${LONG}'), P('d2/back'))
fd = os.open(P('d2/target'), os.O_RDONLY)
os.rename(P('d2/back'), P('d2/target'))
seen.append([os.pread(fd, 100, 0).decode(), open(P('d2/target'), 'rb').read().decode(), look('d2/back')])
os.close(fd)
seen.append([sorted(os.listdir(P('d1'))), sorted(os.listdir(P('d2'))), look('d2/sub2/in')])
out(seen)`;

/** Every entry under A[0]: relative path -> [kind, size, links, sha256 of the content or the link's target]. */
const SNAPSHOT = `
import hashlib
res = {}
for d, dirs, files in os.walk(A[0]):
    for f in dirs + files:
        p = os.path.join(d, f)
        st = os.lstat(p)
        if stat.S_ISREG(st.st_mode):
            with open(p, 'rb') as fh:
                what = hashlib.sha256(fh.read()).hexdigest()
        elif stat.S_ISLNK(st.st_mode):
            what = os.readlink(p)
        else:
            what = ''
        res[os.path.relpath(p, A[0])] = [stat.S_IFMT(st.st_mode), st.st_size if stat.S_ISREG(st.st_mode) else 0, st.st_nlink, what]
out(res)`;

test('renames answered natively leave the tree JS leaves, shown at once and read back through gocryptfs', withGocryptfs, async () => {
  const seen: unknown[] = [];
  const snapshots: Record<string, unknown>[] = [];
  const counts: Record<string, number>[] = [];
  for (const [label, env] of [['native', {}], ['js', { TSCRYPTFS_NATIVE_RENAME: '0' }]] as const) {
    const cipherdir = join(dir.tmp, `tree-${label}-cipher`);
    await initCipherdir(MOUNT_IMPL, cipherdir, []);
    const [r, calls] = await counted(`tree-${label}`, cipherdir, env, (m) => py<unknown[]>(RENAMES, [m]));
    seen.push(r);
    counts.push(calls);
    snapshots.push(await withMount('gocryptfs', cipherdir, join(dir.tmp, `tree-${label}-go`), {}, (m) => py<Record<string, unknown>>(SNAPSHOT, [m])));
    await assertFsckClean(cipherdir);
    assert.deepEqual((await fsp.readdir(cipherdir, { recursive: true })).filter((n) => String(n).includes('.fuse_hidden')), []);
  }
  const REG = 0o100000;
  assert.deepEqual(seen[0], [
    ['f1', 'f2', 'f3', 'h1', 'h2', 'p', 's', 'sub'],
    ['ENOENT', [REG, 3, 1], ['f2', 'f3', 'g1', 'h1', 'h2', 'p', 's', 'sub']],
    ['ENOENT', [REG, 3, 1], ['g1', 'target']],
    [[REG, 6, 1], 'second'],
    [[REG, 6, 2], [REG, 6, 2]],
    [[REG, 9000, 1], 'f1'],
    ['old target', 'second', 'ENOENT'],
    [['h2', 'é€😀'], ['h1', 'p', 's', 'sub2', 'target'], [REG, 6, 1]],
  ]);
  assert.deepEqual(seen[1], seen[0], 'JS renames show the same');
  assert.deepEqual(snapshots[0], snapshots[1]);
  const [mine, js] = counts;
  if (native().renames) {
    assert.equal(mine!['nativeRename'], 8, `the renames of files with short names were native: ${JSON.stringify(mine)}`);
    assert.equal(mine!['rename'], 5, `the directory's, the long names' and the open target's (hidden first) reached JS: ${JSON.stringify(mine)}`);
  }
  assert.equal(js!['nativeRename'], undefined, JSON.stringify(js));
  assert.equal(js!['rename'], 13, JSON.stringify(js));
});

test('on a root mount with -allow_other, another user renames their own file and cannot move root\'s out of a sticky directory', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'users-cipher');
  openForOthers(dir.tmp);
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [r, calls] = await counted(
    'users',
    cipherdir,
    {},
    async (m) => {
      await fsp.chmod(m, 0o1777);
      await fsp.writeFile(join(m, 'roots'), 'root');
      const theirs = await pyAs<unknown[]>(
        A,
        m,
        `
with open(os.path.join(R, 'mine'), 'w') as f:
    f.write('theirs')
res = [t(lambda: os.rename(os.path.join(R, 'mine'), os.path.join(R, 'moved'))), t(lambda: os.rename(os.path.join(R, 'roots'), os.path.join(R, 'taken')))]`,
      );
      const st = await fsp.stat(join(m, 'moved'));
      return [theirs, `${st.uid}:${st.gid}`, (await fsp.readdir(m)).sort(), await fsp.readFile(join(m, 'roots'), 'utf8')];
    },
    ['-allow_other'],
  );
  assert.deepEqual(r, [['OK', 'EPERM'], `${A.uid}:${A.gid}`, ['moved', 'roots'], 'root']);
  if (native().renames) assert.equal(calls['nativeRename'], 1, JSON.stringify(calls));
});

test('while a file unlinked while open is hidden, the renames of other names stay native', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'held-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const script = `
top = A[0]
P = lambda n: os.path.join(top, n)
for i in range(20):
    with open(P('x%d' % i), 'wb') as f:
        f.write(b'file %d' % i)
with open(P('held'), 'wb') as f:
    f.write(b'open')
fd = os.open(P('held'), os.O_RDONLY)
os.unlink(P('held'))
for i in range(20):
    os.rename(P('x%d' % i), P('y%d' % i))
seen = [sorted(os.listdir(top)) == sorted('y%d' % i for i in range(20)), os.pread(fd, 10, 0).decode()]
os.close(fd)
out(seen)`;
  const [seen, calls] = await counted('held', cipherdir, {}, (m) => py<unknown[]>(script, [m]));
  assert.deepEqual(seen, [true, 'open']);
  if (native().renames) {
    assert.equal(calls['nativeRename'], 20, `every rename but libfuse's hiding was native: ${JSON.stringify(calls)}`);
    assert.equal(calls['rename'], 1, `only the hiding reached JS: ${JSON.stringify(calls)}`);
  }
  await assertFsckClean(cipherdir);
});
