/**
 * Every cipher: node and noble backends produce identical sealed bytes, open
 * each other's output, and reject any modification with code EAUTH.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAead, randomBytes, type Aead, type CipherName } from '../../src/crypto/index.js';

const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const CIPHERS: { cipher: CipherName; keyLen: number; nonceSize?: number }[] = [
  { cipher: 'aes-gcm', keyLen: 32 },
  { cipher: 'aes-gcm', keyLen: 32, nonceSize: 12 },
  { cipher: 'aes-siv', keyLen: 64 },
  { cipher: 'xchacha', keyLen: 32 },
];
const randomInt = (max: number): number => Math.floor(Math.random() * max);
const LENGTHS = [0, 1, 15, 16, 17, 4095, 4096, ...Array.from({ length: 4 }, () => randomInt(4097))];

async function pair(cipher: CipherName, key: Uint8Array, nonceSize?: number): Promise<[Aead, Aead]> {
  return [await createAead(cipher, key, { backend: 'node', nonceSize }), await createAead(cipher, key, { backend: 'noble', nonceSize })];
}

/** Byte positions to corrupt: all of them for short data, else both ends plus a random sample. */
function positions(n: number): number[] {
  if (n <= 64) return Array.from({ length: n }, (_, i) => i);
  const set = new Set<number>();
  for (let i = 0; i < 24; i++) {
    set.add(i);
    set.add(n - 1 - i);
    set.add(randomInt(n));
  }
  return [...set];
}

for (const { cipher, keyLen, nonceSize } of CIPHERS) {
  const label = nonceSize ? `${cipher}/${nonceSize}` : cipher;

  test(`${label}: node and noble give identical bytes and open each other's output`, async () => {
    for (const len of LENGTHS) {
      const key = randomBytes(keyLen);
      const [a, b] = await pair(cipher, key, nonceSize);
      assert.equal(a.nonceSize, b.nonceSize);
      const nonce = randomBytes(a.nonceSize);
      for (const aad of [randomBytes(24), randomBytes(8), new Uint8Array(0)]) {
        const pt = randomBytes(len);
        const sa = a.seal(nonce, pt, aad);
        const sb = b.seal(nonce, pt, aad);
        assert.equal(sa.length, len + 16);
        assert.equal(toHex(sa), toHex(sb), `length ${len}, aad ${aad.length}`);
        assert.equal(toHex(a.open(nonce, sb, aad)), toHex(pt));
        assert.equal(toHex(b.open(nonce, sa, aad)), toHex(pt));
      }
    }
  });

  test(`${label}: tampering with sealed data, nonce or AAD throws EAUTH on both backends`, async () => {
    for (const len of [0, 1, 17, 4096]) {
      const key = randomBytes(keyLen);
      const aeads = await pair(cipher, key, nonceSize);
      const nonce = randomBytes(aeads[0].nonceSize);
      const aad = randomBytes(24);
      const sealed = aeads[0].seal(nonce, randomBytes(len), aad);
      for (const aead of aeads) {
        for (const pos of positions(sealed.length)) {
          const bad = Uint8Array.from(sealed);
          bad[pos] ^= 1 << randomInt(8);
          assert.throws(() => aead.open(nonce, bad, aad), { code: 'EAUTH' }, `${aead.backend} byte ${pos} of ${sealed.length}`);
        }
        const badNonce = Uint8Array.from(nonce);
        badNonce[randomInt(badNonce.length)] ^= 0x01;
        assert.throws(() => aead.open(badNonce, sealed, aad), { code: 'EAUTH' });
        const badAad = Uint8Array.from(aad);
        badAad[0] ^= 0x01; // e.g. another block number
        assert.throws(() => aead.open(nonce, sealed, badAad), { code: 'EAUTH' });
        assert.throws(() => aead.open(nonce, sealed.subarray(0, sealed.length - 1), aad), { code: 'EAUTH' });
        assert.throws(() => aead.open(nonce, sealed.subarray(0, 15), aad), { code: 'EAUTH' });
        assert.throws(() => aead.open(nonce, new Uint8Array(0), aad), { code: 'EAUTH' });
      }
    }
  });

  test(`${label}: inputs that are views into larger buffers at odd offsets work`, async () => {
    const key = randomBytes(keyLen);
    const [a, b] = await pair(cipher, key, nonceSize);
    const ns = a.nonceSize;
    // A cipher block as it sits in a file: header(18) || nonce || sealed, all one buffer.
    const pt = randomBytes(4096);
    const aad = randomBytes(24);
    const nonce = randomBytes(ns);
    const file = Buffer.concat([randomBytes(18), nonce, a.seal(nonce, pt, aad)]);
    for (const aead of [a, b]) {
      const opened = aead.open(file.subarray(18, 18 + ns), file.subarray(18 + ns), aad);
      assert.equal(toHex(opened), toHex(pt));
      const sealed = aead.seal(file.subarray(18, 18 + ns), Buffer.from(opened.buffer, opened.byteOffset + 1, 4095), aad.subarray(0));
      assert.equal(toHex(aead.open(nonce, sealed, aad)), toHex(pt.subarray(1)));
    }
  });
}
