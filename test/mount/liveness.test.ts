/**
 * The daemon keeps answering under the mixed load from 8 processes (issue
 * 19), and goes quiet once it stops. Before the fix the JS thread ended up
 * walking an ever longer list of async handles on every wake-up: requests
 * waited seconds, then longer, at 100% CPU until the unmount.
 *
 * Each operation of scripts/mixed-load.py is a few system calls, so the
 * slowest one bounds the time any request waited for its answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp, readdirSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { assertWorkersSane, cpuTicks, daemonOf, runMixedLoad } from '../helpers/mixed-load.js';
import { sleep } from '../helpers/mount.js';
import { useMountFixture } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const LONG = process.env.TSCRYPTFS_LONG_TESTS === '1';
const PROCS = 8;
const OPS = LONG ? 3000 : 400;
/** Longest any operation may wait, in seconds. */
const BOUND = 5;
const SEED = 8190;

const fx = useMountFixture('liveness');

test(`under the mixed load from ${PROCS} processes (${OPS} operations each) every operation is answered within ${BOUND} s, and the daemon is idle a second after the load stops`, { timeout: LONG ? 1_800_000 : 300_000, ...needs('mount', 'python3') }, async (t) => {
  const pid = daemonOf(fx.mnt);
  // Left out: files under /proc, read and closed at once (the spin gate's
  // /proc/stat, the give-back's /proc/self/smaps, the first 100 ms after
  // mounting), and directories of the cipher directory, which the fast
  // path keeps open and lets go as directories change. A file the load
  // opened and never closed still counts.
  const cipherdir = realpathSync(fx.cipherdir);
  const descriptors = (): number =>
    readdirSync(`/proc/${pid}/fd`).filter((fd) => {
      const link = `/proc/${pid}/fd/${fd}`;
      try {
        const target = readlinkSync(link);
        if (target.startsWith('/proc/')) return false;
        return !(target === cipherdir || target.startsWith(`${cipherdir}/`)) || !statSync(link).isDirectory();
      } catch {
        return false; // closed meanwhile
      }
    }).length;
  const fdsBefore = descriptors();
  const started = Date.now();
  const reports = await runMixedLoad(fx.p('w'), PROCS, OPS, SEED, LONG ? 1_500_000 : 240_000);
  const seconds = (Date.now() - started) / 1000;
  assertWorkersSane(reports);
  const slowest = reports.reduce((a, b) => (b.slowest > a.slowest ? b : a));
  t.diagnostic(`${PROCS} x ${OPS} operations in ${seconds.toFixed(1)} s; slowest ${slowest.slowestKind}: ${slowest.slowest.toFixed(3)} s`);
  assert.ok(slowest.slowest < BOUND, `a ${slowest.slowestKind} took ${slowest.slowest.toFixed(1)} s (bound ${BOUND} s)`);

  await sleep(1000);
  const before = cpuTicks(pid);
  await sleep(1000);
  const used = cpuTicks(pid) - before;
  t.diagnostic(`daemon CPU in the second after that: ${used * 10} ms`);
  assert.ok(used <= 5, `the daemon used ${used * 10} ms of CPU in the second second after the load stopped (limit 50 ms)`);

  const t0 = Date.now();
  await fsp.rm(fx.p('w'), { recursive: true });
  assert.deepEqual(await fsp.readdir(fx.mnt), []);
  t.diagnostic(`rm -r of the load's files: ${Date.now() - t0} ms`);
  // RELEASE is answered before JS closes the handle: each must still come through.
  await sleep(200);
  assert.equal(descriptors(), fdsBefore, 'the daemon holds as many descriptors as before the load: every file opened was released and closed');
  await fx.teardown();
});
