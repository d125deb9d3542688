/**
 * -json: one JSON document on stdout and nothing else there, messages on
 * stderr, exit codes as without it; every document valid against its
 * schema in Documentation/schemas/ and saying what the text output says.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fsp, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, FIXTURES, initVault, jsonOf, jsonSchema, lines, ROOT, speedWithoutAegis, tempDir, tscryptfs } from './helpers.js';
import { validate } from '../helpers/json-schema.js';
import { SPEED_ROWS } from '../../src/cli/speed.js';

let tmp: string;
before(async () => {
  tmp = await tempDir('tscryptfs-json-');
});
after(async () => {
  await cleanup(tmp);
});

describe('-info -json', () => {
  const fixtures = readdirSync(FIXTURES).filter((n) => existsSync(join(FIXTURES, n, 'info.txt')) && existsSync(join(FIXTURES, n, 'cipher')));
  for (const name of fixtures) {
    test(`${name}: the text output's facts, valid against info.schema.json`, async () => {
      const cipher = join(FIXTURES, name, 'cipher');
      const r = await tscryptfs(['-info', '-json', cipher]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      const doc = jsonOf(r, 'info');
      const text = Object.fromEntries(lines(readFileSync(join(FIXTURES, name, 'info.txt'), 'utf8')).map((l) => [l.slice(0, l.indexOf(':')), l.slice(19)]));
      const scrypt = doc.scrypt as Record<string, number>;
      assert.equal(doc.configPath, join(cipher, 'gocryptfs.conf'));
      assert.equal(doc.creator, text.Creator);
      assert.equal((doc.featureFlags as string[]).join(' '), text.FeatureFlags);
      assert.equal(`${doc.encryptedKeyLength}B`, text.EncryptedKey);
      assert.equal(`Salt=${scrypt.saltLength}B N=${scrypt.N} R=${scrypt.R} P=${scrypt.P} KeyLen=${scrypt.keyLen}`, text.ScryptObject);
      assert.equal(doc.contentEncryption, text.contentEncryption);
    });
  }

  test('the format as read: -deterministic-names, -longnamemax, -xchacha', async () => {
    const dir = await initVault(tmp, 'fmt', ['-xchacha', '-deterministic-names', '-longnamemax', '100']);
    const doc = jsonOf(await tscryptfs(['-info', '-json', dir]), 'info');
    assert.deepEqual(doc.format, { cipher: 'xchacha', plaintextNames: false, deterministicNames: true, raw64: true, hkdf: true, longNameMax: 100 });
  });

  test('-config: the message goes to stderr, stdout stays the document', async () => {
    const dir = await initVault(tmp, 'custom');
    const conf = join(tmp, 'custom.conf');
    await fsp.rename(join(dir, 'gocryptfs.conf'), conf);
    const r = await tscryptfs(['-info', '-json', '-config', conf, dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(jsonOf(r, 'info').configPath, conf);
    assert.equal(r.stderr, `Using config file at custom location ${conf}\n`);
  });

  test('no config: exit 8 as without -json, nothing on stdout', async () => {
    const empty = join(tmp, 'empty');
    await fsp.mkdir(empty);
    const r = await tscryptfs(['-info', '-json', empty]);
    assert.equal(r.code, 8);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^tscryptfs: Loading config file failed: /);
  });
});

test('-version -json: the parts of the -version line, valid against version.schema.json', async () => {
  const r = await tscryptfs(['-version', '-json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const doc = jsonOf(r, 'version');
  const line = (await tscryptfs(['-version'])).stdout;
  assert.ok(line.startsWith(`tscryptfs ${doc.tscryptfs}; node ${doc.node}; ${doc.platform}/${doc.arch}; `), line);
  assert.ok(line.includes(`; libfuse ${doc.libfuse ?? 'none'}; OpenSSL ${doc.openssl}; `), line);
  assert.equal(doc.fuseProblem === null, doc.fuseSources !== null);
});

test('-speed -json: the version, the cpu and every row of the text output, valid against speed.schema.json', async () => {
  const r = await tscryptfs(['-speed', '-json'], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const doc = jsonOf(r, 'speed');
  assert.deepEqual(validate(jsonSchema('version'), doc.version), []);
  const results = doc.results as Array<{ name: string; cipher: string; implementation: string; mbPerSec: number | null; selected: boolean }>;
  assert.deepEqual(results.map((x) => x.name), SPEED_ROWS.map((row) => row.name));
  for (const x of results) assert.equal(`${x.cipher}-${x.implementation}`, x.name);
  // As the text marks them: node:crypto for the gocryptfs 2.3 ciphers, one AEGIS-256X2 implementation.
  assert.deepEqual(results.filter((x) => x.selected && !x.name.startsWith('AEGIS')).map((x) => x.implementation), ['OpenSSL', 'OpenSSL', 'OpenSSL']);
  assert.equal(results.filter((x) => x.selected && x.cipher === 'AEGIS-256X2').length, 1);
  assert.ok(results.filter((x) => x.implementation === 'OpenSSL').every((x) => x.mbPerSec !== null && x.mbPerSec > 0));
});

test('-speed -json with TSCRYPTFS_AEGIS=off: AEGIS rows null and unselected (in-process, short rows)', async () => {
  const stdout = await speedWithoutAegis(true);
  const doc = jsonOf({ code: 0, signal: null, stdout, stderr: '' }, 'speed');
  const aegis = (doc.results as Array<{ cipher: string; mbPerSec: unknown; selected: boolean }>).filter((x) => x.cipher.startsWith('AEGIS'));
  assert.deepEqual(aegis.map((x) => [x.mbPerSec, x.selected]), [[null, false], [null, false], [null, false], [null, false]]);
});

test('the examples of Documentation/usage.md are valid against the schemas too', () => {
  const readme = readFileSync(join(ROOT, 'Documentation', 'usage.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);
  const kinds = blocks.map((doc) => ('configPath' in doc ? 'info' : 'cipherdir' in doc ? 'fsck' : 'blockSize' in doc ? 'speed' : 'unknown'));
  assert.deepEqual(kinds, ['info', 'fsck', 'speed']);
  blocks.forEach((doc, i) => assert.deepEqual(validate(jsonSchema(kinds[i]!), doc), [], kinds[i]));
});

describe('-json with anything but -info, -fsck, -speed, -version: a usage error', () => {
  for (const args of [['-json', 'a', 'b'], ['-json', '-init', 'a'], ['-json', '-passwd', 'a'], ['-hh', '-json']]) {
    test(args.join(' '), async () => {
      const r = await tscryptfs(args, { cwd: tmp });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, 'tscryptfs: -json only works with -info, -fsck, -speed or -version\n');
    });
  }
});
