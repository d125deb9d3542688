/**
 * The mixed load of scripts/mixed-load.py (opens, sparse writes, failing
 * clone/dedupe ioctls, splice, truncates, unlinks) from several processes
 * at once, and what /proc says about the daemon serving a mount: the load
 * that makes libfuse2 start and end worker threads all the time.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PYTHON } from './mount-suite.js';
import { daemonPids, describeRun, run } from './mount.js';
import { REPO_ROOT } from './paths.js';

export const MIXED_LOAD = join(REPO_ROOT, 'scripts', 'mixed-load.py');

/** What one worker reports (see scripts/mixed-load.py). */
export interface WorkerReport {
  ops: number;
  counts: Record<string, number>;
  /** errno names the ioctls failed with ('succeeded' if one did). */
  ioctlErrors: Record<string, number>;
  /** Spliced ranges read back and compared. */
  spliced: number;
  /** Seconds the slowest operation took, and its kind. */
  slowest: number;
  slowestKind: string;
}

/**
 * Runs `procs` workers of `ops` operations each, worker i in `root/p<i>`
 * with seed `seed + i`; each must finish within `timeoutMs`. Throws with the
 * worker's output when one fails.
 */
export async function runMixedLoad(root: string, procs: number, ops: number, seed: number, timeoutMs = 300_000): Promise<WorkerReport[]> {
  const runs = await Promise.all(Array.from({ length: procs }, (_, i) => run(PYTHON, [MIXED_LOAD, join(root, `p${i}`), String(seed + i), String(ops)], { timeoutMs })));
  return runs.map((r, i) => {
    if (r.code !== 0) throw new Error(describeRun(`mixed-load worker ${i}`, r));
    return JSON.parse(r.stdout) as WorkerReport;
  });
}

/** Asserts what every worker must see: the ioctls fail with EOPNOTSUPP, as on gocryptfs, and splices happened. */
export function assertWorkersSane(reports: WorkerReport[]): void {
  for (const r of reports) {
    assert.deepEqual(Object.keys(r.ioctlErrors).filter((e) => e !== 'EOPNOTSUPP'), [], `ioctls must fail with EOPNOTSUPP: ${JSON.stringify(r.ioctlErrors)}`);
  }
  assert.ok(reports.some((r) => r.spliced > 0), 'some spliced ranges were checked');
}

/** The one daemon serving `mnt`. */
export function daemonOf(mnt: string): number {
  const pids = daemonPids(mnt);
  assert.equal(pids.length, 1, `one daemon serves ${mnt}: ${pids.join(', ')}`);
  return pids[0]!;
}

/** VmRSS of `pid`, in kB. */
export function vmRssKb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]);
}

/** CPU time `pid` has used so far (all its threads, user + system), in clock ticks (1/100 s on Linux). */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of proc(5))
}
