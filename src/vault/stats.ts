/** Stats as the plaintext view shows them. */
import type { BigIntStats, Stats } from 'node:fs';

/** Replaces the cipher size in a Stats or BigIntStats with the plaintext size. */
export function setSize(st: Stats | BigIntStats, size: number): void {
  if (typeof st.size === 'bigint') (st as BigIntStats).size = BigInt(size);
  else (st as Stats).size = size;
}
