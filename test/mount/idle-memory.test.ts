/**
 * A mount that goes quiet gives memory back (src/cli/idle-memory.ts): once
 * right after it is ready, then after each quiet spell (300 ms here through
 * TSCRYPTFS_QUIET_MS), when it also empties the binding's attribute cache
 * and kept listings (fuse-native.c dropCaches) and unmaps the node
 * executable's clean pages (native/sys/memory.cc). What a user sees must
 * not change: listings, sizes and contents read after a give-back are
 * those read before it, and a change made after it shows at once.
 * TSCRYPTFS_OPSTATS says what was given back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, sleep } from '../helpers/mount.js';
import { MOUNT_IMPL, useMountTmp, withCallCounts } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('idle-memory');
const T = { timeout: 120_000, ...needs('mount', 'native'), skip: MOUNT_IMPL !== 'tscryptfs' ? 'TSCRYPTFS_OPSTATS exists only for tscryptfs' : undefined };

/** Every name of `d` with its size and contents, sorted by name. */
async function snapshot(d: string): Promise<[string, number, string][]> {
  const names = (await fsp.readdir(d)).sort();
  return Promise.all(names.map(async (n): Promise<[string, number, string]> => [n, (await fsp.stat(join(d, n))).size, await fsp.readFile(join(d, n), 'utf8')]));
}

test('a quiet mount gives back memory, and listings, sizes and contents stay what they were', T, async () => {
  const cipherdir = join(dir.tmp, 'cipher');
  await initCipherdir(MOUNT_IMPL, cipherdir, []);
  const [, given] = await withCallCounts(dir.tmp, 'quiet', cipherdir, { env: { TSCRYPTFS_QUIET_MS: '300' } }, async (m) => {
    const d = join(m, 'd');
    await fsp.mkdir(d);
    for (let i = 0; i < 300; i++) await fsp.writeFile(join(d, `f${i}`), 'x'.repeat(i * 7));
    await fsp.writeFile(join(d, 'n'.repeat(200)), 'long name');
    const before = await snapshot(d);
    await sleep(1500); // a quiet spell and more
    assert.deepEqual(await snapshot(d), before, 'after the give-back');
    await fsp.appendFile(join(d, 'f5'), 'more');
    await fsp.rm(join(d, 'f6'));
    assert.equal((await fsp.stat(join(d, 'f5'))).size, 35 + 4);
    assert.equal((await fsp.readdir(d)).length, 300);
    await sleep(1500);
    const after = await snapshot(d);
    assert.equal(after.find((e) => e[0] === 'f5')![2], 'x'.repeat(35) + 'more');
    assert.equal(after.length, 300);
  });
  assert.ok(given['memoryGivenBack']! >= 3, `start-up's and two quiet spells': ${JSON.stringify(given)}`);
  assert.ok(given['cacheBytesDropped']! > 0, `the binding's caches: ${JSON.stringify(given)}`);
  assert.ok(given['filePagesKbUnmapped']! > 1000, `the executable's pages: ${JSON.stringify(given)}`);
});
