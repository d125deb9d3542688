/** createAead, the shared properties of every Aead, and the small helpers exported beside it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  aegisNativeAvailable,
  arithmeticInJs,
  authError,
  constantTimeEqual,
  createAead,
  measureSealThroughput,
  randomBytes,
  type BackendName,
  type CipherName,
} from '../../src/crypto/index.js';

const BACKENDS: BackendName[] = ['node', 'noble'];
const SHAPES: { cipher: CipherName; keyLen: number; nonceSize: number }[] = [
  { cipher: 'aes-gcm', keyLen: 32, nonceSize: 16 },
  { cipher: 'aes-siv', keyLen: 64, nonceSize: 16 },
  { cipher: 'xchacha', keyLen: 32, nonceSize: 24 },
];

for (const backend of BACKENDS) {
  test(`createAead reports cipher, backend, nonce and tag size [${backend}]`, async () => {
    for (const s of SHAPES) {
      const aead = await createAead(s.cipher, randomBytes(s.keyLen), { backend });
      assert.equal(aead.cipher, s.cipher);
      assert.equal(aead.backend, backend);
      assert.equal(aead.nonceSize, s.nonceSize);
      assert.equal(aead.tagSize, 16);
    }
  });

  test(`createAead validates key length, nonce size and nonce argument with EINVAL [${backend}]`, async () => {
    for (const s of SHAPES) {
      for (const bad of [0, 16, 31, 33, 48, s.keyLen === 64 ? 32 : 64]) {
        await assert.rejects(createAead(s.cipher, new Uint8Array(bad), { backend }), { code: 'EINVAL' }, `${s.cipher} key ${bad}`);
      }
      const aead = await createAead(s.cipher, new Uint8Array(s.keyLen), { backend });
      assert.throws(() => aead.seal(new Uint8Array(s.nonceSize - 1), new Uint8Array(4), new Uint8Array(0)), { code: 'EINVAL' });
      assert.throws(() => aead.open(new Uint8Array(s.nonceSize + 1), new Uint8Array(20), new Uint8Array(0)), { code: 'EINVAL' });
      assert.equal((await createAead(s.cipher, new Uint8Array(s.keyLen), { backend, nonceSize: s.nonceSize })).nonceSize, s.nonceSize);
    }
    await assert.rejects(createAead('aes-siv', new Uint8Array(64), { backend, nonceSize: 12 }), { code: 'EINVAL' });
    await assert.rejects(createAead('xchacha', new Uint8Array(32), { backend, nonceSize: 16 }), { code: 'EINVAL' });
  });
}

test('createAead rejects unknown ciphers and backends with EINVAL, defaults to node', async () => {
  await assert.rejects(createAead('aes-ocb' as CipherName, new Uint8Array(32)), { code: 'EINVAL' });
  await assert.rejects(createAead('aes-gcm', new Uint8Array(32), { backend: 'wasm' as BackendName }), { code: 'EINVAL' });
  assert.equal((await createAead('aes-gcm', new Uint8Array(32))).backend, 'node');
});

test('sealing is deterministic for a given nonce and differs across nonces', async () => {
  for (const s of SHAPES) {
    const aead = await createAead(s.cipher, randomBytes(s.keyLen));
    const pt = randomBytes(100);
    const aad = randomBytes(24);
    const n1 = randomBytes(s.nonceSize);
    const n2 = randomBytes(s.nonceSize);
    assert.deepEqual(Buffer.from(aead.seal(n1, pt, aad)), Buffer.from(aead.seal(n1, pt, aad)));
    assert.notDeepEqual(Buffer.from(aead.seal(n1, pt, aad)), Buffer.from(aead.seal(n2, pt, aad)));
  }
});

test('authError carries code EAUTH', () => {
  const e = authError();
  assert.equal(e.code, 'EAUTH');
  assert.ok(e instanceof Error);
});

test('constantTimeEqual', () => {
  assert.equal(constantTimeEqual(new Uint8Array([1, 2, 3]), Buffer.from([1, 2, 3])), true);
  assert.equal(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4])), false);
  assert.equal(constantTimeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2])), false);
  assert.equal(constantTimeEqual(new Uint8Array(0), new Uint8Array(0)), true);
});

test('randomBytes', () => {
  assert.equal(randomBytes(0).length, 0);
  const a = randomBytes(32);
  assert.ok(a instanceof Uint8Array);
  assert.equal(a.length, 32);
  assert.notDeepEqual(Buffer.from(a), Buffer.from(randomBytes(32)));
  assert.throws(() => randomBytes(-1), { code: 'EINVAL' });
});

test('measureSealThroughput returns a positive MB/s figure for every cipher and backend', async () => {
  for (const backend of BACKENDS) {
    for (const s of SHAPES) {
      const mbps = measureSealThroughput(await createAead(s.cipher, randomBytes(s.keyLen), { backend }), { durationMs: 20 });
      assert.ok(Number.isFinite(mbps) && mbps > 0, `${s.cipher}/${backend}: ${mbps}`);
    }
  }
  const small = measureSealThroughput(await createAead('aes-gcm', randomBytes(32)), { durationMs: 10, blockSize: 16 });
  assert.ok(small > 0);
  const gcm = await createAead('aes-gcm', randomBytes(32));
  assert.throws(() => measureSealThroughput(gcm, { durationMs: 0 }), { code: 'EINVAL' });
});

test('arithmeticInJs: OpenSSL and the native AEGIS compute in C; noble, AEGIS in TypeScript and AES-SIV in JavaScript', async () => {
  const inJs = async (cipher: CipherName, backend: BackendName): Promise<boolean> =>
    arithmeticInJs(await createAead(cipher, randomBytes(cipher === 'aes-siv' ? 64 : 32), { backend }));
  assert.equal(await inJs('aes-gcm', 'node'), false);
  assert.equal(await inJs('xchacha', 'node'), false);
  assert.equal(await inJs('aegis', 'node'), !aegisNativeAvailable());
  assert.equal(await inJs('aes-siv', 'node'), true);
  for (const cipher of ['aes-gcm', 'xchacha', 'aegis', 'aes-siv'] as const) assert.equal(await inJs(cipher, 'noble'), true, cipher);
});
