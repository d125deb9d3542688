import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Eme, hkdfSha256, HKDF_INFO } from '../../src/crypto/index.js';
import { b64Decode, b64Encode, hashLongName, invalidNameCode, NameCodec, pad16, unpad16 } from '../../src/names/index.js';

// Documentation/format.md §14: the worked example (test/fixtures/worked-example).
const MASTER_KEY = Buffer.from('c5f4f8ab43653ca8090026d5a48bbe1d53553dd75ffecaa2f66c30a761e148c1', 'hex');
const ROOT_IV = Buffer.from('eff65cad160953cda98c6e4c94332873', 'hex');

function codec(opts: Partial<{ raw64: boolean; longNameMax: number }> = {}): NameCodec {
  const eme = new Eme(hkdfSha256(MASTER_KEY, HKDF_INFO.eme, 32));
  return new NameCodec(eme, { raw64: opts.raw64 ?? true, longNameMax: opts.longNameMax ?? 255, longNames: true });
}

test('EME key and one_byte.txt / dir1 encrypt as in format.md §14.2-§14.3', () => {
  assert.equal(Buffer.from(hkdfSha256(MASTER_KEY, HKDF_INFO.eme, 32)).toString('hex'), '2f6cc8103fc24afd6124daceb8d9f3f548b4c8b4e8dc1206f3a50dd28f218e93');
  const c = codec();
  assert.equal(c.encryptName(Buffer.from('one_byte.txt'), ROOT_IV), '8rFYouUd3gksl_wgUtQhEQ');
  assert.equal(c.encryptName(Buffer.from('dir1'), ROOT_IV), 'mRIRrXZ3fOzZSslFbbQjJg');
  assert.equal(c.decryptName('8rFYouUd3gksl_wgUtQhEQ', ROOT_IV)?.toString(), 'one_byte.txt');
});

test('the long name of longfile_+221x hashes as in format.md §14.6', () => {
  const c = codec();
  const cname = c.encryptName(Buffer.from('longfile_' + 'x'.repeat(221)), ROOT_IV);
  assert.equal(cname.length, 320);
  assert.equal(c.needsHash(cname), true);
  assert.equal(c.diskName(cname), 'gocryptfs.longname.U5sZbqKrCMUReGUbUEJJolqjvsDrOka8BBSHw8QfISE');
  assert.equal(hashLongName(cname, false).length, 'gocryptfs.longname.'.length + 44);
});

test('175-byte names are kept, 176-byte names are hashed (default LongNameMax)', () => {
  const c = codec();
  assert.equal(c.encryptName(Buffer.alloc(175, 0x61), ROOT_IV).length, 235);
  assert.equal(c.needsHash(c.encryptName(Buffer.alloc(175, 0x61), ROOT_IV)), false);
  assert.equal(c.needsHash(c.encryptName(Buffer.alloc(176, 0x61), ROOT_IV)), true);
  const c62 = codec({ longNameMax: 62 });
  assert.equal(c62.needsHash(c62.encryptName(Buffer.alloc(31, 0x61), ROOT_IV)), false);
  assert.equal(c62.needsHash(c62.encryptName(Buffer.alloc(32, 0x61), ROOT_IV)), true);
});

test('xattr names: user.test -> user.gocryptfs.ze0NwBSX1WRH5iPA3KQKyA; ACLs pass through', () => {
  const c = codec();
  assert.equal(c.encryptXattrName('user.test'), 'user.gocryptfs.ze0NwBSX1WRH5iPA3KQKyA');
  assert.equal(c.decryptXattrName('user.gocryptfs.ze0NwBSX1WRH5iPA3KQKyA'), 'user.test');
  assert.equal(c.encryptXattrName('system.posix_acl_access'), 'system.posix_acl_access');
  assert.equal(c.decryptXattrName('security.selinux'), null);
});

test('names that decrypt to something invalid are rejected, never returned', () => {
  const c = codec();
  const eme = new Eme(hkdfSha256(MASTER_KEY, HKDF_INFO.eme, 32));
  for (const bad of ['.', '..', 'a/b', 'a\0b']) {
    const cname = b64Encode(eme.encrypt(ROOT_IV, pad16(Buffer.from(bad))), true);
    assert.equal(c.decryptName(cname, ROOT_IV), null, JSON.stringify(bad));
  }
  // Not base64, wrong length, bad padding after decryption.
  assert.equal(c.decryptName('invalid_name_here', ROOT_IV), null);
  assert.equal(c.decryptName('AAAAAAAAAAAAAAAAAAAAAA', ROOT_IV), null);
  assert.equal(c.decryptName('', ROOT_IV), null);
});

test('base64 decoding is strict: one encoding per byte string', () => {
  const data = Buffer.from([0xfb, 0xff]);
  assert.equal(b64Encode(data, true), '-_8');
  assert.equal(b64Encode(data, false), '-_8=');
  assert.deepEqual(b64Decode('-_8', true), data);
  assert.deepEqual(b64Decode('-_8=', false), data);
  assert.equal(b64Decode('-_8=', true), null); // padding in raw mode
  assert.equal(b64Decode('-_8', false), null); // missing padding
  assert.equal(b64Decode('-_9', true), null); // non-zero trailing bits
  assert.equal(b64Decode('-_\n8', true), null); // CR/LF
  assert.equal(b64Decode('+/8', true), null); // standard alphabet
});

test('pad16/unpad16 and name validation', () => {
  assert.equal(pad16(Buffer.alloc(16)).length, 32);
  assert.deepEqual(unpad16(pad16(Buffer.from('abc'))), Buffer.from('abc'));
  assert.equal(unpad16(Buffer.alloc(16, 0)), null);
  assert.equal(unpad16(Buffer.alloc(16, 16)), null); // padding may not be the whole block
  assert.equal(invalidNameCode(Buffer.alloc(255, 0x61)), null);
  assert.equal(invalidNameCode(Buffer.alloc(256, 0x61)), 'ENAMETOOLONG');
  assert.equal(invalidNameCode(Buffer.from('')), 'EINVAL');
  assert.equal(invalidNameCode(Buffer.from('...')), null);
});
