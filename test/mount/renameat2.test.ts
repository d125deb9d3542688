/**
 * renameat2(2)'s flags through the mount, as ext4 and gocryptfs answer
 * them: RENAME_NOREPLACE (also onto an open file, which libfuse would
 * otherwise hide first), RENAME_EXCHANGE (files, directories, across
 * directories, long names, an open file swapped away and its descriptor
 * still reading it), RENAME_WHITEOUT as root (a 0:0 character device where
 * the source was) and refused as another user, and flags no kernel takes.
 * The same scenario runs on ext4, through a gocryptfs mount and through
 * ours (-allow_other, acting as root and as uid 65534); every step and the
 * resulting tree, contents included, must be the same (gocryptfs leaves a
 * whiteout made by another user to root; ext4 and we give it to the
 * caller). Afterwards gocryptfs
 * mounts our cipher directory and sees the same tree, and its -fsck is clean.
 */
import { after, before, test } from 'node:test';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, mountImpl, MOUNT_IMPL, unmountAndReap } from '../helpers/mount.js';
import { assertFsckClean, useMountFixture } from '../helpers/mount-suite.js';
import { A, assertSameRecord, openForOthers, ownerSnapshot, ROOT, runScenario, type Phase } from '../helpers/multiuser.js';
import { needs, unmet } from '../helpers/requirements.js';

const fx = useMountFixture('renameat2', { mount: { flags: ['-allow_other'] } });
const T = { timeout: 90_000, ...needs('mount', 'gocryptfs', 'python3') };
const LONG = 'L'.repeat(200);

/** Python for the phases: renameat2 through libc, and the content of every file below a directory. */
const HELPERS = `
_libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
def rename2(a, b, flags):
    if _libc.renameat2(-100, a.encode(), -100, b.encode(), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def contents(top):
    for d, dirs, files in os.walk(top):
        for n in sorted(files):
            p = os.path.join(d, n)
            if stat.S_ISREG(os.lstat(p).st_mode):
                res["content " + p] = readall(p)
`;

const PHASES: Phase[] = [
  {
    who: ROOT,
    code: `${HELPERS}
os.mkdir("s")
os.chmod("s", 0o777)
os.chdir("s")
create("a", data=b"A"); create("b", data=b"B")
case("noreplace onto a file", lambda: rename2("a", "b", 1))
case("noreplace to a new name", lambda: rename2("a", "c", 1))
case("exchange two files", lambda: rename2("c", "b", 2))
os.mkdir("D1"); os.mkdir("D2"); create("D1/x", data=b"x1"); create("D2/y", data=b"y2")
case("exchange two directories", lambda: rename2("D1", "D2", 2))
case("exchange a file and a directory", lambda: rename2("b", "D1", 2))
case("exchange across directories", lambda: rename2("c", "b/y", 2))
case("exchange with a missing target", lambda: rename2("c", "none", 2))
case("noreplace onto a directory", lambda: rename2("c", "D2", 1))
create("${LONG}", data=b"long")
case("exchange a long name and a short one", lambda: rename2("${LONG}", "c", 2))
case("noreplace a long name to a short new one", lambda: rename2("${LONG}", "e", 1))
case("noreplace a short name to a long new one", lambda: rename2("e", "${LONG}2", 1))
fd = os.open("c", os.O_RDONLY)
case("noreplace onto an open file", lambda: rename2("${LONG}2", "c", 1))
case("exchange an open file away", lambda: rename2("${LONG}2", "c", 2))
res["descriptor reads the file it opened"] = os.pread(fd, 10, 0).decode()
res["its size"] = str(os.fstat(fd).st_size)
os.close(fd)
create("wsrc", data=b"w")
case("whiteout as root", lambda: rename2("wsrc", "wdst", 4))
case("noreplace and whiteout onto a file", lambda: rename2("wdst", "c", 5))
case("exchange and noreplace together", lambda: rename2("wdst", "c", 3))
case("an unknown flag", lambda: rename2("wdst", "c", 8))
contents(".")
`,
  },
  {
    who: A,
    code: `${HELPERS}
os.chdir("s")
create("mine1", data=b"1"); create("mine2", data=b"2"); os.mkdir("mydir")
case("noreplace as a user", lambda: rename2("mine1", "mine2", 1))
case("exchange as a user", lambda: rename2("mine1", "mine2", 2))
case("exchange into a directory as a user", lambda: rename2("mine1", "mydir/m", 2))
case("noreplace into a directory as a user", lambda: rename2("mine1", "mydir/m", 1))
case("whiteout as a user", lambda: rename2("mine2", "mine3", 4))
contents(".")
`,
  },
];

interface Outcome {
  steps: Record<string, string>;
  tree: Record<string, string>;
}

async function runOn(root: string): Promise<Outcome> {
  await fsp.mkdir(root);
  await fsp.chmod(root, 0o755);
  const steps = await runScenario(root, PHASES);
  return { steps, tree: await ownerSnapshot(root) };
}

function assertSame(actual: Outcome, expected: Outcome, label: string, expectedLabel: string): void {
  assertSameRecord(actual.steps, expected.steps, `${label}: every step ends as on ${expectedLabel}`, expectedLabel);
  assertSameRecord(actual.tree, expected.tree, `${label}: the tree is ${expectedLabel}'s`, expectedLabel);
}

let ext4: Outcome;

before(async () => {
  if (unmet('mount')) return;
  openForOthers(fx.tmp);
  ext4 = await runOn(join(fx.tmp, 'ext4'));
});

after(async () => {
  for (const m of [join(fx.tmp, 'go-mnt'), join(fx.tmp, 'go-ours')]) await unmountAndReap(m).catch(() => undefined);
});

test('renameat2 flags through the mount end as on ext4: every step, the tree and every file', T, async (t) => {
  const ours = await runOn(fx.p('t'));
  for (const [k, v] of Object.entries(ours.steps)) if (!k.includes(': content ')) t.diagnostic(`${k}: ${v}`);
  assertSame(ours, ext4, MOUNT_IMPL, 'ext4');
});

test('gocryptfs gives the same on its own mount, and reads the tree ours left', T, async (t) => {
  if (MOUNT_IMPL !== 'tscryptfs') return t.skip('the comparison is for tscryptfs');
  const goCipher = join(fx.tmp, 'go-cipher');
  await initCipherdir('gocryptfs', goCipher);
  await mountImpl('gocryptfs', goCipher, join(fx.tmp, 'go-mnt'), { flags: ['-allow_other'] });
  const go = await runOn(join(fx.tmp, 'go-mnt', 't'));
  await unmountAndReap(join(fx.tmp, 'go-mnt'));
  // gocryptfs 2.3 leaves a whiteout made by another user to root (we give it to the caller, as ext4 does).
  const goExpected = { steps: ext4.steps, tree: { ...ext4.tree, 's/mine2': ext4.tree['s/mine2']!.replace(' 65534:65534 ', ' 0:0 ') } };
  assertSame(go, goExpected, 'gocryptfs', 'ext4 (but a user\'s whiteout root\'s)');

  const ours = { steps: {}, tree: await ownerSnapshot(fx.p('t')) };
  await fx.teardown();
  await assertFsckClean(fx.cipherdir);
  await mountImpl('gocryptfs', fx.cipherdir, join(fx.tmp, 'go-ours'), { flags: ['-allow_other'] });
  try {
    const seen = { steps: {}, tree: await ownerSnapshot(join(fx.tmp, 'go-ours', 't')) };
    assertSame(seen, ours, 'gocryptfs mounting our cipher directory', 'our mount');
  } finally {
    await unmountAndReap(join(fx.tmp, 'go-ours'));
  }
});
