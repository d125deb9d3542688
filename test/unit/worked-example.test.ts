/**
 * Documentation/format.md §14, the worked example, from the frozen files it
 * quotes (test/fixtures/worked-example, made by gocryptfs 2.3): password to
 * master key, the subkeys, two names, one file, a symlink, an xattr and a
 * long name, each through tscryptfs's own code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, scryptSync } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseConf, unlockConf } from '../../src/config/index.js';
import { createAead, Eme, hkdfSha256, HKDF_INFO } from '../../src/crypto/index.js';
import { NameCodec } from '../../src/names/index.js';
import { WORKED_EXAMPLE_DIR } from '../helpers/paths.js';

const dir = join(WORKED_EXAMPLE_DIR, 'cipher');
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const conf = parseConf(readFileSync(join(dir, 'gocryptfs.conf'), 'utf8'));
const manifest = JSON.parse(readFileSync(join(WORKED_EXAMPLE_DIR, 'cipher_manifest.json'), 'utf8')) as { path: string; xattrs?: Record<string, { hex: string }> }[];
const MK = 'c5f4f8ab43653ca8090026d5a48bbe1d53553dd75ffecaa2f66c30a761e148c1';
const mk = Buffer.from(MK, 'hex');
const rootIv = readFileSync(join(dir, 'gocryptfs.diriv'));
const names = new NameCodec(new Eme(hkdfSha256(mk, HKDF_INFO.eme, 32)), { raw64: true, longNameMax: 255, longNames: true });
const gcm = await createAead('aes-gcm', hkdfSha256(mk, HKDF_INFO.gcm, 32));
const BE64_0 = new Uint8Array(8);

test('§14.1: password "test" -> scrypt -> HKDF wrap key -> the master key', async () => {
  const s = conf.ScryptObject;
  assert.equal(hex(s.Salt), '605cd6f56412c6b7024a57b0e021a74f9c3d14b33cbeaf7d6d539efc4795b73b');
  const kek = scryptSync('test', s.Salt, s.KeyLen, { N: s.N, r: s.R, p: s.P });
  assert.equal(hex(kek), 'bb1234098287f4803351b417242929692c96e2d61c6ef5278fcfbbea725519d3');
  assert.equal(hex(hkdfSha256(kek, HKDF_INFO.gcm, 32)), 'e8aa6e76969b964ced90a6d4ff878289bc0f24405dbb2cf990c595bceb4393f9');
  assert.equal(hex(conf.EncryptedKey.subarray(0, 16)), '04edaf4e9b72b56c45307a6925475cd5');
  assert.equal(hex(await unlockConf(conf, Buffer.from('test'))), MK);
  assert.equal(readFileSync(join(WORKED_EXAMPLE_DIR, 'masterkey.txt'), 'utf8').trim(), MK);
});

test('§14.2-§14.3: the root IV and two names', () => {
  assert.equal(hex(rootIv), 'eff65cad160953cda98c6e4c94332873');
  assert.equal(names.encryptName(Buffer.from('one_byte.txt'), rootIv), '8rFYouUd3gksl_wgUtQhEQ');
  assert.equal(names.encryptName(Buffer.from('dir1'), rootIv), 'mRIRrXZ3fOzZSslFbbQjJg');
});

test('§14.4: 8rFYouUd3gksl_wgUtQhEQ is header, nonce, "x" sealed, tag', () => {
  const file = readFileSync(join(dir, '8rFYouUd3gksl_wgUtQhEQ'));
  assert.equal(file.length, 51);
  assert.equal(hex(file.subarray(0, 18)), '00027c164800d87d1e4be5769793927bc4bd');
  const nonce = file.subarray(18, 34);
  assert.equal(hex(nonce), 'c03a7688fc408fcc575f8408021b2beb');
  const aad = Buffer.concat([Buffer.alloc(8), file.subarray(2, 18)]);
  assert.equal(Buffer.from(gcm.open(nonce, file.subarray(34), aad)).toString(), 'x');
});

test('§14.5: the symlink and the xattr', () => {
  const link = '_KVMILVGMTdJcNN6xGKZTQ';
  assert.equal(names.decryptName(link, rootIv)?.toString(), 'symlink_rel');
  const target = Buffer.from(readlinkSync(join(dir, link)), 'base64url');
  assert.equal(target.length, 44);
  assert.equal(hex(target.subarray(0, 16)), 'b805089c896be1ce669052b782dddb28');
  assert.equal(Buffer.from(gcm.open(target.subarray(0, 16), target.subarray(16), BE64_0)).toString(), 'one_byte.txt');
  const xname = names.encryptXattrName('user.test');
  assert.equal(xname, 'user.gocryptfs.ze0NwBSX1WRH5iPA3KQKyA');
  const value = Buffer.from(manifest.find((e) => e.path === '8rFYouUd3gksl_wgUtQhEQ')!.xattrs![xname]!.hex, 'hex');
  assert.equal(value.length, 43);
  assert.equal(Buffer.from(gcm.open(value.subarray(0, 16), value.subarray(16), BE64_0)).toString(), 'hello xattr');
});

test('§14.6: the long name, its .name file and its hash', () => {
  const hashed = 'gocryptfs.longname.U5sZbqKrCMUReGUbUEJJolqjvsDrOka8BBSHw8QfISE';
  const full = readFileSync(join(dir, `${hashed}.name`), 'utf8');
  assert.equal(full.length, 320);
  assert.equal(createHash('sha256').update(full).digest('hex'), '539b196ea2ab08c51178651b504249a25aa3bec0eb3a46bc041487c3c41f2121');
  assert.equal(names.diskName(full), hashed);
  assert.equal(names.decryptName(full, rootIv)?.toString(), `longfile_${'x'.repeat(221)}`);
  const file = readFileSync(join(dir, hashed));
  const aad = Buffer.concat([Buffer.alloc(8), file.subarray(2, 18)]);
  assert.equal(Buffer.from(gcm.open(file.subarray(18, 34), file.subarray(34), aad)).toString(), 'long name\n');
});
