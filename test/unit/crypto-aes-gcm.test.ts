/** AES-256-GCM with 16-byte (content) and 12-byte (legacy config) nonces, on both backends. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scryptSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAead, type BackendName } from '../../src/crypto/index.js';
import { EXAMPLES_DIR, WORKED_EXAMPLE_DIR } from '../helpers/paths.js';

const hex = (s: string): Uint8Array => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const toHex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const BACKENDS: BackendName[] = ['node', 'noble'];
/** AAD of a config key wrap, a symlink or an xattr value: BE64(0) (Documentation/format.md §4.2, §5.7). */
const BLOCK0_AAD = new Uint8Array(8);

interface Conf {
  EncryptedKey: string;
  ScryptObject: { Salt: string; N: number; R: number; P: number; KeyLen: number };
}

for (const backend of BACKENDS) {
  test(`AES-GCM known answer: one_byte.txt of the worked example (format.md §14.4) [${backend}]`, async () => {
    const aead = await createAead('aes-gcm', hex('ab80d17ce93d9c46600cfca71f79f69ede3801f84322abfa8e515a20b64a57cf'), { backend });
    assert.equal(aead.nonceSize, 16);
    const nonce = hex('c03a7688fc408fcc575f8408021b2beb');
    const aad = hex('0000000000000000 7c164800d87d1e4be5769793927bc4bd');
    const sealed = hex('a3 1ebf2e0e39ebc7b4279e07237f0e7eeb');
    assert.equal(Buffer.from(aead.open(nonce, sealed, aad)).toString(), 'x');
    assert.equal(toHex(aead.seal(nonce, Buffer.from('x'), aad)), toHex(sealed));
    // The same bytes are in the cipher file: header(18) || nonce || ct || tag.
    const file = readFileSync(join(WORKED_EXAMPLE_DIR, 'cipher', '8rFYouUd3gksl_wgUtQhEQ'));
    assert.equal(toHex(file), '0002' + '7c164800d87d1e4be5769793927bc4bd' + toHex(nonce) + toHex(sealed));
  });

  test(`AES-GCM 16-byte nonce: unwrap the worked example's master key (format.md §4.2, §14.1) [${backend}]`, async () => {
    const conf = JSON.parse(readFileSync(join(WORKED_EXAMPLE_DIR, 'cipher', 'gocryptfs.conf'), 'utf8')) as Conf;
    const wrapped = Buffer.from(conf.EncryptedKey, 'base64');
    assert.equal(wrapped.length, 64);
    const aead = await createAead('aes-gcm', hex('e8aa6e76969b964ced90a6d4ff878289bc0f24405dbb2cf990c595bceb4393f9'), { backend });
    const mk = aead.open(wrapped.subarray(0, 16), wrapped.subarray(16), BLOCK0_AAD);
    assert.equal(toHex(mk), 'c5f4f8ab43653ca8090026d5a48bbe1d53553dd75ffecaa2f66c30a761e148c1');
  });

  test(`AES-GCM 12-byte nonce: unwrap the legacy v0.9 example's master key (no HKDF) [${backend}]`, async () => {
    const conf = JSON.parse(readFileSync(join(EXAMPLES_DIR, 'v0.9', 'gocryptfs.conf'), 'utf8')) as Conf;
    const s = conf.ScryptObject;
    const kek = scryptSync('test', Buffer.from(s.Salt, 'base64'), s.KeyLen, { N: s.N, r: s.R, p: s.P });
    const wrapped = Buffer.from(conf.EncryptedKey, 'base64');
    assert.equal(wrapped.length, 60);
    const aead = await createAead('aes-gcm', kek, { backend, nonceSize: 12 });
    assert.equal(aead.nonceSize, 12);
    const mk = aead.open(wrapped.subarray(0, 12), wrapped.subarray(12), BLOCK0_AAD);
    assert.equal(toHex(mk), '1cafe3f4bc3164662214c47cecd89bf34e078fe4f5faeea78b7cab02884f5e1c');
    assert.equal(toHex(aead.seal(wrapped.subarray(0, 12), mk, BLOCK0_AAD)), toHex(wrapped.subarray(12)));
    assert.throws(() => aead.open(wrapped.subarray(0, 12), wrapped.subarray(12), new Uint8Array(0)), { code: 'EAUTH' });
  });

  // McGrew & Viega, "The Galois/Counter Mode of Operation", test case 16 (AES-256, 96-bit IV).
  test(`AES-GCM published test case 16 (12-byte nonce) [${backend}]`, async () => {
    const key = hex('feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308');
    const iv = hex('cafebabefacedbaddecaf888');
    const pt = hex(
      'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72' +
        '1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39',
    );
    const aad = hex('feedfacedeadbeeffeedfacedeadbeefabaddad2');
    const sealed = (await createAead('aes-gcm', key, { backend, nonceSize: 12 })).seal(iv, pt, aad);
    assert.equal(
      toHex(sealed),
      '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa' +
        '8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662' +
        '76fc6ece0f4e1768cddf8853bb2d551b',
    );
  });

  test(`AES-GCM nonce size is enforced [${backend}]`, async () => {
    const gcm16 = await createAead('aes-gcm', new Uint8Array(32), { backend });
    assert.throws(() => gcm16.seal(new Uint8Array(12), new Uint8Array(1), new Uint8Array(0)), { code: 'EINVAL' });
    const gcm12 = await createAead('aes-gcm', new Uint8Array(32), { backend, nonceSize: 12 });
    assert.throws(() => gcm12.open(new Uint8Array(16), new Uint8Array(17), new Uint8Array(0)), { code: 'EINVAL' });
    await assert.rejects(createAead('aes-gcm', new Uint8Array(32), { backend, nonceSize: 8 }), { code: 'EINVAL' });
    await assert.rejects(createAead('aes-gcm', new Uint8Array(32), { backend, nonceSize: 24 }), { code: 'EINVAL' });
  });
}
