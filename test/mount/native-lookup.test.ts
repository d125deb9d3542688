/**
 * The native lookup (native/fastpath/lookup.c, the binding's
 * fuse_native_lookup_native): a GETATTR the binding's attribute cache
 * cannot answer is found on the libfuse thread, by encrypting the path
 * as the vault does. What a user sees must be what JS gives:
 * - every kind of entry (files of sizes around the block boundaries, a long
 *   name, UTF-8 names, a deep directory, a symlink, a FIFO, hard links)
 *   stats the same with the native lookup and with TSCRYPTFS_NATIVE_LOOKUP=0,
 *   and a missing name, or a name under a file, fails the same way;
 * - the directory IVs it keeps never outlive a directory change made
 *   through the mount: after rmdir and mkdir of the same name (a new IV),
 *   and after a rename of the directory, the names in the new directory are
 *   found at once;
 * - a file 64 directories deep (a cipher path of about 1.5 KB) is found at
 *   every level without JS;
 * - getxattr and listxattr of an entry with no extended attributes at all
 *   (the hook `no_xattrs`) answer as JS does, without JS, for every kind of
 *   entry; names JS stores under a name too long for the backing file
 *   system, or not ASCII, and entries that have attributes, go to JS.
 *
 * TSCRYPTFS_OPSTATS (written at unmount) tells which path served them:
 * `getattr` counts those that reached JS, `nativeLookup` the others.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { assertFsckClean, callCounter, MOUNT_IMPL, py, useMountTmp } from '../helpers/mount-suite.js';
import { NATIVE } from '../helpers/native-paths.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('native-lookup');
const T = { timeout: 180_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };
const withGocryptfs = { ...tsOnly, ...needs('mount', 'python3', 'gocryptfs') };

/** Mounts `cipherdir` with `env` set, runs `fn`, and returns its result and the call counts of the mount. */
const counted = callCounter(dir);

const LONG = 'l'.repeat(200);
const DEEP = 'd1/d2/d3/d4/d5/d6';
const SIZES = [0, 1, 4095, 4096, 4097, 8192, 100_000];
/** Every path the tree has, and some it does not. */
const PATHS = [
  ...SIZES.map((n) => `${DEEP}/size${n}`),
  `d1/${LONG}`,
  `d1/${LONG}-dir`,
  `d1/${LONG}-dir/inner`,
  'd1/d2/é€😀',
  'd1/d2/日本語のファイル名',
  'd1/link',
  'd1/fifo',
  'd1/a',
  'd1/b',
  'd1',
  DEEP,
  'missing',
  'd1/missing',
  `${DEEP}/missing`,
  `d1/${LONG}-missing`,
  `${DEEP}/size1/under-a-file`,
];

const MAKE_TREE = `
import os
top = A[0]
os.makedirs(os.path.join(top, '${DEEP}'))
for n in [${SIZES.join(', ')}]:
    with open(os.path.join(top, '${DEEP}', 'size%d' % n), 'wb') as f:
        f.write(bytes((i * 7) % 251 for i in range(n)))
with open(os.path.join(top, 'd1', '${LONG}'), 'w') as f:
    f.write('long')
os.makedirs(os.path.join(top, 'd1', '${LONG}-dir'))
with open(os.path.join(top, 'd1', '${LONG}-dir', 'inner'), 'w') as f:
    f.write('inner')
for n in ['é€😀', '日本語のファイル名']:
    with open(os.path.join(top, 'd1/d2', n), 'w') as f:
        f.write(n)
os.symlink('d2/é€😀', os.path.join(top, 'd1', 'link'))
os.mkfifo(os.path.join(top, 'd1', 'fifo'))
with open(os.path.join(top, 'd1', 'a'), 'w') as f:
    f.write('linked')
os.link(os.path.join(top, 'd1', 'a'), os.path.join(top, 'd1', 'b'))
os.utime(os.path.join(top, 'd1', 'a'), ns=(1_600_000_000_123_456_789, 1_600_000_000_987_654_321))
out(0)`;

/** lstat of each path after the kernel let go of its names: what a user sees, or the errno. */
const STAT_ALL = `
import os
with open('/proc/sys/vm/drop_caches', 'w') as f:
    f.write('2')
res = []
for p in A[1:]:
    try:
        s = os.lstat(os.path.join(A[0], p))
        res.append([p, s.st_mode, s.st_size, s.st_uid, s.st_gid, s.st_nlink, s.st_blocks, s.st_mtime_ns, s.st_ctime_ns])
    except OSError as e:
        res.append([p, errno.errorcode[e.errno]])
out(res)`;

test('every kind of entry stats the same through the native lookup as through JS, and a missing name fails the same', withGocryptfs, async () => {
  const cipherdir = join(dir.tmp, 'same-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'same-make-mnt'), {}, (m) => py(MAKE_TREE, [m]));
  const [native, nativeCalls] = await counted('same-native', cipherdir, {}, (m) => py<unknown[][]>(STAT_ALL, [m, ...PATHS]));
  const [js, jsCalls] = await counted('same-js', cipherdir, { TSCRYPTFS_NATIVE_LOOKUP: '0' }, (m) => py<unknown[][]>(STAT_ALL, [m, ...PATHS]));
  assert.deepEqual(native, js);
  // What a user sees, spelled out for a few.
  const byPath = new Map(native.map((r) => [r[0], r.slice(1)]));
  for (const n of SIZES) assert.equal(byPath.get(`${DEEP}/size${n}`)![1], n, `size${n}`);
  assert.deepEqual(byPath.get('missing'), ['ENOENT']);
  assert.deepEqual(byPath.get(`d1/${LONG}-missing`), ['ENOENT']);
  assert.deepEqual(byPath.get(`${DEEP}/size1/under-a-file`), ['ENOTDIR']);
  assert.equal(byPath.get('d1/link')![1], 'd2/é€😀'.length + 5, 'the symlink shows its target\'s length in bytes');
  assert.equal(byPath.get('d1/a')![4], 2, 'two links');
  assert.equal(byPath.get('d1/a')![6], 1_600_000_000_987_654_321, 'mtime to the nanosecond');
  // Only the symlink (its size needs its target decrypted) and what the
  // kernel asks of the root go to JS with the native lookup on.
  if (NATIVE.lookups) {
    assert.ok((nativeCalls['nativeLookup'] ?? 0) >= PATHS.length, JSON.stringify(nativeCalls));
    assert.ok((nativeCalls['getattr'] ?? 0) <= 2, JSON.stringify(nativeCalls));
  }
  assert.equal(jsCalls['nativeLookup'], undefined, JSON.stringify(jsCalls));
  assert.ok((jsCalls['getattr'] ?? 0) >= PATHS.length, JSON.stringify(jsCalls));
  await assertFsckClean(cipherdir);
});

test('a directory removed and made again, or renamed, through the mount: its new names are found at once', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'dirs-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [r, calls] = await counted('dirs', cipherdir, {}, (m) =>
    py<unknown[]>(
      `
top = A[0]
def drop():
    with open('/proc/sys/vm/drop_caches', 'w') as f:
        f.write('2')
def touch(p):
    with open(os.path.join(top, p), 'w') as f:
        f.write(p)
def exists(p):
    try:
        os.lstat(os.path.join(top, p))
        return True
    except FileNotFoundError:
        return False
def empty_attr_cache():
    # A hard link empties the binding's attribute cache, and is no directory change.
    os.link(os.path.join(top, 'anchor'), os.path.join(top, 'anchor2'))
    os.unlink(os.path.join(top, 'anchor2'))
touch('anchor')
res = []
# The IV of d is kept (a lookup in d), then d goes and comes back with a new IV.
os.mkdir(os.path.join(top, 'd'))
touch('d/f')
drop()
res.append(exists('d/nothere'))
os.unlink(os.path.join(top, 'd/f'))
os.rmdir(os.path.join(top, 'd'))
os.mkdir(os.path.join(top, 'd'))
touch('d/g')
empty_attr_cache()
drop()
res.append([exists('d/g'), exists('d/f')])
# The IV of e is kept, then e is renamed to x and a new e is made.
os.mkdir(os.path.join(top, 'e'))
touch('e/f')
drop()
res.append(exists('e/nothere'))
os.rename(os.path.join(top, 'e'), os.path.join(top, 'x'))
os.mkdir(os.path.join(top, 'e'))
touch('e/h')
empty_attr_cache()
drop()
res.append([exists('e/h'), exists('e/f'), exists('x/f'), open(os.path.join(top, 'x/f')).read()])
out(res)`,
      [m],
    ),
  );
  assert.deepEqual(r, [false, [true, false], false, [true, false, true, 'e/f']]);
  if (NATIVE.lookups) assert.ok((calls['nativeLookup'] ?? 0) >= 8, JSON.stringify(calls));
  await assertFsckClean(cipherdir);
});

test('a file 64 directories deep is found at every level on the libfuse threads', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'deep-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const deep = Array.from({ length: 64 }, (_, i) => `d${i}`).join('/');
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'deep-make-mnt'), {}, async (m) => {
    await fsp.mkdir(join(m, deep), { recursive: true });
    await fsp.writeFile(join(m, deep, 'leaf'), 'deep');
  });
  const [r, calls] = await counted('deep', cipherdir, {}, (m) =>
    py<unknown[]>(
      `
p = os.path.join(A[0], A[1], 'leaf')
with open('/proc/sys/vm/drop_caches', 'w') as f:
    f.write('2')
out([os.lstat(p).st_size, os.path.isdir(os.path.dirname(p))])`,
      [m, deep],
    ),
  );
  assert.deepEqual(r, [4, true]);
  if (NATIVE.lookups) {
    assert.ok((calls['nativeLookup'] ?? 0) >= 65, JSON.stringify(calls));
    assert.ok((calls['getattr'] ?? 0) <= 2, JSON.stringify(calls));
  }
  await assertFsckClean(cipherdir);
});

/** getxattr of each name and listxattr of each path, after the kernel let go of its names: values in hex, or the errno. */
const XATTRS_ALL = `
with open('/proc/sys/vm/drop_caches', 'w') as f:
    f.write('2')
names = json.loads(A[1])
res = []
for p in A[2:]:
    full = os.path.join(A[0], p)
    for n in names:
        try:
            res.append([p, n, os.getxattr(full, n, follow_symlinks=False).hex()])
        except OSError as e:
            res.append([p, n, errno.errorcode[e.errno]])
    try:
        res.append([p, 'list', sorted(os.listxattr(full, follow_symlinks=False))])
    except OSError as e:
        res.append([p, 'list', errno.errorcode[e.errno]])
out(res)`;

test('getxattr and listxattr of entries without extended attributes answer as JS does, on the libfuse threads', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'xattr-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  await withMount(MOUNT_IMPL, cipherdir, join(dir.tmp, 'xattr-make-mnt'), {}, (m) =>
    py(
      `${MAKE_TREE.replace('out(0)', '')}
os.setxattr(os.path.join(top, 'd1', 'a'), 'user.kept', b'value')
os.mkdir(os.path.join(top, 'withattr'))
os.setxattr(os.path.join(top, 'withattr'), 'user.dir', b'')
out(0)`,
      [m],
    ),
  );
  // A name of 175 bytes is stored under one of 251, one of 176 under 271 (too long to set).
  const names = ['user.kept', 'user.other', 'security.selinux', 'system.posix_acl_access', 'trusted.x', 'user.' + 'n'.repeat(170), 'user.' + 'n'.repeat(171), 'user.é'];
  const paths = ['d1', `${DEEP}/size0`, `${DEEP}/size4097`, `d1/${LONG}`, `d1/${LONG}-dir`, 'd1/link', 'd1/fifo', 'd1/a', 'd1/b', 'withattr', 'missing', `${DEEP}/size1/under-a-file`];
  const args = (m: string): string[] => [m, JSON.stringify(names), ...paths];
  const [native, nativeCalls] = await counted('xattr-native', cipherdir, {}, (m) => py<unknown[][]>(XATTRS_ALL, args(m)));
  const [js, jsCalls] = await counted('xattr-js', cipherdir, { TSCRYPTFS_NATIVE_LOOKUP: '0' }, (m) => py<unknown[][]>(XATTRS_ALL, args(m)));
  assert.deepEqual(native, js);
  const got = new Map(native.map((r) => [`${r[0]} ${r[1]}`, r[2]]));
  assert.equal(got.get('d1/a user.kept'), Buffer.from('value').toString('hex'));
  assert.equal(got.get('d1/b user.kept'), Buffer.from('value').toString('hex'), 'the hard link has it too');
  assert.deepEqual(got.get('d1/a list'), ['user.kept']);
  assert.equal(got.get(`${DEEP}/size0 user.other`), 'ENODATA');
  assert.deepEqual(got.get(`${DEEP}/size0 list`), []);
  assert.equal(got.get(`${DEEP}/size0 user.${'n'.repeat(170)}`), 'ENODATA');
  assert.equal(got.get(`${DEEP}/size0 user.${'n'.repeat(171)}`), 'ENODATA', 'a name stored longer than 255 bytes cannot have been set');
  assert.equal(got.get('missing user.other'), 'ENOENT');
  // JS sees the entries with attributes (d1/a, d1/b, withattr: every name
  // and the list), and on the others only the two names it must store
  // itself; the kernel's own lookups and a missing entry add a few.
  const withAttrs = 3 * names.length;
  const others = (paths.length - 3) * 2;
  if (NATIVE.lookups) assert.ok((nativeCalls['getxattr'] ?? 0) <= withAttrs + others + 4, JSON.stringify(nativeCalls));
  // The rest were answered on the libfuse threads, and are counted there.
  if (NATIVE.lookups) assert.ok((nativeCalls['nativeXattrNone'] ?? 0) >= 20, JSON.stringify(nativeCalls));
  assert.equal(jsCalls['nativeXattrNone'], undefined, JSON.stringify(jsCalls));
  // Without the hook, each name on each entry the kernel lets through (not user.* on the symlink and the FIFO) goes to JS.
  assert.ok((jsCalls['getxattr'] ?? 0) >= 60, JSON.stringify(jsCalls));
  await assertFsckClean(cipherdir);
});

test('TSCRYPTFS_NATIVE_LOOKUP=0 sends every lookup to JS', tsOnly, async () => {
  const cipherdir = join(dir.tmp, 'off-cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [, calls] = await counted('off', cipherdir, { TSCRYPTFS_NATIVE_LOOKUP: '0' }, async (m) => {
    await fsp.writeFile(join(m, 'f'), 'x');
    await assert.rejects(fsp.stat(join(m, 'nothere')), { code: 'ENOENT' });
  });
  assert.equal(calls['nativeLookup'], undefined, JSON.stringify(calls));
  assert.ok((calls['getattr'] ?? 0) >= 1, JSON.stringify(calls));
});
