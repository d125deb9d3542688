/**
 * The AES block operations under EME, CMAC/S2V and SIV: the noble backend
 * (public @noble/ciphers modes) gives node:crypto's bytes, for every key
 * size, on the edges the modes above reach: empty and multi-block ECB,
 * CBC-MAC over a buffer at an odd offset, CTR whose counter carries through
 * all 16 bytes, and partial last CTR blocks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAesBlockCipher, randomBytes } from '../../src/crypto/index.js';

const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** `bytes` copied to offset 1 of a larger buffer (not 4-byte aligned). */
function atOddOffset(bytes: Uint8Array): Uint8Array {
  const buf = new Uint8Array(bytes.length + 1);
  buf.set(bytes, 1);
  return buf.subarray(1);
}

for (const keyLen of [16, 24, 32]) {
  test(`AES-${keyLen * 8} block operations: noble = node`, () => {
    const key = randomBytes(keyLen);
    const node = createAesBlockCipher(key, 'node');
    const noble = createAesBlockCipher(key, 'noble');
    for (const blocks of [0, 1, 2, 17, 256]) {
      const data = randomBytes(16 * blocks);
      const enc = node.encryptBlocks(data);
      assert.equal(toHex(noble.encryptBlocks(data)), toHex(enc), `ECB encrypt, ${blocks} blocks`);
      assert.equal(toHex(noble.decryptBlocks(enc)), toHex(data), `ECB decrypt, ${blocks} blocks`);
      if (blocks > 0) {
        const mac = node.cbcMacLastBlock(Uint8Array.from(data));
        assert.equal(toHex(noble.cbcMacLastBlock(Uint8Array.from(data))), toHex(mac), `CBC-MAC, ${blocks} blocks`);
        assert.equal(toHex(noble.cbcMacLastBlock(atOddOffset(data))), toHex(mac), `CBC-MAC at an odd offset, ${blocks} blocks`);
      }
    }
    const counters = [randomBytes(16), new Uint8Array(16).fill(0xff), Uint8Array.from({ length: 16 }, (_, i) => (i < 8 ? 0x12 : 0xff))];
    for (const counter of counters) {
      for (const len of [0, 1, 15, 16, 17, 100, 4096]) {
        const data = randomBytes(len);
        const before = toHex(counter);
        const out = noble.ctr(counter, data);
        assert.equal(toHex(out), toHex(node.ctr(counter, data)), `CTR from ${before}, ${len} bytes`);
        assert.equal(toHex(counter), before, 'the counter block is left as it was');
        assert.equal(toHex(noble.ctr(counter, atOddOffset(data))), toHex(out), `CTR at an odd offset, ${len} bytes`);
      }
    }
  });
}
