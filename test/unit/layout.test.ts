import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cipherSizeToPlainSize, layout, plainSizeToCipherSize, HEADER_LEN } from '../../src/content/index.js';

// Documentation/format.md §6.6 table: plaintext size -> cipher size per cipher.
const TABLE: Array<[number, number, number]> = [
  [0, 0, 0],
  [1, 51, 59],
  [4096, 4146, 4154],
  [5000, 5082, 5098],
  [8192, 8274, 8290],
  [10000, 10114, 10138],
  [12392, 12538, 12570],
];
const GCM = layout(16, 16);
const XCHACHA = layout(24, 16);

test('plain <-> cipher sizes match format.md §6.6 for GCM/SIV and XChaCha', () => {
  for (const [plain, gcm, xchacha] of TABLE) {
    assert.equal(plainSizeToCipherSize(GCM, plain), gcm, `gcm ${plain}`);
    assert.equal(plainSizeToCipherSize(XCHACHA, plain), xchacha, `xchacha ${plain}`);
    assert.equal(cipherSizeToPlainSize(GCM, gcm), plain);
    assert.equal(cipherSizeToPlainSize(XCHACHA, xchacha), plain);
  }
});

test('size arithmetic round-trips for every size up to 5 blocks', () => {
  for (const l of [GCM, XCHACHA]) {
    for (let p = 0; p <= 5 * 4096 + 1; p++) assert.equal(cipherSizeToPlainSize(l, plainSizeToCipherSize(l, p)), p);
  }
});

test('header-only and shorter files are empty; a too-short last block counts as one byte', () => {
  for (let c = 1; c <= HEADER_LEN; c++) assert.equal(cipherSizeToPlainSize(GCM, c), 0);
  // header + full block + 10 bytes (less than the 32-byte overhead)
  assert.equal(cipherSizeToPlainSize(GCM, HEADER_LEN + 4128 + 10), 4097);
});
