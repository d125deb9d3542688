/**
 * -aegis on the command line: -init -aegis writes the aegis branch's flags,
 * -info names the cipher, a mount round trip lays files out as
 * Documentation/format.md §6.6 says, and a tscryptfs that cannot run AEGIS (TSCRYPTFS_AEGIS=off,
 * or =native without the addon) refuses with exit code 32 and one line.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { cleanup, initVault, lines, readConfJson, snapshot, tempDir, tscryptfs } from './helpers.js';
import { initCipherdir, withMount } from '../helpers/mount.js';
import { needs } from '../helpers/requirements.js';

const AEGIS_FLAGS = ['HKDF', 'AEGIS256X2', 'DirIV', 'EMENames', 'LongNames', 'Raw64'];

describe('-init -aegis and -info', () => {
  let tmp: string;
  let dir: string;
  before(async () => {
    tmp = await tempDir();
    dir = await initVault(tmp, 'aegis', ['-aegis']);
  });
  after(() => cleanup(tmp));

  test('-init -aegis writes FeatureFlags HKDF AEGIS256X2 DirIV EMENames LongNames Raw64', async () => {
    assert.deepEqual((await readConfJson(join(dir, 'gocryptfs.conf'))).FeatureFlags, AEGIS_FLAGS);
    assert.deepEqual((await fsp.readdir(dir)).sort(), ['gocryptfs.conf', 'gocryptfs.diriv']);
  });

  test('-info shows the flags and contentEncryption Aegis256X2 (the branch wording)', async () => {
    const r = await tscryptfs(['-info', dir]);
    assert.equal(r.code, 0, r.stderr);
    const l = lines(r.stdout);
    assert.equal(l[1], `FeatureFlags:      ${AEGIS_FLAGS.join(' ')}`);
    assert.equal(l[4], 'contentEncryption: Aegis256X2');
  });

  test('without AEGIS (TSCRYPTFS_AEGIS=off): -info and -passwd still work, they never touch file content', async () => {
    const env = { TSCRYPTFS_AEGIS: 'off' };
    assert.equal((await tscryptfs(['-info', dir], { env })).code, 0);
    const r = await tscryptfs(['-passwd', '-q', '-scryptn', '10', dir], { env, input: 'pw\nnew\n' });
    assert.equal(r.code, 0, r.stderr);
    const back = await tscryptfs(['-passwd', '-q', '-scryptn', '10', dir], { env, input: 'new\npw\n' });
    assert.equal(back.code, 0, back.stderr);
  });
});

describe('exit code 32 when AEGIS cannot run', () => {
  let tmp: string;
  let dir: string;
  let mnt: string;
  before(async () => {
    tmp = await tempDir();
    dir = await initVault(tmp, 'aegis', ['-aegis']);
    mnt = join(tmp, 'mnt');
    await fsp.mkdir(mnt);
  });
  after(() => cleanup(tmp));

  const expect32 = async (args: string[], env: Record<string, string>, why: RegExp): Promise<void> => {
    const before = await snapshot(tmp);
    const r = await tscryptfs(args, { env, input: 'pw\n' });
    assert.equal(r.code, 32, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, /^tscryptfs: AEGIS-256X2 is not available: /);
    assert.match(r.stderr, why);
    assert.deepEqual(await snapshot(tmp), before, 'nothing changed');
  };

  test('-init -aegis → 32, nothing created', async () => {
    const empty = join(tmp, 'empty');
    await fsp.mkdir(empty, { recursive: true });
    await expect32(['-init', '-aegis', '-scryptn', '10', empty], { TSCRYPTFS_AEGIS: 'off' }, /AEGIS is disabled by TSCRYPTFS_AEGIS=off$/m);
  });

  test('mounting an AEGIS cipherdir → 32, before the password is asked', () =>
    expect32(['-fg', dir, mnt], { TSCRYPTFS_AEGIS: 'off' }, /TSCRYPTFS_AEGIS=off/));

  test('an unknown TSCRYPTFS_AEGIS value → 32 (no silent choice)', () =>
    expect32(['-fg', dir, mnt], { TSCRYPTFS_AEGIS: 'nativ' }, /TSCRYPTFS_AEGIS=nativ is not one of auto, native, ts, off/));

  test('a GCM cipherdir is not affected by TSCRYPTFS_AEGIS=off', async () => {
    const gcm = await initVault(tmp, 'gcm');
    const r = await tscryptfs(['-info', gcm], { env: { TSCRYPTFS_AEGIS: 'off' } });
    assert.equal(r.code, 0, r.stderr);
  });
});

test('mount round trip of a -aegis cipherdir: a 4096-byte file is 4162 bytes on disk and reads back', needs('mount'), async () => {
  const tmp = await tempDir();
  try {
    const dir = join(tmp, 'cipher');
    await initCipherdir('tscryptfs', dir, ['-aegis']);
    const data = Buffer.alloc(4096 + 5000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 13) & 0xff;
    await withMount('tscryptfs', dir, join(tmp, 'mnt'), {}, async (m) => {
      await fsp.writeFile(join(m, 'page'), data.subarray(0, 4096));
      await fsp.writeFile(join(m, 'big'), data);
      assert.deepEqual(await fsp.readFile(join(m, 'page')), data.subarray(0, 4096));
      assert.deepEqual(await fsp.readFile(join(m, 'big')), data);
      assert.equal((await fsp.stat(join(m, 'big'))).size, data.length);
    });
    const sizes = [];
    for (const name of await fsp.readdir(dir)) {
      if (!name.startsWith('gocryptfs.')) sizes.push((await fsp.stat(join(dir, name))).size);
    }
    assert.deepEqual(sizes.sort((a, b) => a - b), [4162, 18 + 3 * 48 + data.length]);
  } finally {
    await cleanup(tmp);
  }
});
