/**
 * An AEGIS-256X2 cipher directory through the Vault (gocryptfs's aegis
 * branch, Documentation/format.md §3.5, §4.5, §5.6, §6.6): the flags -init writes, the key
 * (HKDF with the AES-GCM info string), the on-disk layout decoded by hand,
 * per-block authentication, and files written by one AEGIS implementation
 * read and rewritten by the other.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { Aegis256X2Aead, hkdfSha256, HKDF_INFO } from '../../src/crypto/index.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { internalAccess } from '../../src/vault/internal-access.js';

const BLOCK = 4096;
const CBS = 4096 + 32 + 16;

function pattern(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

describe('AEGIS-256X2 cipher directory', () => {
  let tmp: string;
  let v: Vault;
  before(async () => {
    tmp = makeTempDir();
    v = await Vault.init(tmp, { password: 'pw', cipher: 'aegis', scryptLogN: 10, logger: { warn: () => undefined } });
  });
  after(async () => {
    await v.close();
    removeTempDir(tmp);
  });

  test('the config has exactly the flags of the aegis branch -init -aegis', async () => {
    const conf = JSON.parse(await fsp.readFile(join(tmp, 'gocryptfs.conf'), 'utf8')) as { FeatureFlags: string[] };
    assert.deepEqual(conf.FeatureFlags, ['HKDF', 'AEGIS256X2', 'DirIV', 'EMENames', 'LongNames', 'Raw64']);
  });

  test('cipher sizes follow format.md §6.6 (overhead 48, a 4096-byte file is 4162 bytes)', async () => {
    for (const [plain, cipher] of [
      [0, 0],
      [1, 67],
      [4096, 4162],
      [5000, 5114],
      [8192, 8306],
      [10000, 10162],
      [12392, 12602],
    ]) {
      const name = `/size-${plain}`;
      await v.writeFile(name, pattern(plain, 1));
      assert.equal((await fsp.stat(await v.cipherPath(name))).size, cipher, `plaintext ${plain}`);
      assert.equal((await v.stat(name)).size, plain);
      assert.deepEqual(await v.readFile(name), pattern(plain, 1));
    }
  });

  test('layout decoded by hand: header 18, blocks nonce(32) || ct || tag(16), key HKDF(MK, "AES-GCM file content encryption")', async () => {
    const data = pattern(2 * BLOCK + 1000, 7);
    await v.writeFile('/layout', data);
    const raw = await fsp.readFile(await v.cipherPath('/layout'));
    assert.equal(raw.length, 18 + 2 * CBS + 1000 + 48);
    assert.equal(raw.readUInt16BE(0), 2, 'header version');
    const fileId = raw.subarray(2, 18);
    const aead = new Aegis256X2Aead(hkdfSha256(internalAccess(v).masterKey(), HKDF_INFO.gcm, 32), 'ts');
    for (let k = 0; k < 3; k++) {
      const blk = raw.subarray(18 + k * CBS, Math.min(raw.length, 18 + (k + 1) * CBS));
      const aad = Buffer.alloc(24);
      aad.writeBigUInt64BE(BigInt(k));
      fileId.copy(aad, 8);
      const plain = aead.open(blk.subarray(0, 32), blk.subarray(32), aad);
      assert.deepEqual(Buffer.from(plain), data.subarray(k * BLOCK, (k + 1) * BLOCK), `block ${k}`);
    }
  });

  test('a flipped bit in any block (nonce, ciphertext or tag) is EIO for that block only', async () => {
    const data = pattern(3 * BLOCK + 500, 3);
    for (let bad = 0; bad < 4; bad++) {
      for (const off of [5, 32 + 9, bad === 3 ? 32 + 500 + 15 : CBS - 1]) {
        const name = `/flip-${bad}-${off}`;
        await v.writeFile(name, data);
        const cp = await v.cipherPath(name);
        const raw = await fsp.readFile(cp);
        raw[18 + bad * CBS + off] ^= 0x04;
        await fsp.writeFile(cp, raw);
        const h = await v.open(name, 'r');
        try {
          for (let k = 0; k < 4; k++) {
            const want = data.subarray(k * BLOCK, (k + 1) * BLOCK);
            if (k === bad) await assert.rejects(h.read(want.length, k * BLOCK), { code: 'EIO' }, `block ${k}`);
            else assert.deepEqual(await h.read(want.length, k * BLOCK), want, `block ${k} of ${name}`);
          }
        } finally {
          await h.close();
        }
      }
    }
  });

  test('symlinks, xattrs, directories and renames work as with the other ciphers', async () => {
    await v.mkdir('/d');
    await v.writeFile('/d/f', 'hello aegis');
    await v.symlink('target/of/the/link', '/d/l');
    assert.equal(await v.readlink('/d/l'), 'target/of/the/link');
    await v.setxattr('/d/f', 'user.k', Buffer.from('xattr value'));
    assert.deepEqual(await v.getxattr('/d/f', 'user.k'), Buffer.from('xattr value'));
    await v.rename('/d/f', '/d/g');
    assert.deepEqual((await v.readdir('/d')).sort(), ['g', 'l']);
    assert.equal((await v.readFile('/d/g')).toString(), 'hello aegis');
  });
});

test('AEGIS files written with one implementation are read and rewritten with the other (node ⇄ noble)', async () => {
  const tmp = makeTempDir();
  try {
    const a = await Vault.init(tmp, { password: 'pw', cipher: 'aegis', scryptLogN: 10, backend: 'node' });
    const d1 = pattern(3 * BLOCK + 123, 11);
    await a.writeFile('/from-node', d1);
    await a.symlink('t', '/link');
    await a.close();
    const b = await Vault.open(tmp, { password: 'pw', backend: 'noble' });
    assert.deepEqual(await b.readFile('/from-node'), d1);
    assert.equal(await b.readlink('/link'), 't');
    const d2 = pattern(2 * BLOCK + 9, 12);
    await b.writeFile('/from-noble', d2);
    const h = await b.open('/from-node', 'r+');
    await h.write(Buffer.from('patched by ts'), BLOCK + 10);
    await h.close();
    await b.close();
    const c = await Vault.open(tmp, { password: 'pw', backend: 'node' });
    assert.deepEqual(await c.readFile('/from-noble'), d2);
    const expect = Buffer.from(d1);
    Buffer.from('patched by ts').copy(expect, BLOCK + 10);
    assert.deepEqual(await c.readFile('/from-node'), expect);
    await c.close();
  } finally {
    removeTempDir(tmp);
  }
});

test('an AEGIS directory is refused with ENOTSUP when no AEGIS implementation may run (TSCRYPTFS_AEGIS=off)', async () => {
  const tmp = makeTempDir();
  const saved = process.env.TSCRYPTFS_AEGIS;
  try {
    await (await Vault.init(tmp, { password: "pw", cipher: "aegis", scryptLogN: 10 })).close();
    process.env.TSCRYPTFS_AEGIS = 'off';
    await assert.rejects(Vault.open(tmp, { password: 'pw' }), { code: 'ENOTSUP', message: /AEGIS is not available: AEGIS is disabled by TSCRYPTFS_AEGIS=off/ });
  } finally {
    if (saved === undefined) delete process.env.TSCRYPTFS_AEGIS;
    else process.env.TSCRYPTFS_AEGIS = saved;
    removeTempDir(tmp);
  }
});
