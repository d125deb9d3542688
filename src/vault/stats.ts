/** Stats as the plaintext view shows them. */
import type { BigIntStats, Stats } from 'node:fs';
import { cipherSizeToPlainSize, type Layout } from '../content/index.js';
import { setSizeWords, sizeWords } from '../util/stat-words.js';

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

/** Replaces the cipher size of entry `i` of stat words, a regular file's, with its plaintext size. */
export function setPlainSizeWords(layout: Layout, w: Uint32Array, i: number): void {
  setSizeWords(w, i, cipherSizeToPlainSize(layout, sizeWords(w, i)));
}
