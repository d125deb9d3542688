/**
 * Device nodes and fallocate on a root mount with -allow_other:
 *
 * - device nodes: root creates block and character devices without -dev
 *   (as gocryptfs 2.3 does; the mount's nodev keeps them unusable: EACCES
 *   on open), with their rdev, mode and owner, on the cipher side too; an
 *   ordinary user gets EPERM from the kernel (no CAP_MKNOD), as on ext4;
 * - fallocate(2): mode 0 and FALLOC_FL_KEEP_SIZE work with ext4's size
 *   rules and keep the content (compared with the same calls on ext4, made
 *   by uid 65534 on files it creates); punching holes, zeroing, collapsing
 *   and inserting ranges stay EOPNOTSUPP and change nothing.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { assertFsckClean, cipherPathOf, cipherSize, ok, useMountFixture } from '../helpers/mount-suite.js';
import { A, assertSameRecord, openForOthers, ownerSnapshot, pyAs, ROOT, runScenario, type Phase } from '../helpers/multiuser.js';
import { needs, unmet } from '../helpers/requirements.js';

const fx = useMountFixture('devfalloc', { mount: { flags: ['-allow_other'] } });
const T = { timeout: 60_000, ...needs('mount', 'gocryptfs', 'python3') };

before(async () => {
  if (unmet('mount')) return;
  openForOthers(fx.tmp);
  await fsp.mkdir(join(fx.tmp, 'ref'));
});

async function onBoth(name: string, phases: Phase[]): Promise<{ ref: Record<string, string>; mnt: Record<string, string>; refTree: Record<string, string>; mntTree: Record<string, string> }> {
  const go = async (root: string): Promise<[Record<string, string>, Record<string, string>]> => {
    await fsp.mkdir(root);
    await fsp.chmod(root, 0o755);
    return [await runScenario(root, phases), await ownerSnapshot(root)];
  };
  const [ref, refTree] = await go(join(fx.tmp, 'ref', name));
  const [mnt, mntTree] = await go(fx.p(name));
  return { ref, mnt, refTree, mntTree };
}

test('mknod without -dev: root makes block and char devices (rdev, mode, owner; on the cipher side too), they cannot be opened (nodev); uid 65534 gets EPERM as on ext4', T, async () => {
  const o = await onBoth('dev', [
    { who: ROOT, code: `os.mkdir('d'); os.chmod('d', 0o777); os.mkdir('a'); os.chown('a', 65534, 65534)` },
    {
      who: ROOT,
      code: `
case('mknod block 1,2', lambda: os.mknod('d/b', 0o660 | stat.S_IFBLK, os.makedev(1, 2)))
case('mknod char 1,3', lambda: os.mknod('d/c', 0o666 | stat.S_IFCHR, os.makedev(1, 3)))
case('mknod char 4,64 in a directory of uid 65534', lambda: os.mknod('a/tty', 0o620 | stat.S_IFCHR, os.makedev(4, 64)))
case('mknod over an existing name', lambda: os.mknod('d/c', 0o600 | stat.S_IFCHR, os.makedev(1, 5)))
case('chown a device node', lambda: os.chown('d/b', 65534, 65533))
case('chmod a device node', lambda: os.chmod('d/b', 0o640))
case('hard link a device node', lambda: os.link('d/c', 'd/c2'))
case('rename a device node', lambda: os.rename('d/c2', 'd/c3'))
case('mknod block, then unlink', lambda: (os.mknod('d/gone', 0o600 | stat.S_IFBLK, os.makedev(7, 0)), os.unlink('d/gone')) and None)
`,
    },
    {
      who: A,
      code: `
case('mknod char device (no CAP_MKNOD)', lambda: os.mknod('d/a-c', 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
case('mknod block device (no CAP_MKNOD)', lambda: os.mknod('d/a-b', 0o600 | stat.S_IFBLK, os.makedev(1, 2)))
case('mknod fifo', lambda: os.mknod('d/a-p', 0o600 | stat.S_IFIFO))
case('rename root device node in a 0777 directory', lambda: os.rename('d/c3', 'd/c4'))
`,
    },
  ]);
  assert.equal(o.ref['root: mknod block 1,2'], 'OK');
  assert.equal(o.ref['A: mknod char device (no CAP_MKNOD)'], 'EPERM');
  assert.equal(o.refTree['d/b'], 'b 0640 65534:65533 rdev=1,2');
  assert.equal(o.refTree['a/tty'], 'c 0600 0:0 rdev=4,64', '0620 less the umask 022');
  assertSameRecord(o.mnt, o.ref, 'every mknod step ends as on ext4');
  assertSameRecord(o.mntTree, o.refTree, 'the device nodes have the types, rdevs, modes and owners ext4 gives');
  // nodev: the mount refuses to open them (ext4 in /tmp would open them).
  const opened = await pyAs(ROOT, fx.p('dev'), `case('open char', lambda: os.open('d/c', os.O_RDWR))\ncase('open block', lambda: os.open('d/b', os.O_RDONLY))`);
  assert.deepEqual(opened, { 'open char': 'EACCES', 'open block': 'EACCES' }, 'a nodev mount refuses device nodes');
  // The command line.
  await ok('mknod', [fx.p('dev', 'd', 'cli-b'), 'b', '1', '2']);
  assert.ok((await fsp.lstat(fx.p('dev', 'd', 'cli-b'))).isBlockDevice());
  // Stored as device nodes on the cipher side, so gocryptfs mounts show them too.
  const cst = await fsp.lstat(await cipherPathOf(fx.cipherdir, 'dev/d/b'));
  assert.ok(cst.isBlockDevice(), 'the cipher side has a block device');
  assert.equal(cst.rdev, (1 << 8) | 2);
  assert.deepEqual([cst.uid, cst.gid, cst.mode & 0o7777], [65534, 65533, 0o640]);
});

/** fallocate cases; each on one fd from its creation (so owners do not matter), by uid 65534. */
const FALLOCATE = `
import hashlib
PAT = bytes((i * 13 + 5) & 0xff for i in range(5000))
def fresh(name, data=b''):
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    if data:
        os.pwrite(fd, data, 0)
    return fd
def content(fd):
    b = os.pread(fd, os.fstat(fd).st_size + 100, 0)
    return '%d:%s' % (len(b), hashlib.sha256(b).hexdigest()[:16])
def fcase(name, data, mode, off, length, after=None):
    fd = fresh(name, data)
    try:
        r = t(lambda: fallocate(fd, mode, off, length))
        if after:
            after(fd)
        res[name] = '%s size=%d %s' % (r, os.fstat(fd).st_size, content(fd))
    finally:
        os.close(fd)
KEEP, PUNCH, COLLAPSE, ZERO, INSERT = 0x01, 0x02, 0x08, 0x10, 0x20
if ARGS[0] == 'supported':
    fcase('mode 0, 1 MiB on an empty file', b'', 0, 0, 1 << 20)
    fcase('mode 0 inside the file', PAT, 0, 100, 200)
    fcase('mode 0 across the end', PAT, 0, 4000, 10000)
    fcase('mode 0 from an unaligned end', PAT[:4095], 0, 4095, 2)
    fcase('mode 0 far past the end', PAT, 0, 100000, 5)
    fcase('KEEP_SIZE 1 MiB', PAT, KEEP, 0, 1 << 20)
    fcase('KEEP_SIZE inside', PAT, KEEP, 0, 100)
    fcase('KEEP_SIZE on an empty file, then append', b'', KEEP, 0, 8192, lambda fd: os.write(fd, b'abc'))
    fcase('KEEP_SIZE past the end, then write past the end', PAT, KEEP, 0, 65536, lambda fd: os.pwrite(fd, b'xyz', 6000))
    fcase('KEEP_SIZE, then truncate up', PAT, KEEP, 4096, 8192, lambda fd: os.ftruncate(fd, 9000))
    fcase('length 0', PAT, 0, 0, 0)
    fcase('negative offset', PAT, 0, -1, 10)
    fd = os.open('ro', os.O_RDONLY | os.O_CREAT, 0o644)
    case('read-only descriptor', lambda: fallocate(fd, 0, 0, 10))
    os.close(fd)
    import subprocess
    case('fallocate -l 1M', lambda: str(subprocess.run(['fallocate', '-l', '1M', 'cli']).returncode) + ' size=%d' % os.stat('cli').st_size)
    create('cli-n', 0o644, PAT)  # fallocate -n does not create the file
    case('fallocate -n -l 1M', lambda: str(subprocess.run(['fallocate', '-n', '-l', '1M', 'cli-n']).returncode) + ' size=%d' % os.stat('cli-n').st_size)
else:
    for label, mode, off, length in [('PUNCH_HOLE|KEEP_SIZE', PUNCH | KEEP, 0, 4096), ('ZERO_RANGE', ZERO, 0, 4096), ('ZERO_RANGE|KEEP_SIZE', ZERO | KEEP, 4096, 8192),
                                     ('COLLAPSE_RANGE', COLLAPSE, 0, 4096), ('INSERT_RANGE', INSERT, 0, 4096), ('PUNCH_HOLE without KEEP_SIZE', PUNCH, 0, 4096)]:
        fd = fresh('u-' + label, PAT)
        try:
            r = t(lambda: fallocate(fd, mode, off, length))
            res[label] = '%s size=%d %s' % (r, os.fstat(fd).st_size, 'unchanged' if os.pread(fd, 10000, 0) == PAT else 'changed')
        finally:
            os.close(fd)
`;

test('fallocate by uid 65534: mode 0 and KEEP_SIZE with ext4 size rules, content kept; fallocate -l / -n work', T, async () => {
  const dir = async (root: string): Promise<string> => {
    await fsp.mkdir(join(root, 'falloc'));
    await fsp.chmod(join(root, 'falloc'), 0o777);
    return join(root, 'falloc');
  };
  const ref = await pyAs(A, await dir(join(fx.tmp, 'ref')), FALLOCATE, ['supported']);
  assert.match(ref['mode 0, 1 MiB on an empty file']!, /^OK size=1048576 /);
  assert.match(ref['KEEP_SIZE 1 MiB']!, /^OK size=5000 /);
  assert.match(ref['mode 0 far past the end']!, /^OK size=100005 /);
  assert.equal(ref['length 0']?.split(' ')[0], 'EINVAL');
  assert.equal(ref['read-only descriptor'], 'EBADF');
  assert.equal(ref['fallocate -n -l 1M'], '0 size=5000');
  const mnt = await pyAs(A, await dir(fx.mnt), FALLOCATE, ['supported']);
  assertSameRecord(mnt, ref, 'every fallocate ends as on ext4 (result, size, content)');
  // The cipher file of a 1 MiB fallocate: as long as the plaintext needs.
  assert.equal((await fsp.stat(await cipherPathOf(fx.cipherdir, 'falloc/mode 0, 1 MiB on an empty file'))).size, cipherSize(1 << 20));
  assert.equal((await fsp.stat(fx.p('falloc', 'cli'))).size, 1 << 20);
});

test('fallocate: punching holes, zeroing, collapsing and inserting ranges are EOPNOTSUPP and change nothing', T, async () => {
  await fsp.mkdir(fx.p('falloc-unsupported'));
  await fsp.chmod(fx.p('falloc-unsupported'), 0o777);
  const got = await pyAs(A, fx.p('falloc-unsupported'), FALLOCATE, ['unsupported']);
  const want = Object.fromEntries(Object.keys(got).map((k) => [k, 'EOPNOTSUPP size=5000 unchanged']));
  assert.equal(Object.keys(got).length, 6);
  assertSameRecord(got, want, 'unsupported fallocate modes');
});

test('teardown: unmounts cleanly, nothing left mounted, gocryptfs -fsck finds no problems', T, async () => {
  await fx.teardown();
  await assertFsckClean(fx.cipherdir);
});
