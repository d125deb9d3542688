/**
 * The native open (native/fastpath/open.c, the binding's fuse_native_open_fast):
 * a file opened for reading is opened on the libfuse thread, and its
 * release closes it there; JS adopts the handle when a request for it
 * reaches JS after all. What a user sees must be what JS gives:
 * - every file of a tree (sizes around the block boundaries, a long name,
 *   UTF-8 names, a deep directory, hard links) reads back as written, with
 *   the native open and with TSCRYPTFS_NATIVE_OPEN=0;
 * - a tampered block through a native handle fails alone (JS adopts the
 *   handle to answer it), and fstat of the handle still works;
 * - a natively opened file unlinked while open: no .fuse_hidden entry,
 *   its directory can be removed, the handle still reads and fstats;
 * - a write through a JS handle of the same file (O_TRUNC, a new file ID)
 *   is seen at once by the native handle's next read, which stays native:
 *   both use the file's one fence slot;
 * - opens for writing (read-write, appending, truncating) are native too
 *   where writes are, and leave the file as JS's opens do;
 * - fstat of a natively opened file is answered natively (after writes
 *   through it, past its end, through another handle), and holes read as
 *   zeros natively, the same as JS answers them;
 * - fsync and fdatasync of any open file are answered natively, and leave a
 *   native handle native.
 *
 * TSCRYPTFS_OPSTATS (written at unmount) tells which path served them:
 * `open` counts the opens that reached JS, `nativeOpen` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { assertFsckClean, callCounter, cipherPathOf, MOUNT_IMPL, py, useMountTmp } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { prng } from '../helpers/tree.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-open');
const T = { timeout: 180_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
const withGocryptfs = { ...tsOnly, ...needs('mount', 'python3', 'gocryptfs') };

/** Mounts `cipherdir` with `env` set, runs `fn`, and returns its result and the call counts of the mount. */
const counted = callCounter(dir);

const LONG = 'l'.repeat(200);
const DEEP = 'd1/d2/d3/d4/d5/d6';
const SIZES = [0, 1, 4095, 4096, 4097, 8192, 100_000, 300_001];
const FILES = [...SIZES.map((n) => `${DEEP}/size${n}`), `d1/${LONG}`, 'd1/d2/é€😀', 'd1/d2/日本語のファイル名', 'd1/a', 'd1/b'];

const MAKE_TREE = `
import os
top = A[0]
os.makedirs(os.path.join(top, '${DEEP}'))
for n in [${SIZES.join(', ')}]:
    with open(os.path.join(top, '${DEEP}', 'size%d' % n), 'wb') as f:
        f.write(bytes((i * 7) % 251 for i in range(n)))
with open(os.path.join(top, 'd1', '${LONG}'), 'w') as f:
    f.write('long')
for n in ['é€😀', '日本語のファイル名']:
    with open(os.path.join(top, 'd1/d2', n), 'w') as f:
        f.write(n)
with open(os.path.join(top, 'd1', 'a'), 'w') as f:
    f.write('linked')
os.link(os.path.join(top, 'd1', 'a'), os.path.join(top, 'd1', 'b'))
out(0)`;

/** Each file's SHA-256, size and fstat size, read in 1000-byte pieces after the kernel let go of its pages and names. */
const READ_ALL = `
import hashlib
with open('/proc/sys/vm/drop_caches', 'w') as f:
    f.write('3')
res = []
for p in A[1:]:
    fd = os.open(os.path.join(A[0], p), os.O_RDONLY)
    h = hashlib.sha256()
    n = 0
    while True:
        b = os.read(fd, 1000)
        if not b:
            break
        h.update(b)
        n += len(b)
    res.append([p, n, os.fstat(fd).st_size, h.hexdigest()])
    os.close(fd)
out(res)`;

test('every file of a tree reads back as written through native opens, as through JS opens', withGocryptfs, async () => {
  const cipherdir = join(dir.tmp, 'same-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'same-make-mnt'), {}, (m) => py(MAKE_TREE, [m]));
  const [native, nativeCalls] = await counted('same-native', cipherdir, {}, (m) => py<unknown[][]>(READ_ALL, [m, ...FILES]));
  const [js, jsCalls] = await counted('same-js', cipherdir, { TSCRYPTFS_NATIVE_OPEN: '0' }, (m) => py<unknown[][]>(READ_ALL, [m, ...FILES]));
  assert.deepEqual(native, js);
  const byPath = new Map(native.map((r) => [r[0], r.slice(1)]));
  for (const n of SIZES) assert.deepEqual(byPath.get(`${DEEP}/size${n}`)!.slice(0, 2), [n, n], `size${n}`);
  assert.deepEqual(byPath.get('d1/a'), byPath.get('d1/b'));
  if (NATIVE.opens) {
    assert.equal(nativeCalls['nativeOpen'], FILES.length, `every open was native: ${JSON.stringify(nativeCalls)}`);
    assert.equal(nativeCalls['open'], undefined, `no open reached JS: ${JSON.stringify(nativeCalls)}`);
    assert.equal(nativeCalls['read'], undefined, `no read reached JS: ${JSON.stringify(nativeCalls)}`);
    assert.equal(nativeCalls['release'], undefined, `no release reached JS: ${JSON.stringify(nativeCalls)}`);
  }
  assert.equal(jsCalls['nativeOpen'], undefined, JSON.stringify(jsCalls));
  assert.equal(jsCalls['open'], FILES.length, JSON.stringify(jsCalls));
  await assertFsckClean(cipherdir);
});

test('a tampered block read through a native handle fails alone (JS adopts the handle); fstat still works', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'tamper-cipher');
  const data = prng('native-open-tamper', 3 * 4096);
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'tamper-mnt'), {}, (m) => fsp.writeFile(join(m, 'f'), data));
  const cp = await cipherPathOf(cipherdir, 'f');
  const sealed = await fsp.readFile(cp);
  sealed[18 + (4096 + 32) + 12 + 100]! ^= 1; // block 1's ciphertext
  await fsp.writeFile(cp, sealed);
  const [r, calls] = await counted('tamper', cipherdir, {}, (m) =>
    py<unknown[]>(
      `
fd = os.open(A[0], os.O_RDONLY)
want = bytes.fromhex(A[1])
def rd(off, expect):
    if os.pread(fd, 4096, off) != expect:
        raise OSError(0, 'wrong bytes')
res = [t(lambda: rd(0, want[:4096])), t(lambda: rd(4096, b'')), t(lambda: rd(8192, want[8192:])), t(lambda: rd(0, want[:4096])), os.fstat(fd).st_size]
os.close(fd)
out(res)`,
      [join(m, 'f'), data.toString('hex')],
    ),
  );
  assert.deepEqual(r, ['OK', 'EIO', 'OK', 'OK', 3 * 4096]);
  assert.ok((calls['read'] ?? 0) >= 1, `the bad block went to JS, which answered EIO: ${JSON.stringify(calls)}`);
  assert.equal(calls['release'], 1, `JS adopted the handle (or opened it), so it got its release: ${JSON.stringify(calls)}`);
  if (NATIVE.opens) {
    assert.equal(calls['nativeOpen'], 1, JSON.stringify(calls));
    assert.equal(calls['open'], undefined, JSON.stringify(calls));
  }
});

test('a natively opened file unlinked while open: no .fuse_hidden entry, its directory goes, the handle still reads and fstats', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'unlinked-cipher');
  const data = prng('native-open-unlinked', 10_000);
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'unlinked-make-mnt'), {}, async (m) => {
    await fsp.mkdir(join(m, 'd'));
    await fsp.writeFile(join(m, 'd', 'f'), data);
  });
  const [r, calls] = await counted('unlinked', cipherdir, {}, (m) =>
    py<unknown[]>(
      `
d = os.path.join(A[0], 'd')
fd = os.open(os.path.join(d, 'f'), os.O_RDONLY)
first = os.pread(fd, 100, 0)
os.unlink(os.path.join(d, 'f'))
listed = os.listdir(d)
os.rmdir(d)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
st = os.fstat(fd)
whole = os.pread(fd, 20000, 0)
os.close(fd)
out([first.hex(), listed, st.st_size, st.st_nlink, whole.hex(), os.listdir(A[0])])`,
      [m],
    ),
  );
  assert.deepEqual(r, [data.subarray(0, 100).toString('hex'), [], data.length, 0, data.toString('hex'), []]);
  if (NATIVE.opens) assert.equal(calls['nativeOpen'], 1, JSON.stringify(calls));
  assert.deepEqual(await fsp.readdir(cipherdir).then((n) => n.sort()), ['gocryptfs.conf', 'gocryptfs.diriv'], 'nothing left in the cipher directory');
});

test('a write through a JS handle of the same file is seen at once by a native handle, whose reads stay native (one fence slot per file)', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'fence-cipher');
  const before = prng('native-open-before', 20_000);
  const after = prng('native-open-after', 30_000);
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'fence-make-mnt'), {}, (m) => fsp.writeFile(join(m, 'f'), before));
  // The writer through JS: with native writes off, opens for writing stay in JS (the reader's reads stay native).
  const [r, calls] = await counted('fence', cipherdir, { TSCRYPTFS_NATIVE_WRITE: '0' }, (m) =>
    py<string[]>(
      `
p = os.path.join(A[0], 'f')
r = os.open(p, os.O_RDONLY)
one = os.pread(r, 40000, 0)
w = os.open(p, os.O_WRONLY | os.O_TRUNC)
os.write(w, bytes.fromhex(A[1]))
os.fsync(w)
os.posix_fadvise(r, 0, 0, os.POSIX_FADV_DONTNEED)
two = os.pread(r, 40000, 0)
os.close(w)
os.close(r)
out([one.hex(), two.hex()])`,
      [m, after.toString('hex')],
    ),
  );
  assert.deepEqual(r, [before.toString('hex'), after.toString('hex')]);
  if (NATIVE.opens) {
    assert.equal(calls['nativeOpen'], 1, `the reader was opened natively: ${JSON.stringify(calls)}`);
    assert.equal(calls['open'], 1, `the writer through JS: ${JSON.stringify(calls)}`);
    assert.equal(calls['read'], undefined, `both reads native: the JS write moved the fence the native handle reads by: ${JSON.stringify(calls)}`);
  }
});

test('opens of a file for writing (read-write, appending, truncating) write what JS opens write', tsOnly, async () => {
  const before = prng('native-open-write', 20_000);
  const results: unknown[] = [];
  const counts: Record<string, number>[] = [];
  for (const [label, env] of [['native', {}], ['js', { TSCRYPTFS_NATIVE_OPEN: '0' }]] as const) {
    const cipherdir = join(dir.tmp, `write-${label}-cipher`);
    await initCipherdir(MOUNT_IMPL, cipherdir, []);
    await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, `write-${label}-make-mnt`), {}, (m) => fsp.writeFile(join(m, 'f'), before));
    const [r, calls] = await counted(`write-${label}`, cipherdir, env, (m) =>
      py<unknown[]>(
        `
import hashlib
p = os.path.join(A[0], 'f')
res = []
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b'X' * 100, 5000)
res.append(hashlib.sha256(os.pread(fd, 30000, 0)).hexdigest())
os.close(fd)
fd = os.open(p, os.O_WRONLY | os.O_APPEND)
os.write(fd, b'A' * 50)
res.append(t(lambda: os.pread(fd, 10, 0)))
os.close(fd)
res.append(os.stat(p).st_size)
fd = os.open(p, os.O_WRONLY | os.O_TRUNC)
os.write(fd, b'T' * 10)
os.close(fd)
with open(p, 'rb') as f:
    res.append(f.read().decode())
out(res)`,
        [m],
      ),
    );
    results.push(r);
    counts.push(calls);
    await assertFsckClean(cipherdir);
  }
  const patched = Buffer.from(before);
  patched.fill('X', 5000, 5100);
  assert.deepEqual(results[0], [createHash('sha256').update(patched).digest('hex'), 'EBADF', 20_050, 'T'.repeat(10)]);
  assert.deepEqual(results[0], results[1]);
  if (NATIVE.opens && NATIVE.writes) {
    assert.equal(counts[0]!['nativeOpen'], 4, `the four opens were native: ${JSON.stringify(counts[0])}`);
    assert.equal(counts[0]!['open'], undefined, JSON.stringify(counts[0]));
  }
  assert.equal(counts[1]!['open'], 4, JSON.stringify(counts[1]));
});

test('fstat of a file opened natively is answered there, and holes read as zeros there, as JS answers both', tsOnly, async () => {
  const results: unknown[] = [];
  const counts: Record<string, number>[] = [];
  for (const [label, env] of [['native', {}], ['js', { TSCRYPTFS_NATIVE_OPEN: '0' }]] as const) {
    const cipherdir = join(dir.tmp, `fstat-${label}-cipher`);
    await initCipherdir(MOUNT_IMPL, cipherdir, []);
    const [r, calls] = await counted(`fstat-${label}`, cipherdir, env, (m) =>
      py<unknown[]>(
        `
import hashlib
p = os.path.join(A[0], 'f')
res = []
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b'a' * 5000, 0)
res.append(os.fstat(fd).st_size)
os.pwrite(fd, b'b' * 100, 3 * 4096 + 10)
res.append(os.fstat(fd).st_size)
os.close(fd)
for n in range(3):
    r = os.open(p, os.O_RDONLY)
    w = os.open(p, os.O_WRONLY)
    os.pwrite(w, b'c' * 10, 100 + n)
    res.append(os.fstat(r).st_size)
    os.posix_fadvise(r, 0, 0, os.POSIX_FADV_DONTNEED)
    whole = os.pread(r, 30000, 0)
    res.append([len(whole), hashlib.sha256(whole).hexdigest(), os.pread(r, 4096, 8192) == bytes(4096)])
    os.close(w)
    os.close(r)
out(res)`,
        [m],
      ),
    );
    results.push(r);
    counts.push(calls);
    await assertFsckClean(cipherdir);
  }
  const size = 3 * 4096 + 110;
  const want = Buffer.alloc(size);
  want.fill('a', 0, 5000).fill('c', 100, 112).fill('b', 3 * 4096 + 10);
  const last = results[0] as unknown[];
  assert.deepEqual(last.slice(0, 2), [5000, size]);
  assert.deepEqual(last[last.length - 1], [size, createHash('sha256').update(want).digest('hex'), true]);
  assert.deepEqual(results[0], results[1]);
  if (NATIVE.reads) for (const c of counts) assert.equal(c['read'], undefined, `every read native, the holes too: ${JSON.stringify(c)}`);
  if (NATIVE.opens && NATIVE.writes) {
    assert.ok((counts[0]!['nativeFgetattr'] ?? 0) >= 3, `the fstats after each write were native: ${JSON.stringify(counts[0])}`);
    // The write past the end went to JS, which adopted that handle: its fstat is JS's.
    assert.ok((counts[0]!['fgetattr'] ?? 0) <= 1, JSON.stringify(counts[0]));
  }
  assert.equal(counts[1]!['nativeFgetattr'], undefined, `no native handles, no native fstat: ${JSON.stringify(counts[1])}`);
});

test('fsync and fdatasync of an open file are answered natively, of native and of JS handles; a native handle stays native after them', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'fsync-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const SYNCS = `
p = os.path.join(A[0], 'f')
res = []
fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o644)
for n in range(3):
    os.pwrite(fd, b'x' * 100, n * 100)
    os.fsync(fd)
    os.fdatasync(fd)
    res.append(os.fstat(fd).st_size)
os.close(fd)
r = os.open(p, os.O_RDONLY)
os.fsync(r)
res.append(os.pread(r, 1000, 0) == b'x' * 300)
os.close(r)
out(res)`;
  const runs: [unknown, Record<string, number>][] = [];
  for (const [label, env] of [['native', {}], ['js-opens', { TSCRYPTFS_NATIVE_OPEN: '0' }], ['js', { TSCRYPTFS_NATIVE_FSYNC: '0' }]] as const) {
    await fsp.rm(join(dir.tmp, 'fsync-cipher'), { recursive: true });
    await initCipherdir(MOUNT_IMPL, cipherdir, []);
    runs.push(await counted(`fsync-${label}`, cipherdir, env, (m) => py(SYNCS, [m])));
    await assertFsckClean(cipherdir);
  }
  for (const [r] of runs) assert.deepEqual(r, [100, 200, 300, true]);
  const [nativeOpens, jsOpens, js] = runs.map(([, c]) => c);
  assert.equal(js!['fsync'], 7, `every fsync and fdatasync reached JS with the switch off: ${JSON.stringify(js)}`);
  assert.equal(js!['nativeFsync'], undefined, JSON.stringify(js));
  if (NATIVE.fsyncs) {
    for (const c of [nativeOpens!, jsOpens!]) {
      assert.equal(c['nativeFsync'], 7, `all seven native: ${JSON.stringify(c)}`);
      assert.equal(c['fsync'], undefined, JSON.stringify(c));
    }
    assert.equal(jsOpens!['open'], 1, `the read-only open went to JS: ${JSON.stringify(jsOpens)}`);
    if (NATIVE.opens && NATIVE.writes) {
      // Not adopted: the fstats after the syncs and both releases stayed native.
      assert.equal(nativeOpens!['release'], undefined, JSON.stringify(nativeOpens));
      assert.equal(nativeOpens!['fgetattr'], undefined, JSON.stringify(nativeOpens));
    }
  }
});
