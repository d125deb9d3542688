/**
 * The nonce pool: every byte handed out once, views that keep their bytes
 * after the pool is replaced, large requests drawn directly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomNonces } from '../../src/crypto/index.js';

test('randomNonces hands out fresh 32-byte nonces that never repeat across pool refills', () => {
  const seen = new Set<string>();
  // 64 KiB pools: 10,000 nonces of 32 bytes span five of them.
  for (let i = 0; i < 10_000; i++) {
    const n = randomNonces(32);
    assert.equal(n.length, 32);
    const hex = Buffer.from(n).toString('hex');
    assert.ok(!seen.has(hex), `nonce ${i} repeats`);
    seen.add(hex);
  }
});

test('a nonce view keeps its bytes after the pool it came from is spent', () => {
  const held = randomNonces(1024);
  const copy = Uint8Array.from(held);
  for (let i = 0; i < 200; i++) randomNonces(1024); // about three pools
  assert.deepEqual(held, copy);
});

test('views handed out one after another do not overlap', () => {
  const a = randomNonces(16);
  const b = randomNonces(16);
  if (a.buffer === b.buffer) {
    const end = a.byteOffset + a.length;
    assert.ok(b.byteOffset >= end || b.byteOffset + b.length <= a.byteOffset);
  }
});

test('large requests and zero bytes', () => {
  assert.equal(randomNonces(0).length, 0);
  const big = randomNonces(1 << 20);
  assert.equal(big.length, 1 << 20);
  assert.ok(big.some((x) => x !== 0));
  assert.throws(() => randomNonces(-1), /bad length/);
  assert.throws(() => randomNonces(1.5), /bad length/);
});
