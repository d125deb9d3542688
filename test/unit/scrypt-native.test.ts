/**
 * scrypt through the native SMix (native/crypto/scrypt_smix.c, with
 * node:crypto's PBKDF2 around it) gives exactly node:crypto's scrypt bytes,
 * and RFC 7914's test vectors. Without the addon these tests are skipped
 * with the reason, and under CI a skip fails the run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, scryptSync } from 'node:crypto';
import { batchBinding } from '../../src/crypto/native-batch.js';
import { deriveKek, newScryptParams, scryptKey } from '../../src/config/scrypt.js';
import { needs } from '../helpers/requirements.js';

const T = needs('native');
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('the batch addon has the native SMix here', T, () => {
  assert.equal(typeof batchBinding()?.scryptSmix, 'function', 'native/build/Release/tscryptfs_batch.node');
});

test('RFC 7914 §12 vectors', T, async () => {
  const vectors: [string, string, number, number, number, string][] = [
    ['', '', 16, 1, 1, '77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906'],
    ['password', 'NaCl', 1024, 8, 16, 'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640'],
    ['pleaseletmein', 'SodiumChloride', 16384, 8, 1, '7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887'],
  ];
  for (const [pw, salt, N, r, p, want] of vectors) {
    assert.equal(hex(await scryptKey(Buffer.from(pw), Buffer.from(salt), N, r, p, 64)), want, `N=${N} r=${r} p=${p}`);
  }
});

test('the native SMix gives node:crypto scrypt bytes for random passwords, salts and parameters', T, async () => {
  for (const [N, r, p] of [[1024, 8, 1], [2048, 1, 1], [4096, 3, 2], [1 << 16, 8, 1], [2, 8, 1], [1024, 9, 1]] as const) {
    const pw = randomBytes(1 + (N % 61));
    const salt = randomBytes(32);
    const want = scryptSync(pw, salt, 32, { N, r, p, maxmem: 256 * N * r + (1 << 20) });
    assert.equal(hex(await scryptKey(pw, salt, N, r, p, 32)), hex(want), `N=${N} r=${r} p=${p}`);
  }
});

test("deriveKek with gocryptfs's default parameters equals node:crypto's scrypt", T, async () => {
  const params = newScryptParams(16, randomBytes(32));
  const pw = Buffer.from('a password');
  const want = scryptSync(pw, params.Salt, 32, { N: params.N, r: params.R, p: params.P, maxmem: 256 << 20 });
  assert.equal(hex(await deriveKek(pw, params)), hex(want));
});

test('the native SMix refuses what is not scrypt', T, () => {
  const smix = batchBinding()!.scryptSmix!;
  assert.throws(() => smix(Buffer.alloc(1024), 1000, 8), /power of two/);
  assert.throws(() => smix(Buffer.alloc(1000), 1024, 8), /multiple of 128r/);
  assert.throws(() => smix(Buffer.alloc(1024), 1024, 0), /power of two/);
});
