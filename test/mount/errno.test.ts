/**
 * POSIX error codes: every failing operation in a table of them (open,
 * mkdir, rmdir, unlink, rename, link, symlink, readlink, truncate, xattrs,
 * names too long, trailing slashes, renames into itself, across
 * filesystems, ...) must fail through the mount with exactly the errno the
 * kernel's own ext4 gives on the same tree; on a -ro mount every change
 * must be what a read-only bind mount of ext4 gives (EROFS). A tampered
 * block is EIO through the mount, with the daemon's log line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { logPathFor, MOUNT_IMPL, run, withMount } from '../helpers/mount.js';
import { cipherPathOf, py, useCipherdir } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 60_000, ...needs('mount', 'python3') };
const fx = useCipherdir('errno', MOUNT_IMPL);

/** Builds the tree under A[0] (when A[2] is "setup"), runs every case, prints {case: errno or OK}. A[1] is a path on another filesystem. */
const CASES = `
R, OTHER = A[0], A[1]
p = lambda *x: os.path.join(R, *x)
if A[2] == 'setup':
    open(p('f'), 'w').write('x')
    os.mkdir(p('d'))
    os.mkdir(p('full'))
    open(p('full', 'g'), 'w').write('y')
    os.symlink('f', p('l'))
    os.symlink('nowhere', p('dangling'))
    os.setxattr(p('f'), 'user.present', b'v')
res = {}
def case(name, fn):
    res[name] = t(fn)
def fd_op(path, flags, op):
    fd = os.open(path, flags)
    try:
        op(fd)
    finally:
        os.close(fd)
case('open missing', lambda: os.open(p('missing'), os.O_RDONLY))
case('open through a file', lambda: os.open(p('f', 'x'), os.O_RDONLY))
case('open file with trailing slash', lambda: os.open(p('f') + '/', os.O_RDONLY))
case('create existing O_EXCL', lambda: os.open(p('f'), os.O_WRONLY | os.O_CREAT | os.O_EXCL))
case('create over dir', lambda: os.open(p('d'), os.O_WRONLY | os.O_CREAT))
case('open dir for writing', lambda: os.open(p('d'), os.O_WRONLY))
case('open symlink O_NOFOLLOW', lambda: os.open(p('l'), os.O_RDONLY | os.O_NOFOLLOW))
case('open dangling symlink', lambda: os.open(p('dangling'), os.O_RDONLY))
case('open file O_DIRECTORY', lambda: os.open(p('f'), os.O_RDONLY | os.O_DIRECTORY))
case('create name of 256 bytes', lambda: os.open(p('n' * 256), os.O_WRONLY | os.O_CREAT))
case('stat name of 256 bytes', lambda: os.stat(p('n' * 256)))
case('mkdir existing file', lambda: os.mkdir(p('f')))
case('mkdir existing dir', lambda: os.mkdir(p('d')))
case('mkdir in missing dir', lambda: os.mkdir(p('missing', 'x')))
case('mkdir through a file', lambda: os.mkdir(p('f', 'x')))
case('mkdir over symlink', lambda: os.mkdir(p('l')))
case('rmdir non-empty', lambda: os.rmdir(p('full')))
case('rmdir file', lambda: os.rmdir(p('f')))
case('rmdir missing', lambda: os.rmdir(p('missing')))
case('rmdir symlink', lambda: os.rmdir(p('l')))
case('rmdir dot', lambda: os.rmdir(p('d', '.')))
case('unlink dir', lambda: os.unlink(p('d')))
case('unlink missing', lambda: os.unlink(p('missing')))
case('unlink through a file', lambda: os.unlink(p('f', 'x')))
case('rename dir into itself', lambda: os.rename(p('d'), p('d', 'sub')))
case('rename dir over non-empty dir', lambda: os.rename(p('d'), p('full')))
case('rename file over dir', lambda: os.rename(p('f'), p('d')))
case('rename dir over file', lambda: os.rename(p('d'), p('f')))
case('rename missing', lambda: os.rename(p('missing'), p('x')))
case('rename into missing dir', lambda: os.rename(p('f'), p('missing', 'x')))
case('rename to 256 bytes', lambda: os.rename(p('f'), p('n' * 256)))
case('rename across filesystems', lambda: os.rename(p('f'), os.path.join(OTHER, 'x')))
case('link dir', lambda: os.link(p('d'), p('dlink')))
case('link missing', lambda: os.link(p('missing'), p('x')))
case('link over existing', lambda: os.link(p('f'), p('full', 'g')))
case('link across filesystems', lambda: os.link(p('f'), os.path.join(OTHER, 'x')))
case('symlink over existing', lambda: os.symlink('x', p('f')))
case('readlink file', lambda: os.readlink(p('f')))
case('readlink missing', lambda: os.readlink(p('missing')))
case('truncate dir', lambda: os.truncate(p('d'), 0))
case('truncate negative', lambda: os.truncate(p('f'), -1))
case('ftruncate read-only fd', lambda: fd_op(p('f'), os.O_RDONLY, lambda fd: os.ftruncate(fd, 0)))
case('write read-only fd', lambda: fd_op(p('f'), os.O_RDONLY, lambda fd: os.write(fd, b'x')))
case('read write-only fd', lambda: fd_op(p('f'), os.O_WRONLY, lambda fd: os.read(fd, 1)))
case('read a directory fd', lambda: fd_op(p('d'), os.O_RDONLY, lambda fd: os.read(fd, 1)))
case('listdir file', lambda: os.listdir(p('f')))
case('getxattr absent', lambda: os.getxattr(p('f'), 'user.absent'))
case('setxattr create existing', lambda: os.setxattr(p('f'), 'user.present', b'x', os.XATTR_CREATE))
case('setxattr replace absent', lambda: os.setxattr(p('f'), 'user.absent', b'x', os.XATTR_REPLACE))
case('removexattr absent', lambda: os.removexattr(p('f'), 'user.absent'))
case('getxattr missing file', lambda: os.getxattr(p('missing'), 'user.x'))
out(res)
`;

/** Changes, each of which a read-only filesystem must refuse. */
const RO_CASES = `
R = A[0]
p = lambda *x: os.path.join(R, *x)
res = {}
def case(name, fn):
    res[name] = t(fn)
case('create', lambda: os.open(p('new'), os.O_WRONLY | os.O_CREAT))
case('open for writing', lambda: os.open(p('f'), os.O_WRONLY))
case('open O_TRUNC', lambda: os.open(p('f'), os.O_RDONLY | os.O_TRUNC))
case('mkdir', lambda: os.mkdir(p('newdir')))
case('rmdir', lambda: os.rmdir(p('d')))
case('unlink', lambda: os.unlink(p('f')))
case('rename', lambda: os.rename(p('f'), p('g')))
case('link', lambda: os.link(p('f'), p('g')))
case('symlink', lambda: os.symlink('x', p('g')))
case('truncate', lambda: os.truncate(p('f'), 0))
case('chmod', lambda: os.chmod(p('f'), 0o600))
case('chown', lambda: os.chown(p('f'), 1, 1))
case('utime', lambda: os.utime(p('f'), (1, 1)))
case('setxattr', lambda: os.setxattr(p('f'), 'user.x', b'v'))
case('removexattr', lambda: os.removexattr(p('f'), 'user.present'))
case('mknod fifo', lambda: os.mkfifo(p('fifo')))
case('read still works', lambda: open(p('f')).read())
out(res)
`;

test('every failing operation gives the errno ext4 gives on the same tree', T, async () => {
  const plain = join(fx.tmp, 'plain');
  await fsp.mkdir(plain);
  const expected = await py<Record<string, string>>(CASES, [plain, '/dev/shm', 'setup']);
  assert.ok(Object.keys(expected).length > 40);
  assert.ok(Object.values(expected).every((e) => e !== 'OK'), `every case fails on ext4 too: ${JSON.stringify(expected)}`);
  const mnt = join(fx.tmp, 'mnt');
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt, {}, async (m) => {
    const got = await py<Record<string, string>>(CASES, [m, fx.tmp, 'setup']);
    assert.deepEqual(got, expected);
  });
});

// Uses the trees the first test made (on ext4 and in the cipher directory).
test('-ro: every change is refused as by a read-only bind mount of ext4 (EROFS); reading works', T, async () => {
  const plain = join(fx.tmp, 'plain');
  const roBind = join(fx.tmp, 'ro-bind');
  await fsp.mkdir(roBind);
  let expected: Record<string, string>;
  assert.equal((await run('mount', ['--bind', plain, roBind])).code, 0);
  try {
    assert.equal((await run('mount', ['-o', 'remount,bind,ro', roBind])).code, 0);
    expected = await py<Record<string, string>>(RO_CASES, [roBind]);
  } finally {
    await run('umount', [roBind]);
  }
  assert.equal(expected['create'], 'EROFS');
  assert.equal(expected['read still works'], 'OK');
  const mnt = join(fx.tmp, 'mnt-ro');
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt, { flags: ['-ro'] }, async (m) => {
    assert.deepEqual(await py<Record<string, string>>(RO_CASES, [m]), expected);
  });
});

test('a tampered block through the mount: EIO for that block only, and a log line of the daemon', T, async () => {
  const mnt = join(fx.tmp, 'mnt-tamper');
  const data = Buffer.alloc(3 * 4096, 0x41);
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt, {}, async (m) => {
    await fsp.writeFile(join(m, 'tampered'), data);
  });
  const cp = await cipherPathOf(fx.cipherdir, 'tampered');
  const b = await fsp.readFile(cp);
  b[18 + 4096 + 32 + 100]! ^= 1; // block 1's ciphertext
  await fsp.writeFile(cp, b);
  const logBefore = await fsp.readFile(logPathFor(MOUNT_IMPL, mnt), 'utf8');
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt, {}, async (m) => {
    const r = await py<[string, string, string]>(
      `
def rd(off):
    fd = os.open(A[0], os.O_RDONLY)
    try:
        os.pread(fd, 4096, off)
    finally:
        os.close(fd)
out([t(lambda: rd(0)), t(lambda: rd(4096)), t(lambda: rd(8192))])`,
      [join(m, 'tampered')],
    );
    assert.deepEqual(r, ['OK', 'EIO', 'OK']);
  });
  const log = (await fsp.readFile(logPathFor(MOUNT_IMPL, mnt), 'utf8')).slice(logBefore.length);
  if (MOUNT_IMPL === 'tscryptfs') assert.match(log, new RegExp(`${cp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: block 1 failed authentication`));
  else assert.match(log, /corrupt block #1/);
});

test('an xattr name too long once encrypted: set and remove ERANGE, as through gocryptfs; get ENODATA (gocryptfs says EOVERFLOW, from its retries)', T, async () => {
  const mnt = join(fx.tmp, 'mnt-xattr-name');
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt, {}, async (m) => {
    const r = await py<Record<string, string>>(
      `
f = A[0]
open(f, 'w').close()
res = {}
for n in (150, 180):
    name = 'user.' + 'a' * n
    res[f'set {n}'] = t(lambda: os.setxattr(f, name, b'v'))
    res[f'get {n}'] = t(lambda: os.getxattr(f, name))
    res[f'remove {n}'] = t(lambda: os.removexattr(f, name))
out(res)`,
      [join(m, 'xattr-names')],
    );
    // 150 bytes are stored as 250 (user.gocryptfs. and base64), 180 as 271.
    assert.deepEqual(r, { 'set 150': 'OK', 'get 150': 'OK', 'remove 150': 'OK', 'set 180': 'ERANGE', 'get 180': MOUNT_IMPL === 'gocryptfs' ? 'EOVERFLOW' : 'ENODATA', 'remove 180': 'ERANGE' });
  });
});
