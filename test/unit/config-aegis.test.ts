/**
 * The aegis branch's config rules (Documentation/format.md §3.4, §3.5): the AEGIS256X2 flag is
 * known, excludes GCMIV128 and XChaCha20Poly1305, selects the 'aegis'
 * content cipher (after XChaCha, before AES-SIV), and -init writes it where
 * GCMIV128 would go.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentEncryptionName, flagsFromFormat, formatFromFlags, isKnownFlag, validateFlags, type FormatOptions } from '../../src/config/index.js';

const NAMES = ['DirIV', 'EMENames', 'LongNames', 'Raw64'];

test('AEGIS256X2 is a known flag and -init -aegis writes HKDF AEGIS256X2 DirIV EMENames LongNames Raw64', () => {
  assert.ok(isKnownFlag('AEGIS256X2'));
  const f: FormatOptions = { cipher: 'aegis', hkdf: true, plaintextNames: false, dirIV: true, raw64: true, longNameMax: 255, longNames: true };
  assert.deepEqual(flagsFromFormat(f), ['HKDF', 'AEGIS256X2', ...NAMES]);
  assert.deepEqual(flagsFromFormat({ ...f, plaintextNames: true, dirIV: false, raw64: false, longNames: false }), ['HKDF', 'AEGIS256X2', 'PlaintextNames']);
  assert.deepEqual(flagsFromFormat({ ...f, longNameMax: 62 }), ['HKDF', 'AEGIS256X2', 'DirIV', 'LongNameMax', 'EMENames', 'LongNames', 'Raw64']);
  validateFlags(flagsFromFormat(f), 0);
});

test('validation: AEGIS256X2 excludes GCMIV128 and XChaCha20Poly1305, needs no GCMIV128, does not check HKDF (as the branch)', () => {
  validateFlags(['HKDF', 'AEGIS256X2', ...NAMES], 0);
  validateFlags(['AEGIS256X2', ...NAMES], 0); // the key derivation refuses it later
  assert.throws(() => validateFlags(['HKDF', 'GCMIV128', 'AEGIS256X2', ...NAMES], 0), { code: 'ECONFIGINVALID', message: /AEGIS conflicts with GCMIV128/ });
  assert.throws(() => validateFlags(['HKDF', 'XChaCha20Poly1305', 'AEGIS256X2', ...NAMES], 0), {
    code: 'ECONFIGINVALID',
    message: /AEGIS conflicts with XChaCha20Poly1305/,
  });
  assert.throws(() => validateFlags(['HKDF', 'AEGIS256X2', 'AESSIV', ...NAMES], 0), { code: 'ECONFIGINVALID' });
  // Unchanged: without XChaCha, AEGIS or SIV, GCMIV128 is still required.
  assert.throws(() => validateFlags(['HKDF', ...NAMES], 0), { code: 'ECONFIGINVALID', message: /GCMIV128 is missing/ });
});

test('cipher selection: XChaCha20Poly1305, then AEGIS256X2, then AESSIV, else AES-GCM; -info name Aegis256X2', () => {
  assert.equal(formatFromFlags(['HKDF', 'AEGIS256X2', ...NAMES], 0).cipher, 'aegis');
  assert.equal(formatFromFlags(['HKDF', 'XChaCha20Poly1305', 'AEGIS256X2'], 0).cipher, 'xchacha');
  assert.equal(formatFromFlags(['HKDF', 'AEGIS256X2', 'AESSIV'], 0).cipher, 'aegis');
  assert.equal(formatFromFlags(['HKDF', 'GCMIV128', 'AESSIV'], 0).cipher, 'aes-siv');
  assert.equal(contentEncryptionName('aegis'), 'Aegis256X2');
});
