/**
 * Delta debugging (ddmin) of a failing operation sequence: drop chunks,
 * then single operations, as long as a replay still fails; cut everything
 * after the failing step each time. The result is 1-minimal (no single
 * operation can be dropped) unless the replay budget ran out.
 */
import type { Mismatch } from './engine.js';

export interface Shrunk<T> {
  ops: T[];
  /** The mismatch the shortest sequence gives (null: the original did not fail again on replay). */
  mismatch: Mismatch | null;
  replays: number;
}

export function shrink<T>(ops: T[], fails: (seq: T[]) => Mismatch | null, maxReplays: number): Shrunk<T> {
  let replays = 1;
  let mismatch = fails(ops);
  if (!mismatch) return { ops, mismatch: null, replays };
  let cur = ops.slice(0, mismatch.step + 1);
  let n = 2;
  while (cur.length >= 2 && replays < maxReplays) {
    const chunk = Math.ceil(cur.length / n);
    let reduced = false;
    for (let start = 0; start < cur.length && replays < maxReplays; start += chunk) {
      const candidate = [...cur.slice(0, start), ...cur.slice(start + chunk)];
      replays++;
      const m = fails(candidate);
      if (m) {
        cur = candidate.slice(0, m.step + 1);
        mismatch = m;
        n = Math.max(n - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (n >= cur.length) break;
      n = Math.min(cur.length, n * 2);
    }
  }
  return { ops: cur, mismatch, replays };
}
