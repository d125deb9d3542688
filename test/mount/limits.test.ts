/**
 * Limits, through a real mount of MOUNT_IMPL: a full backing disk (a 2 MiB
 * tmpfs) gives ENOSPC and loses nothing written before, and -fsck is
 * clean afterwards (no half-written block); names of exactly 255 bytes work
 * and 256 bytes are ENAMETOOLONG for every call that makes a name; a sparse
 * file with data past 4 GiB reads back with the right size and stays sparse
 * on disk; 10,000 entries in one directory all list and open.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, constants as C, openSync, promises as fsp, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { initCipherdir, isMounted, MOUNT_IMPL, PASSWORD, run, unmountAndReap, withMount } from '../helpers/mount.js';
import { rejectsWith, useCipherdir } from '../helpers/mount-suite.js';
import { gocryptfsFsck } from '../helpers/gocryptfs.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 120_000, ...needs('mount', 'gocryptfs') };
const impl = MOUNT_IMPL;
const fx = useCipherdir('limits', impl);

test('a full backing disk: ENOSPC, earlier files and the earlier part of the file intact, -fsck clean, space usable again', T, async () => {
  const disk = join(fx.tmp, 'tmpfs');
  await fsp.mkdir(disk);
  const r = await run('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', disk]);
  assert.equal(r.code, 0, r.stderr);
  const mnt = join(fx.tmp, 'mnt-full');
  try {
    const cipherdir = join(disk, 'cipher');
    await initCipherdir(impl, cipherdir);
    const first = Buffer.alloc(300_000);
    for (let i = 0; i < first.length; i++) first[i] = (i * 31) & 0xff;
    const chunk = Buffer.alloc(65_536 + 1000, 0x77); // not block-aligned: every write rewrites a partial block
    let written = 0;
    await withMount(impl, cipherdir, mnt, {}, async (m) => {
      await fsp.writeFile(join(m, 'first'), first);
      const fd = openSync(join(m, 'big'), 'w');
      let error: NodeJS.ErrnoException | undefined;
      try {
        // FUSE splits a write into requests; when one fails the write is short (as on any
        // Linux filesystem), and the next write gets the ENOSPC.
        for (let i = 0; i < 200; i++) written += writeSync(fd, chunk, 0, chunk.length, written);
      } catch (e) {
        error = e as NodeJS.ErrnoException;
      } finally {
        closeSync(fd);
      }
      assert.equal(error?.code, 'ENOSPC', `expected ENOSPC after ${written} bytes, got ${error?.code ?? 'no error'}`);
      assert.ok(written > 1_000_000, `only ${written} bytes before ENOSPC`);
      assert.deepEqual(await fsp.readFile(join(m, 'first')), first);
      const big = await fsp.readFile(join(m, 'big'));
      assert.equal(big.length, written, 'the failed write left the size as it was');
      assert.ok(big.equals(Buffer.alloc(written, 0x77)), 'every byte written before ENOSPC reads back');
      // Free the space: writing works again.
      await fsp.unlink(join(m, 'big'));
      await fsp.writeFile(join(m, 'after'), chunk);
      assert.deepEqual(await fsp.readFile(join(m, 'after')), chunk);
    });
    const fsck = await gocryptfsFsck(cipherdir);
    assert.equal(fsck.code, 0, fsck.stdout + fsck.stderr);
  } finally {
    if (isMounted(mnt)) await unmountAndReap(mnt).catch(() => undefined);
    await run('umount', [disk]);
    if (isMounted(disk)) await run('umount', ['-l', disk]);
  }
  assert.equal(isMounted(disk), false);
});

test('names: 255 bytes (ASCII and UTF-8) work, 256 bytes are ENAMETOOLONG for create, mkdir, symlink, link, rename', T, async () => {
  const mnt = join(fx.tmp, 'mnt-names');
  await withMount(impl, fx.cipherdir, mnt, {}, async (m) => {
    const ascii = 'n'.repeat(255);
    const utf8 = 'é'.repeat(127) + 'x'; // 255 bytes
    assert.equal(Buffer.byteLength(utf8), 255);
    await fsp.writeFile(join(m, ascii), 'ascii');
    await fsp.mkdir(join(m, utf8));
    await fsp.writeFile(join(m, utf8, ascii), 'nested');
    assert.deepEqual((await fsp.readdir(m)).sort(), [ascii, utf8].sort());
    assert.equal(await fsp.readFile(join(m, utf8, ascii), 'utf8'), 'nested');
    const long = 'n'.repeat(256);
    await rejectsWith(fsp.writeFile(join(m, long), 'x'), 'ENAMETOOLONG', 'create');
    await rejectsWith(fsp.mkdir(join(m, long)), 'ENAMETOOLONG', 'mkdir');
    await rejectsWith(fsp.symlink('t', join(m, long)), 'ENAMETOOLONG', 'symlink');
    await rejectsWith(fsp.link(join(m, ascii), join(m, long)), 'ENAMETOOLONG', 'link');
    await rejectsWith(fsp.rename(join(m, ascii), join(m, long)), 'ENAMETOOLONG', 'rename');
    await rejectsWith(fsp.stat(join(m, long)), 'ENAMETOOLONG', 'stat');
    await fsp.rename(join(m, ascii), join(m, utf8, 'moved'));
    await fsp.rm(join(m, utf8), { recursive: true });
    assert.deepEqual(await fsp.readdir(m), []);
  });
});

test('a sparse file with data past 4 GiB: size, contents and holes read back; the cipher file stays sparse', T, async () => {
  const mnt = join(fx.tmp, 'mnt-sparse');
  const off = 4 * 2 ** 30 + 12_345; // past 4 GiB, not block-aligned
  const tail = Buffer.from('data beyond four gibibytes');
  await withMount(impl, fx.cipherdir, mnt, {}, async (m) => {
    const p = join(m, 'sparse');
    const fd = openSync(p, 'w');
    writeSync(fd, Buffer.from('head'), 0, 4, 0);
    writeSync(fd, tail, 0, tail.length, off);
    closeSync(fd);
    const st = await fsp.stat(p);
    assert.equal(st.size, off + tail.length);
    const rfd = openSync(p, C.O_RDONLY);
    try {
      const buf = Buffer.alloc(tail.length + 100);
      assert.equal(readSync(rfd, buf, 0, buf.length, off - 100), tail.length + 100);
      assert.ok(buf.subarray(0, 100).equals(Buffer.alloc(100)), 'the hole before reads as zeros');
      assert.deepEqual(buf.subarray(100), tail);
      const head = Buffer.alloc(8);
      assert.equal(readSync(rfd, head, 0, 8, 0), 8);
      assert.deepEqual(head, Buffer.from('head\0\0\0\0'));
      const mid = Buffer.alloc(4096);
      assert.equal(readSync(rfd, mid, 0, 4096, 2 ** 31), 4096);
      assert.ok(mid.equals(Buffer.alloc(4096)));
    } finally {
      closeSync(rfd);
    }
  });
  // On the cipher side: the right size, and almost no blocks allocated.
  const v = await Vault.open(fx.cipherdir, { password: PASSWORD });
  try {
    const cp = await v.cipherPath('/sparse');
    const cst = await fsp.stat(cp);
    assert.equal((await v.stat('/sparse')).size, off + tail.length);
    assert.ok(cst.size > off, `cipher size ${cst.size}`);
    assert.ok(cst.blocks * 512 < 1 << 20, `cipher file uses ${cst.blocks * 512} bytes on disk`);
    await v.unlink('/sparse');
  } finally {
    await v.close();
  }
});

test('10,000 entries in one directory: all listed with the right names, any of them opens', T, async () => {
  const N = 10_000;
  const name = (i: number): string => `entry-${String(i).padStart(5, '0')}`;
  // Made through the library as hard links of one file (one link(2) each, no FUSE round
  // trips), in a cipher directory of its own; read through the mount.
  const cipherdir = join(fx.tmp, 'cipher-many');
  await initCipherdir(impl, cipherdir);
  const v = await Vault.open(cipherdir, { password: PASSWORD });
  try {
    await v.mkdir('/many');
    await v.writeFile(`/many/${name(0)}`, 'shared');
    for (let i = 1; i < N; i++) await v.link(`/many/${name(0)}`, `/many/${name(i)}`);
  } finally {
    await v.close();
  }
  const mnt = join(fx.tmp, 'mnt-many');
  await withMount(impl, cipherdir, mnt, {}, async (m) => {
    const names = await fsp.readdir(join(m, 'many'));
    assert.equal(names.length, N);
    const sorted = [...names].sort();
    for (let i = 0; i < N; i++) assert.equal(sorted[i], name(i));
    for (const i of [0, 1, 4321, N - 1]) assert.equal(await fsp.readFile(join(m, 'many', name(i)), 'utf8'), 'shared');
    assert.equal((await fsp.stat(join(m, 'many', name(N - 1)))).nlink, N);
    await rejectsWith(fsp.stat(join(m, 'many', name(N))), 'ENOENT', 'one past the last');
  });
});
