/**
 * `npm run fsx -- [--ops N] [--cipher all|NAME,...] [--seed N] [--runs K]
 *                 [--impl tscryptfs|gocryptfs] [--replay FILE] [--all]`
 *
 * The long run of the random-operation tester (the CI test runs a short
 * one). Per cipher: a fresh cipher directory, a mount, K runs of N
 * operations from seeds N, N+1, ...; a mismatch prints the seed and the
 * shortest failing sequence, and the exit code is 1. --replay FILE replays
 * a sequence printed as JSON by an earlier run. --all also runs into the
 * known divergences that runs normally step around (known.ts).
 */
import { readFileSync } from 'node:fs';
import { cleanupMountsUnder, guardMountsUnder, MOUNT_IMPL, type MountImpl } from '../mount.js';
import { makeTempDir, removeTempDir } from '../tmp.js';
import { ALL_FSX_CIPHERS, cipherSupported, FSX_CIPHERS, type FsxCipher } from './ciphers.js';
import { describeMismatch, type FsxResult } from './engine.js';
import type { Op } from './ops.js';
import { fsxReplay, fsxSession } from './session.js';

interface CliArgs {
  ops: number;
  ciphers: FsxCipher[];
  seed: number;
  runs: number;
  impl: MountImpl;
  replay: string | null;
  /** Do not step around the known divergences (known.ts). */
  all: boolean;
}

function parse(argv: string[]): CliArgs {
  const a: CliArgs = { ops: 2000, ciphers: ['aes-gcm'], seed: Date.now() % 1_000_000, runs: 1, impl: MOUNT_IMPL, replay: null, all: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value`);
      return v;
    };
    const int = (): number => {
      const v = Number(value());
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${flag} needs a non-negative integer`);
      return v;
    };
    switch (flag) {
      case '--ops':
        a.ops = int();
        break;
      case '--seed':
        a.seed = int();
        break;
      case '--runs':
        a.runs = Math.max(1, int());
        break;
      case '--impl': {
        const v = value();
        if (v !== 'tscryptfs' && v !== 'gocryptfs') throw new Error('--impl is tscryptfs or gocryptfs');
        a.impl = v;
        break;
      }
      case '--cipher': {
        const v = value();
        const list = v === 'all' ? ALL_FSX_CIPHERS : v.split(',');
        for (const c of list) if (!(c in FSX_CIPHERS)) throw new Error(`unknown cipher ${c} (known: ${ALL_FSX_CIPHERS.join(', ')}, all)`);
        a.ciphers = list as FsxCipher[];
        break;
      }
      case '--all':
        a.all = true;
        break;
      case '--replay':
        a.replay = value();
        break;
      default:
        throw new Error(`unknown argument ${flag}`);
    }
  }
  return a;
}

/** Operations per kind (with how many failed alike on both sides) and the known divergences stepped around. */
function summarize(results: FsxResult[]): string {
  const counts = new Map<string, { run: number; errors: number }>();
  const skipped = new Map<string, number>();
  for (const r of results) {
    for (const [k, c] of Object.entries(r.counts)) {
      const t = counts.get(k) ?? { run: 0, errors: 0 };
      counts.set(k, { run: t.run + c.run, errors: t.errors + c.errors });
    }
    for (const [k, n] of Object.entries(r.skipped)) skipped.set(k, (skipped.get(k) ?? 0) + n);
  }
  const ops = [...counts].map(([k, c]) => `${k} ${c.run}${c.errors ? ` (${c.errors} errno)` : ''}`).join(', ');
  const skips = [...skipped].map(([k, n]) => `${k} ${n}`).join(', ');
  return `${ops}${skips ? `; skipped as known: ${skips}` : ''}`;
}

export async function main(argv: string[]): Promise<number> {
  let args: CliArgs;
  try {
    args = parse(argv);
  } catch (err) {
    console.error(`fsx: ${(err as Error).message}`);
    return 2;
  }
  const work = makeTempDir('tscryptfs-fsx-');
  guardMountsUnder(work);
  // Ctrl-C ends the run between two operations and unmounts as usual; a second one exits
  // at once (the guard's exit hook still unmounts). This replaces the guard's signal handlers.
  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.error('fsx: interrupted, stopping after this operation (again to quit at once)');
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(sig);
    process.on(sig, onSignal);
  }
  let failed = false;
  try {
    for (const cipher of args.ciphers) {
      if (interrupted) break;
      if (!cipherSupported(args.impl, cipher)) {
        console.log(`${cipher}: skipped (${args.impl} cannot mount it)`);
        continue;
      }
      const label = `${args.impl} ${cipher}`;
      if (args.replay) {
        const ops = JSON.parse(readFileSync(args.replay, 'utf8')) as Op[];
        const m = await fsxReplay({ impl: args.impl, cipher, work, ops, skipKnown: !args.all });
        console.log(m ? `${label}: replay fails at ${m}` : `${label}: replay of ${ops.length} operations passes`);
        failed ||= m !== null;
        continue;
      }
      const seeds = Array.from({ length: args.runs }, (_, i) => args.seed + i);
      const started = Date.now();
      const results = await fsxSession({
        impl: args.impl,
        cipher,
        work,
        seeds,
        ops: args.ops,
        skipKnown: !args.all,
        onProgress: (seed, done) => process.stderr.write(`  ${label} seed ${seed}: ${done} operations\n`),
        stop: () => interrupted,
      });
      const total = results.reduce((s, r) => s + r.opsRun, 0);
      const secs = (Date.now() - started) / 1000;
      for (const r of results) if (r.mismatch) console.log(describeMismatch(label, r));
      const bad = results.some((r) => r.mismatch);
      failed ||= bad;
      console.log(`${label}: seeds ${seeds[0]}..${seeds[0]! + results.length - 1}: ${total} operations in ${secs.toFixed(1)} s, ${bad ? 'MISMATCH' : 'no mismatch'}`);
      console.log(`  ${summarize(results)}`);
    }
  } finally {
    const problems = await cleanupMountsUnder(work);
    removeTempDir(work);
    for (const p of problems) console.error(`fsx cleanup: ${p}`);
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return failed ? 1 : interrupted ? 130 : 0;
}
