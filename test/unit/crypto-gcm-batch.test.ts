/**
 * The batched AES-256-GCM addon gives exactly the bytes of the per-block
 * node:crypto and @noble/ciphers paths, and names the first bad block.
 * The addon is built at install time; on this project's machines it must
 * exist (under CI=true a missing addon is a failure, not a skip).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createAead } from '../../src/crypto/index.js';
import { gcmBatchBinding } from '../../src/crypto/native-gcm.js';

const BS = 4096;
const key = randomBytes(32);

function perBlockSeal(nonces: Buffer, plain: Buffer, aads: Buffer, aadLen: number, backend: 'node' | 'noble'): Buffer {
  const aead = createAead('aes-gcm', key, { backend });
  const parts: Buffer[] = [];
  for (let k = 0; k < Math.ceil(plain.length / BS); k++) {
    const nonce = nonces.subarray(k * 16, k * 16 + 16);
    const block = plain.subarray(k * BS, Math.min((k + 1) * BS, plain.length));
    parts.push(nonce, Buffer.from(aead.seal(nonce, block, aads.subarray(k * aadLen, (k + 1) * aadLen))));
  }
  return Buffer.concat(parts);
}

test('the batched GCM addon is built here', () => {
  if (process.env.CI !== 'true' && gcmBatchBinding() === null) return;
  assert.notEqual(gcmBatchBinding(), null, 'native/build/Release/tscryptfs_gcm.node');
});

test('batched seal/open equal the per-block node:crypto and noble bytes for many lengths', { skip: gcmBatchBinding() === null && process.env.CI !== 'true' }, () => {
  const aead = createAead('aes-gcm', key, { backend: 'node' });
  assert.ok(aead.sealBlocks && aead.openBlocks, 'the node AES-GCM exposes the batch calls');
  for (const len of [1, 15, 4095, 4096, 4097, 8192, 3 * 4096 + 17, 32 * 4096]) {
    const count = Math.ceil(len / BS);
    const plain = randomBytes(len);
    const nonces = randomBytes(16 * count);
    const aads = randomBytes(24 * count);
    const batch: Buffer = Buffer.from(aead.sealBlocks!(nonces, plain, aads, BS));
    assert.deepEqual(batch, perBlockSeal(nonces, plain, aads, 24, 'node'), `node, ${len}`);
    assert.deepEqual(batch, perBlockSeal(nonces, plain, aads, 24, 'noble'), `noble, ${len}`);
    assert.deepEqual(Buffer.from(aead.openBlocks!(batch, aads, BS)), plain);
    // A flipped bit in the last block is reported as that block.
    batch[batch.length - 1]! ^= 1;
    assert.throws(() => aead.openBlocks!(batch, aads, BS), (err: Error & { code?: string; blockIndex?: number }) => err.code === 'EAUTH' && err.blockIndex === count - 1);
  }
});
