/**
 * chmod, chown and utimens of a file that has a handle open: the binding
 * hands them to the native read path's registry (fp_attr in
 * native/fastpath/read.c), which changes the handle's cipher file on the
 * libfuse thread instead of the cipher file's name in JS. An untar makes three such calls per file (futimens, fchown
 * and fchmod on the descriptor it wrote through).
 *
 * Oracle: ext4, as in multiuser.test.ts. The same scenario (fd-based and
 * path-based changes of open files, as the owner, another user and root;
 * set-id bits, hard links, a rename while open, a rename onto an open file,
 * an unlinked open file, a write-only handle) runs on a directory in /tmp
 * and in a root -allow_other mount, and every step's outcome, each mode,
 * owner and explicit time it reads back, and the final tree must be equal.
 * The call counts say which path answered; with TSCRYPTFS_NATIVE_ATTRS=0
 * the same changes reach JS.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir } from '../helpers/mount.js';
import { cipherPathOf, MOUNT_IMPL, useMountTmp, withCallCounts } from '../helpers/mount-suite.js';
import { native, NATIVE } from '../helpers/native-paths.js';
import { A, assertSameRecord, D, openForOthers, ownerSnapshot, ROOT, runScenario, type Phase } from '../helpers/multiuser.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('open-file-attrs');
const T = { timeout: 120_000, ...needs('mount', 'python3') };
const tsOnly = { ...T, skip: MOUNT_IMPL !== 'tscryptfs' ? 'call counts exist only for tscryptfs' : T.skip };

before(() => {
  openForOthers(dir.tmp);
});

/** Mounts a fresh cipher directory (-allow_other) with `env` set, runs `fn`, and returns the call counts (none from gocryptfs). */
async function counted(label: string, env: Record<string, string>, fn: (mnt: string, cipherdir: string) => Promise<void>): Promise<Record<string, number>> {
  const cipherdir = join(dir.tmp, `${label}-cipher`);
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  return (await withCallCounts(dir.tmp, label, cipherdir, { env, flags: ['-allow_other'] }, (m) => fn(m, cipherdir)))[1];
}

/** Python for the phases: the mode, owner and explicit times of a descriptor and of a name, read back at once. */
const HELPERS = `
class _TS(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2
_libc.futimens.argtypes = [ctypes.c_int, ctypes.POINTER(_TS)]
def futimens(fd, a, m):
    ts = (_TS * 2)(_TS(*a), _TS(*m))
    if _libc.futimens(fd, ts) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def desc(st):
    return "%04o %d:%d" % (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
def fdesc(fd):
    return desc(os.fstat(fd))
def ndesc(path):
    return desc(os.stat(path))
def times(st):
    return "%d %d" % (st.st_atime_ns, st.st_mtime_ns)
`;

const SCENARIO: Phase[] = [
  { who: ROOT, code: `${HELPERS}\nos.mkdir('w'); os.chmod('w', 0o777)` },
  {
    who: A,
    code: `${HELPERS}
fd = os.open('w/f', os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b'hello')
case('fchmod 4755', lambda: os.fchmod(fd, 0o4755))
case('after fchmod: fstat', lambda: fdesc(fd))
case('after fchmod: mode-only statx', lambda: mode_now('w/f'))
case('after fchmod: stat', lambda: ndesc('w/f'))
case('futimens, both explicit', lambda: futimens(fd, (1000000001, 123456789), (2000000002, 987654321)))
case('after futimens: fstat times', lambda: times(os.fstat(fd)))
case('after futimens: stat times', lambda: times(os.stat('w/f')))
case('futimens, atime omitted', lambda: futimens(fd, (0, UTIME_OMIT), (3000000003, 5)))
case('after futimens omit: times', lambda: times(os.fstat(fd)))
before = os.fstat(fd).st_mtime_ns
case('futimens, now', lambda: futimens(fd, (0, UTIME_NOW), (0, UTIME_NOW)))
case('after futimens now: mtime moved', lambda: 'moved' if os.fstat(fd).st_mtime_ns != before else 'same')
case('fchown to own group', lambda: os.fchown(fd, -1, 65534))
case('after fchown: set-id bits', lambda: fdesc(fd))
case('fchmod 4755 again', lambda: os.fchmod(fd, 0o4755))
case('fchown -1 -1 drops set-uid', lambda: os.fchown(fd, -1, -1))
case('after fchown -1 -1', lambda: mode_now('w/f'))
case('fchown to root', lambda: os.fchown(fd, 0, -1))
case('fchown to another group', lambda: os.fchown(fd, -1, 65533))
case('chmod by name while open', lambda: os.chmod('w/f', 0o640))
case('after chmod by name: fstat', lambda: fdesc(fd))
case('utime by name while open', lambda: os.utime('w/f', ns=(4000000004, 6000000006)))
case('after utime by name: fstat times', lambda: times(os.fstat(fd)))
case('hard link', lambda: os.link('w/f', 'w/f-link'))
case('fchmod with two names', lambda: os.fchmod(fd, 0o604))
case('after: the other name', lambda: ndesc('w/f-link'))
case('after: mode-only statx of the other name', lambda: mode_now('w/f-link'))
case('rename while open', lambda: os.rename('w/f', 'w/f-moved'))
case('fchmod after rename', lambda: os.fchmod(fd, 0o611))
case('after: the new name', lambda: ndesc('w/f-moved'))
case('after: the link', lambda: ndesc('w/f-link'))
wo = os.open('w/g', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(wo, b'write-only')
case('fchmod of a write-only handle', lambda: os.fchmod(wo, 0o640))
case('after: write-only handle', lambda: ndesc('w/g'))
case('unlink while open', lambda: os.unlink('w/g'))
case('fchmod of the unlinked file', lambda: os.fchmod(wo, 0o604))
case('futimens of the unlinked file', lambda: futimens(wo, (7, 7), (8, 8)))
case('after: the unlinked file', lambda: fdesc(wo) + ' ' + times(os.fstat(wo)))
os.close(wo)
old = os.open('w/x', os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(old, b'old x')
create('w/y', 0o600, b'new x')
case('rename onto an open file', lambda: os.rename('w/y', 'w/x'))
case('fchmod of the file renamed over', lambda: os.fchmod(old, 0o606))
case('after: the file renamed over', lambda: fdesc(old))
case('after: the name it had', lambda: ndesc('w/x'))
case('chmod of the name it had', lambda: os.chmod('w/x', 0o660))
case('after: the file renamed over, again', lambda: fdesc(old))
os.close(old)
case('fchmod 0644', lambda: os.fchmod(fd, 0o644))
case('read back', lambda: readall('w/f-moved'))
os.close(fd)
`,
  },
  {
    who: D,
    code: `${HELPERS}
fd = os.open('w/f-moved', os.O_RDONLY)
case('fchmod of another user\\'s file', lambda: os.fchmod(fd, 0o777))
case('futimens of another user\\'s file, explicit', lambda: futimens(fd, (1, 1), (1, 1)))
case('futimens of another user\\'s file, now', lambda: futimens(fd, (0, UTIME_NOW), (0, UTIME_NOW)))
case('fchown of another user\\'s file', lambda: os.fchown(fd, 65533, 65533))
case('after', lambda: fdesc(fd))
os.close(fd)
`,
  },
  {
    who: ROOT,
    code: `${HELPERS}
fd = os.open('w/f-moved', os.O_RDWR)
case('fchmod 6755', lambda: os.fchmod(fd, 0o6755))
case('fchown to D', lambda: os.fchown(fd, 65533, 65533))
case('after fchown by root', lambda: fdesc(fd))
case('fchmod 2755', lambda: os.fchmod(fd, 0o2755))
case('fchown -1 -1 by root', lambda: os.fchown(fd, -1, -1))
case('after fchown -1 -1 by root', lambda: mode_now('w/f-moved'))
case('fchmod 4755', lambda: os.fchmod(fd, 0o4755))
case('chown -1 -1 by root, by name', lambda: os.chown('w/f-moved', -1, -1))
case('after chown -1 -1 by root', lambda: mode_now('w/f-moved'))
case('futimens by root', lambda: futimens(fd, (11, 12), (13, 14)))
case('after futimens by root', lambda: times(os.fstat(fd)))
os.close(fd)
`,
  },
];

test('chmod, chown and utimens of open files end as on ext4 (owner, another user, root; set-id bits, links, renames, unlinked files)', T, async () => {
  const refRoot = join(dir.tmp, 'ref');
  await fsp.mkdir(refRoot, { mode: 0o755 });
  const refSteps = await runScenario(refRoot, SCENARIO);
  const refTree = await ownerSnapshot(refRoot);
  // The scenario, as ext4 answers it.
  assert.equal(refSteps['A: after fchmod: fstat'], '4755 65534:65534');
  assert.equal(refSteps['A: after fchown -1 -1'], '0755');
  assert.equal(refSteps['A: fchown to root'], 'EPERM');
  assert.equal(refSteps['A: after: the file renamed over'], '0606 65534:65534');
  assert.equal(refSteps['A: after: the name it had'], '0600 65534:65534');
  assert.equal(refSteps["D: fchmod of another user's file"], 'EPERM');
  assert.equal(refSteps['root: after fchown -1 -1 by root'], '0755');
  assert.equal(refSteps['root: after chown -1 -1 by root'], '0755');
  let mntSteps: Record<string, string> = {};
  let mntTree: Record<string, string> = {};
  let cipherMode = -1;
  const calls = await counted('scenario', {}, async (m, cipherdir) => {
    await fsp.chmod(m, 0o755);
    mntSteps = await runScenario(m, SCENARIO);
    mntTree = await ownerSnapshot(m);
    cipherMode = (await fsp.stat(await cipherPathOf(cipherdir, 'w/f-moved'))).mode & 0o7777;
  });
  assertSameRecord(mntSteps, refSteps, 'every step ends as on ext4');
  assertSameRecord(mntTree, refTree, 'the tree has the modes, owners and sizes ext4 gives');
  assert.equal(cipherMode, (await fsp.stat(join(refRoot, 'w/f-moved'))).mode & 0o7777, 'the cipher file has the plaintext mode (as gocryptfs keeps it)');
  if (MOUNT_IMPL === 'tscryptfs' && NATIVE.attrs) assert.ok((calls.nativeAttr ?? 0) >= 15, `most changes answered natively: ${JSON.stringify(calls)}`);
});

test('a change of an open file takes no trip to JS; TSCRYPTFS_NATIVE_ATTRS=0 sends it there', tsOnly, async () => {
  const code = `
fd = os.open('f', os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b'x' * 5000)
for i in range(10):
    os.fchmod(fd, 0o600 | i)
    os.fchown(fd, 65534 + i % 2, 65534)
    os.utime(fd, ns=(i * 1000000007, i * 1000000009))
st = os.fstat(fd)
res['fstat'] = "%04o %d:%d %d %d %d" % (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_size, st.st_atime_ns, st.st_mtime_ns)
os.close(fd)
`;
  const want = `0611 65535:65534 5000 ${9 * 1000000007} ${9 * 1000000009}`;
  for (const [label, env] of [['native', {}], ['js', { TSCRYPTFS_NATIVE_ATTRS: '0' }]] as const) {
    const calls = await counted(label, env, async (m) => {
      const r = await runScenario(m, [{ who: ROOT, code }]);
      assert.equal(r['root: fstat'], want, `${label}: what fstat reads back`);
    });
    const js = (calls.chmod ?? 0) + (calls.chown ?? 0) + (calls.utimens ?? 0);
    if (native(env).attrs) {
      assert.equal(calls.nativeAttr, 30, `${label}: ${JSON.stringify(calls)}`);
      assert.equal(js, 0, `${label}: no chmod, chown or utimens reached JS: ${JSON.stringify(calls)}`);
    } else {
      assert.equal(calls.nativeAttr, undefined, `${label}: ${JSON.stringify(calls)}`);
      assert.equal(js, 30, `${label}: ${JSON.stringify(calls)}`);
    }
  }
});

test('chmod by name racing opens and closes of the file: every mode set is the mode read back', T, async () => {
  const calls = await counted('race', {}, async (m) => {
    const r = await runScenario(m, [
      {
        who: ROOT,
        code: `
import threading
open('f', 'wb').write(b'data')
stop = False
def churn():
    while not stop:
        fd = os.open('f', os.O_RDONLY)
        os.close(fd)
th = threading.Thread(target=churn)
th.start()
bad = []
try:
    for i in range(3000):
        mode = 0o600 | (i % 64)
        os.chmod('f', mode)
        got = stat.S_IMODE(os.stat('f').st_mode)
        if got != mode:
            bad.append('%o->%o' % (mode, got))
finally:
    stop = True
    th.join()
res['bad'] = ','.join(bad[:10])
`,
      },
    ]);
    assert.equal(r['root: bad'], '', 'modes read back unlike the mode just set');
  });
  if (MOUNT_IMPL === 'tscryptfs' && NATIVE.attrs) assert.ok((calls.nativeAttr ?? 0) > 0, `some chmods met an open handle: ${JSON.stringify(calls)}`);
});
