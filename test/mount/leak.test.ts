/**
 * The daemon's memory under a mixed load: cycles of the random
 * tester beside four processes of scripts/mixed-load.py (opens, sparse
 * writes, failing clone/dedupe ioctls, splice), with everything removed
 * after each cycle. Nothing is left on disk, so nothing may be left in
 * memory either: VmRSS after the last cycles within 10% (at least 4 MB)
 * of its value after cycles 2-4 (cycle 1 warms up caches and the JS
 * heap). Before the fix every libfuse thread that ended left its locals
 * and their uv_async_t behind, a few MB a cycle.
 *
 * Readings are taken once the daemon has given back what a burst left
 * behind (src/cli/idle-memory.ts: a quiet spell after the last request,
 * one second here through TSCRYPTFS_QUIET_MS),
 * so they show what it retains. Before that, where V8's collector happened
 * to be moved a reading by up to 15 MB (heapTotal 48 to 64 MB between
 * cycles, the heap in use after a forced collection flat at 8 MB), and the
 * per-thread malloc arenas of libfuse's short-lived threads fill up over
 * the first cycles and then stay (about 11 -> 20 MB). Each side is still
 * the least of three cycles, cycles 2-4 against the last three: a leak
 * raises every cycle, the least too. The limit is 10 % or 4 MB, whichever
 * is more: given back, the daemon holds 23-28 MB, and its readings scatter
 * by up to 4 MB from cycle to cycle without a trend (15 long cycles: 24.2
 * to 28.3 MB, no rise after the third), where 10 % of the least is 2.3 MB;
 * the leak above added more than that every two cycles.
 * (Measured with process.memoryUsage(), smaps and heap snapshots of the
 * daemon over 6-15 cycles: no object of ours grows.)
 *
 * Short here; `npm run test:long` (TSCRYPTFS_LONG_TESTS=1) runs 15 longer
 * cycles. The fsstress runs behind this test are in
 * Documentation/performance.md, "Memory under a mixed load"; this test
 * does not need fsstress.
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
const CYCLES = LONG ? 15 : 8;
const PROCS = 4;
/** Operations per worker and cycle, and the random tester's per cycle. */
const OPS = LONG ? 2000 : 500;
const FSX_OPS = LONG ? 1000 : 150;
const SEED = 19190;
/** The daemon's quiet spell before it gives memory back (5 s by default); a second here, as the memory it keeps does not depend on it. */
const QUIET_MS = 1000;
/** How far settled readings scatter between cycles without a leak (see above). */
const SCATTER_KB = 4 * 1024;
process.env.TSCRYPTFS_QUIET_MS = String(QUIET_MS);

const fx = useMountFixture('leak');

/** kB as MB with one decimal, for messages. */
const mbOf = (k: number): string => (k / 1024).toFixed(1);

/**
 * VmRSS after a cycle, once the daemon has had its quiet spell to give
 * memory back: the least of three readings, the first a second after the
 * spell, then one spell apart (a late request of the kernel's can start
 * the spell later).
 */
async function settledRssKb(pid: number): Promise<number> {
  const readings: number[] = [];
  for (let i = 0; i < 3; i++) {
    await sleep(i === 0 ? QUIET_MS + 1000 : QUIET_MS);
    readings.push(vmRssKb(pid));
  }
  return Math.min(...readings);
}

test('a daemon gives back the memory a burst of requests made it take once the mount is quiet', { timeout: 300_000, ...needs('mount', 'python3', 'native'), skip: MOUNT_IMPL === 'gocryptfs' && 'tscryptfs behaviour (src/cli/idle-memory.ts)' }, async (t) => {
  const pid = daemonOf(fx.mnt);
  try {
    assertWorkersSane(await runMixedLoad(fx.p('burst'), PROCS, OPS, SEED));
    const busy = vmRssKb(pid);
    // Quiet means no request at all: the kernel's own requests after the load (releases, write-back) come first.
    const t0 = Date.now();
    let quiet = busy;
    while (Date.now() - t0 < 15_000 && quiet >= busy * 0.9) {
      await sleep(500);
      quiet = vmRssKb(pid);
    }
    t.diagnostic(`VmRSS right after the load ${mbOf(busy)} MB, ${((Date.now() - t0) / 1000).toFixed(1)} s later ${mbOf(quiet)} MB`);
    assert.ok(quiet < busy * 0.9, `VmRSS ${busy} kB after the load, still ${quiet} kB 15 s later: less than 10% given back`);
  } finally {
    await fsp.rm(fx.p('burst'), { recursive: true, force: true });
  }
});

test(`VmRSS of the daemon over its last 3 of ${CYCLES} cycles of mixed load (${PROCS} processes, ${OPS} operations each, plus ${FSX_OPS} random-tester steps) is within 10% (at least 4 MB) of cycles 2-4`, { timeout: LONG ? 3_600_000 : 600_000, ...needs('mount', 'python3') }, async (t) => {
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
  const mb = rss.map(mbOf);
  t.diagnostic(`VmRSS after each cycle (MB): ${mb.join(', ')}`);
  const base = Math.min(...rss.slice(1, 4));
  const last = Math.min(...rss.slice(-3));
  t.diagnostic(`least of cycles 2-4: ${mbOf(base)} MB; least of the last three: ${mbOf(last)} MB (${((100 * last) / base).toFixed(1)}%)`);
  const limit = Math.max(base * 1.1, base + SCATTER_KB);
  assert.ok(last <= limit, `VmRSS grew from ${mbOf(base)} MB (least of cycles 2-4) to ${mbOf(last)} MB (least of cycles ${CYCLES - 2}-${CYCLES}; limit ${mbOf(limit)} MB); every cycle: ${mb.join(', ')}`);
  await fx.teardown();
});
