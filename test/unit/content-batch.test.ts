/**
 * ContentCipher's batched path (AEADs with sealBlocks/openBlocks, i.e.
 * AEGIS): the bytes are those of the block-by-block path — each block is
 * nonce || seal(nonce, block, BE64(n) || fileID) — and the per-block rules
 * still hold: holes read as zeros, an all-zero nonce, a bad tag or a too
 * short last block is a BlockError naming the block.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BlockError, ContentCipher } from '../../src/content/index.js';
import { createAead, randomBytes, type Aead, type BackendName } from '../../src/crypto/index.js';

/** The same AEAD without its batch calls: ContentCipher then goes block by block. */
function perBlock(a: Aead): Aead {
  return { cipher: a.cipher, backend: a.backend, nonceSize: a.nonceSize, tagSize: a.tagSize, seal: a.seal.bind(a), open: a.open.bind(a) };
}

for (const backend of ['node', 'noble'] as BackendName[]) {
  test(`batched AEGIS blocks equal the block-by-block format and open both ways [${backend}]`, async () => {
    const aead = await createAead('aegis', randomBytes(32), { backend });
    const batch = new ContentCipher(aead);
    const single = new ContentCipher(perBlock(aead));
    const cbs = batch.layout.cipherBlockSize;
    assert.equal(cbs, 4144);
    const fileId = randomBytes(16);
    for (const size of [1, 4095, 4096, 4097, 32 * 4096, 5 * 4096 + 77]) {
      const pt = randomBytes(size);
      const first = 3;
      const sealed = batch.sealBlocks(first, fileId, pt);
      const count = Math.ceil(size / 4096);
      assert.equal(sealed.length, size + count * 48, `size ${size}`);
      for (let k = 0; k < count; k++) {
        const blk = sealed.subarray(k * cbs, Math.min(sealed.length, (k + 1) * cbs));
        const plain = aead.open(blk.subarray(0, 32), blk.subarray(32), batch.blockAad(first + k, fileId));
        assert.deepEqual(Buffer.from(plain), Buffer.from(pt.subarray(k * 4096, (k + 1) * 4096)), `block ${k}`);
      }
      assert.deepEqual(batch.openBlocks(first, fileId, sealed), Buffer.from(pt));
      assert.deepEqual(single.openBlocks(first, fileId, sealed), Buffer.from(pt));
      assert.deepEqual(batch.openBlocks(first, fileId, single.sealBlocks(first, fileId, pt)), Buffer.from(pt));
      // Nonces are fresh per block and per call.
      const again = batch.sealBlocks(first, fileId, pt);
      for (let k = 0; k < count; k++) assert.notDeepEqual(again.subarray(k * cbs, k * cbs + 32), sealed.subarray(k * cbs, k * cbs + 32));
    }
  });

  test(`batched AEGIS open keeps the per-block rules: holes, zero nonces, bad and short blocks [${backend}]`, async () => {
    const c = new ContentCipher(await createAead('aegis', randomBytes(32), { backend }));
    const cbs = c.layout.cipherBlockSize;
    const fileId = randomBytes(16);
    const pt = randomBytes(4 * 4096);
    const sealed = c.sealBlocks(0, fileId, pt);
    const hole = Buffer.from(sealed);
    hole.fill(0, cbs, 2 * cbs);
    const expect = Buffer.from(pt);
    expect.fill(0, 4096, 8192);
    assert.deepEqual(c.openBlocks(0, fileId, hole), expect);
    const blockError = (n: number) => (e: unknown) => e instanceof BlockError && e.blockNo === n;
    for (let k = 0; k < 4; k++) {
      const bad = Buffer.from(sealed);
      bad[k * cbs + 32 + 100] ^= 0x10;
      assert.throws(() => c.openBlocks(0, fileId, bad), blockError(k), `block ${k}`);
    }
    const zeroNonce = Buffer.from(sealed);
    zeroNonce.fill(0, 2 * cbs, 2 * cbs + 32);
    assert.throws(() => c.openBlocks(0, fileId, zeroNonce), blockError(2));
    assert.throws(() => c.openBlocks(0, fileId, sealed.subarray(0, 3 * cbs + 48)), blockError(3));
    assert.throws(() => c.openBlocks(0, randomBytes(16), sealed), blockError(0));
    assert.throws(() => c.openBlocks(1, fileId, sealed), blockError(1));
  });
}
