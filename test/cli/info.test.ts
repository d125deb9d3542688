import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, promises as fsp, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, FIXTURES, gocryptfs, initVault, lines, snapshot, tempDir, tscryptfs } from './helpers.js';
import { needs } from '../helpers/requirements.js';

let tmp: string;
before(async () => {
  tmp = await tempDir();
});
after(async () => {
  await cleanup(tmp);
});

const fixtureNames = readdirSync(FIXTURES).filter((n) => existsSync(join(FIXTURES, n, 'info.txt')) && existsSync(join(FIXTURES, n, 'cipher')));

describe('-info on the gocryptfs fixtures (read-only)', needs('gocryptfs'), () => {
  test('there are fixtures', () => assert.ok(fixtureNames.length >= 6));
  for (const name of fixtureNames) {
    test(name, async () => {
      const cipher = join(FIXTURES, name, 'cipher');
      const before = await snapshot(cipher);
      const r = await tscryptfs(['-info', cipher]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      assert.equal(r.stdout, await fsp.readFile(join(FIXTURES, name, 'info.txt'), 'utf8'));
      {
        const g = await gocryptfs(['-info', cipher]);
        assert.equal(g.code, 0);
        assert.equal(r.stdout, g.stdout);
      }
      assert.deepEqual(await snapshot(cipher), before);
    });
  }
});

test('-info output layout (labels padded to 19 columns) and --info spelling', async () => {
  const dir = await initVault(tmp, 'layout', ['-xchacha']);
  for (const flag of ['-info', '--info']) {
    const r = await tscryptfs([flag, dir]);
    assert.equal(r.code, 0, r.stderr);
    const l = lines(r.stdout);
    assert.equal(l.length, 5);
    assert.match(l[0]!, /^Creator: {11}tscryptfs \d/);
    assert.equal(l[1], 'FeatureFlags:      HKDF XChaCha20Poly1305 DirIV EMENames LongNames Raw64');
    assert.equal(l[2], 'EncryptedKey:      64B');
    assert.equal(l[3], 'ScryptObject:      Salt=32B N=1024 R=8 P=1 KeyLen=32');
    assert.equal(l[4], 'contentEncryption: XChaCha20-Poly1305');
  }
});

test('-info matches real gocryptfs -info on a dir made by gocryptfs -init', needs('gocryptfs'), async () => {
  const dir = join(tmp, 'byGo');
  await fsp.mkdir(dir);
  const g = await gocryptfs(['-init', '-q', '-scryptn', '10', '-deterministic-names', dir], { input: 'pw\n' });
  assert.equal(g.code, 0, g.stderr);
  const ours = await tscryptfs(['-info', dir]);
  const theirs = await gocryptfs(['-info', dir]);
  assert.equal(ours.code, 0);
  assert.equal(ours.stdout, theirs.stdout);
});

test('-info -config FILE', async () => {
  const dir = await initVault(tmp, 'cfgsrc');
  const other = join(tmp, 'cfgdir');
  await fsp.mkdir(other);
  const r = await tscryptfs(['-info', '-config', join(dir, 'gocryptfs.conf'), other]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout)[0], `Using config file at custom location ${join(dir, 'gocryptfs.conf')}`);
  assert.equal(lines(r.stdout)[2], 'FeatureFlags:      HKDF GCMIV128 DirIV EMENames LongNames Raw64');
});

describe('-info cannot load the config → 8', needs('gocryptfs'), () => {
  const cases: Array<[string, string | null]> = [
    ['missing config', null],
    ['empty config', ''],
    ['not JSON', '{bad'],
    ['unknown feature flag', 'FLAG:Future'],
    ['Version 3', 'VERSION:3'],
    ['weak scrypt N=512', 'N:512'],
    ['no GCMIV128', 'NOGCM'],
  ];
  for (const [name, content] of cases) {
    test(name, async () => {
      const dir = join(tmp, `bad-${name.replace(/\W+/g, '_')}`);
      await fsp.mkdir(dir);
      if (content !== null) {
        let text = content;
        if (/^(FLAG|VERSION|N|NOGCM)/.test(content)) {
          const src = await initVault(tmp, `src-${name.replace(/\W+/g, '_')}`);
          const conf = JSON.parse(await fsp.readFile(join(src, 'gocryptfs.conf'), 'utf8'));
          if (content.startsWith('FLAG:')) conf.FeatureFlags.push(content.slice(5));
          if (content.startsWith('VERSION:')) conf.Version = Number(content.slice(8));
          if (content.startsWith('N:')) conf.ScryptObject.N = Number(content.slice(2));
          if (content === 'NOGCM') conf.FeatureFlags = conf.FeatureFlags.filter((f: string) => f !== 'GCMIV128');
          text = JSON.stringify(conf);
        }
        await fsp.writeFile(join(dir, 'gocryptfs.conf'), text);
      }
      const before = await snapshot(dir);
      const r = await tscryptfs(['-info', dir]);
      assert.equal(r.code, 8, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^tscryptfs: Loading config file failed: .+\n$/);
      assert.deepEqual(await snapshot(dir), before);
      assert.equal((await gocryptfs(['-info', dir])).code, 8, 'gocryptfs agrees');
    });
  }
});

test('-info on a missing CIPHERDIR → 6, without CIPHERDIR → 1', async () => {
  const r = await tscryptfs(['-info', join(tmp, 'nonexistent')]);
  assert.equal(r.code, 6);
  assert.match(r.stderr, /Invalid cipherdir/);
  const r2 = await tscryptfs(['-info']);
  assert.equal(r2.code, 1);
  assert.equal(r2.stderr, 'tscryptfs: CIPHERDIR argument is missing\n');
});
