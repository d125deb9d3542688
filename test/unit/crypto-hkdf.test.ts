/** HKDF-SHA256: RFC 5869 Appendix A (SHA-256 cases) and the gocryptfs subkeys (Documentation/format.md §4.5, §14.2). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hkdf as nobleHkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { HKDF_INFO, hkdfSha256, hkdfSha256Salted } from '../../src/crypto/index.js';

const hex = (s: string): Uint8Array => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const range = (from: number, to: number): Uint8Array => Uint8Array.from({ length: to - from + 1 }, (_, i) => from + i);

interface Rfc5869Case {
  name: string;
  ikm: Uint8Array;
  salt: Uint8Array;
  info: Uint8Array;
  length: number;
  okm: string;
}

const RFC5869: Rfc5869Case[] = [
  {
    name: 'A.1 basic',
    ikm: new Uint8Array(22).fill(0x0b),
    salt: range(0x00, 0x0c),
    info: range(0xf0, 0xf9),
    length: 42,
    okm: '3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865',
  },
  {
    name: 'A.2 longer inputs/outputs',
    ikm: range(0x00, 0x4f),
    salt: range(0x60, 0xaf),
    info: range(0xb0, 0xff),
    length: 82,
    okm:
      'b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c' +
      '59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71' +
      'cc30c58179ec3e87c14c01d5c1f3434f1d87',
  },
  {
    name: 'A.3 zero-length salt/info',
    ikm: new Uint8Array(22).fill(0x0b),
    salt: new Uint8Array(0),
    info: new Uint8Array(0),
    length: 42,
    okm: '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8',
  },
];

for (const c of RFC5869) {
  test(`HKDF-SHA256 RFC 5869 ${c.name}`, () => {
    assert.equal(toHex(hkdfSha256Salted(c.ikm, c.salt, c.info, c.length)), c.okm);
    // Independent implementation as a sanity check of the vector transcription.
    assert.equal(toHex(nobleHkdf(sha256, c.ikm, c.salt, c.info, c.length)), c.okm);
  });
}

test('HKDF: an empty salt equals HashLen zero bytes (RFC 5869 §2.2), which is what hkdfSha256 uses', () => {
  const ikm = range(1, 32);
  assert.deepEqual(hkdfSha256(ikm, 'x', 32), hkdfSha256Salted(ikm, new Uint8Array(32), 'x', 32));
});

test('HKDF info strings are exactly gocryptfs\'s', () => {
  assert.deepEqual(HKDF_INFO, {
    eme: 'EME filename encryption',
    gcm: 'AES-GCM file content encryption',
    siv: 'AES-SIV file content encryption',
    xchacha: 'XChaCha20-Poly1305 file content encryption',
  });
});

test('HKDF gocryptfs reference rows (format.md §4.7, upstream unit test)', () => {
  const zeros = new Uint8Array(32);
  const ones = new Uint8Array(32).fill(1);
  const rows: [Uint8Array, string, string][] = [
    [zeros, HKDF_INFO.eme, '9ba3cddd48c6339c6e56ebe85f0281d6e9051be4104176e65cb0f8a6f77ae6b4'],
    [ones, HKDF_INFO.eme, 'e8a2499f48700b954f31de732efd04abce822f5c948e7fbc0896607be0d36d12'],
    [ones, HKDF_INFO.gcm, '9137f2e67a842484137f3c458f357f204c30d7458f94f432fa989be96854a649'],
    [ones, HKDF_INFO.siv, '0bfa5da7d9724d4753269940d36898e2c0f3717c0fee86ada58b5fd6c08cc26c'],
  ];
  for (const [mk, info, first32] of rows) {
    assert.equal(toHex(hkdfSha256(mk, info, 32)), first32, info);
    // "first 32 bytes of output": a longer output starts with the same bytes (RFC 5869 §2.3 T(1)).
    assert.equal(toHex(hkdfSha256(mk, info, 64).subarray(0, 32)), first32, info);
  }
});

test('HKDF worked example keys (format.md §14.1-§14.2)', () => {
  const scryptOut = hex('bb1234098287f4803351b417242929692c96e2d61c6ef5278fcfbbea725519d3');
  assert.equal(toHex(hkdfSha256(scryptOut, HKDF_INFO.gcm, 32)), 'e8aa6e76969b964ced90a6d4ff878289bc0f24405dbb2cf990c595bceb4393f9');
  const mk = hex('c5f4f8ab43653ca8090026d5a48bbe1d53553dd75ffecaa2f66c30a761e148c1');
  assert.equal(toHex(hkdfSha256(mk, HKDF_INFO.eme, 32)), '2f6cc8103fc24afd6124daceb8d9f3f548b4c8b4e8dc1206f3a50dd28f218e93');
  assert.equal(toHex(hkdfSha256(mk, HKDF_INFO.gcm, 32)), 'ab80d17ce93d9c46600cfca71f79f69ede3801f84322abfa8e515a20b64a57cf');
  assert.equal(
    toHex(hkdfSha256(mk, HKDF_INFO.siv, 64)),
    'af1b4eaf120de3127ccc4e86292c405b35525ad2402ed073cc09b74b11fdb03d' +
      '83ea5f57133a8e54c176108c2637144925ade2314842ed44db835db0e64192f5',
  );
  assert.equal(toHex(hkdfSha256(mk, HKDF_INFO.xchacha, 32)), 'f78dc7c36cccb7398af37c717302e780c889b39e7f2202aba198edd563af4a2d');
});

test('HKDF rejects output lengths outside 1..255*32 with EINVAL', () => {
  for (const bad of [0, -1, 255 * 32 + 1, 1.5, Number.NaN]) {
    assert.throws(() => hkdfSha256(new Uint8Array(32), 'x', bad), { code: 'EINVAL' });
  }
  assert.equal(hkdfSha256(new Uint8Array(32), 'x', 255 * 32).length, 255 * 32);
});
