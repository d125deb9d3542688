/** HChaCha20 and XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03), on both backends. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hchacha } from '@noble/ciphers/chacha.js';
import { createAead, hchacha20, randomBytes, type BackendName } from '../../src/crypto/index.js';

const hex = (s: string): Uint8Array => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const range = (from: number, n: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => from + i);
const BACKENDS: BackendName[] = ['node', 'noble'];

test('HChaCha20 test vector (draft-irtf-cfrg-xchacha-03 §2.2.1)', () => {
  const key = range(0x00, 32);
  const nonce = hex('000000090000004a0000000031415927');
  assert.equal(toHex(hchacha20(key, nonce)), '82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc');
});

test('HChaCha20 agrees with @noble/ciphers hchacha on random inputs', () => {
  const sigma = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);
  for (let i = 0; i < 50; i++) {
    const key = randomBytes(32);
    const nonce = randomBytes(16);
    const out = new Uint32Array(8);
    // The library takes little-endian 32-bit words; plain Uint32Array views give those on little-endian hosts.
    hchacha(sigma, new Uint32Array(Uint8Array.from(key).buffer), new Uint32Array(Uint8Array.from(nonce).buffer), out);
    assert.equal(toHex(hchacha20(key, nonce)), toHex(new Uint8Array(out.buffer)));
  }
});

test('HChaCha20 rejects wrong sizes with EINVAL', () => {
  assert.throws(() => hchacha20(new Uint8Array(31), new Uint8Array(16)), { code: 'EINVAL' });
  assert.throws(() => hchacha20(new Uint8Array(32), new Uint8Array(24)), { code: 'EINVAL' });
});

// draft-irtf-cfrg-xchacha-03 Appendix A.3.1.
const A31 = {
  plaintext: Buffer.from(
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  ),
  aad: hex('50515253c0c1c2c3c4c5c6c7'),
  key: range(0x80, 32),
  nonce: range(0x40, 24),
  ciphertext:
    'bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb' +
    '731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452' +
    '2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9' +
    '21f9664c97637da9768812f615c68b13b52e',
  tag: 'c0875924c1c7987947deafd8780acf49',
};

for (const backend of BACKENDS) {
  test(`XChaCha20-Poly1305 AEAD test vector (draft-irtf-cfrg-xchacha-03 A.3.1) [${backend}]`, async () => {
    assert.equal(toHex(A31.key), '808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
    assert.equal(toHex(A31.nonce), '404142434445464748494a4b4c4d4e4f5051525354555657');
    const aead = await createAead('xchacha', A31.key, { backend });
    assert.equal(aead.nonceSize, 24);
    const sealed = aead.seal(A31.nonce, A31.plaintext, A31.aad);
    assert.equal(toHex(sealed), A31.ciphertext + A31.tag);
    assert.equal(Buffer.from(aead.open(A31.nonce, sealed, A31.aad)).toString(), A31.plaintext.toString());
    const tampered = Uint8Array.from(sealed);
    tampered[0] ^= 0x80;
    assert.throws(() => aead.open(A31.nonce, tampered, A31.aad), { code: 'EAUTH' });
    assert.throws(() => aead.open(A31.nonce, sealed, new Uint8Array(0)), { code: 'EAUTH' });
  });
}
