/**
 * createAead('aegis'): AEGIS-256X2 behind the common Aead interface. The
 * 'node' backend means the native addon when it is available (else
 * TypeScript), 'noble' the TypeScript implementation; both seal the same bytes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aegisNativeAvailable, createAead, randomBytes, type BackendName } from '../../src/crypto/index.js';

test('createAead("aegis"): shape, backend mapping and batch calls', async () => {
  const expect: Record<BackendName, string> = { node: aegisNativeAvailable() ? 'native' : 'ts', noble: 'ts' };
  for (const backend of ['node', 'noble'] as BackendName[]) {
    const a = await createAead('aegis', randomBytes(32), { backend });
    assert.equal(a.cipher, 'aegis');
    assert.equal(a.backend, expect[backend], backend);
    assert.equal(a.nonceSize, 32);
    assert.equal(a.tagSize, 16);
    assert.equal(typeof a.sealBlocks, 'function');
    assert.equal(typeof a.openBlocks, 'function');
  }
  assert.equal((await createAead('aegis', randomBytes(32))).backend, expect.node, 'default backend is node');
  assert.equal((await createAead('aegis', randomBytes(32), { nonceSize: 32 })).nonceSize, 32);
  await assert.rejects(createAead('aegis', randomBytes(32), { nonceSize: 16 }), { code: 'EINVAL' });
  for (const bad of [0, 16, 31, 33, 64]) await assert.rejects(createAead('aegis', new Uint8Array(bad)), { code: 'EINVAL' }, `key ${bad}`);
});

test('createAead("aegis"): the node and noble backends seal identically and open each other', async () => {
  const key = randomBytes(32);
  const node = await createAead('aegis', key, { backend: 'node' });
  const noble = await createAead('aegis', key, { backend: 'noble' });
  for (const n of [0, 1, 15, 16, 31, 32, 33, 4095, 4096]) {
    const nonce = randomBytes(32);
    const aad = randomBytes(24);
    const pt = randomBytes(n);
    const a = node.seal(nonce, pt, aad);
    assert.deepEqual(Buffer.from(a), Buffer.from(noble.seal(nonce, pt, aad)), `length ${n}`);
    assert.deepEqual(Buffer.from(noble.open(nonce, a, aad)), Buffer.from(pt));
    assert.deepEqual(Buffer.from(node.open(nonce, a, aad)), Buffer.from(pt));
  }
});
