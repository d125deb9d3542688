/**
 * The batched AEAD addon (AES-256-GCM, XChaCha20-Poly1305) gives exactly
 * the bytes of the per-block node:crypto and @noble/ciphers paths, and names
 * the first bad block. The addon is built at install time; without it (no
 * compiler) these tests are skipped with the reason, and under CI a skip
 * fails the run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createAead, type CipherName } from '../../src/crypto/index.js';
import { batchBinding } from '../../src/crypto/native-batch.js';
import { needs } from '../helpers/requirements.js';

const BS = 4096;
const T = needs('native');

async function perBlockSeal(cipher: CipherName, key: Buffer, ns: number, nonces: Buffer, plain: Buffer, aads: Buffer, backend: 'node' | 'noble'): Promise<Buffer> {
  const aead = await createAead(cipher, key, { backend });
  const parts: Buffer[] = [];
  for (let k = 0; k < Math.ceil(plain.length / BS); k++) {
    const nonce = nonces.subarray(k * ns, (k + 1) * ns);
    const block = plain.subarray(k * BS, Math.min((k + 1) * BS, plain.length));
    // Force the single-message path: seal() never batches.
    parts.push(nonce, Buffer.from(aead.seal(nonce, block, aads.subarray(k * 24, (k + 1) * 24))));
  }
  return Buffer.concat(parts);
}

test('the batched AEAD addon is built here', T, () => {
  assert.notEqual(batchBinding(), null, 'native/build/Release/tscryptfs_batch.node');
});

for (const [cipher, ns] of [['aes-gcm', 16], ['xchacha', 24]] as const) {
  test(`${cipher}: batched seal/open equal the per-block node:crypto and noble bytes for many lengths`, T, async () => {
    const key = randomBytes(32);
    const aead = await createAead(cipher, key, { backend: 'node' });
    assert.ok(aead.sealBlocks && aead.openBlocks, 'the node backend exposes the batch calls');
    for (const len of [1, 15, 4095, 4096, 4097, 8192, 3 * 4096 + 17, 32 * 4096]) {
      const count = Math.ceil(len / BS);
      const plain = randomBytes(len);
      const nonces = randomBytes(ns * count);
      const aads = randomBytes(24 * count);
      const batch: Buffer = Buffer.from(aead.sealBlocks!(nonces, plain, aads, BS));
      assert.deepEqual(batch, await perBlockSeal(cipher, key, ns, nonces, plain, aads, 'node'), `node, ${len}`);
      assert.deepEqual(batch, await perBlockSeal(cipher, key, ns, nonces, plain, aads, 'noble'), `noble, ${len}`);
      assert.deepEqual(Buffer.from(aead.openBlocks!(batch, aads, BS)), plain);
      // A flipped bit in the last block is reported as that block.
      batch[batch.length - 1]! ^= 1;
      assert.throws(
        () => aead.openBlocks!(batch, aads, BS),
        (err: Error & { code?: string; blockIndex?: number }) => err.code === 'EAUTH' && err.blockIndex === count - 1,
      );
    }
  });
}
