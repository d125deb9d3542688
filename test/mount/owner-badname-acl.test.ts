/**
 * Three mount flags that must do what gocryptfs 2.3 does
 * (Documentation/MANPAGE.md of v2.3; the source references are in the
 * comments of each test), on root mounts:
 *
 * -force_owner UID:GID  every entry, the root directory included, shows as
 *     owned by UID:GID (stat, and so the kernel's permission checks), while
 *     the cipher files keep their real owners; implies -allow_other.
 * -badname GLOB  cipher names that do not decrypt and match GLOB (repeatable)
 *     are shown instead of hidden: the longest decryptable prefix, decrypted,
 *     then the rest of the cipher name, then " GOCRYPTFS_BAD_NAME"; such
 *     entries can be read, renamed to a good name and removed.
 * -acl  POSIX ACLs (system.posix_acl_access/default, stored unencrypted
 *     on the cipher files) are enforced by the kernel and inherited as on
 *     ext4; without -acl they are stored but not enforced.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { mountEntries, MOUNT_IMPL, withMount } from '../helpers/mount.js';
import { assertFsckClean, cipherPathOf, useCipherdir } from '../helpers/mount-suite.js';
import { assertSameRecord, C, D, A, openForOthers, pyAs, ROOT } from '../helpers/multiuser.js';
import { needs, unmet } from '../helpers/requirements.js';

const T = { timeout: 60_000, ...needs('mount', 'gocryptfs', 'python3') };
const fx = useCipherdir('flags', MOUNT_IMPL);
const mnt = (): string => join(fx.tmp, 'mnt');

before(() => {
  if (unmet('mount')) return;
  openForOthers(fx.tmp);
});

// gocryptfs 2.3: main.go parses UID:GID into args._forceOwner; mount.go sets allow_other (and
// with it default_permissions) and passes ForceOwner to the frontend; fusefrontend/node.go
// (Lookup, Getattr, Setattr replies), node_open_create.go (Create) and file.go (Getattr of an
// open file) overwrite out.Owner with it. Nothing on disk changes.
test('-force_owner 65534:65533: every entry shows that owner, the cipher files keep theirs; allow_other implied; the kernel checks against the shown owner', T, async () => {
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: ['-allow_other'] }, async (m) => {
    await fsp.mkdir(join(m, 'fo'));
    await fsp.writeFile(join(m, 'fo', 'secret'), 'secret');
    await fsp.chmod(join(m, 'fo', 'secret'), 0o600);
    await fsp.mkdir(join(m, 'fo', 'private'), { mode: 0o700 });
    await fsp.writeFile(join(m, 'fo', 'theirs'), 't');
    await fsp.chown(join(m, 'fo', 'theirs'), 42, 43);
    await fsp.symlink('secret', join(m, 'fo', 'link'));
  });
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: ['-force_owner', '65534:65533'] }, async (m) => {
    const opts = mountEntries(m)[0]!.options.split(',');
    assert.ok(opts.includes('allow_other') && opts.includes('default_permissions'), `-force_owner implies allow_other and the kernel's checks: ${opts.join(',')}`);
    await fsp.writeFile(join(m, 'fo', 'made-by-root'), 'r');
    const owners = await pyAs(ROOT, m, `
for p in ['.', 'fo', 'fo/secret', 'fo/private', 'fo/theirs', 'fo/link', 'fo/made-by-root']:
    s = os.lstat(p)
    res[p] = '%d:%d' % (s.st_uid, s.st_gid)
fd = os.open('fo/secret', os.O_RDONLY)
s = os.fstat(fd)
os.close(fd)
res['fstat of an open file'] = '%d:%d' % (s.st_uid, s.st_gid)
`);
    for (const [p, o] of Object.entries(owners)) assert.equal(o, '65534:65533', `${p} shows the forced owner`);
    // The shown owner is the one the kernel checks.
    const asA = await pyAs(A, m, `
case('read a 0600 file of root', lambda: readall('fo/secret'))
case('list a 0700 directory of root', lambda: ','.join(os.listdir('fo/private')))
case('chmod as the shown owner', lambda: os.chmod('fo/secret', 0o640))
`);
    assert.deepEqual(asA, { 'read a 0600 file of root': 'secret', 'list a 0700 directory of root': '', 'chmod as the shown owner': 'OK' });
    const asC = await pyAs(C, m, `case('read', lambda: readall('fo/secret'))\ncase('chmod', lambda: os.chmod('fo/secret', 0o644))`);
    assert.deepEqual(asC, { read: 'EACCES', chmod: 'EPERM' }, 'a third user is neither owner nor in group 65533');
    const asD = await pyAs(D, m, `case('read, group 65533 has r after the chmod', lambda: readall('fo/secret'))`);
    assert.deepEqual(asD, { 'read, group 65533 has r after the chmod': 'secret' });
    await fsp.chown(join(m, 'fo', 'made-by-root'), 7, 8);
    const st = await fsp.stat(join(m, 'fo', 'made-by-root'));
    assert.deepEqual([st.uid, st.gid], [65534, 65533], 'still the forced owner after a chown');
  });
  // On disk: the real owners, and the mode the shown owner set.
  const real = async (p: string): Promise<[number, number]> => {
    const s = await fsp.lstat(await cipherPathOf(fx.cipherdir, p));
    return [s.uid, s.gid];
  };
  assert.deepEqual(await real('fo/secret'), [0, 0]);
  assert.deepEqual(await real('fo/theirs'), [42, 43]);
  assert.deepEqual(await real('fo/made-by-root'), [7, 8], 'the chown reached the cipher file');
  assert.equal((await fsp.stat(await cipherPathOf(fx.cipherdir, 'fo/secret'))).mode & 0o777, 0o640);
  const root = await fsp.stat(fx.cipherdir);
  assert.deepEqual([root.uid, root.gid], [0, 0]);
});

// gocryptfs 2.3: nametransform/names.go DecryptName falls back to decryptBadname
// (nametransform/badname.go) when -badname patterns exist: filepath.Match of each pattern
// against the cipher name; the longest prefix (at least 22 characters) that decrypts is
// shown decrypted, the rest as it is, plus BadnameSuffix " GOCRYPTFS_BAD_NAME"; a name with
// no decryptable prefix is shown whole plus the suffix. The way back, for every operation
// on such a name, is EncryptAndHashBadName (badname.go), called from
// fusefrontend/node_prepare_syscall.go: it finds the one cipher name that produces it.
test('-badname GLOB: undecryptable names that match are shown with " GOCRYPTFS_BAD_NAME", readable, renamable to a good name and removable; others stay hidden; the flag repeats', T, async () => {
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), {}, async (m) => {
    await fsp.mkdir(join(m, 'bn'));
    await fsp.writeFile(join(m, 'bn', 'doc.txt'), 'content of doc');
    await fsp.mkdir(join(m, 'bn', 'sub'));
    await fsp.writeFile(join(m, 'bn', 'sub', 'in.txt'), 'inner');
  });
  // What sync tools leave behind: copies of cipher files under altered names, and a stray file.
  const doc = await cipherPathOf(fx.cipherdir, 'bn/doc.txt');
  const inner = await cipherPathOf(fx.cipherdir, 'bn/sub/in.txt');
  await fsp.copyFile(doc, `${doc}.sync-conflict-20240101-123456`);
  await fsp.copyFile(doc, `${doc} (conflicted copy)`);
  await fsp.copyFile(inner, `${inner}.sync-conflict-x`);
  await fsp.writeFile(join(doc, '..', 'stray file'), 'not encrypted');
  const list = async (m: string): Promise<string[]> => [...(await fsp.readdir(join(m, 'bn'))), ...(await fsp.readdir(join(m, 'bn', 'sub'))).map((n) => `sub/${n}`)].sort();

  // gocryptfs's view; tscryptfs shows it with -noconflicts, and by default shows the one copy a tool's naming proves.
  const goView = MOUNT_IMPL === 'tscryptfs' ? ['-noconflicts'] : [];
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: goView }, async (m) => {
    assert.deepEqual(await list(m), ['doc.txt', 'sub', 'sub/in.txt'], 'without -badname they are hidden');
  });
  if (MOUNT_IMPL === 'tscryptfs') {
    await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), {}, async (m) => {
      assert.deepEqual(await list(m), ['doc (conflict Dropbox).txt', 'doc.txt', 'sub', 'sub/in.txt'], 'a Dropbox copy is shown; the rest is no tool\'s naming');
    });
  }
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: [...goView, '-badname', '*.sync-conflict*'] }, async (m) => {
    assert.deepEqual(await list(m), ['doc.txt', 'doc.txt.sync-conflict-20240101-123456 GOCRYPTFS_BAD_NAME', 'sub', 'sub/in.txt', 'sub/in.txt.sync-conflict-x GOCRYPTFS_BAD_NAME']);
  });
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: ['-badname', '*.sync-conflict*', '-badname', '*conflicted copy*'] }, async (m) => {
    assert.deepEqual(await list(m), [
      'doc.txt',
      'doc.txt (conflicted copy) GOCRYPTFS_BAD_NAME',
      'doc.txt.sync-conflict-20240101-123456 GOCRYPTFS_BAD_NAME',
      'sub',
      'sub/in.txt',
      'sub/in.txt.sync-conflict-x GOCRYPTFS_BAD_NAME',
    ]);
  });
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: ['-badname', '*'] }, async (m) => {
    assert.deepEqual(await list(m), [
      'doc.txt',
      'doc.txt (conflicted copy) GOCRYPTFS_BAD_NAME',
      'doc.txt.sync-conflict-20240101-123456 GOCRYPTFS_BAD_NAME',
      'stray file GOCRYPTFS_BAD_NAME',
      'sub',
      'sub/in.txt',
      'sub/in.txt.sync-conflict-x GOCRYPTFS_BAD_NAME',
    ]);
    const b = (n: string): string => join(m, 'bn', n);
    assert.equal(await fsp.readFile(b('doc.txt.sync-conflict-20240101-123456 GOCRYPTFS_BAD_NAME'), 'utf8'), 'content of doc');
    assert.equal(await fsp.readFile(b('sub/in.txt.sync-conflict-x GOCRYPTFS_BAD_NAME'), 'utf8'), 'inner');
    assert.equal((await fsp.stat(b('doc.txt (conflicted copy) GOCRYPTFS_BAD_NAME'))).size, 14);
    // Resolving a conflict: keep one copy under a good name, drop the other.
    await fsp.rename(b('doc.txt.sync-conflict-20240101-123456 GOCRYPTFS_BAD_NAME'), b('doc-restored.txt'));
    await fsp.unlink(b('doc.txt (conflicted copy) GOCRYPTFS_BAD_NAME'));
    await fsp.unlink(b('sub/in.txt.sync-conflict-x GOCRYPTFS_BAD_NAME'));
    await fsp.unlink(b('stray file GOCRYPTFS_BAD_NAME'));
  });
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), {}, async (m) => {
    assert.deepEqual(await list(m), ['doc-restored.txt', 'doc.txt', 'sub', 'sub/in.txt'], 'a plain mount shows the restored file');
    assert.equal(await fsp.readFile(join(m, 'bn', 'doc-restored.txt'), 'utf8'), 'content of doc');
  });
  await assertFsckClean(fx.cipherdir);
});

/** POSIX ACL xattrs (the kernel's binary form) and what the users can do under them. */
const ACL = `
def acl(entries):
    return struct.pack('<I', 2) + b''.join(struct.pack('<HHI', tag, perm, uid) for tag, perm, uid in entries)
def show(path, name):
    try:
        b = os.getxattr(path, name)
    except OSError as e:
        return errno.errorcode[e.errno]
    return ' '.join('%x:%o:%d' % struct.unpack_from('<HHI', b, 4 + 8 * k) for k in range((len(b) - 4) // 8))
U_OBJ, USER, G_OBJ, GROUP, MASK, OTHER, ND = 1, 2, 4, 8, 0x10, 0x20, 0xffffffff
if ARGS[0] == 'setup':
    create('secret', 0o600, b'secret')
    case('set access ACL (65533 may read)', lambda: os.setxattr('secret', 'system.posix_acl_access', acl([(U_OBJ, 6, ND), (USER, 4, 65533), (G_OBJ, 0, ND), (MASK, 4, ND), (OTHER, 0, ND)])))
    os.mkdir('shared', 0o755)
    case('set access ACL on a directory (65533 rwx)', lambda: os.setxattr('shared', 'system.posix_acl_access', acl([(U_OBJ, 7, ND), (USER, 7, 65533), (G_OBJ, 5, ND), (MASK, 7, ND), (OTHER, 5, ND)])))
    case('set default ACL', lambda: os.setxattr('shared', 'system.posix_acl_default', acl([(U_OBJ, 7, ND), (USER, 7, 65533), (G_OBJ, 5, ND), (MASK, 7, ND), (OTHER, 0, ND)])))
    res['mode of secret'] = '%o' % stat.S_IMODE(os.stat('secret').st_mode)
    res['mode of shared'] = '%o' % stat.S_IMODE(os.stat('shared').st_mode)
elif ARGS[0] == 'use':
    case('read secret', lambda: readall('secret'))
    case('create in shared', lambda: create('shared/f%d' % os.getuid(), 0o666, b'x'))
    case('mkdir in shared', lambda: os.mkdir('shared/d%d' % os.getuid(), 0o777))
else:
    for p in ['secret', 'shared', 'shared/f65533', 'shared/d65533']:
        if os.path.lexists(p):
            s = os.lstat(p)
            res[p] = '%o %d:%d access=%s default=%s' % (stat.S_IMODE(s.st_mode), s.st_uid, s.st_gid, show(p, 'system.posix_acl_access'), show(p, 'system.posix_acl_default'))
`;

async function aclScenario(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const add = (who: string, r: Record<string, string>): void => {
    for (const [k, v] of Object.entries(r)) out[`${who}: ${k}`] = v;
  };
  add('root', await pyAs(ROOT, root, ACL, ['setup']));
  // umask 0: with a default ACL ext4 ignores the umask; gocryptfs 2.3 applies it anyway, see below.
  add('65533', await pyAs(D, root, ACL, ['use'], { umask: 0 }));
  add('65532', await pyAs(C, root, ACL, ['use'], { umask: 0 }));
  add('result', await pyAs(ROOT, root, ACL, ['show']));
  return out;
}

// gocryptfs 2.3: mount.go sets go-fuse's MountOptions.EnableAcl for -acl (the kernel then
// enforces ACLs: FUSE_POSIX_ACL); fusefrontend/node_xattr.go passes system.posix_acl_access
// and system.posix_acl_default through unencrypted (isAcl), setting them as the caller when
// the owner is preserved (root with allow_other). Files are created as the caller
// (syscallcompat.OpenatUser etc.), so the backing ext4 applies the default ACL.
test('-acl: the kernel enforces ACLs and new entries inherit the default ACL, as on ext4; the ACLs are stored unencrypted on the cipher files', T, async () => {
  const ref = join(fx.tmp, 'ref-acl');
  await fsp.mkdir(ref);
  await fsp.chmod(ref, 0o755);
  const expected = await aclScenario(ref);
  assert.equal(expected['65533: read secret'], 'secret');
  assert.equal(expected['65532: read secret'], 'EACCES');
  assert.equal(expected['65533: create in shared'], 'OK');
  assert.match(expected['result: shared/f65533']!, /^660 65533:65533 access=1:6:\d+ 2:7:65533 4:5:\d+ 10:6:\d+ 20:0:\d+ default=ENODATA$/);
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: ['-allow_other', '-acl'] }, async (m) => {
    await fsp.mkdir(join(m, 'acl'));
    await fsp.chmod(join(m, 'acl'), 0o755);
    assertSameRecord(await aclScenario(join(m, 'acl')), expected, 'ACLs with -acl');
  });
  const raw = `res['acl'] = os.getxattr(ARGS[0], 'system.posix_acl_access').hex()`;
  const onDisk = await pyAs(ROOT, fx.tmp, raw, [await cipherPathOf(fx.cipherdir, 'acl/secret')]);
  const onExt4 = await pyAs(ROOT, fx.tmp, raw, [join(ref, 'secret')]);
  assert.equal(onDisk['acl'], onExt4['acl'], 'the access ACL, unencrypted, on the cipher file');
});

test('without -acl (only -allow_other): ACLs are stored and read back, but not enforced', T, async () => {
  await withMount(MOUNT_IMPL, fx.cipherdir, mnt(), { flags: ['-allow_other'] }, async (m) => {
    await fsp.mkdir(join(m, 'noacl'));
    await fsp.chmod(join(m, 'noacl'), 0o755);
    const got = await aclScenario(join(m, 'noacl'));
    assert.equal(got['root: set access ACL (65533 may read)'], 'OK');
    assert.equal(got['65533: read secret'], 'EACCES', 'the ACL entry for 65533 is not enforced');
    assert.equal(got['65533: create in shared'], 'EACCES');
    assert.match(got['result: secret']!, /^640 0:0 access=1:6:\d+ 2:4:65533 4:0:\d+ 10:4:\d+ 20:0:\d+ default=ENODATA$/, 'stored and read back; the mode follows the mask');
  });
});

test('the cipher directory is clean afterwards (gocryptfs -fsck)', T, async () => {
  await assertFsckClean(fx.cipherdir);
});
