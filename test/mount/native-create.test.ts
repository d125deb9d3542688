/**
 * The native create (native/fastpath/open.c fp_create, the binding's
 * fuse_native_create_fast): a new file with a short name, made as the
 * daemon's own user, is made and opened on the libfuse thread; its handle
 * is a native one, which JS adopts, with the caller's access mode, when a
 * request for it reaches JS after all. What a user sees must be what JS
 * gives:
 * - a tree of new files (sizes around the block boundaries, a long name,
 *   UTF-8 names, write-only and read-write handles) reads back the same
 *   through gocryptfs as when JS creates them (TSCRYPTFS_NATIVE_CREATE=0),
 *   the long name's create in JS;
 * - a file made by another user on a root mount with -allow_other belongs
 *   to that user on both sides (its create goes to JS, which creates with
 *   the caller's credentials);
 * - requests the fast path passes on work through a natively created
 *   handle: a write past the end (a hole), fsync, ftruncate, a write after
 *   the file was unlinked while open, fstat; on a write-only handle too;
 * - O_EXCL on a name that exists is EEXIST, and a CREATE for a name made
 *   behind the kernel's back (another mount) opens that file, its content
 *   kept.
 *
 * TSCRYPTFS_OPSTATS (written at unmount): `create` counts the creates that
 * reached JS, `nativeCreate` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { assertFsckClean, callCounter, cipherPathOf, MOUNT_IMPL, py, useMountTmp } from '../helpers/mount-suite.js';
import { A, openForOthers, pyAs } from '../helpers/multiuser.js';
import { NATIVE } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-create');
const T = { timeout: 180_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
const withGocryptfs = { ...tsOnly, ...needs('mount', 'python3', 'gocryptfs') };

const counted = callCounter(dir);

const LONG = 'l'.repeat(200);
const SIZES = [0, 1, 4095, 4096, 4097, 8192, 100_000, 300_001];

/** Makes the tree through the mount A[0]: new files only (the directories exist), each written in 1000-byte pieces; returns how many files it made. */
const MAKE_FILES = `
top = A[0]
os.makedirs(os.path.join(top, 'd1', 'd2'))
made = 0
def make(p, data, flags):
    global made
    fd = os.open(os.path.join(top, p), flags | os.O_CREAT | os.O_EXCL, 0o640)
    for i in range(0, len(data), 1000):
        os.write(fd, data[i:i + 1000])
    os.close(fd)
    made += 1
for n in [${SIZES.join(', ')}]:
    make('d1/d2/size%d' % n, bytes((i * 7) % 251 for i in range(n)), os.O_WRONLY)
    make('d1/rw%d' % n, bytes((i * 3) % 253 for i in range(n)), os.O_RDWR)
make('d1/${LONG}', b'long', os.O_WRONLY)
for n in ['é€😀', '日本語のファイル名']:
    make('d1/d2/' + n, n.encode(), os.O_WRONLY)
out(made)`;

/** Every file under A[0]: relative path -> [size, mode, sha256]. */
const SNAPSHOT = `
import hashlib
res = {}
for d, _, files in os.walk(A[0]):
    for f in files:
        p = os.path.join(d, f)
        st = os.lstat(p)
        with open(p, 'rb') as fh:
            res[os.path.relpath(p, A[0])] = [st.st_size, oct(st.st_mode), hashlib.sha256(fh.read()).hexdigest()]
out(res)`;

test('a tree of new files made through native creates reads back through gocryptfs as one made through JS creates', withGocryptfs, async () => {
  const snapshots: Record<string, unknown>[] = [];
  const counts: Record<string, number>[] = [];
  for (const [label, env] of [['native', {}], ['js', { TSCRYPTFS_NATIVE_CREATE: '0' }]] as const) {
    const cipherdir = join(dir.tmp, `tree-${label}-cipher`);
    await initCipherdir(MOUNT_IMPL, cipherdir, []);
    const [made, calls] = await counted(`tree-${label}`, cipherdir, env, (m) => py<number>(MAKE_FILES, [m]));
    assert.equal(made, 2 * SIZES.length + 3);
    counts.push(calls);
    snapshots.push(await withMount('gocryptfs', cipherdir, join(dir.tmp, `tree-${label}-go`), {}, (m) => py<Record<string, unknown>>(SNAPSHOT, [m])));
    await assertFsckClean(cipherdir);
  }
  assert.deepEqual(snapshots[0], snapshots[1]);
  assert.equal(Object.keys(snapshots[0]!).length, 2 * SIZES.length + 3);
  const [native, js] = counts;
  if (NATIVE.creates) {
    assert.equal(native!['nativeCreate'], 2 * SIZES.length + 2, `every short name's create was native: ${JSON.stringify(native)}`);
    assert.equal(native!['create'], 1, `the long name's create reached JS: ${JSON.stringify(native)}`);
    assert.equal(native!['release'], 1, `only the long name's release reached JS: ${JSON.stringify(native)}`);
  }
  assert.equal(js!['nativeCreate'], undefined, JSON.stringify(js));
  assert.equal(js!['create'], 2 * SIZES.length + 3, JSON.stringify(js));
});

test('on a root mount with -allow_other, a file another user makes is that user\'s, on both sides', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'owner-cipher');
  openForOthers(dir.tmp);
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [r, calls] = await counted(
    'owner',
    cipherdir,
    {},
    async (m) => {
      await fsp.chmod(m, 0o1777);
      const made = await pyAs<string>(A, m, `fd = os.open(os.path.join(R, 'theirs'), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)\nos.write(fd, b'x')\nos.close(fd)\nres = 'OK'`);
      await fsp.writeFile(join(m, 'mine'), 'y');
      const st = await Promise.all(['theirs', 'mine'].map((n) => fsp.stat(join(m, n))));
      return [made, ...st.map((s) => `${s.uid}:${s.gid}`)];
    },
    ['-allow_other'],
  );
  assert.deepEqual(r, ['OK', `${A.uid}:${A.gid}`, '0:0']);
  const [theirs, mine] = await Promise.all(['theirs', 'mine'].map(async (n) => fsp.stat(await cipherPathOf(cipherdir, n))));
  assert.equal(`${theirs!.uid}:${theirs!.gid}`, `${A.uid}:${A.gid}`, 'the cipher file is the user\'s');
  assert.equal(`${mine!.uid}:${mine!.gid}`, '0:0');
  if (NATIVE.creates) {
    assert.equal(calls['create'], 1, `the other user's create reached JS: ${JSON.stringify(calls)}`);
    assert.equal(calls['nativeCreate'], 1, `root's own was native: ${JSON.stringify(calls)}`);
  }
});

test('a natively created handle: a hole, fsync, ftruncate, fstat and writes after an unlink work, write-only too', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'handle-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [r, calls] = await counted('handle', cipherdir, {}, (m) =>
    py<unknown[]>(
      `
top = A[0]
res = []
# read-write: a write, a hole past the end, fsync, read back, ftruncate, fstat
fd = os.open(os.path.join(top, 'rw'), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b'a' * 5000)
os.pwrite(fd, b'b' * 100, 20000)
os.fsync(fd)
data = os.pread(fd, 30000, 0)
res.append(data == b'a' * 5000 + bytes(15000) + b'b' * 100)
os.ftruncate(fd, 7000)
res.append(os.fstat(fd).st_size)
res.append(os.pread(fd, 10000, 0) == b'a' * 5000 + bytes(2000))
os.close(fd)
# write-only: a hole too, then a read through the handle is EBADF
fd = os.open(os.path.join(top, 'wo'), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.pwrite(fd, b'c' * 10, 9000)
res.append(t(lambda: os.pread(fd, 10, 0)))
os.fsync(fd)
os.close(fd)
with open(os.path.join(top, 'wo'), 'rb') as f:
    res.append(f.read() == bytes(9000) + b'c' * 10)
# unlinked while open: the handle keeps writing and reading, nothing is left behind
fd = os.open(os.path.join(top, 'gone'), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b'd' * 3000)
os.unlink(os.path.join(top, 'gone'))
os.pwrite(fd, b'e' * 3000, 3000)
res.append(os.pread(fd, 10000, 0) == b'd' * 3000 + b'e' * 3000)
res.append(os.fstat(fd).st_size)
os.close(fd)
res.append(sorted(os.listdir(top)))
out(res)`,
      [m],
    ),
  );
  assert.deepEqual(r, [true, 7000, true, 'EBADF', true, true, 6000, ['rw', 'wo']]);
  if (NATIVE.creates) {
    assert.equal(calls['nativeCreate'], 3, JSON.stringify(calls));
    assert.equal(calls['create'], undefined, JSON.stringify(calls));
    assert.equal(calls['write'], undefined, `the holes' writes were native too: ${JSON.stringify(calls)}`);
  }
  assert.deepEqual((await fsp.readdir(cipherdir)).filter((n) => n.startsWith('.fuse_hidden')), []);
  await assertFsckClean(cipherdir);
});

test('O_EXCL on a name that exists is EEXIST; a create for a name another mount made opens that file', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'exists-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [r, calls] = await counted('exists', cipherdir, {}, (m) =>
    withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'exists-other-mnt'), {}, async (other) => {
      await fsp.writeFile(join(m, 'there'), 'there');
      const excl = await py<string>(`out(t(lambda: os.open(os.path.join(A[0], 'there'), os.O_WRONLY | os.O_CREAT | os.O_EXCL)))`, [m]);
      // The kernel of mount m learns that "late" is missing, then the other mount makes it.
      const missing = await py<string>(`out(t(lambda: os.stat(os.path.join(A[0], 'late'))))`, [m]);
      await fsp.writeFile(join(other, 'late'), 'made elsewhere');
      const opened = await py<string>(
        `
fd = os.open(os.path.join(A[0], 'late'), os.O_RDWR | os.O_CREAT, 0o644)
data = os.pread(fd, 100, 0)
os.close(fd)
out(data.decode())`,
        [m],
      );
      return [excl, missing, opened, await fsp.readFile(join(other, 'late'), 'utf8')];
    }),
  );
  assert.deepEqual(r, ['EEXIST', 'ENOENT', 'made elsewhere', 'made elsewhere']);
  if (NATIVE.creates) assert.equal(calls['create'], 1, `the create of the name that existed went on to JS: ${JSON.stringify(calls)}`);
});
