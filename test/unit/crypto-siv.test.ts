/**
 * AES-CMAC (RFC 4493 / NIST SP 800-38B D), S2V and AES-SIV (RFC 5297
 * Appendix A) and gocryptfs's AES-SIV-512 usage, on both backends.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aessiv as nobleAesSiv } from '@noble/ciphers/aes.js';
import {
  AesSivAead,
  Cmac,
  S2v,
  Siv,
  cmac,
  createAead,
  dblBigEndian,
  randomBytes,
  s2v,
  sivOpen,
  sivSeal,
  type BackendName,
} from '../../src/crypto/index.js';

const hex = (s: string): Uint8Array => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sameBytes = (actual: Uint8Array, expected: Uint8Array, msg?: string): void => assert.equal(toHex(actual), toHex(expected), msg);
const BACKENDS: BackendName[] = ['node', 'noble'];

// NIST SP 800-38B Appendix D (the AES-128 part is RFC 4493 §4).
const CMAC_MESSAGE = hex(
  '6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51' +
    '30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710',
);
const CMAC_VECTORS: { key: string; tags: [number, string][] }[] = [
  {
    key: '2b7e151628aed2a6abf7158809cf4f3c',
    tags: [
      [0, 'bb1d6929e95937287fa37d129b756746'],
      [16, '070a16b46b4d4144f79bdd9dd04a287c'],
      [40, 'dfa66747de9ae63030ca32611497c827'],
      [64, '51f0bebf7e3b9d92fc49741779363cfe'],
    ],
  },
  {
    key: '8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b',
    tags: [
      [0, 'd17ddf46adaacde531cac483de7a9367'],
      [16, '9e99a7bf31e710900662f65e617c5184'],
      [40, '8a1de5be2eb31aad089a82e6ee908b0e'],
      [64, 'a1d5df0eed790f794d77589659f39a11'],
    ],
  },
  {
    key: '603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4',
    tags: [
      [0, '028962f61b7bf89efc6b551f4667d983'],
      [16, '28a7023f452e8f82bd4bf28d8c37c35c'],
      [40, 'aaf3d8f1de5640c232f5b169b9c911e6'],
      [64, 'e1992190549f6ed5696a2c056c315410'],
    ],
  },
];

test('dbl (RFC 4493 §2.3 subkey generation example: L -> K1 -> K2)', () => {
  const l = hex('7df76b0c1ab899b33e42f047b91b546f');
  const k1 = dblBigEndian(l);
  assert.equal(toHex(k1), 'fbeed618357133667c85e08f7236a8de');
  assert.equal(toHex(dblBigEndian(k1)), 'f7ddac306ae266ccf90bc11ee46d513b');
  const inPlace = Uint8Array.from(k1);
  dblBigEndian(inPlace, inPlace);
  assert.equal(toHex(inPlace), 'f7ddac306ae266ccf90bc11ee46d513b');
});

for (const backend of BACKENDS) {
  test(`AES-CMAC RFC 4493 / SP 800-38B vectors, AES-128/192/256 [${backend}]`, () => {
    for (const v of CMAC_VECTORS) {
      const mac = new Cmac(hex(v.key), backend);
      for (const [len, tag] of v.tags) {
        assert.equal(toHex(mac.mac(CMAC_MESSAGE.subarray(0, len))), tag, `key ${v.key.length * 4} bits, ${len} bytes`);
        assert.equal(toHex(cmac(hex(v.key), CMAC_MESSAGE.subarray(0, len), backend)), tag);
      }
    }
  });
}

// RFC 5297 Appendix A.1 (deterministic) and A.2 (nonce-based, several AD items).
const A1 = {
  key: hex('fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff'),
  ad: [hex('101112131415161718191a1b1c1d1e1f 2021222324252627')],
  plaintext: hex('112233445566778899aabbccddee'),
  v: '85632d07c6e8f37f950acd320a2ecc93',
  output: '85632d07c6e8f37f950acd320a2ecc93 40c02b9690c4dc04daef7f6afe5c'.replace(/ /g, ''),
};
const A2 = {
  key: hex('7f7e7d7c7b7a79787776757473727170 404142434445464748494a4b4c4d4e4f'),
  ad: [
    hex('00112233445566778899aabbccddeeff deaddadadeaddadaffeeddccbbaa9988 7766554433221100'),
    hex('102030405060708090a0'),
    hex('09f911029d74e35bd84156c5635688c0'),
  ],
  plaintext: hex('7468697320697320736f6d6520706c61 696e7465787420746f20656e63727970 74207573696e67205349562d414553'),
  v: '7bdb6e3b432667eb06f4d14bff2fbd0f',
  output: (
    '7bdb6e3b432667eb06f4d14bff2fbd0f cb900f2fddbe404326601965c889bf17' +
    'dba77ceb094fa663b7a3f748ba8af829 ea64ad544a272e9c485b62a3fd5c0d'
  ).replace(/ /g, ''),
};

for (const backend of BACKENDS) {
  test(`S2V RFC 5297 A.1/A.2 CMAC(final) [${backend}]`, () => {
    for (const v of [A1, A2]) {
      const k1 = v.key.subarray(0, 16);
      assert.equal(toHex(new S2v(k1, backend).compute([...v.ad, v.plaintext])), v.v);
    }
    assert.equal(toHex(s2v(A2.key.subarray(0, 16), ...A2.ad, A2.plaintext)), A2.v);
  });

  test(`AES-SIV RFC 5297 A.1/A.2 seal and open [${backend}]`, () => {
    for (const v of [A1, A2]) {
      const sealed = sivSeal(v.key, v.ad, v.plaintext, backend);
      assert.equal(toHex(sealed), v.output);
      sameBytes(sivOpen(v.key, v.ad, sealed, backend), v.plaintext);
      const siv = new Siv(v.key, backend);
      sameBytes(siv.open(v.ad, hex(v.output)), v.plaintext);
      const bad = hex(v.output);
      bad[bad.length - 1] ^= 1;
      assert.throws(() => siv.open(v.ad, bad), { code: 'EAUTH' });
      assert.throws(() => siv.open(v.ad.slice(0, -1), hex(v.output)), { code: 'EAUTH' });
    }
  });

  test(`AES-SIV agrees with @noble/ciphers aessiv for all key sizes and lengths [${backend}]`, () => {
    for (const keyLen of [32, 48, 64]) {
      for (const len of [0, 1, 15, 16, 17, 31, 32, 33, 100, 4096]) {
        const key = randomBytes(keyLen);
        const ad = [randomBytes(24), randomBytes(16)];
        const pt = randomBytes(len);
        const ours = sivSeal(key, ad, pt, backend);
        assert.equal(toHex(ours), toHex(nobleAesSiv(key, ...ad).encrypt(pt)), `key ${keyLen}, len ${len}`);
        sameBytes(sivOpen(key, ad, ours, backend), pt);
      }
      // No associated data at all, and an empty plaintext (S2V with the plaintext as the only input).
      const key = randomBytes(keyLen);
      assert.equal(toHex(sivSeal(key, [], new Uint8Array(0), backend)), toHex(nobleAesSiv(key).encrypt(new Uint8Array(0))));
    }
  });

  // gocryptfs internal/siv_aead/correctness_test.go TestK32 / TestK64:
  // key all 0x01, nonce all 0x02, plaintext 01..09, 24 zero bytes of AAD.
  test(`gocryptfs siv_aead unit-test vectors [${backend}]`, () => {
    const nonce = new Uint8Array(16).fill(2);
    const pt = hex('010203040506070809');
    const aad = new Uint8Array(24);
    const k32 = sivSeal(new Uint8Array(32).fill(1), [aad, nonce], pt, backend);
    assert.equal(toHex(k32), 'ad7a4010649a84d8c1dd5f752e935eed57d45b8b10008f3834');
    const aead = new AesSivAead(new Uint8Array(64).fill(1), backend);
    const k64 = aead.seal(nonce, pt, aad);
    assert.equal(toHex(k64), '317b316f67c3ad336c01c9a01b4c5e552ba89e966bc4c1ade1');
    sameBytes(aead.open(nonce, k64, aad), pt);
    k64[1] ^= 0xff; // like upstream's "aResult[17] = 0": corrupt the SIV
    assert.throws(() => aead.open(nonce, k64, aad), { code: 'EAUTH' });
  });
}

test('AES-SIV-512 Aead wrapper = generic SIV with AD [aad, nonce] and 64-byte key', async () => {
  const key = randomBytes(64);
  const nonce = randomBytes(16);
  const aad = randomBytes(24);
  const pt = randomBytes(1000);
  const sealed = (await createAead('aes-siv', key)).seal(nonce, pt, aad);
  sameBytes(sealed, sivSeal(key, [aad, nonce], pt));
  assert.equal(sealed.length, pt.length + 16);
});

test('SIV argument checks', () => {
  assert.throws(() => new Siv(new Uint8Array(16)), { code: 'EINVAL' });
  assert.throws(() => new Siv(new Uint8Array(63)), { code: 'EINVAL' });
  assert.throws(() => new AesSivAead(new Uint8Array(32)), { code: 'EINVAL' });
  const siv = new Siv(new Uint8Array(32));
  assert.throws(() => siv.open([], new Uint8Array(15)), { code: 'EAUTH' });
  assert.throws(() => siv.seal(new Array<Uint8Array>(127).fill(new Uint8Array(1)), new Uint8Array(1)), { code: 'EINVAL' });
  assert.equal(siv.seal(new Array<Uint8Array>(126).fill(new Uint8Array(1)), new Uint8Array(1)).length, 17);
  assert.throws(() => new Cmac(new Uint8Array(20)), { code: 'EINVAL' });
});
