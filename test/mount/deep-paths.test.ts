/**
 * Plaintext paths up to PATH_MAX. A path of 4095 bytes
 * made of 31 directories of 127 bytes and a 127-byte file name is legal;
 * its encrypted names (171 bytes each) make the backing path about 5,500
 * bytes, longer than PATH_MAX, so an implementation that builds full
 * backing paths fails with ENAMETOOLONG. Every operation at that depth must
 * end as on ext4 (the same script runs on a plain /tmp directory), as root
 * and as uid 65534 in a directory of its own, and gocryptfs -fsck must be
 * clean with the deep tree in place and after it is gone.
 *
 * The scripts work with paths relative to the mount root (chdir first), as
 * an absolute path would pass PATH_MAX.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { EXTPASS, MOUNT_IMPL, runImpl, withMount } from '../helpers/mount.js';
import { assertFsckClean, useCipherdir } from '../helpers/mount-suite.js';
import { A, assertSameRecord, openForOthers, pyAs, ROOT, type Identity } from '../helpers/multiuser.js';
import { needs, unmet } from '../helpers/requirements.js';

const T = { timeout: 90_000, ...needs('mount', 'gocryptfs', 'python3') };
const fx = useCipherdir('deep', MOUNT_IMPL);
const MOUNT = { flags: ['-allow_other'] };

before(() => {
  if (unmet('mount')) return;
  openForOthers(fx.tmp);
});

/** The deep names: D (31 components, 3967 bytes), F = D/fff... (4095 bytes). */
const NAMES = `
N = 31
comps = ['%02d' % i + chr(ord('a') + i % 26) * 125 for i in range(N)]
D = '/'.join(comps)
F = D + '/' + 'f' * 127
G = D + '/' + 'g' * 127
H = D + '/' + 'h' * 127
S = D + '/' + 's' * 127
P = D + '/' + 'p' * 127
SUB = D + '/' + 'd' * 127
assert len(D) == 3967 and len(F) == 4095, (len(D), len(F))
DATA = bytes((i * 7 + 3) & 0xff for i in range(10000))
def mkdirs():
    for i in range(N):
        try:
            os.mkdir('/'.join(comps[:i + 1]), 0o755)
        except OSError as e:
            return 'level %d (%d bytes): %s' % (i + 1, len('/'.join(comps[:i + 1])), errno.errorcode.get(e.errno))
    return 'OK'
def same(path, data):
    with open(path, 'rb') as f:
        got = f.read()
    return 'same' if got == data else 'differs: %d bytes' % len(got)
def st(path):
    s = os.lstat(path)
    return '%o %d:%d size=%d nlink=%d' % (stat.S_IMODE(s.st_mode), s.st_uid, s.st_gid, s.st_size, s.st_nlink)
def own(path):
    s = os.lstat(path)
    return '%o %d:%d' % (stat.S_IMODE(s.st_mode), s.st_uid, s.st_gid)
def rmdirs():
    for i in range(N, 0, -1):
        os.rmdir('/'.join(comps[:i]))
`;

/** Every operation at depth, leaving nothing behind. */
const ALL_OPS = `${NAMES}
case('mkdir 31 levels of 127 bytes', mkdirs)
case('create and write a 4095-byte path', lambda: create(F, 0o644, DATA))
case('stat', lambda: st(F))
case('owner and mode of the deepest directory', lambda: own(D))
case('read back', lambda: same(F, DATA))
case('pwrite in the middle', lambda: write_at(F, b'XYZ', 4094))
case('read back after pwrite', lambda: same(F, DATA[:4094] + b'XYZ' + DATA[4097:]))
case('chmod', lambda: os.chmod(F, 0o600))
case('stat after chmod', lambda: st(F))
case('utimes', lambda: os.utime(F, ns=(1000000001, 2000000002)))
case('mtime', lambda: str(os.stat(F).st_mtime_ns))
case('truncate', lambda: os.truncate(F, 5000))
case('read after truncate', lambda: same(F, DATA[:4094] + b'XYZ' + DATA[4097:5000]))
case('setxattr', lambda: os.setxattr(F, 'user.deep', b'value'))
case('getxattr', lambda: os.getxattr(F, 'user.deep').decode())
case('listdir at depth', lambda: ','.join(n[:3] for n in sorted(os.listdir(D))))
case('path of 4096 bytes', lambda: create(D + '/' + 'x' * 128))
case('name of 256 bytes', lambda: os.mkdir(comps[0] + '/' + 'y' * 256))
case('rename at depth', lambda: os.rename(F, G))
case('old name gone', lambda: os.stat(F))
case('read renamed', lambda: same(G, DATA[:4094] + b'XYZ' + DATA[4097:5000]))
case('hard link at depth', lambda: os.link(G, H))
case('nlink', lambda: str(os.lstat(G).st_nlink))
case('symlink at depth', lambda: os.symlink('g' * 127, S))
case('readlink', lambda: os.readlink(S)[:3])
case('read through the symlink', lambda: same(S, DATA[:4094] + b'XYZ' + DATA[4097:5000]))
case('mkfifo at depth', lambda: os.mkfifo(P, 0o600))
case('mkdir at depth (4095 bytes)', lambda: os.mkdir(SUB, 0o700))
case('rmdir at depth', lambda: os.rmdir(SUB))
case('rename the top directory', lambda: os.rename(comps[0], 'top-renamed'))
case('read below the renamed top', lambda: same('top-renamed' + G[len(comps[0]):], DATA[:4094] + b'XYZ' + DATA[4097:5000]))
case('rename the top directory back', lambda: os.rename('top-renamed', comps[0]))
case('move the file from depth to the top', lambda: os.rename(G, 'moved-up'))
case('move it back down', lambda: os.rename('moved-up', G))
case('unlink file', lambda: os.unlink(G))
case('unlink link', lambda: os.unlink(H))
case('unlink symlink', lambda: os.unlink(S))
case('unlink fifo', lambda: os.unlink(P))
case('listdir at depth, empty', lambda: ','.join(os.listdir(D)))
case('rmdir all 31 levels', rmdirs)
case('left at the top', lambda: ','.join(sorted(os.listdir('.'))))
`;

/** Leaves a deep file, symlink and directory for -fsck. */
const BUILD = `${NAMES}
case('mkdir 31 levels', mkdirs)
case('create', lambda: create(F, 0o640, DATA))
case('symlink', lambda: os.symlink('f' * 127, S))
case('mkdir', lambda: os.mkdir(SUB, 0o755))
case('stat', lambda: st(F))
case('owner and mode of the deepest directory', lambda: own(D))
`;

const CHECK = `${NAMES}
case('read', lambda: same(F, DATA))
case('read through the symlink', lambda: same(S, DATA))
case('stat', lambda: st(F))
case('listdir at depth', lambda: ','.join(n[:3] for n in sorted(os.listdir(D))))
`;

const REMOVE = `${NAMES}
case('remove', lambda: (os.unlink(F), os.unlink(S), os.rmdir(SUB), rmdirs()) and None)
case('left', lambda: ','.join(sorted(os.listdir('.'))))
`;

/** Runs `script` as `who` in `name` (made by root with `mode`) on ext4 and in a fresh mount. */
async function onBoth(who: Identity, name: string, mode: number, script: string): Promise<{ ref: Record<string, string>; mnt: Record<string, string> }> {
  const refDir = join(fx.tmp, 'ref', name);
  await fsp.mkdir(refDir, { recursive: true });
  await fsp.chmod(join(fx.tmp, 'ref'), 0o755);
  await fsp.chmod(refDir, mode);
  const ref = await pyAs(who, refDir, script);
  const mnt = await withMount(MOUNT_IMPL, fx.cipherdir, join(fx.tmp, 'mnt'), MOUNT, async (m) => {
    await fsp.mkdir(join(m, name));
    await fsp.chmod(join(m, name), mode);
    return pyAs(who, join(m, name), script);
  });
  return { ref, mnt };
}

test('a 4095-byte path (31 directories of 127 bytes): create, write, read, chmod, utimes, truncate, xattr, rename, link, symlink, unlink, rmdir at that depth, as on ext4', T, async () => {
  const { ref, mnt } = await onBoth(ROOT, 'root', 0o755, ALL_OPS);
  assert.equal(ref['read back'], 'same');
  assert.equal(ref['path of 4096 bytes'], 'ENAMETOOLONG');
  assert.equal(ref['name of 256 bytes'], 'ENAMETOOLONG');
  assert.equal(ref['left at the top'], '');
  assert.ok(Object.entries(ref).every(([k, v]) => v !== 'ENAMETOOLONG' || /4096|256/.test(k) || k === 'old name gone'), JSON.stringify(ref));
  assertSameRecord(mnt, ref, 'every step at depth ends as on ext4');
});

test('as uid 65534 in its own 0777 directory: the same operations at depth, and everything it made is its own', T, async () => {
  const { ref, mnt } = await onBoth(A, 'user', 0o777, ALL_OPS);
  assert.equal(ref['stat'], '644 65534:65534 size=10000 nlink=1');
  assert.equal(ref['owner and mode of the deepest directory'], '755 65534:65534');
  assertSameRecord(mnt, ref, 'every step at depth, as uid 65534, ends as on ext4');
});

// gocryptfs 2.3's -fsck walks its own mount with absolute paths, so below PATH_MAX it marks
// every entry "corrupt" (ENAMETOOLONG, silently): it can only check the tree once the deep
// part is gone. tscryptfs -fsck must check the deep tree itself.
test('a deep tree (file, symlink, directory at 4095 bytes) survives a remount and reads back', T, async () => {
  const { ref, mnt } = await onBoth(ROOT, 'kept', 0o755, BUILD);
  assertSameRecord(mnt, ref, 'building the deep tree');
  const again = await withMount(MOUNT_IMPL, fx.cipherdir, join(fx.tmp, 'mnt'), MOUNT, async (m) => pyAs(ROOT, join(m, 'kept'), CHECK));
  const refAgain = await pyAs(ROOT, join(fx.tmp, 'ref', 'kept'), CHECK);
  assert.equal(refAgain['read'], 'same');
  assertSameRecord(again, refAgain, 'after a remount: reading the deep tree');
});

// Our own tool on the tree the mount made (under TSCRYPTFS_MOUNT_IMPL=gocryptfs too: the format is the same).
test('tscryptfs -fsck checks the deep tree in place: exit 0, no false alarm', T, async () => {
  const r = await runImpl('tscryptfs', ['-fsck', ...EXTPASS, fx.cipherdir], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, `tscryptfs -fsck with the deep tree in place: exit ${r.code}\n${(r.stdout + r.stderr).slice(0, 2000)}`);
});

test('the deep tree is removed through the mount; gocryptfs -fsck is clean afterwards', T, async () => {
  const gone = await withMount(MOUNT_IMPL, fx.cipherdir, join(fx.tmp, 'mnt'), MOUNT, async (m) => pyAs(ROOT, join(m, 'kept'), REMOVE));
  const refGone = await pyAs(ROOT, join(fx.tmp, 'ref', 'kept'), REMOVE);
  assert.equal(refGone['left'], '');
  assertSameRecord(gone, refGone, 'removing the deep tree');
  await assertFsckClean(fx.cipherdir);
});
