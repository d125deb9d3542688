/**
 * A mount made by root with -allow_other, used by
 * ordinary users (uids 65534, 65533, 65532 through setpriv). New files,
 * directories, symlinks, fifos and sockets belong to the user who made them
 * (in the mount and on the cipher side), with the group of a setgid parent;
 * the kernel's rules for chmod/chown/utimes/truncate by owners, others and
 * root hold; sticky directories answer unlink/rmdir/rename as ext4 does for
 * the entry's owner, the directory's owner and a third user.
 *
 * Oracle: every scenario runs twice, on a plain directory in /tmp (ext4)
 * and inside the mount, and every step's outcome (OK or errno) and the
 * resulting tree (type, mode, uid:gid, size) must be equal; a few explicit
 * expectations check that the scenario means what it says.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { assertFsckClean, cipherPathOf, useMountFixture } from '../helpers/mount-suite.js';
import { A, A_IN_D, assertSameRecord, C, D, openForOthers, ownerSnapshot, pyAs, ROOT, runScenario, type Phase } from '../helpers/multiuser.js';
import { needs, unmet } from '../helpers/requirements.js';

const fx = useMountFixture('multiuser', { mount: { flags: ['-allow_other'] } });
const T = { timeout: 60_000, ...needs('mount', 'gocryptfs', 'python3') };

before(async () => {
  if (unmet('mount')) return;
  openForOthers(fx.tmp);
  await fsp.mkdir(join(fx.tmp, 'ref'));
});

interface Outcome {
  steps: Record<string, string>;
  tree: Record<string, string>;
}

/** Runs the phases in a fresh directory `name` (mode 0755, root's) on ext4 and in the mount. */
async function onBoth(name: string, phases: Phase[]): Promise<{ ref: Outcome; mnt: Outcome }> {
  const go = async (root: string): Promise<Outcome> => {
    await fsp.mkdir(root);
    await fsp.chmod(root, 0o755);
    const steps = await runScenario(root, phases);
    return { steps, tree: await ownerSnapshot(root) };
  };
  const ref = await go(join(fx.tmp, 'ref', name));
  const mnt = await go(fx.p(name));
  return { ref, mnt };
}

/** Steps and tree equal to ext4's; reports the differences of both at once. */
function assertSame(o: { ref: Outcome; mnt: Outcome }): void {
  const problems: string[] = [];
  for (const check of [
    () => assertSameRecord(o.mnt.steps, o.ref.steps, 'every step ends as on ext4 (OK or the same errno)'),
    () => assertSameRecord(o.mnt.tree, o.ref.tree, 'the tree has the types, modes, owners and sizes ext4 gives'),
  ]) {
    try {
      check();
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length > 0) assert.fail(problems.join('\n'));
}

const ownerOf = (line: string | undefined): string => (line ?? '').split(' ')[2] ?? '';

test('new files, directories, symlinks, fifos, sockets and hard links belong to the user who made them; the creator can use them, others get EACCES/EPERM', T, async () => {
  const o = await onBoth('owners', [
    { who: ROOT, code: `os.mkdir('w'); os.chmod('w', 0o777)` },
    {
      who: A,
      code: `
case('create', lambda: create('w/a-file', 0o644, b'by A'))
case('create 0600', lambda: create('w/a-private', 0o600, b'private'))
case('mkdir', lambda: os.mkdir('w/a-dir', 0o755))
case('mkdir 0700', lambda: os.mkdir('w/a-closed', 0o700))
case('create in own directory', lambda: create('w/a-dir/inner', 0o640, b'inner'))
case('symlink', lambda: os.symlink('a-file', 'w/a-link'))
case('mkfifo', lambda: os.mkfifo('w/a-fifo', 0o640))
case('mknod socket', lambda: sock('w/a-sock'))
case('hard link', lambda: os.link('w/a-file', 'w/a-hardlink'))
case('create, 255-byte name', lambda: create('w/' + 'L' * 255, 0o644, b'long'))
case('mkdir, 255-byte name', lambda: os.mkdir('w/' + 'M' * 255))
case('mknod char device (no CAP_MKNOD)', lambda: os.mknod('w/a-chr', 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
case('write own 0600 file', lambda: write_at('w/a-private', b'P'))
case('read own 0600 file', lambda: readall('w/a-private'))
case('create in own 0700 directory', lambda: create('w/a-closed/x'))
case('list own 0700 directory', lambda: ','.join(sorted(os.listdir('w/a-closed'))))
case('chmod own file', lambda: os.chmod('w/a-file', 0o640))
case('chmod own directory', lambda: os.chmod('w/a-dir', 0o750))
case('rename own file', lambda: os.rename('w/a-hardlink', 'w/a-hardlink2'))
`,
    },
    {
      who: D,
      code: `
case('create', lambda: create('w/d-file', 0o664, b'by D'))
case('mkdir', lambda: os.mkdir('w/d-dir', 0o775))
case('symlink', lambda: os.symlink('/nowhere', 'w/d-link'))
case('read A 0600 file', lambda: readall('w/a-private'))
case('write A 0640 file', lambda: write_at('w/a-file', b'x'))
case('list A 0700 directory', lambda: os.listdir('w/a-closed'))
case('create in A 0750 directory', lambda: create('w/a-dir/d-x'))
case('chmod A file', lambda: os.chmod('w/a-file', 0o666))
case('chown A file to self', lambda: os.chown('w/a-file', 65533, 65533))
`,
    },
    { who: ROOT, code: `case('create', lambda: create('w/r-file', 0o600, b'root'))\ncase('mkdir', lambda: os.mkdir('w/r-dir'))` },
  ]);
  // The scenario, as ext4 answers it.
  assert.equal(o.ref.steps['A: mknod char device (no CAP_MKNOD)'], 'EPERM');
  assert.equal(o.ref.steps['D: read A 0600 file'], 'EACCES');
  assert.equal(o.ref.steps['D: chmod A file'], 'EPERM');
  assertSame(o);
  const t = o.mnt.tree;
  for (const n of ['a-file', 'a-private', 'a-dir', 'a-closed', 'a-dir/inner', 'a-closed/x', 'a-link', 'a-fifo', 'a-sock', 'a-hardlink2', 'L'.repeat(255), 'M'.repeat(255)]) {
    assert.equal(ownerOf(t[`w/${n}`]), '65534:65534', `w/${n.slice(0, 20)} belongs to its creator: ${t[`w/${n}`]}`);
  }
  for (const n of ['d-file', 'd-dir', 'd-link']) assert.equal(ownerOf(t[`w/${n}`]), '65533:65533', `w/${n}: ${t[`w/${n}`]}`);
  assert.equal(ownerOf(t['w/r-file']), '0:0');
  // The cipher files carry the owners, so another mount (gocryptfs's too) shows them.
  for (const [n, want] of [['a-file', [65534, 65534]], ['a-dir', [65534, 65534]], ['a-link', [65534, 65534]], ['a-fifo', [65534, 65534]], ['L'.repeat(255), [65534, 65534]], ['d-dir', [65533, 65533]]] as const) {
    const cst = await fsp.lstat(await cipherPathOf(fx.cipherdir, `owners/w/${n}`));
    assert.deepEqual([cst.uid, cst.gid], want, `cipher file of w/${n.slice(0, 20)}`);
  }
});

test('chmod, chown, utimes, truncate and writes: the kernel rules for the owner, a group member, another user and root', T, async () => {
  const o = await onBoth('rules', [
    { who: ROOT, code: `os.mkdir('p'); os.chmod('p', 0o777)` },
    {
      who: A,
      umask: 0,
      code: `
case('create f 0644', lambda: create('p/f', 0o644, b'data'))
case('create w 0666', lambda: create('p/w', 0o666, b'writable'))
case('create s 04777 (empty: a write would drop S_ISUID)', lambda: create('p/s', 0o4777))
case('create gs 02777 (empty)', lambda: create('p/gs', 0o2777))
case('mkdir sub', lambda: os.mkdir('p/sub', 0o755))
case('create 0777 with umask 0', lambda: create('p/m777', 0o777))
case('mkdir 0777 with umask 0', lambda: os.mkdir('p/d777', 0o777))
case('mkfifo 0666 with umask 0', lambda: os.mkfifo('p/p666', 0o666))
`,
    },
    { who: ROOT, code: `create('p/h', 0o644, b'h'); os.chown('p/h', 65534, 65533)` },
    {
      who: C,
      code: `
case('chmod another user\\'s file', lambda: os.chmod('p/f', 0o600))
case('chown another user\\'s file to self', lambda: os.chown('p/f', 65532, 65532))
case('chgrp another user\\'s file', lambda: os.chown('p/f', -1, 65532))
case('utimes explicit, not owner', lambda: os.utime('p/f', (1, 1)))
case('utimes now, no write permission', lambda: os.utime('p/f'))
case('utimes now, write permission', lambda: os.utime('p/w'))
case('utimes explicit, write permission', lambda: os.utime('p/w', (1, 1)))
case('truncate, no write permission', lambda: os.truncate('p/f', 0))
case('truncate, write permission', lambda: os.truncate('p/w', 3))
case('open for writing, no permission', lambda: os.open('p/f', os.O_WRONLY))
case('write to a setuid file (drops S_ISUID)', lambda: write_at('p/s', b'S'))
case('truncate a setgid file (drops S_ISGID)', lambda: os.truncate('p/gs', 2))
case('rmdir in a non-sticky 0777 directory', lambda: os.rmdir('p/sub'))
`,
    },
    {
      who: A,
      code: `
case('chmod own file', lambda: os.chmod('p/f', 0o600))
case('chown own file to another user', lambda: os.chown('p/f', 65533, -1))
case('chgrp own file to a group it is not in', lambda: os.chown('p/f', -1, 65533))
case('chown own file to itself', lambda: os.chown('p/f', 65534, 65534))
case('utimes explicit, owner', lambda: os.utime('p/f', (1000, 2000)))
case('chmod g+s, not in the file group (S_ISGID dropped)', lambda: os.chmod('p/h', 0o2755))
case('chmod setuid on own file', lambda: os.chmod('p/w', 0o4644))
`,
    },
    {
      who: A_IN_D,
      code: `
case('chgrp own file to a supplementary group', lambda: os.chown('p/f', -1, 65533))
case('chmod g+s, in the file group', lambda: os.chmod('p/h', 0o2750))
`,
    },
    { who: ROOT, code: `case('chown', lambda: os.chown('p/w', 65532, 65532))\ncase('chmod', lambda: os.chmod('p/w', 0o600))` },
    { who: C, code: `case('read the file root gave it', lambda: readall('p/w'))` },
    { who: A, code: `case('read the file root took away', lambda: readall('p/w'))` },
  ]);
  const e = o.ref.steps;
  assert.equal(e["C: chmod another user's file"], 'EPERM');
  assert.equal(e['C: utimes now, no write permission'], 'EACCES');
  assert.equal(e['C: utimes explicit, write permission'], 'EPERM');
  assert.equal(e['A: chgrp own file to a group it is not in'], 'EPERM');
  assert.equal(e['A+65533: chgrp own file to a supplementary group'], 'OK');
  assert.equal(e['A: read the file root took away'], 'EACCES');
  assert.equal(o.ref.tree['p/h']!.split(' ')[1], '2750');
  assert.equal(o.ref.tree['p/m777'], 'f 0777 65534:65534 size=0', 'the mode asked for, with the caller umask (0) only');
  assert.equal(o.ref.tree['p/s'], 'f 0777 65534:65534 size=1', 'a write by another user dropped S_ISUID');
  assert.equal(o.ref.tree['p/gs'], 'f 0777 65534:65534 size=2', 'a truncate by another user dropped S_ISGID');
  assertSame(o);
});

test('set-id bits: an unprivileged write, append, truncate, fallocate or chown drops them as on ext4, seen at once by a mode-only stat', T, async () => {
  const made = `
for name, mode in [('a', 0o4755), ('b', 0o2755), ('c', 0o2745), ('d', 0o6755)] + [(n, 0o4755) for n in 'efgknrsu']:
    create('s/' + name, 0o644, b'abc')
    os.chmod('s/' + name, mode)
`;
  const o = await onBoth('setid', [
    { who: ROOT, code: `os.mkdir('s'); os.chmod('s', 0o777)` },
    { who: A, code: made },
    {
      who: A,
      code: `
def fallocated(p):
    fd = os.open(p, os.O_WRONLY)
    try:
        fallocate(fd, 0, 0, 8192)
    finally:
        os.close(fd)
def write_chmod_write(p):
    fd = os.open(p, os.O_WRONLY)
    try:
        os.pwrite(fd, b'1', 0)
        os.fchmod(fd, 0o4755)
        os.pwrite(fd, b'2', 1)
    finally:
        os.close(fd)
case('append to 04755', lambda: (append('s/a', b'x'), mode_now('s/a'))[1])
case('append to 02755', lambda: (append('s/b', b'x'), mode_now('s/b'))[1])
case('append to 02745 (no group execute: S_ISGID stays)', lambda: (append('s/c', b'x'), mode_now('s/c'))[1])
case('truncate 06755', lambda: (os.truncate('s/d', 1), mode_now('s/d'))[1])
case('open 04755 with O_TRUNC', lambda: (os.close(os.open('s/e', os.O_WRONLY | os.O_TRUNC)), mode_now('s/e'))[1])
case('chown 04755 to its own owner', lambda: (os.chown('s/f', 65534, -1), mode_now('s/f'))[1])
case('chown 04755 to -1, -1', lambda: (os.chown('s/g', -1, -1), mode_now('s/g'))[1])
case('fallocate 04755', lambda: (fallocated('s/k'), mode_now('s/k'))[1])
case('write, fchmod u+s, write', lambda: (write_chmod_write('s/n'), mode_now('s/n'))[1])
`,
    },
    {
      who: ROOT,
      code: `
case('root writes to 04755', lambda: (write_at('s/r', b'x'), mode_now('s/r'))[1])
case('root truncates 04755', lambda: (os.truncate('s/s', 1), mode_now('s/s'))[1])
case('root chowns 04755', lambda: (os.chown('s/u', 65533, -1), mode_now('s/u'))[1])
`,
    },
  ]);
  // What ext4 gives, so that the scenario means what it says.
  const want: Record<string, string> = {
    'A: append to 04755': '0755',
    'A: append to 02745 (no group execute: S_ISGID stays)': '2745',
    'A: chown 04755 to -1, -1': '0755',
    'A: fallocate 04755': '0755',
    'A: write, fchmod u+s, write': '0755',
    'root: root writes to 04755': '4755',
    'root: root chowns 04755': '0755',
  };
  assert.deepEqual(Object.fromEntries(Object.keys(want).map((k) => [k, o.ref.steps[k]])), want);
  assertSame(o);
});

test('a set-id bit set in the cipher directory behind the kernel\'s back still goes with an unprivileged write or truncate', { ...T, skip: T.skip ?? (fx.impl !== 'tscryptfs' ? 'gocryptfs leaves the dropping to the kernel, which knows only the mode it keeps' : undefined) }, async () => {
  await fsp.mkdir(fx.p('behind'));
  await fsp.chmod(fx.p('behind'), 0o777);
  await pyAs(A, fx.mnt, `create('behind/w', 0o755, b'abc'); create('behind/t', 0o755, b'abc')`);
  const cipher = { w: await cipherPathOf(fx.cipherdir, 'behind/w'), t: await cipherPathOf(fx.cipherdir, 'behind/t') };
  // The kernel keeps mode 0755 (attributes are kept 1 s); the cipher files get S_ISUID.
  assert.equal((await fsp.stat(fx.p('behind/w'))).mode & 0o7777, 0o755);
  assert.equal((await fsp.stat(fx.p('behind/t'))).mode & 0o7777, 0o755);
  await fsp.chmod(cipher.w, 0o4755);
  await fsp.chmod(cipher.t, 0o4755);
  const r = await pyAs(A, fx.mnt, `case('write', lambda: write_at('behind/w', b'x'))\ncase('truncate', lambda: os.truncate('behind/t', 1))`);
  assert.deepEqual(r, { write: 'OK', truncate: 'OK' });
  for (const name of ['w', 't'] as const) {
    assert.equal((await fsp.stat(cipher[name])).mode & 0o7777, 0o755, `${name}: S_ISUID dropped in the cipher directory`);
    assert.equal((await fsp.stat(fx.p(`behind/${name}`))).mode & 0o7777, 0o755, `${name}: and so through the mount`);
  }
});

test('sticky directory: unlink, rmdir and rename answer as ext4 for the entry owner, the directory owner and a third user (and a non-sticky control)', T, async () => {
  // Per actor X and directory Y: A makes the entries, then X tries to remove or move them.
  const setup = (y: string, x: string): string => `
create('${y}/f-${x}', 0o644, b'f')
create('${y}/g-${x}', 0o644, b'g')
create('${y}/t-${x}', 0o644, b't')
os.mkdir('${y}/d-${x}', 0o755)
os.mkdir('${y}/e-${x}', 0o777)
create('${y}/m-${x}', 0o644, b'm')
os.symlink('f-${x}', '${y}/l-${x}')
`;
  const act = (y: string, x: string): string => `
case('${y}: unlink A file', lambda: os.unlink('${y}/f-${x}'))
case('${y}: unlink A symlink', lambda: os.unlink('${y}/l-${x}'))
case('${y}: rmdir A directory', lambda: os.rmdir('${y}/d-${x}'))
case('${y}: rename A file in the directory', lambda: os.rename('${y}/g-${x}', '${y}/g-${x}.renamed'))
case('${y}: rename A file out of the directory', lambda: os.rename('${y}/m-${x}', 'out/m-${x}-from-${y}'))
case('${y}: rename A 0777 directory within', lambda: os.rename('${y}/e-${x}', '${y}/e-${x}.renamed'))
case('${y}: create own file', lambda: create('${y}/own-${x}', 0o644, b'own'))
case('${y}: rename own file over A file', lambda: os.rename('${y}/own-${x}', '${y}/t-${x}'))
`;
  const actors = [
    { id: A, x: 'owner' },
    { id: D, x: 'dirowner' },
    { id: C, x: 'third' },
  ];
  const phases: Phase[] = [
    {
      who: ROOT,
      code: `
os.mkdir('sticky'); os.chmod('sticky', 0o1777); os.chown('sticky', 65533, 65533)
os.mkdir('open'); os.chmod('open', 0o777); os.chown('open', 65533, 65533)
os.mkdir('out'); os.chmod('out', 0o777)
`,
    },
    { who: A, code: actors.map(({ x }) => setup('sticky', x) + setup('open', x)).join('\n') },
    ...actors.map(({ id, x }) => ({ who: id, code: act('sticky', x) + act('open', x) })),
    // Root is above the sticky rule.
    { who: A, code: setup('sticky', 'root') },
    { who: ROOT, code: act('sticky', 'root') },
  ];
  const o = await onBoth('sticky', phases);
  const e = o.ref.steps;
  for (const op of ['unlink A file', 'unlink A symlink', 'rmdir A directory', 'rename A file in the directory', 'rename A file out of the directory', 'rename A 0777 directory within', 'rename own file over A file']) {
    assert.equal(e[`C: sticky: ${op}`], 'EPERM', `third user, sticky: ${op}`);
    assert.equal(e[`C: open: ${op}`], 'OK', `third user, not sticky: ${op}`);
    assert.equal(e[`A: sticky: ${op}`], 'OK', `entry owner, sticky: ${op}`);
    assert.equal(e[`D: sticky: ${op}`], 'OK', `directory owner, sticky: ${op}`);
    assert.equal(e[`root: sticky: ${op}`], 'OK', `root, sticky: ${op}`);
  }
  assertSame(o);
});

test('setgid directories pass their group on (and S_ISGID to subdirectories); a non-member loses S_ISGID on create; rename keeps the group', T, async () => {
  const o = await onBoth('setgid', [
    {
      who: ROOT,
      code: `
os.mkdir('sg'); os.chmod('sg', 0o2777); os.chown('sg', 0, 65533)
os.mkdir('plain'); os.chmod('plain', 0o777)
`,
    },
    {
      who: A,
      umask: 0,
      code: `
case('create', lambda: create('sg/f', 0o644, b'f'))
case('mkdir', lambda: os.mkdir('sg/d', 0o755))
case('symlink', lambda: os.symlink('f', 'sg/l'))
case('mkfifo', lambda: os.mkfifo('sg/p', 0o600))
case('mknod socket', lambda: sock('sg/s'))
case('create 02755, not a member', lambda: create('sg/x', 0o2755))
case('mkdir 0700', lambda: os.mkdir('sg/d700', 0o700))
case('create below the inheriting subdirectory', lambda: create('sg/d/f2', 0o600, b'f2'))
case('mkdir below the inheriting subdirectory', lambda: os.mkdir('sg/d/d2', 0o755))
case('create outside', lambda: create('plain/k', 0o644, b'k'))
case('rename into the setgid directory', lambda: os.rename('plain/k', 'sg/k'))
case('hard link into the setgid directory', lambda: os.link('sg/k', 'sg/k2'))
`,
    },
    {
      who: A_IN_D,
      umask: 0,
      code: `
case('create 02755, a member', lambda: create('sg/y', 0o2755))
case('create 02755, a member, and write (any write drops S_ISGID|S_IXGRP)', lambda: create('sg/y2', 0o2755, b'y'))
case('create outside (egid)', lambda: create('plain/z', 0o644, b'z'))
`,
    },
    { who: ROOT, code: `case('create', lambda: create('sg/r', 0o644))\ncase('mkdir', lambda: os.mkdir('sg/rd'))` },
  ]);
  const t = o.ref.tree;
  assert.equal(t['sg/f'], 'f 0644 65534:65533 size=1');
  assert.equal(t['sg/d'], 'd 2755 65534:65533');
  assert.equal(t['sg/x'], 'f 0755 65534:65533 size=0', 'S_ISGID dropped for a non-member');
  assert.equal(t['sg/y'], 'f 2755 65534:65533 size=0', 'S_ISGID kept for a member');
  assert.equal(t['sg/y2'], 'f 0755 65534:65533 size=1', 'S_ISGID dropped by the write');
  assert.equal(t['sg/k'], 'f 0644 65534:65534 size=1', 'rename keeps the group');
  assert.equal(t['plain/z'], 'f 0644 65534:65534 size=1');
  assertSame(o);
});

test('teardown: unmounts cleanly, nothing left mounted, gocryptfs -fsck finds no problems', T, async () => {
  await fx.teardown();
  await assertFsckClean(fx.cipherdir);
});
