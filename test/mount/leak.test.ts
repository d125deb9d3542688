/**
 * The daemon's memory under a mixed load (issue 19): cycles of the random
 * tester beside four processes of scripts/mixed-load.py (opens, sparse
 * writes, failing clone/dedupe ioctls, splice), with everything removed
 * after each cycle. Nothing is left on disk, so nothing may be left in
 * memory either: VmRSS after the last cycle within 10% of cycle 2's (cycle
 * 1 warms up caches and the JS heap). Before the fix every libfuse thread
 * that ended left its locals and their uv_async_t behind, a few MB a cycle.
 *
 * Short here; `npm run test:long` (TSCRYPTFS_LONG_TESTS=1) runs 15 longer
 * cycles. The fsstress runs behind the issue are quoted in
 * Documentation/performance.txt; this test does not need fsstress.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { describeMismatch, runFsx } from '../helpers/fsx/engine.js';
import { assertWorkersSane, daemonOf, runMixedLoad, vmRssKb } from '../helpers/mixed-load.js';
import { sleep } from '../helpers/mount.js';
import { MOUNT_IMPL, useMountFixture } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const LONG = process.env.TSCRYPTFS_LONG_TESTS === '1';
const CYCLES = LONG ? 15 : 6;
const PROCS = 4;
/** Operations per worker and cycle, and the random tester's per cycle. */
const OPS = LONG ? 2000 : 500;
const FSX_OPS = LONG ? 1000 : 150;
const SEED = 19190;

const fx = useMountFixture('leak');

/**
 * VmRSS after a cycle: the least of three readings over a second. Where
 * V8's collector happens to be swings a single reading by 10% or more
 * (fsstress runs: 124, 134, 141, 122 MB on consecutive cycles); a leak
 * raises the least reading too.
 */
async function settledRssKb(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    await sleep(i === 0 ? 250 : 375);
    readings.push(vmRssKb(pid));
  }
  return Math.min(...readings);
}

test(`VmRSS of the daemon after ${CYCLES} cycles of mixed load (${PROCS} processes, ${OPS} operations each, plus ${FSX_OPS} random-tester steps) is within 10% of cycle 2's`, { timeout: LONG ? 3_600_000 : 600_000, ...needs('mount', 'python3') }, async (t) => {
  const pid = daemonOf(fx.mnt);
  const rss: number[] = [];
  for (let c = 1; c <= CYCLES; c++) {
    const work = fx.p('w');
    const reference = join(fx.tmp, 'reference');
    const [reports, fsx] = await Promise.all([
      runMixedLoad(work, PROCS, OPS, SEED + 100 * c),
      runFsx({ testedRoot: fx.p('fsx'), referenceRoot: reference, seed: SEED + c, ops: FSX_OPS, impl: MOUNT_IMPL, maxReplays: 100 }),
    ]);
    assertWorkersSane(reports);
    assert.equal(fsx.mismatch, undefined, describeMismatch(`cycle ${c}`, fsx));
    await fsp.rm(work, { recursive: true });
    await fsp.rm(fx.p('fsx'), { recursive: true });
    await fsp.rm(reference, { recursive: true });
    assert.deepEqual(await fsp.readdir(fx.mnt), [], 'the tree is gone after each cycle');
    rss.push(await settledRssKb(pid));
  }
  const mb = rss.map((k) => (k / 1024).toFixed(1));
  t.diagnostic(`VmRSS after each cycle (MB): ${mb.join(', ')}`);
  const base = rss[1]!;
  const last = rss[rss.length - 1]!;
  assert.ok(last <= base * 1.1, `VmRSS grew from ${mb[1]} MB after cycle 2 to ${mb[mb.length - 1]} MB after cycle ${CYCLES} (limit 110%); every cycle: ${mb.join(', ')}`);
  await fx.teardown();
});
