/**
 * The differential random-operation tester (in the spirit of fsx): applies
 * a seeded stream of operations to a directory in the mount under test and
 * to a plain directory side by side, compares every outcome and the whole
 * tree after every step, and on a mismatch shrinks the sequence (delta
 * debugging, replayed on fresh directories) to a shortest failing one.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { Rng } from './rng.js';
import { describeOp, nextOp, type Op, type OpKind } from './ops.js';
import { FsxSide, type Outcome } from './side.js';
import { diffSnapshots, firstDifference, snapshot, treeView, type ContentCache } from './snapshot.js';
import { shrink } from './shrink.js';
import { knownIssue, type KnownIssue } from './known.js';
import type { MountImpl } from '../mount.js';

export interface Mismatch {
  /** Index of the operation after which the sides differed. */
  step: number;
  message: string;
}

export interface FsxOptions {
  /** A directory inside the mount under test. */
  testedRoot: string;
  /** A plain directory (the reference). */
  referenceRoot: string;
  seed: number;
  ops: number;
  /** The implementation mounted (some known divergences are gocryptfs's). */
  impl: MountImpl;
  /** Step around the divergences listed in known.ts (default true). */
  skipKnown?: boolean;
  /** Replays allowed while shrinking (default 400). */
  maxReplays?: number;
  /** Called every `progressEvery` operations. */
  onProgress?: (done: number) => void;
  progressEvery?: number;
  /** Asked between operations: true ends the run early (after Ctrl-C). */
  stop?: () => boolean;
}

export interface FsxResult {
  seed: number;
  /** Operations applied (to each side) before stopping. */
  opsRun: number;
  /** Operations per kind, and how many of them failed with an errno (on both sides alike). */
  counts: Partial<Record<OpKind, { run: number; errors: number }>>;
  /** Operations skipped because of a known divergence (known.ts). */
  skipped: Partial<Record<KnownIssue, number>>;
  /** The mismatch; `reproduced` false when the replay on fresh directories passed (timing-dependent). */
  mismatch?: Mismatch & { ops: Op[]; shrunk: Op[]; shrunkMessage: string; replays: number; reproduced: boolean };
}

function compareOutcomes(a: Outcome, b: Outcome): string | null {
  if (a.code !== b.code) return `outcome ${a.code} (tested) vs ${b.code} (reference)`;
  if (a.value !== b.value) return `result ${a.value} (tested) vs ${b.value} (reference)`;
  if (a.data && b.data && !a.data.equals(b.data)) return `read returned different bytes: ${firstDifference(a.data, b.data)}`;
  return null;
}

/** Every this many steps the tested side's files are all read again (between, only what may have changed). */
const FULL_READ_EVERY = 16;

/** The paths an operation names. */
function opPaths(op: Op): string[] {
  if ('path' in op) return [op.path];
  if ('from' in op) return [op.from, op.to];
  return [];
}

/** Both sides of one run, in fresh subdirectories named `name`. */
class Pair {
  readonly tested: FsxSide;
  readonly reference: FsxSide;
  private readonly cache: ContentCache = new Map();
  private steps = 0;

  constructor(testedRoot: string, referenceRoot: string, name: string, readonly skipKnown: boolean, readonly impl: MountImpl) {
    for (const r of [testedRoot, referenceRoot]) fs.mkdirSync(join(r, name), { recursive: true });
    this.tested = new FsxSide(join(testedRoot, name));
    this.reference = new FsxSide(join(referenceRoot, name));
  }

  /** The known divergence `op` would run into (then it is not applied), or null. */
  skips(op: Op): KnownIssue | null {
    return this.skipKnown ? knownIssue(op, this.reference, this.impl) : null;
  }

  /** Applies `op` to both; the mismatch message, or null. Returns the reference snapshot too. */
  step(op: Op): { mismatch: string | null; outcome: Outcome; ref: ReturnType<typeof snapshot> } {
    const ot = this.tested.apply(op);
    const or = this.reference.apply(op);
    const ref = snapshot(this.reference.root);
    const byOutcome = compareOutcomes(ot, or);
    if (byOutcome) return { mismatch: `${describeOp(op)}: ${byOutcome}`, outcome: or, ref };
    const byTree = diffSnapshots(this.testedSnapshot(op), ref);
    if (byTree) return { mismatch: `after ${describeOp(op)}: ${byTree}`, outcome: or, ref };
    const st = this.tested.slotStates().join(', ');
    const sr = this.reference.slotStates().join(', ');
    if (st !== sr) return { mismatch: `after ${describeOp(op)}: open handles: ${st} (tested) vs ${sr} (reference)`, outcome: or, ref };
    return { mismatch: null, outcome: or, ref };
  }

  /**
   * The tested side's tree. File contents are read again for the files the
   * operation names or holds open, for any whose stat changed, and for all
   * of them every FULL_READ_EVERY steps.
   */
  private testedSnapshot(op: Op): ReturnType<typeof snapshot> {
    if (++this.steps % FULL_READ_EVERY === 0) this.cache.clear();
    const named = new Set(opPaths(op));
    const open = new Set<number>();
    for (const fd of this.tested.slots) {
      if (fd === null) continue;
      try {
        open.add(fs.fstatSync(fd).ino);
      } catch {
        // compared elsewhere (slotStates)
      }
    }
    return snapshot(this.tested.root, { cache: this.cache, mustRead: (path, st) => named.has(path) || open.has(st.ino) });
  }

  /** Closes the handles and removes both directories. */
  dispose(): void {
    this.tested.closeAll();
    this.reference.closeAll();
    for (const s of [this.tested, this.reference]) fs.rmSync(s.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** Replays `ops` on fresh directories; the first mismatch, or null. */
export function replay(testedRoot: string, referenceRoot: string, ops: Op[], name: string, impl: MountImpl, skipKnown = true): Mismatch | null {
  const pair = new Pair(testedRoot, referenceRoot, name, skipKnown, impl);
  try {
    for (let i = 0; i < ops.length; i++) {
      if (pair.skips(ops[i]!)) continue;
      const { mismatch } = pair.step(ops[i]!);
      if (mismatch) return { step: i, message: mismatch };
    }
    return null;
  } finally {
    pair.dispose();
  }
}

/** Runs `opts.ops` random operations from `opts.seed`; shrinks the first mismatch. Yields to the event loop now and then (signals). */
export async function runFsx(opts: FsxOptions): Promise<FsxResult> {
  const r = new Rng(opts.seed);
  const skipKnown = opts.skipKnown ?? true;
  const pair = new Pair(opts.testedRoot, opts.referenceRoot, `seed-${opts.seed}`, skipKnown, opts.impl);
  const ops: Op[] = [];
  const counts: FsxResult['counts'] = {};
  const skipped: FsxResult['skipped'] = {};
  let mismatch: Mismatch | null = null;
  try {
    let view = treeView(snapshot(pair.reference.root), pair.reference.slots.map((s) => s !== null));
    while (ops.length < opts.ops && !opts.stop?.()) {
      if (ops.length % 64 === 0) await new Promise((r) => setImmediate(r));
      const op = nextOp(r, view);
      const known = pair.skips(op);
      if (known) {
        skipped[known] = (skipped[known] ?? 0) + 1;
        continue;
      }
      ops.push(op);
      const res = pair.step(op);
      const c = (counts[op.k] ??= { run: 0, errors: 0 });
      c.run++;
      if (res.outcome.code !== 'ok') c.errors++;
      if (res.mismatch) {
        mismatch = { step: ops.length - 1, message: res.mismatch };
        break;
      }
      view = treeView(res.ref, pair.reference.slots.map((s) => s !== null));
      if (opts.onProgress && ops.length % (opts.progressEvery ?? 1000) === 0) opts.onProgress(ops.length);
    }
  } finally {
    pair.dispose();
  }
  if (!mismatch) return { seed: opts.seed, opsRun: ops.length, counts, skipped };
  let attempt = 0;
  const fails = (seq: Op[]): Mismatch | null => replay(opts.testedRoot, opts.referenceRoot, seq, `shrink-${opts.seed}-${attempt++}`, opts.impl, skipKnown);
  const { ops: shrunk, mismatch: last, replays } = shrink(ops, fails, opts.maxReplays ?? 400);
  return {
    seed: opts.seed,
    opsRun: ops.length,
    counts,
    skipped,
    mismatch: { ...mismatch, ops, shrunk, shrunkMessage: last?.message ?? mismatch.message, replays, reproduced: last !== null },
  };
}

/** A human-readable report of a mismatch: seed, message, the shortest sequence found (also as JSON). */
export function describeMismatch(label: string, res: FsxResult): string {
  const m = res.mismatch;
  if (!m) return `${label}: seed ${res.seed}: ${res.opsRun} operations, no mismatch`;
  return [
    `${label}: MISMATCH with seed ${res.seed} after operation ${m.step + 1} of the run:`,
    `  ${m.message}`,
    m.reproduced
      ? `shortest failing sequence found (${m.shrunk.length} operations, ${m.replays} replays):`
      : `the sequence did NOT fail again when replayed on fresh directories (timing-dependent?); all ${m.shrunk.length} operations:`,
    ...m.shrunk.map((op, i) => `  ${String(i + 1).padStart(3)}. ${describeOp(op)}`),
    `  -> ${m.shrunkMessage}`,
    `as JSON (replay with --replay FILE): ${JSON.stringify(m.shrunk)}`,
  ].join('\n');
}
