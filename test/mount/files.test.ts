/**
 * File operations on a real mount of MOUNT_IMPL (TSCRYPTFS_MOUNT_IMPL,
 * see test/helpers/mount.ts): getattr/fstat, create/open/read/write with
 * O_APPEND, O_TRUNC, O_EXCL, holes, read-modify-write, truncate/ftruncate,
 * unlink, several handles, concurrent writers, fsync/flush, access.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants as C, promises as fsp } from 'node:fs';
import { prng } from '../helpers/tree.js';
import { zeroBlocks } from '../helpers/cipher-shape.js';
import { assertBytes, assertFsckClean, cipherPathOf, cipherSize, py, rejectsWith, useMountFixture, OVERHEAD } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const fx = useMountFixture('files');
const T = { timeout: 60_000, ...needs('mount', 'gocryptfs', 'python3') };

async function cipherOf(plain: string): Promise<Buffer> {
  return fsp.readFile(await cipherPathOf(fx.cipherdir, plain));
}

test('getattr and fstat: type, mode, size, nlink, owner, times; ENOENT and ENOTDIR', T, async () => {
  const before = Date.now();
  await fsp.writeFile(fx.p('attr.txt'), 'hello attr\n', { mode: 0o640 });
  const st = await fsp.stat(fx.p('attr.txt'));
  assert.ok(st.isFile());
  assert.equal(st.mode & 0o7777, 0o640);
  assert.equal(st.size, 11);
  assert.equal(st.nlink, 1);
  assert.equal(st.uid, process.getuid!());
  assert.equal(st.gid, process.getgid!());
  for (const [k, t] of [['mtime', st.mtimeMs], ['ctime', st.ctimeMs], ['atime', st.atimeMs]] as const) {
    assert.ok(t >= before - 2000 && t <= Date.now() + 2000, `${k} ${new Date(t).toISOString()} is about now`);
  }
  assert.equal((await fsp.stat(fx.p('attr.txt'))).ino, st.ino, 'the inode number is stable');

  const dst = await fsp.stat(fx.mnt);
  assert.ok(dst.isDirectory(), 'the root is a directory');

  const h = await fsp.open(fx.p('attr.txt'), 'r+');
  try {
    assert.equal((await h.stat()).size, 11);
    await h.write(Buffer.from('more bytes'), 0, 10, 11);
    const fst = await h.stat();
    assert.equal(fst.size, 21, 'fstat sees the write at once');
    assert.equal((await fsp.stat(fx.p('attr.txt'))).size, 21, 'stat by path agrees');
    assert.ok(fst.mtimeMs >= st.mtimeMs, 'mtime moved forward');
  } finally {
    await h.close();
  }

  await rejectsWith(fsp.stat(fx.p('missing')), 'ENOENT', 'stat of a missing file');
  await rejectsWith(fsp.stat(fx.p('missing', 'x')), 'ENOENT', 'stat below a missing directory');
  await rejectsWith(fsp.stat(fx.p('attr.txt', 'x')), 'ENOTDIR', 'stat below a file');
});

test('create: mode honoured, O_EXCL fails with EEXIST on an existing file, EISDIR for a directory opened for writing', T, async () => {
  const h = await fsp.open(fx.p('excl.txt'), C.O_CREAT | C.O_EXCL | C.O_WRONLY, 0o600);
  await h.write('created exclusively');
  await h.close();
  assert.equal((await fsp.stat(fx.p('excl.txt'))).mode & 0o777, 0o600);
  assert.equal(await fsp.readFile(fx.p('excl.txt'), 'utf8'), 'created exclusively');
  await rejectsWith(fsp.open(fx.p('excl.txt'), C.O_CREAT | C.O_EXCL | C.O_WRONLY, 0o600), 'EEXIST', 'O_CREAT|O_EXCL on an existing file');
  assert.equal(await fsp.readFile(fx.p('excl.txt'), 'utf8'), 'created exclusively', 'the failed O_EXCL open left the file alone');

  await rejectsWith(fsp.open(fx.p('nope.txt'), 'r'), 'ENOENT', 'open without O_CREAT of a missing file');
  await fsp.mkdir(fx.p('adir'));
  await rejectsWith(fsp.open(fx.p('adir'), 'r+'), 'EISDIR', 'open a directory for writing');
  await rejectsWith(fsp.writeFile(fx.p('adir'), 'x'), 'EISDIR', 'write to a directory');
  await rejectsWith(fsp.open(fx.p('excl.txt', 'x'), 'w'), 'ENOTDIR', 'create below a file');
  await rejectsWith(fsp.open(fx.p('nodir', 'x'), 'w'), 'ENOENT', 'create below a missing directory');
});

test('O_TRUNC empties an existing file; O_APPEND writes at the end whatever the offset', T, async () => {
  await fsp.writeFile(fx.p('trunc.txt'), prng('trunc', 10_000));
  let h = await fsp.open(fx.p('trunc.txt'), C.O_WRONLY | C.O_TRUNC);
  assert.equal((await h.stat()).size, 0, 'O_TRUNC: size 0 at once');
  await h.write('short');
  await h.close();
  assert.equal(await fsp.readFile(fx.p('trunc.txt'), 'utf8'), 'short');
  assert.equal((await cipherOf('trunc.txt')).length, cipherSize(5), 'cipher file shrank too');

  await fsp.writeFile(fx.p('append.txt'), 'one\n');
  h = await fsp.open(fx.p('append.txt'), 'a');
  await h.write('two\n');
  // pwrite on an O_APPEND descriptor appends on Linux: the position is ignored.
  await h.write(Buffer.from('three\n'), 0, 6, 0);
  await h.close();
  assert.equal(await fsp.readFile(fx.p('append.txt'), 'utf8'), 'one\ntwo\nthree\n');

  // Append across a block boundary, interleaved with another handle's writes.
  const big = prng('append-big', 4090);
  await fsp.writeFile(fx.p('append2.bin'), big);
  const a = await fsp.open(fx.p('append2.bin'), 'a');
  const w = await fsp.open(fx.p('append2.bin'), 'r+');
  try {
    await a.write(Buffer.from('0123456789'));
    await w.write(Buffer.from('XY'), 0, 2, 4102); // grows the file to 4104 (a 2-byte gap)
    await a.write(Buffer.from('END'));
  } finally {
    await a.close();
    await w.close();
  }
  const got = await fsp.readFile(fx.p('append2.bin'));
  const want = Buffer.alloc(4104);
  big.copy(want);
  want.write('0123456789', 4090);
  want.write('XY', 4102);
  assertBytes(got, Buffer.concat([want, Buffer.from('END')]), 'appends go to the current end, even one another handle moved');
});

test('write and read back files of 0, 1, 4095, 4096, 4097 and 1 MiB+13 bytes; cipher sizes as gocryptfs', T, async () => {
  for (const size of [0, 1, 4095, 4096, 4097, (1 << 20) + 13]) {
    const data = prng(`size-${size}`, size);
    await fsp.writeFile(fx.p(`size_${size}.bin`), data);
    assert.equal((await fsp.stat(fx.p(`size_${size}.bin`))).size, size);
    assertBytes(await fsp.readFile(fx.p(`size_${size}.bin`)), data, `content of ${size} bytes`);
    assert.equal((await cipherOf(`size_${size}.bin`)).length, cipherSize(size), `cipher size for ${size} bytes`);
  }
  // Reads at odd offsets and lengths, and past EOF.
  const data = prng('size-1048589', (1 << 20) + 13);
  const h = await fsp.open(fx.p(`size_${(1 << 20) + 13}.bin`), 'r');
  try {
    for (const [pos, len] of [[0, 1], [4095, 2], [4096, 4096], [123_457, 70_000], [(1 << 20) - 5, 100]] as const) {
      const buf = Buffer.alloc(len);
      const { bytesRead } = await h.read(buf, 0, len, pos);
      const want = data.subarray(pos, pos + len);
      assert.equal(bytesRead, want.length, `read ${len} at ${pos}`);
      assertBytes(buf.subarray(0, bytesRead), want, `content of read ${len} at ${pos}`);
    }
    const { bytesRead } = await h.read(Buffer.alloc(10), 0, 10, (1 << 20) + 100);
    assert.equal(bytesRead, 0, 'read past EOF returns 0 bytes');
  } finally {
    await h.close();
  }
});

test('partial-block read-modify-write keeps the bytes around the write', T, async () => {
  const orig = prng('rmw', 10_000);
  await fsp.writeFile(fx.p('rmw.bin'), orig);
  const model = Buffer.from(orig);
  const h = await fsp.open(fx.p('rmw.bin'), 'r+');
  try {
    for (const [pos, len, seed] of [[100, 7, 'a'], [4090, 12, 'b'], [8191, 1, 'c'], [9990, 10, 'd'], [0, 1, 'e'], [5000, 4096, 'f']] as const) {
      const d = prng(seed, len);
      await h.write(d, 0, len, pos);
      d.copy(model, pos);
    }
  } finally {
    await h.close();
  }
  assertBytes(await fsp.readFile(fx.p('rmw.bin')), model);
  assert.equal((await cipherOf('rmw.bin')).length, cipherSize(10_000));
});

test('O_DIRECT: aligned writes and reads work whatever the backing filesystem demands of direct I/O', T, async () => {
  // The cipher directory lives under the system temp dir (ext4 here), where
  // direct I/O must be aligned; the cipher file's blocks are not.
  const r = await py<[number, number, string, string]>(
    `
import mmap
fd = os.open(A[0], os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
w = mmap.mmap(-1, 131072)
for i in range(32):
    w[i * 4096:(i + 1) * 4096] = bytes([65 + i]) * 4096
n = os.pwritev(fd, [w], 4096)
r = mmap.mmap(-1, 8192)
m = os.preadv(fd, [r], 4096 * 31)
os.close(fd)
out([n, m, r[:4096].hex()[:8], r[4096:].hex()[:8]])`,
    [fx.p('direct.bin')],
  );
  assert.deepEqual(r, [131072, 8192, '5f5f5f5f', '60606060']);
  const back = await fsp.readFile(fx.p('direct.bin'));
  assert.equal(back.length, 33 * 4096);
  assertBytes(back.subarray(0, 4096), Buffer.alloc(4096), 'the hole before the write');
  assert.equal(back[4096 * 32], 65 + 31);
});

test('writes past EOF leave holes: zeros when read, all-zero blocks in the cipher file', T, async () => {
  // An empty file, one byte written at 10000: blocks 0 and 1 are holes.
  await fsp.writeFile(fx.p('hole.bin'), '');
  let h = await fsp.open(fx.p('hole.bin'), 'r+');
  await h.write(Buffer.from('x'), 0, 1, 10_000);
  await h.close();
  const got = await fsp.readFile(fx.p('hole.bin'));
  assert.equal(got.length, 10_001);
  assert.ok(got.subarray(0, 10_000).every((b) => b === 0), 'the hole reads as zeros');
  assert.equal(got[10_000], 0x78);
  let cipher = await cipherOf('hole.bin');
  assert.equal(cipher.length, cipherSize(10_001));
  assert.deepEqual(zeroBlocks(cipher, OVERHEAD), [0, 1], 'blocks 0 and 1 are holes on disk');

  // A 100-byte file written at 9000: its partial block is padded (written), then a hole.
  const start = prng('hole2', 100);
  await fsp.writeFile(fx.p('hole2.bin'), start);
  h = await fsp.open(fx.p('hole2.bin'), 'r+');
  await h.write(Buffer.from('end'), 0, 3, 9000);
  await h.close();
  const want = Buffer.alloc(9003);
  start.copy(want);
  want.write('end', 9000);
  assertBytes(await fsp.readFile(fx.p('hole2.bin')), want);
  cipher = await cipherOf('hole2.bin');
  assert.equal(cipher.length, cipherSize(9003));
  assert.deepEqual(zeroBlocks(cipher, OVERHEAD), [1], 'block 0 padded, block 1 a hole');

  // Filling a hole afterwards.
  h = await fsp.open(fx.p('hole.bin'), 'r+');
  await h.write(Buffer.from('fill'), 0, 4, 5000);
  await h.close();
  const after = await fsp.readFile(fx.p('hole.bin'));
  assert.equal(after.subarray(5000, 5004).toString(), 'fill');
  assert.ok(after.subarray(0, 5000).every((b) => b === 0) && after.subarray(5004, 10_000).every((b) => b === 0));
  assert.deepEqual(zeroBlocks(await cipherOf('hole.bin'), OVERHEAD), [0], 'block 1 is real now, block 0 still a hole');
});

test('truncate and ftruncate grow and shrink; bytes cut off do not come back', T, async () => {
  // Grow an empty file: all holes.
  await fsp.writeFile(fx.p('grow.bin'), '');
  await fsp.truncate(fx.p('grow.bin'), 8192);
  assert.equal((await fsp.stat(fx.p('grow.bin'))).size, 8192);
  assertBytes(await fsp.readFile(fx.p('grow.bin')), Buffer.alloc(8192));
  assert.deepEqual(zeroBlocks(await cipherOf('grow.bin'), OVERHEAD), [0, 1]);
  assert.equal((await cipherOf('grow.bin')).length, cipherSize(8192));

  // Shrink to the middle of a block, then grow again: zeros, not the old bytes.
  const orig = prng('shrink', 10_000);
  await fsp.writeFile(fx.p('shrink.bin'), orig);
  await fsp.truncate(fx.p('shrink.bin'), 5000);
  assertBytes(await fsp.readFile(fx.p('shrink.bin')), orig.subarray(0, 5000));
  assert.equal((await cipherOf('shrink.bin')).length, cipherSize(5000));
  await fsp.truncate(fx.p('shrink.bin'), 9000);
  const want = Buffer.alloc(9000);
  orig.copy(want, 0, 0, 5000);
  assertBytes(await fsp.readFile(fx.p('shrink.bin')), want, 'regrown bytes are zeros');

  // ftruncate through an open handle, seen by another handle.
  const h = await fsp.open(fx.p('shrink.bin'), 'r+');
  const h2 = await fsp.open(fx.p('shrink.bin'), 'r');
  try {
    await h.truncate(4096);
    assert.equal((await h.stat()).size, 4096);
    assert.equal((await h2.stat()).size, 4096, 'the other handle sees the new size');
    await h.truncate(4097);
    const buf = Buffer.alloc(10);
    const { bytesRead } = await h2.read(buf, 0, 10, 4090);
    assert.equal(bytesRead, 7);
    assertBytes(buf.subarray(0, 7), Buffer.concat([orig.subarray(4090, 4096), Buffer.alloc(1)]), "bytes around the old end");
    await h.truncate(0);
    assert.equal((await h2.stat()).size, 0);
  } finally {
    await h.close();
    await h2.close();
  }
  assert.equal((await cipherOf('shrink.bin')).length, 0, 'truncated to 0: the cipher file is empty (no header)');

  await rejectsWith(fsp.truncate(fx.p('missing.bin'), 10), 'ENOENT', 'truncate of a missing file');
  await fsp.mkdir(fx.p('tdir'));
  await rejectsWith(fsp.truncate(fx.p('tdir'), 0), 'EISDIR', 'truncate of a directory');
  const ro = await fsp.open(fx.p('grow.bin'), 'r');
  try {
    await rejectsWith(ro.truncate(0), 'EINVAL', 'ftruncate on a read-only descriptor');
  } finally {
    await ro.close();
  }
});

test('unlink: the name goes, ENOENT the second time, EISDIR on a directory; an open file stays readable', T, async () => {
  await fsp.writeFile(fx.p('gone.txt'), 'bye');
  const cpath = await cipherPathOf(fx.cipherdir, 'gone.txt');
  await fsp.unlink(fx.p('gone.txt'));
  await rejectsWith(fsp.stat(fx.p('gone.txt')), 'ENOENT', 'stat after unlink');
  await rejectsWith(fsp.access(cpath), 'ENOENT', 'cipher file after unlink');
  await rejectsWith(fsp.unlink(fx.p('gone.txt')), 'ENOENT', 'second unlink');
  await fsp.mkdir(fx.p('udir'));
  await rejectsWith(fsp.unlink(fx.p('udir')), 'EISDIR', 'unlink of a directory');

  // Unlinking an open file: its handle still reads and writes; no trace is left in the directory.
  const data = prng('open-unlinked', 6000);
  await fsp.writeFile(fx.p('openunlink.bin'), data);
  const h = await fsp.open(fx.p('openunlink.bin'), 'r+');
  try {
    await fsp.unlink(fx.p('openunlink.bin'));
    assert.ok(!(await fsp.readdir(fx.mnt)).includes('openunlink.bin'));
    const buf = Buffer.alloc(6000);
    const { bytesRead } = await h.read(buf, 0, 6000, 0);
    assert.equal(bytesRead, 6000, 'the open handle still reads');
    assertBytes(buf, data, "content through the handle of an unlinked file");
    await h.write(Buffer.from('still writable'), 0, 14, 100);
    assert.equal((await h.stat()).nlink, 0, 'fstat of an unlinked file: nlink 0');
  } finally {
    await h.close();
  }
  const leftovers = (await fsp.readdir(fx.mnt)).filter((n) => n.startsWith('.fuse_hidden'));
  assert.deepEqual(leftovers, [], 'no .fuse_hidden* files in the mount');
});

test('several handles on one file agree: one file ID, one size, one content', T, async () => {
  // Two handles opened on an empty file before anything was written: both must use the header the first write creates.
  await fsp.writeFile(fx.p('shared.bin'), '');
  const h1 = await fsp.open(fx.p('shared.bin'), 'r+');
  const h2 = await fsp.open(fx.p('shared.bin'), 'r+');
  const h3 = await fsp.open(fx.p('shared.bin'), 'r');
  try {
    await h1.write(Buffer.from('A'.repeat(10)), 0, 10, 0);
    await h2.write(Buffer.from('B'.repeat(10)), 0, 10, 5000);
    for (const h of [h1, h2, h3]) assert.equal((await h.stat()).size, 5010, 'every handle sees size 5010');
    const b = Buffer.alloc(10);
    await h3.read(b, 0, 10, 0);
    assert.equal(b.toString(), 'A'.repeat(10), 'handle 3 reads what handle 1 wrote');
    await h1.read(b, 0, 10, 5000);
    assert.equal(b.toString(), 'B'.repeat(10), 'handle 1 reads what handle 2 wrote');
    await h2.truncate(3);
    assert.equal((await h1.stat()).size, 3);
    await h1.write(Buffer.from('tail'), 0, 4, 3);
    assert.equal((await h3.stat()).size, 7);
  } finally {
    await h1.close();
    await h2.close();
    await h3.close();
  }
  assert.equal(await fsp.readFile(fx.p('shared.bin'), 'utf8'), 'AAAtail');
  assert.equal((await cipherOf('shared.bin')).length, cipherSize(7));
});

test('concurrent non-overlapping writes through two handles into the same blocks lose nothing', T, async () => {
  const size = 3 * 4096 + 100;
  const model = prng('rmw-base', size);
  await fsp.writeFile(fx.p('race.bin'), model);
  const h1 = await fsp.open(fx.p('race.bin'), 'r+');
  const h2 = await fsp.open(fx.p('race.bin'), 'r+');
  try {
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i * 24 + 16 <= size; i++) {
      const d = prng(`piece-${i}`, 16);
      d.copy(model, i * 24);
      writes.push((i % 2 === 0 ? h1 : h2).write(d, 0, 16, i * 24));
    }
    await Promise.all(writes);
  } finally {
    await h1.close();
    await h2.close();
  }
  assertBytes(await fsp.readFile(fx.p('race.bin')), model);
});

test('concurrent writers to different files all land', T, async () => {
  const n = 6;
  const size = (1 << 20) + 4097;
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const data = prng(`conc-${i}`, size);
      const h = await fsp.open(fx.p(`conc_${i}.bin`), 'w');
      try {
        for (let off = 0; off < size; off += 65_536) await h.write(data, off, Math.min(65_536, size - off), off);
      } finally {
        await h.close();
      }
    }),
  );
  for (let i = 0; i < n; i++) {
    assertBytes(await fsp.readFile(fx.p(`conc_${i}.bin`)), prng(`conc-${i}`, size), `conc_${i}.bin`);
  }
});

test('fsync, fdatasync and close put the data into the cipher file; fsync of a directory works', T, async () => {
  const h = await fsp.open(fx.p('sync.bin'), 'w');
  try {
    await h.write(prng('sync', 9000));
    await h.sync();
    assert.equal((await cipherOf('sync.bin')).length, cipherSize(9000), 'after fsync');
    await h.write(prng('sync2', 1000));
    await h.datasync();
    assert.equal((await cipherOf('sync.bin')).length, cipherSize(10_000), 'after fdatasync');
    await h.write(prng('sync3', 5));
  } finally {
    await h.close();
  }
  assert.equal((await cipherOf('sync.bin')).length, cipherSize(10_005), 'after close (flush)');
  const d = await fsp.open(fx.mnt, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
});

test('access: F_OK, R_OK, W_OK on a file and a directory; ENOENT, ENOTDIR', T, async () => {
  await fsp.writeFile(fx.p('acc.txt'), 'x');
  await fsp.access(fx.p('acc.txt'), C.F_OK);
  await fsp.access(fx.p('acc.txt'), C.R_OK | C.W_OK);
  await fsp.mkdir(fx.p('accdir'));
  await fsp.access(fx.p('accdir'), C.R_OK | C.W_OK | C.X_OK);
  await rejectsWith(fsp.access(fx.p('acc-missing'), C.F_OK), 'ENOENT', 'access of a missing file');
  await rejectsWith(fsp.access(fx.p('acc.txt', 'x'), C.F_OK), 'ENOTDIR', 'access below a file');
});

test('teardown: unmounts cleanly, nothing left mounted, gocryptfs -fsck finds no problems', T, async () => {
  await fx.teardown();
  await assertFsckClean(fx.cipherdir);
});
