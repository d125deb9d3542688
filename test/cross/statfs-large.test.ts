/**
 * statfs(2) of a mount whose cipher directory lies on a file system with
 * more than 2^32 blocks and inodes (a tmpfs of 20 TiB with 6e9 inodes;
 * tmpfs takes sizes beyond memory, it only limits them): df and df -i
 * must show what the file system below says, as gocryptfs shows it. The
 * fuse-native binding once carried these counts as 32-bit words, so a
 * 16 TiB NAS or an XFS volume's free inodes came out wrapped. The answer
 * tscryptfs gives on the libfuse thread must be its JavaScript answer.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, promises as fsp } from 'node:fs';
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
    // tscryptfs answers statfs on the libfuse thread (the read hook's statfs)
    // with what its JavaScript answer would be: every field of statvfs.
    const full = 'out([list(os.statvfs(A[0]))])';
    const stats = join(tmp, 'statfs-ops.json');
    const answers: number[][] = [];
    for (const env of [{ TSCRYPTFS_OPSTATS: stats }, { TSCRYPTFS_NATIVE_READ: '0' }]) {
      Object.assign(process.env, env);
      try {
        answers.push(await withMount('tscryptfs', cdir, join(tmp, 'mnt-full'), {}, async (mnt) => (await py<number[][]>(full, [mnt]))![0]!));
      } finally {
        for (const k of Object.keys(env)) delete process.env[k];
      }
    }
    assert.deepEqual(answers[0], answers[1], 'the same statvfs, answered natively and by JavaScript');
    const calls = JSON.parse(await fsp.readFile(stats, 'utf8')) as Record<string, number>;
    assert.equal(calls.statfs, undefined, `no statfs reached JavaScript: ${JSON.stringify(calls)}`);
  } finally {
    const u = await run('umount', [big]);
    if (u.code !== 0) await run('umount', ['-l', big]);
  }
});
