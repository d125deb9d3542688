/**
 * statfs(2) of a mount whose cipher directory lies on a file system with
 * more than 2^32 blocks and inodes (a tmpfs of 20 TiB with 6e9 inodes;
 * tmpfs takes sizes beyond memory, it only limits them): df and df -i
 * must show what the file system below says, as gocryptfs shows it. The
 * fuse-native binding once carried these counts as 32-bit words, so a
 * 16 TiB NAS or an XFS volume's free inodes came out wrapped.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, run, withMount, type MountImpl } from '../helpers/mount.js';
import { py, useMountTmp } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 120_000, ...needs('mount', 'gocryptfs', 'python3') };
const dir = useMountTmp('statfs-large');
let tmp = '';
before(() => {
  tmp = dir.tmp;
});

const BLOCKS = 5 * 2 ** 30; // 20 TiB of 4 KiB blocks
const INODES = 6_000_000_000;

type Counts = [number, number, number, number, number, number];
const STATVFS = 'out([[s.f_bsize, s.f_blocks, s.f_bfree, s.f_bavail, s.f_files, s.f_ffree] for s in [os.statvfs(a) for a in A]])';

test('statfs: block and inode counts above 2^32 come through whole, as with gocryptfs', T, async () => {
  const big = join(tmp, 'big');
  mkdirSync(big);
  const m = await run('mount', ['-t', 'tmpfs', '-o', `size=${BLOCKS * 4096},nr_inodes=${INODES}`, 'tmpfs', big]);
  assert.equal(m.code, 0, m.stderr);
  try {
    const cdir = join(big, 'cipher');
    await initCipherdir('gocryptfs', cdir);
    const seen = async (impl: MountImpl): Promise<Counts[]> =>
      withMount(impl, cdir, join(tmp, `mnt-${impl}`), {}, async (mnt) => (await py<Counts[]>(STATVFS, [mnt, big]))!);
    for (const impl of ['gocryptfs', 'tscryptfs'] as const) {
      const [mine, under] = await seen(impl);
      assert.equal(under![1], BLOCKS, 'the tmpfs has the blocks asked for');
      assert.equal(under![4], INODES, 'and the inodes');
      // Nothing else writes there: every count is exact.
      assert.deepEqual(mine, under, `${impl}: [bsize, blocks, bfree, bavail, files, ffree]`);
    }
  } finally {
    const u = await run('umount', [big]);
    if (u.code !== 0) await run('umount', ['-l', big]);
  }
});
