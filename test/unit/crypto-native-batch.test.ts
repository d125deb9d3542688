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
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createAead, type CipherName } from '../../src/crypto/index.js';
import { BATCH_GCM, batchBinding, READ_AEGIS } from '../../src/crypto/native-batch.js';
import { aegisNativeBinding } from '../../src/crypto/aegis/native.js';
import { AEGIS_VARIANTS } from '../../src/crypto/aegis/variants.js';
import { needs } from '../helpers/requirements.js';

const BS = 4096;
const T = needs('native');

function perBlockSeal(cipher: CipherName, key: Buffer, ns: number, nonces: Buffer, plain: Buffer, aads: Buffer, backend: 'node' | 'noble'): Buffer {
  const aead = createAead(cipher, key, { backend });
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
  test(`${cipher}: batched seal/open equal the per-block node:crypto and noble bytes for many lengths`, T, () => {
    const key = randomBytes(32);
    const aead = createAead(cipher, key, { backend: 'node' });
    assert.ok(aead.sealBlocks && aead.openBlocks, 'the node backend exposes the batch calls');
    for (const len of [1, 15, 4095, 4096, 4097, 8192, 3 * 4096 + 17, 32 * 4096]) {
      const count = Math.ceil(len / BS);
      const plain = randomBytes(len);
      const nonces = randomBytes(ns * count);
      const aads = randomBytes(24 * count);
      const batch: Buffer = Buffer.from(aead.sealBlocks!(nonces, plain, aads, BS));
      assert.deepEqual(batch, perBlockSeal(cipher, key, ns, nonces, plain, aads, 'node'), `node, ${len}`);
      assert.deepEqual(batch, perBlockSeal(cipher, key, ns, nonces, plain, aads, 'noble'), `noble, ${len}`);
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

test('the read path takes AEGIS only with the AEGIS addon\'s AEGIS-256X2 function', { ...T, skip: T.skip || (aegisNativeBinding() ? false : 'the AEGIS addon is not in use here') }, () => {
  const batch = batchBinding()!;
  const aegis = aegisNativeBinding()!;
  const key = randomBytes(32);
  assert.throws(() => batch.readerCreate(READ_AEGIS, key, 16), /bad argument/, 'no function given');
  assert.throws(() => batch.readerCreate(READ_AEGIS, key, 16, aegis.decryptHandle(AEGIS_VARIANTS.aegis256.nativeId)), /bad argument/, 'AEGIS-256, not 256X2');
  assert.throws(() => batch.readerCreate(READ_AEGIS, key, 16, {}), /bad argument/, 'not an external');
  const [reader, fences] = batch.readerCreate(READ_AEGIS, key, 16, aegis.decryptHandle(AEGIS_VARIANTS.aegis256x2.nativeId));
  assert.equal(typeof reader, 'object');
  assert.equal(fences.byteLength, 16 * 4 * 4, 'four int32 per slot: started, finished, owner, spare');
  assert.deepEqual(batch.readerStats(reader), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
});

test('readerCipherRoot takes the cipher directory\'s descriptor once', T, () => {
  const batch = batchBinding()!;
  const [reader] = batch.readerCreate(BATCH_GCM, randomBytes(32), 16);
  assert.throws(() => batch.readerCipherRoot(reader, -1, true), /bad argument/, 'no descriptor');
  const fd = openSync(tmpdir(), 'r');
  try {
    assert.throws(() => batch.readerCipherRoot(reader, fd, 1 as unknown as boolean), /bad argument/, 'unlinks not a boolean');
    batch.readerCipherRoot(reader, fd, true);
    assert.throws(() => batch.readerCipherRoot(reader, fd, true), /bad argument/, 'a second time');
  } finally {
    closeSync(fd);
  }
  assert.deepEqual(batch.readerStats(reader).slice(5), [0, 0, 0, 0, 0, 0, 0, 0], 'unlinks, lookups, opens and rmdirs answered and passed on');
});

test('readerRmdirs takes two booleans; readerTakeRemovedDirs has nothing until the hook removed a directory', T, () => {
  const batch = batchBinding()!;
  const [reader] = batch.readerCreate(BATCH_GCM, randomBytes(32), 16);
  // @ts-expect-error: dirIVs left out on purpose
  assert.throws(() => batch.readerRmdirs(reader, true), /bad argument/, 'no dirIVs');
  assert.throws(() => batch.readerRmdirs(reader, 1 as unknown as boolean, true), /bad argument/, 'on not a boolean');
  assert.throws(() => batch.readerRmdirs({}, true, true), /bad argument/, 'not a reader');
  assert.throws(() => batch.readerTakeRemovedDirs({}), /bad argument/, 'not a reader');
  batch.readerRmdirs(reader, true, true); // without readerCipherRoot's unlinks it stays off
  assert.equal(batch.readerTakeRemovedDirs(reader), undefined);
});

test('readerSlot gives one fence slot per file (device, inode), counted, and -1 when all are taken', T, () => {
  const batch = batchBinding()!;
  const [reader] = batch.readerCreate(BATCH_GCM, randomBytes(32), 4);
  // @ts-expect-error: the high half left out on purpose
  assert.throws(() => batch.readerSlot(reader, 1, 2), /bad argument/, 'no high half');
  assert.throws(() => batch.readerSlot(reader, 1, 2 ** 32, 0), /bad argument/, 'a low half over 32 bits');
  const a = batch.readerSlot(reader, 7, 100, 0);
  assert.equal(batch.readerSlot(reader, 7, 100, 0), a, 'the same file: the same slot');
  const b = batch.readerSlot(reader, 7, 100, 1);
  const c = batch.readerSlot(reader, 8, 100, 0);
  const d = batch.readerSlot(reader, 7, 101, 0);
  assert.deepEqual(new Set([a, b, c, d]).size, 4, 'the high half of the inode and the device count');
  assert.ok([a, b, c, d].every((s) => s >= 0 && s < 4));
  assert.equal(batch.readerSlot(reader, 9, 1, 0), -1, 'four slots, four files');
  batch.readerSlotRelease(reader, 7, 100, 0);
  assert.equal(batch.readerSlot(reader, 9, 1, 0), -1, 'file a is still counted once');
  batch.readerSlotRelease(reader, 7, 100, 0);
  assert.equal(batch.readerSlot(reader, 9, 1, 0), a, 'its slot is free again');
  batch.readerSlotRelease(reader, 5, 5, 5); // not held: nothing happens
  assert.equal(batch.readerAdopt(reader, 0x80000000), -1, 'no native handle to adopt');
  assert.equal(batch.readerAdopt(reader, 3), -1, 'a JS handle number');
  assert.deepEqual(batch.readerOpensOn(reader, 7, 101, 0), []);
  batch.readerOpens(reader, true); // no cipher root yet: opens still go to JS
  assert.throws(() => batch.readerOpens(reader, 1 as unknown as boolean), /bad argument/);
});

test('readerNames takes the name key once, after readerCipherRoot', T, () => {
  const batch = batchBinding()!;
  const [reader] = batch.readerCreate(BATCH_GCM, randomBytes(32), 16);
  assert.throws(() => batch.readerNames(reader, randomBytes(32), 255, true), /bad argument/, 'before readerCipherRoot');
  const fd = openSync(tmpdir(), 'r');
  try {
    batch.readerCipherRoot(reader, fd, false);
  } finally {
    closeSync(fd);
  }
  assert.throws(() => batch.readerNames(reader, randomBytes(16), 255, true), /bad argument/, 'a 16-byte key');
  assert.throws(() => batch.readerNames(reader, randomBytes(32), 61, true), /bad argument/, 'LongNameMax below 62');
  batch.readerNames(reader, randomBytes(32), 255, true);
  assert.throws(() => batch.readerNames(reader, randomBytes(32), 255, true), /bad argument/, 'a second time');
  batch.readerLookups(reader, false);
  batch.readerLookups(reader, true);
});
