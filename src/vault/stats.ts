/** Stats as the plaintext view shows them. */
import type { BigIntStats, Stats } from 'node:fs';

/**
 * The permission bits left when an unprivileged write, truncate or chown
 * drops set-id bits, as Linux does (should_remove_suid): S_ISUID always,
 * S_ISGID only with group execute (without it the bit marks mandatory
 * locking, not a set-group-id program).
 */
export function withoutSetIdBits(mode: number): number {
  const m = mode & 0o3777;
  return (m & 0o2010) === 0o2010 ? m & ~0o2000 : m;
}

/** Replaces the cipher size in a Stats or BigIntStats with the plaintext size. */
export function setSize(st: Stats | BigIntStats, size: number): void {
  if (typeof st.size === 'bigint') (st as BigIntStats).size = BigInt(size);
  else (st as Stats).size = size;
}
