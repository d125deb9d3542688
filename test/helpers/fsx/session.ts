/**
 * One random-operation run against a real mount: a fresh cipher directory
 * of the given flavour, mounted with MOUNT_IMPL (or the implementation
 * given), a plain reference directory beside it, and an unmount whatever
 * happens. Used by the CI test and by `npm run fsx`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, withMount, type MountImpl } from '../mount.js';
import { FSX_CIPHERS, type FsxCipher } from './ciphers.js';
import { runFsx, type FsxResult } from './engine.js';
import type { Op } from './ops.js';
import { replay } from './engine.js';

export interface SessionOptions {
  impl: MountImpl;
  cipher: FsxCipher;
  /** A scratch directory of the caller's (cipher dir, mount point and reference go below it). */
  work: string;
  /** Extra mount flags. */
  mountFlags?: string[];
  /** Step around the known divergences (default true). */
  skipKnown?: boolean;
}

async function withFsxMount<T>(o: SessionOptions, fn: (tested: string, reference: string) => T | Promise<T>): Promise<T> {
  const base = join(o.work, `${o.cipher}-${o.impl}`);
  const cipherdir = join(base, 'cipher');
  const reference = join(base, 'plain');
  mkdirSync(reference, { recursive: true });
  await initCipherdir(o.impl, cipherdir, [...FSX_CIPHERS[o.cipher]]);
  return withMount(o.impl, cipherdir, join(base, 'mnt'), { flags: o.mountFlags ?? [] }, async (mnt) => fn(mnt, reference));
}

/** Runs `ops` random operations from each seed in turn (stopping at the first mismatch). */
export async function fsxSession(
  o: SessionOptions & { seeds: number[]; ops: number; onProgress?: (seed: number, done: number) => void; stop?: () => boolean },
): Promise<FsxResult[]> {
  return withFsxMount(o, async (tested, reference) => {
    const results: FsxResult[] = [];
    for (const seed of o.seeds) {
      if (o.stop?.()) break;
      const res = await runFsx({
        testedRoot: tested,
        referenceRoot: reference,
        seed,
        ops: o.ops,
        impl: o.impl,
        skipKnown: o.skipKnown ?? true,
        progressEvery: 1000,
        ...(o.stop && { stop: o.stop }),
        ...(o.onProgress && { onProgress: (done: number) => o.onProgress!(seed, done) }),
      });
      results.push(res);
      if (res.mismatch) break;
    }
    return results;
  });
}

/** Replays a recorded sequence once on a fresh mount; the mismatch message, or null. */
export async function fsxReplay(o: SessionOptions & { ops: Op[] }): Promise<string | null> {
  return withFsxMount(o, (tested, reference) => {
    const m = replay(tested, reference, o.ops, 'replay', o.impl, o.skipKnown ?? true);
    return m ? `step ${m.step + 1}: ${m.message}` : null;
  });
}
