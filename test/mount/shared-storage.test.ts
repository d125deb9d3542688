/**
 * Two writers on -sharedstorage: two mounts of one cipher directory, and
 * workers acting through both in turn (create, write, truncate, rename,
 * link, unlink, read, list, a directory made again through the other mount;
 * test/helpers/two-writers.ts). Afterwards both mounts show the same tree,
 * every file holds what its last writer wrote, and both fscks (ours and
 * gocryptfs's) are clean. Once with the cipher directory on local disk and
 * once on sshfs (this machine's OpenSSH server, test/helpers/backing-stores.ts).
 * `npm test` runs a short bounded form; `npm run test:long`
 * (TSCRYPTFS_LONG_TESTS=1) five minutes on local disk.
 */
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setUpStore, storeUnmet, tearDownLiveStores } from '../helpers/backing-stores.js';
import { EXTPASS, initCipherdir, mountImpl, MOUNT_IMPL, runImpl, unmountAndReap } from '../helpers/mount.js';
import { assertFsckClean, useMountTmp } from '../helpers/mount-suite.js';
import { gocryptfsFsck } from '../helpers/gocryptfs.js';
import { needs } from '../helpers/requirements.js';
import { twoWriters } from '../helpers/two-writers.js';

const LONG = process.env.TSCRYPTFS_LONG_TESTS === '1';
const dir = useMountTmp('shared-storage');
after(async () => {
  await tearDownLiveStores();
});

/**
 * gocryptfs -fsck clean, or (`noXattrs`: a store without extended
 * attributes) finding nothing but that it cannot list them.
 */
async function assertGocryptfsFsck(cipherdir: string, noXattrs: boolean): Promise<void> {
  if (!noXattrs) return assertFsckClean(cipherdir);
  const r = await gocryptfsFsck(cipherdir);
  const findings = (r.stdout + r.stderr).split('\n').filter((l) => l.startsWith('fsck: '));
  const other = findings.filter((l) => !/^fsck: error listing xattrs on ".*": operation not supported$/.test(l));
  assert.deepEqual(other, [], `gocryptfs -fsck (exit ${r.code}) found more than the missing xattrs`);
}

async function twoMounts(t: TestContext, cipherdir: string, label: string, o: { opsPerWorker: number; maxMs: number; links?: boolean; noXattrs?: boolean }): Promise<void> {
  await initCipherdir(MOUNT_IMPL, cipherdir);
  const mounts: [string, string] = [join(dir.tmp, `${label}-a`), join(dir.tmp, `${label}-b`)];
  let res;
  try {
    for (const m of mounts) await mountImpl(MOUNT_IMPL, cipherdir, m, { flags: ['-sharedstorage'] });
    res = await twoWriters({ mounts, workers: 4, seed: 39, ...o });
  } finally {
    for (const m of mounts) await unmountAndReap(m);
  }
  t.diagnostic(`two writers on ${label}: ${res.ops} operations in ${(res.ms / 1000).toFixed(1)} s (${JSON.stringify(res.byKind)}), ${res.files} files checked through both mounts`);
  const fsck = await runImpl(MOUNT_IMPL, ['-fsck', '-q', ...EXTPASS, cipherdir]);
  assert.equal(fsck.code, 0, `${MOUNT_IMPL} -fsck:\n${fsck.stdout}${fsck.stderr}`);
  await assertGocryptfsFsck(cipherdir, o.noXattrs ?? false);
}

test(
  `two mounts with -sharedstorage on local disk, ${LONG ? '5 minutes' : 'bounded'}: the same tree through both, each file its last writer's bytes, fsck clean`,
  { timeout: LONG ? 420_000 : 120_000, ...needs('mount', 'gocryptfs') },
  async (t) => {
    await twoMounts(t, join(dir.tmp, 'cipher'), 'local', { opsPerWorker: LONG ? 1e9 : 800, maxMs: LONG ? 300_000 : 60_000 });
  },
);

const SSHFS = storeUnmet('sshfs');
test(
  'two mounts with -sharedstorage of a cipher directory on sshfs: the same checks',
  { timeout: 180_000, ...needs('mount', 'gocryptfs'), ...(SSHFS ? { skip: SSHFS } : {}) },
  async (t) => {
    const store = await setUpStore('sshfs', join(dir.tmp, 'sshfs'));
    try {
      await twoMounts(t, join(store.mountpoint, 'cipher'), 'sshfs', {
        opsPerWorker: 200,
        maxMs: 60_000,
        // sshfs shows each name of a file as a file of its own (nlink 1, attributes cached by name), and has no xattrs.
        links: false,
        noXattrs: true,
      });
    } finally {
      const problems = await store.teardown();
      assert.deepEqual(problems, [], 'the sshfs store comes down cleanly');
    }
  },
);
