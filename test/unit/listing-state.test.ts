/**
 * When a listing may be kept (src/vault/listing-state.ts): only if its
 * directory's ctime lies far enough in the past that a later change gets
 * another one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COARSE_KEEP_MARGIN_MS, KEEP_MARGIN_MS, keepableState } from '../../src/vault/listing-state.js';
import { STAT_WORDS } from '../../src/util/stat-words.js';

/** Words with this ctime and mtime (seconds, nanoseconds); the rest zero. */
function words(ctime: [number, number], mtime: [number, number] = ctime): Uint32Array {
  const w = new Uint32Array(STAT_WORDS);
  w[0] = 0o40755;
  w[16] = mtime[0] % 2 ** 32;
  w[17] = Math.floor(mtime[0] / 2 ** 32);
  w[18] = mtime[1];
  w[19] = ctime[0] % 2 ** 32;
  w[20] = Math.floor(ctime[0] / 2 ** 32);
  w[21] = ctime[1];
  return w;
}

test('a directory with sub-second times is keepable once its ctime is more than 20 ms old', () => {
  assert.equal(KEEP_MARGIN_MS, 20);
  const w = words([1_800_000_000, 500_000_000]);
  const ctimeMs = 1_800_000_000_500;
  assert.equal(keepableState(w, ctimeMs), null, 'changed this very moment');
  assert.equal(keepableState(w, ctimeMs + 20), null, 'exactly 20 ms: a change in the same tick could still share it');
  assert.equal(keepableState(w, ctimeMs + 21), w, 'more than 20 ms');
  assert.equal(keepableState(w, ctimeMs - 5000), null, 'a ctime ahead of the clock (another machine\'s) is never old enough');
});

test('whole-second times (FAT, HFS+, small ext4 inodes) need the ctime to be more than 2 s old', () => {
  assert.equal(COARSE_KEEP_MARGIN_MS, 2000);
  const w = words([1_800_000_000, 0]);
  assert.equal(keepableState(w, 1_800_000_000_000 + 1999), null);
  assert.equal(keepableState(w, 1_800_000_000_000 + 2001), w);
  const fine = words([1_800_000_000, 0], [1_800_000_000, 7]);
  assert.equal(keepableState(fine, 1_800_000_000_000 + 21), fine, 'an mtime with nanoseconds shows the file system keeps them');
});

test('ctimes past 2^32 seconds and short words', () => {
  const w = words([2 ** 32 + 10, 1_000_000]);
  const ms = (2 ** 32 + 10) * 1000 + 1;
  assert.equal(keepableState(w, ms + 100), w);
  assert.equal(keepableState(w, ms), null);
  assert.equal(keepableState(new Uint32Array(3), Date.now()), null);
});
