/**
 * The native lookup's names (native/crypto/name_cipher.c) are the bytes
 * src/names/name-codec.ts makes: format.md §14's worked example, then every
 * length from 1 to 255 bytes (ASCII and multi-byte UTF-8) under random keys
 * and IVs, with long names hashed at the default and the smallest
 * LongNameMax, in unpadded and padded base64. And back, as the native
 * listing reads names: every length decrypts to what decryptName gives,
 * and every string that is no name (not canonical base64url, a bad
 * padding, a plaintext with '/', NUL, "." or "..", random ciphertext) is
 * refused by both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Eme, hkdfSha256, HKDF_INFO } from '../../src/crypto/index.js';
import { fastPathBinding } from '../../src/fuse/fast-path-addon.js';
import { NameCodec } from '../../src/names/index.js';
import { needs } from '../helpers/requirements.js';

const T = needs('native');
const MASTER_KEY = Buffer.from('c5f4f8ab43653ca8090026d5a48bbe1d53553dd75ffecaa2f66c30a761e148c1', 'hex');
const ROOT_IV = Buffer.from('eff65cad160953cda98c6e4c94332873', 'hex');

function jsDiskName(key: Uint8Array, iv: Uint8Array, name: Buffer, longNameMax: number, raw64: boolean): [string, boolean] {
  const c = new NameCodec(new Eme(key), { raw64, longNameMax, longNames: true });
  const cname = c.encryptName(name, iv);
  const disk = c.diskName(cname);
  return [disk, disk !== cname];
}

test('native names: format.md §14 (one_byte.txt, dir1, longfile_+221x)', T, () => {
  const b = fastPathBinding()!;
  const key = hkdfSha256(MASTER_KEY, HKDF_INFO.eme, 32);
  assert.deepEqual(b.nameEncrypt(key, ROOT_IV, Buffer.from('one_byte.txt'), 255, true), ['8rFYouUd3gksl_wgUtQhEQ', false]);
  assert.deepEqual(b.nameEncrypt(key, ROOT_IV, Buffer.from('dir1'), 255, true), ['mRIRrXZ3fOzZSslFbbQjJg', false]);
  assert.deepEqual(b.nameEncrypt(key, ROOT_IV, Buffer.from('longfile_' + 'x'.repeat(221)), 255, true), [
    'gocryptfs.longname.U5sZbqKrCMUReGUbUEJJolqjvsDrOka8BBSHw8QfISE',
    true,
  ]);
});

test('native names: every length, ASCII and UTF-8, as name-codec.ts makes them', T, () => {
  const b = fastPathBinding()!;
  for (const [longNameMax, raw64] of [
    [255, true],
    [62, true],
    [255, false],
  ] as const) {
    const key = randomBytes(32);
    for (let len = 1; len <= 255; len++) {
      const iv = randomBytes(16);
      const ascii = Buffer.alloc(len, 0x61 + (len % 26));
      const utf8 = Buffer.from('é€😀'.repeat(64), 'utf8').subarray(0, len);
      for (const name of [ascii, utf8, randomBytes(len)]) {
        assert.deepEqual(b.nameEncrypt(key, iv, name, longNameMax, raw64), jsDiskName(key, iv, name, longNameMax, raw64), `${len} bytes, ${longNameMax}, raw64 ${raw64}`);
      }
    }
  }
});

test('native names: bad arguments are refused', T, () => {
  const b = fastPathBinding()!;
  const key = randomBytes(32);
  assert.throws(() => b.nameEncrypt(key, ROOT_IV, Buffer.alloc(0), 255, true), /bad argument/);
  assert.throws(() => b.nameEncrypt(key, ROOT_IV, Buffer.alloc(256, 0x61), 255, true), /bad argument/);
  assert.throws(() => b.nameEncrypt(key, Buffer.alloc(8), Buffer.from('a'), 255, true), /bad argument/);
  assert.throws(() => b.nameEncrypt(key.subarray(0, 16), ROOT_IV, Buffer.from('a'), 255, true), /bad argument/);
});

test('native names: decrypted as decryptName decrypts them, every length, padded and not', T, () => {
  const b = fastPathBinding()!;
  for (const raw64 of [true, false]) {
    const key = randomBytes(32);
    const c = new NameCodec(new Eme(key), { raw64, longNameMax: 255, longNames: true });
    for (let len = 1; len <= 255; len++) {
      const iv = randomBytes(16);
      const utf8 = Buffer.from('é€😀'.repeat(64), 'utf8').subarray(0, len);
      for (const name of [Buffer.alloc(len, 0x61 + (len % 26)), utf8, randomBytes(len)]) {
        const cname = c.encryptName(name, iv);
        const expected = c.decryptName(cname, iv);
        assert.deepEqual(b.nameDecrypt(key, iv, cname, raw64), expected, `${len} bytes, raw64 ${raw64}`);
        if (expected !== null) assert.deepEqual(expected, name);
      }
    }
  }
});

test('native names: what is no name is refused by both', T, () => {
  const b = fastPathBinding()!;
  const key = randomBytes(32);
  const iv = randomBytes(16);
  for (const raw64 of [true, false]) {
    const c = new NameCodec(new Eme(key), { raw64, longNameMax: 255, longNames: true });
    const same = (cname: string, why: string): void => assert.deepEqual(b.nameDecrypt(key, iv, cname, raw64), c.decryptName(cname, iv), `${why}: ${cname}`);
    for (const bad of ['a/b', 'a\0b', '.', '..', '\0', '/']) {
      const cname = c.encryptName(Buffer.from(bad, 'utf8'), iv);
      assert.equal(c.decryptName(cname, iv), null, bad);
      same(cname, bad);
    }
    const good = c.encryptName(Buffer.from('name'), iv);
    same(good, 'a name');
    for (let i = 0; i < good.length; i++) {
      // every character changed: another ciphertext (almost always a bad padding) or a non-canonical encoding
      for (const ch of ['A', 'B', 'Q', 'g', 'w', '-', '_', '=', '+', '/', '.', '\u00e9']) same(good.slice(0, i) + ch + good.slice(i + 1), `char ${i} -> ${ch}`);
    }
    for (const extra of ['', '=', '==', '===', 'A', 'AA', 'AAA', 'AAAA']) same(good + extra, `suffix ${extra}`);
    same('', 'empty');
    for (let n = 0; n < 300; n++) {
      const bytes = randomBytes(1 + (n % 40));
      const s = bytes.toString('base64url');
      same(raw64 ? s : s + '='.repeat((4 - (s.length % 4)) % 4), `random ${bytes.length} bytes`);
      same(s + 'A', 'random + A');
    }
    // 17 blocks: more than 255 bytes of plaintext, refused by decryptName too
    same(c.encryptName(Buffer.alloc(256, 0x61).subarray(0, 255), iv), '255 bytes');
  }
});

test('native names: a bad argument to nameDecrypt is refused', T, () => {
  const b = fastPathBinding()!;
  const key = randomBytes(32);
  assert.throws(() => b.nameDecrypt(key, Buffer.alloc(8), 'AAAA', true), /bad argument/);
  assert.throws(() => b.nameDecrypt(key.subarray(0, 16), ROOT_IV, 'AAAA', true), /bad argument/);
  assert.throws(() => b.nameDecrypt(key, ROOT_IV, 'A'.repeat(400), true), /bad argument/);
});
