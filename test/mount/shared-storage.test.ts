/**
 * Two writers on -sharedstorage: two mounts of one cipher directory, and
 * workers acting through both in turn (create, write, truncate, rename,
 * link, unlink, read, list; test/helpers/two-writers.ts). Afterwards both
 * mounts show the same tree, every file holds what its last writer wrote,
 * and both fscks (ours and gocryptfs's) are clean. `npm test` runs a short
 * bounded form; `npm run test:long` (TSCRYPTFS_LONG_TESTS=1) five minutes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mountImpl, MOUNT_IMPL, runImpl, unmountAndReap, EXTPASS } from '../helpers/mount.js';
import { assertFsckClean, useCipherdir } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';
import { twoWriters } from '../helpers/two-writers.js';

const LONG = process.env.TSCRYPTFS_LONG_TESTS === '1';
const fx = useCipherdir('shared-storage', MOUNT_IMPL);
const T = { timeout: LONG ? 420_000 : 120_000, ...needs('mount', 'gocryptfs') };

test(`two mounts with -sharedstorage, ${LONG ? '5 minutes' : 'bounded'}: both show the same tree, each file its last writer's bytes, fsck clean`, T, async (t) => {
  const mounts: [string, string] = [join(fx.tmp, 'a'), join(fx.tmp, 'b')];
  for (const m of mounts) await mountImpl(MOUNT_IMPL, fx.cipherdir, m, { flags: ['-sharedstorage'] });
  let res;
  try {
    res = await twoWriters({ mounts, workers: 4, opsPerWorker: LONG ? 1e9 : 800, maxMs: LONG ? 300_000 : 60_000, seed: 39 });
  } finally {
    for (const m of mounts) await unmountAndReap(m);
  }
  t.diagnostic(`two writers: ${res.ops} operations in ${(res.ms / 1000).toFixed(1)} s (${JSON.stringify(res.byKind)}), ${res.files} files checked through both mounts`);
  const fsck = await runImpl(MOUNT_IMPL, ['-fsck', '-q', ...EXTPASS, fx.cipherdir]);
  assert.equal(fsck.code, 0, `${MOUNT_IMPL} -fsck:\n${fsck.stdout}${fsck.stderr}`);
  await assertFsckClean(fx.cipherdir);
});
