/**
 * Every cipher directory made by the real gocryptfs opens through the
 * Vault and shows exactly the plaintext its manifest lists.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Vault, type VaultMasterKeyOpenOptions } from '../../src/index.js';
import { FORWARD_VECTORS, fixtureMasterKey, materializeExample, materializeVector, readManifest } from '../helpers/fixtures.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { comparable, vaultManifest } from '../helpers/vault-manifest.js';
import { silentLogger } from '../../src/util/logger.js';

/** The format flags each fixture needs when its config is bypassed with -masterkey. */
const MASTERKEY_FORMAT: Record<string, Partial<VaultMasterKeyOpenOptions>> = {
  aesgcm: {},
  aessiv: { cipher: 'aes-siv' },
  xchacha: { cipher: 'xchacha' },
  plaintextnames: { plaintextNames: true },
  'deterministic-names': { deterministicNames: true },
  longnamemax62: { longNameMax: 62 },
  'hkdf-false': { hkdf: false },
  'raw64-false': { raw64: false },
};

describe('gocryptfs 2.3 fixtures through the Vault', () => {
  let tmp: string;
  before(() => {
    tmp = makeTempDir();
  });
  after(() => removeTempDir(tmp));

  for (const fx of FORWARD_VECTORS) {
    for (const backend of ['node', 'noble'] as const) {
      test(`${fx} (${backend}): password open shows the manifest`, async () => {
        const dir = join(tmp, `${fx}-${backend}`);
        await materializeVector(fx, dir);
        const v = await Vault.open(dir, { password: 'test', backend, readOnly: true, logger: silentLogger });
        try {
          assert.deepEqual(comparable(await vaultManifest(v)), comparable(readManifest(fx, 'plain')));
        } finally {
          await v.close();
        }
      });
    }

    test(`${fx}: -masterkey open with the format flags shows the manifest`, async () => {
      const dir = join(tmp, `${fx}-mk`);
      await materializeVector(fx, dir);
      const v = await Vault.open(dir, { masterkey: fixtureMasterKey(fx), ...MASTERKEY_FORMAT[fx], readOnly: true, logger: silentLogger });
      try {
        assert.deepEqual(comparable(await vaultManifest(v)), comparable(readManifest(fx, 'plain')));
      } finally {
        await v.close();
      }
    });
  }
});

const EXAMPLES: Record<string, { masterkey: string; format: Partial<VaultMasterKeyOpenOptions> }> = {
  'v0.9': { masterkey: '1cafe3f4-bc316466-2214c47c-ecd89bf3-4e078fe4-f5faeea7-8b7cab02-884f5e1c', format: { raw64: false, hkdf: false } },
  'v1.1-aessiv': {
    masterkey: 'eaf371c3-f9a55336-8819f22b-7bccd7c2-a738cf61-7261c658-14c28a03-9428992b',
    format: { cipher: 'aes-siv', raw64: false, hkdf: false },
  },
  'v1.3': { masterkey: 'fd890dab-86bf61cf-ec5ad460-ad3ed01f-9c52d546-2a31783d-a56b088d-3d05232e', format: {} },
  'v2.2-xchacha': { masterkey: '44670e7e-32475bfc-bdfb8a8c-be17a767-0679cac0-be705d8c-af41c411-28c40f26', format: { cipher: 'xchacha' } },
  'v2.2-deterministic-names': {
    masterkey: '722733f5-b0f399f5-5465ad7a-f0bed125-e82de7b4-045e7608-a5e5c78e-04a1a61e',
    format: { deterministicNames: true },
  },
  'v2.2-xchacha-deterministic-names': {
    masterkey: 'beba88a9-c6cd1dc0-b69c6f9d-9daea493-9ae87082-4ffc40bf-b44e52db-3933af39',
    format: { cipher: 'xchacha', deterministicNames: true },
  },
};

const LONG_255 = 'longname_255_' + 'x'.repeat(242);

async function checkExample(v: Vault): Promise<void> {
  assert.deepEqual((await v.readdir('/')).sort(), ['abs', LONG_255, 'rel', 'status.txt'].sort());
  assert.equal((await v.readFile('status.txt')).toString(), 'It works!\n');
  assert.equal(await v.readlink('rel'), 'status.txt');
  assert.equal(await v.readlink('abs'), '/a/b/c/d');
  assert.equal((await v.readFile(LONG_255)).toString(), 'It works!\n');
}

describe('upstream example filesystems (gocryptfs v0.9 .. v2.2)', () => {
  let tmp: string;
  before(() => {
    tmp = makeTempDir();
  });
  after(() => removeTempDir(tmp));

  for (const [ex, { masterkey, format }] of Object.entries(EXAMPLES)) {
    test(`${ex}: password open, contents, then rename and mkdir/rmdir`, async () => {
      const dir = join(tmp, ex);
      await materializeExample(ex, dir);
      const v = await Vault.open(dir, { password: 'test', logger: silentLogger });
      try {
        await checkExample(v);
        await v.rename('status.txt', 'status2.txt');
        assert.equal((await v.readFile('status2.txt')).toString(), 'It works!\n');
        await v.rename('status2.txt', 'status.txt');
        await v.mkdir('newdir');
        await v.writeFile('newdir/f', 'x');
        await v.unlink('newdir/f');
        await v.rmdir('newdir');
        await checkExample(v);
      } finally {
        await v.close();
      }
    });

    test(`${ex}: -masterkey open with the listed options`, async () => {
      const dir = join(tmp, `${ex}-mk`);
      await materializeExample(ex, dir);
      const v = await Vault.open(dir, { masterkey, ...format, readOnly: true, logger: silentLogger });
      try {
        await checkExample(v);
      } finally {
        await v.close();
      }
    });
  }
});
