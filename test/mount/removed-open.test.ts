/**
 * Removed while open, as on ext4, on a mount made by root with
 * -allow_other, as root and as another user: a file unlinked or renamed
 * over keeps answering fstat, read, write and ftruncate through its
 * descriptor; a directory renamed over or removed keeps answering fstat
 * (link count 0) and fchmod. Every step and the result are compared with
 * ext4's, and once everything is closed nothing of the removed entries is
 * left in the cipher directory.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { cipherEntries, MOUNT_IMPL, useMountFixture } from '../helpers/mount-suite.js';
import { A, assertSameRecord, openForOthers, ROOT, runScenario } from '../helpers/multiuser.js';
import { needs, unmet } from '../helpers/requirements.js';

const fx = useMountFixture('removed-open', { mount: { flags: ['-allow_other'] } });
const T = { timeout: 60_000, ...needs('mount', 'python3') };

before(async () => {
  if (unmet('mount')) return;
  openForOthers(fx.tmp);
});

/** The steps, in directory `tag` of the scenario root (made 0777 by root). */
function steps(tag: string): string {
  return `
os.chdir("${tag}")
def attrs(fd):
    # a directory's size is the store's own business (ext4 gives a removed one 0, a replaced one its blocks)
    st = os.fstat(fd)
    size = "" if stat.S_ISDIR(st.st_mode) else " size=%d" % st.st_size
    return "%o nlink=%d%s uid=%d" % (stat.S_IMODE(st.st_mode), st.st_nlink, size, st.st_uid)
create("f", data=b"0123456789" * 500)
fd = os.open("f", os.O_RDWR)
os.unlink("f")
case("unlinked file: fstat", lambda: attrs(fd))
case("unlinked file: read", lambda: os.pread(fd, 10, 4990).decode())
case("unlinked file: write", lambda: str(os.pwrite(fd, b"written", 100)))
case("unlinked file: ftruncate", lambda: os.ftruncate(fd, 1234))
case("unlinked file: fstat after", lambda: attrs(fd))
case("unlinked file: read after", lambda: os.pread(fd, 7, 100).decode())
os.close(fd)
create("g", data=b"old"); create("h", data=b"new")
fd = os.open("g", os.O_RDWR)
os.rename("h", "g")
case("renamed-over file: fstat", lambda: attrs(fd))
case("renamed-over file: read", lambda: os.pread(fd, 3, 0).decode())
os.close(fd)
os.mkdir("a"); os.mkdir("b")
fd = os.open("b", os.O_RDONLY | os.O_DIRECTORY)
os.rename("a", "b")
case("renamed-over directory: fstat", lambda: attrs(fd))
case("renamed-over directory: fchmod", lambda: os.fchmod(fd, 0o700))
case("renamed-over directory: fstat after fchmod", lambda: attrs(fd))
case("renamed-over directory: listing", lambda: str(os.listdir(fd)))
os.close(fd)
os.mkdir("c")
fd = os.open("c", os.O_RDONLY | os.O_DIRECTORY)
os.rmdir("c")
case("removed directory: fstat", lambda: attrs(fd))
case("removed directory: fchmod", lambda: os.fchmod(fd, 0o711))
case("removed directory: fstat after fchmod", lambda: attrs(fd))
os.close(fd)
res["left"] = " ".join(sorted(os.listdir(".")))
`;
}

const PHASES = [
  { who: ROOT, code: 'for d in ("r", "u"):\n    os.mkdir(d)\n    os.chmod(d, 0o777)' },
  { who: ROOT, code: steps('r') },
  { who: A, code: steps('u') },
];

test('removed while open, as root and as another user: what ext4 answers; nothing left behind', T, async (t) => {
  if (MOUNT_IMPL === 'gocryptfs') return t.skip('gocryptfs 2.3 answers fstat and fchmod of a removed open directory with ENOENT');
  const ref = join(fx.tmp, 'ext4');
  await fsp.mkdir(ref, { mode: 0o755 });
  await fsp.chmod(ref, 0o755);
  const expected = await runScenario(ref, PHASES);
  await fsp.mkdir(fx.p('t'));
  await fsp.chmod(fx.p('t'), 0o755);
  const got = await runScenario(fx.p('t'), PHASES);
  assertSameRecord(got, expected, `${MOUNT_IMPL}: every step as on ext4`);
  await fx.teardown();
  // Each scenario directory holds b (the directory renamed onto it), g and its IV: nothing of f, a, c or the old g and b.
  const top = await cipherEntries(fx.cipherdir);
  assert.equal(top.length, 1, `one directory at the top: ${top.join(' ')}`);
  for (const d of await cipherEntries(join(fx.cipherdir, top[0]!))) {
    assert.equal((await cipherEntries(join(fx.cipherdir, top[0]!, d))).length, 2, 'two entries in each scenario directory');
  }
});
