/**
 * Files unlinked (or renamed over) while open, on a real mount of
 * MOUNT_IMPL: the name is gone at once — no `.fuse_hidden*` entry in the
 * listing, the directory can be removed — while the open handles keep
 * reading, writing, fstat and fchmod. Found by the random-operation
 * tester (test/helpers/fsx); libfuse2 hides such files by renaming them,
 * which src/fuse/hidden-files.ts turns into a real unlink.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { prng } from '../helpers/tree.js';
import { assertBytes, assertFsckClean, cipherEntries, rejectsWith, useMountFixture } from '../helpers/mount-suite.js';

const fx = useMountFixture('unlinked-open');
const T = { timeout: 60_000 };

test('unlink of an open file: no .fuse_hidden entry, the handle still reads, writes and fstats; rmdir of its directory works', T, async () => {
  await fsp.mkdir(fx.p('d'));
  const data = prng('unlinked-open', 9000);
  await fsp.writeFile(fx.p('d', 'f'), data);
  const h = await fsp.open(fx.p('d', 'f'), 'r+');
  try {
    await fsp.unlink(fx.p('d', 'f'));
    assert.deepEqual(await fsp.readdir(fx.p('d')), [], 'nothing listed while the file is open');
    const st = await h.stat();
    assert.equal(st.nlink, 0, 'fstat: nlink 0');
    assert.equal(st.size, 9000, 'fstat: the plaintext size');
    const buf = Buffer.alloc(9000);
    assert.equal((await h.read(buf, 0, 9000, 0)).bytesRead, 9000);
    assertBytes(buf, data, 'content through the handle');
    await h.write(Buffer.from('still writable'), 0, 14, 4090);
    data.write('still writable', 4090);
    await h.read(buf, 0, 9000, 0);
    assertBytes(buf, data, 'content after a write through the handle');
    assert.equal((await h.stat()).size, 9000);
  } finally {
    await h.close();
  }
  // Right after close(2): release is asynchronous, so a hidden name could linger here (the old flaky files.test.ts case).
  assert.deepEqual(await fsp.readdir(fx.p('d')), [], 'no leftovers after close either');
  await fsp.rmdir(fx.p('d'));
});

test('rmdir of a directory whose only file is unlinked but still open succeeds (no ENOTEMPTY)', T, async () => {
  await fsp.mkdir(fx.p('d2'));
  await fsp.writeFile(fx.p('d2', 'f'), 'x');
  const h = await fsp.open(fx.p('d2', 'f'), 'r');
  try {
    await fsp.unlink(fx.p('d2', 'f'));
    await fsp.rmdir(fx.p('d2'));
    await rejectsWith(fsp.stat(fx.p('d2')), 'ENOENT', 'the directory is gone');
  } finally {
    await h.close();
  }
});

test('rename over an open file replaces it at once; the old handle keeps the old content', T, async () => {
  const oldData = prng('old', 5000);
  const newData = prng('new', 3000);
  await fsp.writeFile(fx.p('target'), oldData);
  await fsp.writeFile(fx.p('source'), newData);
  const h = await fsp.open(fx.p('target'), 'r');
  try {
    await fsp.rename(fx.p('source'), fx.p('target'));
    assert.deepEqual((await fsp.readdir(fx.mnt)).sort(), ['target']);
    assertBytes(await fsp.readFile(fx.p('target')), newData, 'the new content under the name');
    const buf = Buffer.alloc(5000);
    await h.read(buf, 0, 5000, 0);
    assertBytes(buf, oldData, 'the old content through the open handle');
  } finally {
    await h.close();
  }
  await fsp.unlink(fx.p('target'));
});

test('rename between two hard links of one file whose target is open changes nothing (rename(2))', T, async () => {
  await fsp.writeFile(fx.p('a'), 'linked');
  await fsp.link(fx.p('a'), fx.p('b'));
  const h = await fsp.open(fx.p('b'), 'r+');
  try {
    await fsp.rename(fx.p('a'), fx.p('b'));
    assert.deepEqual((await fsp.readdir(fx.mnt)).sort(), ['a', 'b'], 'both names stay');
    assert.equal((await fsp.stat(fx.p('a'))).nlink, 2);
    assert.equal((await h.stat()).nlink, 2, 'fstat of the open handle agrees');
    assert.equal(await fsp.readFile(fx.p('b'), 'utf8'), 'linked');
  } finally {
    await h.close();
  }
  await fsp.unlink(fx.p('a'));
  await fsp.unlink(fx.p('b'));
});

test('an unlinked open file stays usable after its directory is renamed (fsx seed 1001)', T, async () => {
  await fsp.mkdir(fx.p('d0'));
  await fsp.mkdir(fx.p('d0', 'e0'));
  await fsp.mkdir(fx.p('d1'));
  const h = await fsp.open(fx.p('d0', 'e0', 'f'), 'w+');
  try {
    await h.write(Buffer.from('data'), 0, 4, 0);
    await fsp.unlink(fx.p('d0', 'e0', 'f'));
    await fsp.rename(fx.p('d0'), fx.p('d1', 'moved'));
    const st = await h.stat();
    assert.equal(st.size, 4, 'fstat after the rename of its directory');
    assert.equal(st.nlink, 0);
  } finally {
    await h.close();
  }
  assert.deepEqual(await fsp.readdir(fx.p('d1', 'moved', 'e0')), []);
  await fsp.rm(fx.p('d1'), { recursive: true });
});

test('after an open file was unlinked and closed, a new directory renamed onto its old name is renamed (fsx seed 12)', T, async () => {
  // The directory may get the unlinked file's inode number: it must not be taken for the same file.
  for (let i = 0; i < 5; i++) {
    const h = await fsp.open(fx.p('f1'), 'w+');
    await fsp.unlink(fx.p('f1'));
    await h.close();
    await fsp.mkdir(fx.p('d0'));
    await fsp.rename(fx.p('d0'), fx.p('f1'));
    assert.ok((await fsp.stat(fx.p('f1'))).isDirectory());
    assert.deepEqual(await fsp.readdir(fx.mnt), ['f1']);
    await fsp.rmdir(fx.p('f1'));
  }
});

test('teardown: unmounted, nothing left; the cipher directory is clean for gocryptfs -fsck', T, async () => {
  await fx.teardown();
  assert.deepEqual(await cipherEntries(fx.cipherdir), [], 'no cipher files left behind');
  await assertFsckClean(fx.cipherdir);
});
