import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scryptAsync as nobleScrypt } from '@noble/hashes/scrypt.js';
import {
  confFormat,
  createConf,
  deriveKek,
  newScryptParams,
  parseConf,
  rewrapConf,
  serializeConf,
  unlockConf,
  validateConf,
  formatMasterKey,
  parseMasterKeyHex,
  type ConfFile,
} from '../../src/config/index.js';
import { formatFromInitOptions } from '../../src/vault/index.js';
import { FORWARD_VECTORS, fixtureMasterKey } from '../helpers/fixtures.js';
import { EXAMPLES_DIR, VECTORS_DIR } from '../helpers/paths.js';

const conf = (fx: string): string => readFileSync(join(VECTORS_DIR, fx, 'cipher', 'gocryptfs.conf'), 'utf8');
const pw = Buffer.from('test');

test('gocryptfs 2.3 configs re-serialise byte for byte', () => {
  for (const fx of FORWARD_VECTORS) assert.equal(serializeConf(parseConf(conf(fx))), conf(fx), fx);
});

test('every fixture config unlocks to its recorded master key', async () => {
  for (const fx of FORWARD_VECTORS) {
    const c = parseConf(conf(fx));
    validateConf(c);
    const mk = await unlockConf(c, pw);
    assert.equal(Buffer.from(mk).toString('hex'), fixtureMasterKey(fx), fx);
  }
  // v0.9: no HKDF, 96-bit wrap nonce, no Creator.
  const old = parseConf(readFileSync(join(EXAMPLES_DIR, 'v0.9', 'gocryptfs.conf'), 'utf8'));
  validateConf(old);
  assert.equal(old.Creator, undefined);
  assert.equal(formatMasterKey(await unlockConf(old, pw)), '1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c');
});

test('scrypt through node:crypto derives what an independent implementation (@noble/hashes) derives', async () => {
  const salt = Uint8Array.from({ length: 32 }, (_, i) => i);
  // The fixtures' N (2^10) and -init's default (2^16), which needs the raised maxmem.
  for (const logN of [10, 16]) {
    const params = newScryptParams(logN, salt);
    const ours = await deriveKek(pw, params);
    const reference = await nobleScrypt(pw, salt, { N: params.N, r: params.R, p: params.P, dkLen: params.KeyLen });
    assert.equal(Buffer.from(ours).toString('hex'), Buffer.from(reference).toString('hex'), `N=2^${logN}`);
  }
});

test('wrong password is EPASSWORD', async () => {
  await assert.rejects(unlockConf(parseConf(conf('aesgcm')), Buffer.from('nope')), { code: 'EPASSWORD' });
});

test('keys match case-insensitively and unknown keys are ignored, like Go', () => {
  const lower = conf('aesgcm').replace('"FeatureFlags"', '"featureflags"').replace('"Version": 2,', '"Version": 2, "Whatever": 1,');
  const c = parseConf(lower);
  assert.deepEqual(c.FeatureFlags, parseConf(conf('aesgcm')).FeatureFlags);
});

function mutated(fn: (o: Record<string, unknown>) => void): ConfFile {
  const o = JSON.parse(conf('aesgcm')) as Record<string, unknown>;
  fn(o);
  return parseConf(JSON.stringify(o));
}

test('validation refuses what gocryptfs refuses', () => {
  const cases: Array<[string, (o: Record<string, unknown>) => void]> = [
    ['unknown flag', (o) => (o.FeatureFlags as string[]).push('Quantum')],
    ['version 3', (o) => (o.Version = 3)],
    ['N=512', (o) => ((o.ScryptObject as Record<string, number>).N = 512)],
    ['N not a power of two', (o) => ((o.ScryptObject as Record<string, number>).N = 3000)],
    ['R=4', (o) => ((o.ScryptObject as Record<string, number>).R = 4)],
    ['short salt', (o) => ((o.ScryptObject as Record<string, string>).Salt = 'AAAA')],
    ['no GCMIV128', (o) => (o.FeatureFlags = ['HKDF', 'DirIV', 'EMENames', 'LongNames', 'Raw64'])],
    ['xchacha + siv', (o) => (o.FeatureFlags = ['HKDF', 'XChaCha20Poly1305', 'AESSIV'])],
    ['plaintextnames + DirIV', (o) => (o.FeatureFlags = ['HKDF', 'GCMIV128', 'PlaintextNames', 'DirIV'])],
    ['LongNameMax field without flag', (o) => (o.LongNameMax = 100)],
  ];
  for (const [what, fn] of cases) assert.throws(() => validateConf(mutated(fn)), { code: 'ECONFIGINVALID' }, what);
});

test('malformed configs are ECONFIGPARSE', () => {
  for (const text of ['', '   ', 'not json', '[]', '{"EncryptedKey": 5}', conf('aesgcm').replace(/"N": 1024/, '"N": "x"')]) {
    assert.throws(() => parseConf(text), { code: 'ECONFIGPARSE' }, JSON.stringify(text.slice(0, 20)));
  }
});

test('-init flags per variant are exactly gocryptfs 2.3 ones (format.md §3.5)', async () => {
  const expect: Array<[Parameters<typeof formatFromInitOptions>[0], string]> = [
    [{}, 'aesgcm'],
    [{ cipher: 'aes-siv' }, 'aessiv'],
    [{ cipher: 'xchacha' }, 'xchacha'],
    [{ plaintextNames: true }, 'plaintextnames'],
    [{ deterministicNames: true }, 'deterministic-names'],
    [{ longNameMax: 62 }, 'longnamemax62'],
  ];
  for (const [opts, fx] of expect) {
    const { conf: c } = await createConf({ format: formatFromInitOptions(opts), password: pw, scryptLogN: 10 });
    const want = parseConf(conf(fx));
    assert.deepEqual(c.FeatureFlags, want.FeatureFlags, fx);
    assert.equal(c.LongNameMax, want.LongNameMax, fx);
    assert.deepEqual(confFormat(c), confFormat(want), fx);
  }
});

test('rewrap keeps the key and flags, changes salt and password', async () => {
  const { conf: c, masterKey } = await createConf({ format: formatFromInitOptions({}), password: pw, scryptLogN: 10 });
  const c2 = await rewrapConf(c, masterKey, Buffer.from('new'), 11);
  assert.deepEqual(c2.FeatureFlags, c.FeatureFlags);
  assert.equal(c2.ScryptObject.N, 2048);
  assert.notDeepEqual(c2.ScryptObject.Salt, c.ScryptObject.Salt);
  assert.deepEqual(Buffer.from(await unlockConf(c2, Buffer.from('new'))), Buffer.from(masterKey));
  await assert.rejects(unlockConf(c2, pw), { code: 'EPASSWORD' });
});

test('master key hex parsing', () => {
  const k = parseMasterKeyHex('1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c');
  assert.equal(k.length, 32);
  assert.throws(() => parseMasterKeyHex('abcd'), { code: 'EMASTERKEY' });
  assert.throws(() => parseMasterKeyHex('zz'.repeat(32)), { code: 'EMASTERKEY' });
});
