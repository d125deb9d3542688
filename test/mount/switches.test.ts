/**
 * Every switch that turns one mechanism of the mount off or changes how it
 * reaches the cipher directory (src/util/switches.ts) gives a mount that
 * works as with the defaults: a small tree written, read back, changed,
 * listed and removed, and gocryptfs -fsck clean afterwards. The switch
 * exists to rule that mechanism out when a bug is suspected in it, so the
 * mount without it must be right. The TSCRYPTFS_NATIVE_* switches meet the
 * whole mount suite instead (scripts/run-tests.mjs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { SWITCHES, type SwitchName } from '../../src/util/switches.js';
import { initCipherdir } from '../helpers/mount.js';
import { assertFsckClean, MOUNT_IMPL, useMountTmp, withCallCounts } from '../helpers/mount-suite.js';
import { prng } from '../helpers/tree.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('switches');
const T = { timeout: 60_000, ...needs('mount', 'gocryptfs'), skip: MOUNT_IMPL !== 'tscryptfs' ? 'the switches are tscryptfs\'s' : undefined };

/** Each switch and the value that turns its mechanism off (or picks the other way). */
const OFF: Partial<Record<SwitchName, string>> = {
  TSCRYPTFS_ASSIST: '0',
  TSCRYPTFS_CARRIED_ATTRS: '0',
  TSCRYPTFS_READDIRPLUS: '0',
  TSCRYPTFS_KEPT_LISTINGS: '0',
  TSCRYPTFS_KEPT_COPIES: '0',
  TSCRYPTFS_KILLPRIV: '0',
  TSCRYPTFS_RELEASE_LATER: '0',
  TSCRYPTFS_RETURN_MEMORY: '0',
  TSCRYPTFS_HEAP_GROWTH: '0',
  TSCRYPTFS_BASELINE_JS: '0',
  TSCRYPTFS_SPIN: '0,0',
  TSCRYPTFS_SPIN_GATE: '0',
  TSCRYPTFS_SPIN_NATIVE: '0',
  TSCRYPTFS_FS_IO: 'async',
  TSCRYPTFS_AT_CALLS: 'proc',
};

test('the table holds every switch of the mount but the native ones, which the second run of the suite covers', () => {
  const elsewhere = (n: string): boolean => n.startsWith('TSCRYPTFS_NATIVE_') || ['TSCRYPTFS_AEGIS', 'TSCRYPTFS_OPSTATS'].includes(n);
  const mountSwitches = (Object.keys(SWITCHES) as SwitchName[]).filter((n) => ['user', 'measurement'].includes(SWITCHES[n].kind) && !elsewhere(n));
  assert.deepEqual(Object.keys(OFF).sort(), mountSwitches.sort());
});

/** Writes, reads, changes, lists and removes a small tree under `m`. */
async function workload(m: string): Promise<void> {
  const d = join(m, 'd');
  await fsp.mkdir(join(d, 'sub'), { recursive: true });
  const small = prng('switches-small', 5000);
  const big = prng('switches-big', 300_000);
  await fsp.writeFile(join(d, 'a'), small);
  const h = await fsp.open(join(d, 'sub', 'big'), 'w+');
  for (let off = 0; off < big.length; off += 100_000) await h.write(big, off, Math.min(100_000, big.length - off), off);
  assert.equal((await h.stat()).size, big.length, 'fstat after the writes');
  await h.close();
  assert.ok((await fsp.readFile(join(d, 'a'))).equals(small), 'small file');
  assert.ok((await fsp.readFile(join(d, 'sub', 'big'))).equals(big), 'large file');
  await fsp.chmod(join(d, 'a'), 0o640);
  await fsp.utimes(join(d, 'a'), 1_500_000_000, 1_600_000_000);
  const st = await fsp.stat(join(d, 'a'));
  assert.deepEqual([st.mode & 0o7777, st.mtimeMs, st.size], [0o640, 1_600_000_000_000, small.length]);
  await fsp.rename(join(d, 'a'), join(d, 'b'));
  await fsp.link(join(d, 'b'), join(d, 'c'));
  assert.equal((await fsp.stat(join(d, 'b'))).nlink, 2);
  for (let i = 0; i < 3; i++) assert.deepEqual((await fsp.readdir(d)).sort(), ['b', 'c', 'sub'], `listing ${i}`);
  await fsp.truncate(join(d, 'sub', 'big'), 1000);
  assert.ok((await fsp.readFile(join(d, 'sub', 'big'))).equals(big.subarray(0, 1000)), 'after the truncate');
  await fsp.symlink('b', join(d, 'l'));
  assert.equal(await fsp.readlink(join(d, 'l')), 'b');
  await fsp.rm(d, { recursive: true });
  assert.deepEqual(await fsp.readdir(m), []);
}

for (const [name, value] of Object.entries(OFF)) {
  test(`${name}=${value}: a tree is written, read back, changed, listed and removed as with the defaults`, T, async () => {
    const cipherdir = join(dir.tmp, `${name}-cipher`);
    await initCipherdir(MOUNT_IMPL, cipherdir);
    await withCallCounts(dir.tmp, name, cipherdir, { env: { [name]: value } }, workload);
    await assertFsckClean(cipherdir);
  });
}
