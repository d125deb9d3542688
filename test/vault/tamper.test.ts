/**
 * Bad cipher data: a tampered or truncated block is EIO for reads that touch
 * it (logged with the cipher path and block), the rest stays readable;
 * undecryptable names are hidden with one log line; nothing is changed on disk.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import * as xattr from '../../src/vault/xattr-io.js';
import { Vault, type CipherName, type Logger } from '../../src/index.js';
import { layout } from '../../src/content/index.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

class Recorder implements Logger {
  lines: string[] = [];
  warn(m: string): void {
    this.lines.push(m);
  }
}

const NONCE: Record<CipherName, number> = { 'aes-gcm': 16, 'aes-siv': 16, xchacha: 24, aegis: 32 };

async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isSymbolicLink()) out.set(p, 'link:' + (await fsp.readlink(p)));
      else out.set(p, (await fsp.readFile(p)).toString('hex'));
    }
  };
  await walk(dir);
  return out;
}

for (const cipher of ['aes-gcm', 'aes-siv', 'xchacha', 'aegis'] as CipherName[]) {
  describe(`tampering (${cipher})`, () => {
    let tmp: string;
    let v: Vault;
    const log = new Recorder();
    const l = layout(NONCE[cipher], 16);
    const data = Buffer.alloc(3 * 4096 + 100);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;

    before(async () => {
      tmp = makeTempDir();
      v = await Vault.init(tmp, { password: 'pw', cipher, scryptLogN: 10, logger: log });
    });
    after(async () => {
      await v.close();
      removeTempDir(tmp);
    });

    const flip = async (p: string, off: number): Promise<void> => {
      const fh = await fsp.open(p, 'r+');
      const b = Buffer.alloc(1);
      await fh.read(b, 0, 1, off);
      b[0]! ^= 0x01;
      await fh.write(b, 0, 1, off);
      await fh.close();
    };

    for (const [part, offInBlock] of [
      ['nonce', 3],
      ['ciphertext', NONCE[cipher] + 100],
      ['tag', l.cipherBlockSize - 1],
    ] as const) {
      test(`a flipped bit in block 1's ${part} is EIO for that block only`, async () => {
        const name = `/f-${part}`;
        await v.writeFile(name, data);
        const cp = await v.cipherPath(name);
        // SIV stores its tag first: the last byte of the block is ciphertext there; either way it must fail.
        await flip(cp, 18 + l.cipherBlockSize + offInBlock);
        log.lines.length = 0;
        const h = await v.open(name, 'r');
        try {
          assert.deepEqual(await h.read(4096, 0), data.subarray(0, 4096));
          await assert.rejects(h.read(10, 4096 + 5), { code: 'EIO' });
          await assert.rejects(h.read(8192, 0), { code: 'EIO' });
          assert.deepEqual(await h.read(4096 + 100, 8192), data.subarray(8192));
        } finally {
          await h.close();
        }
        assert.equal(log.lines.length, 2);
        assert.match(log.lines[0]!, new RegExp(`${cp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: block 1 failed authentication`));
      });
    }

    test('a flipped bit in the header file ID is EIO for every block', async () => {
      await v.writeFile('/hdr', data);
      await flip(await v.cipherPath('/hdr'), 5);
      await assert.rejects(v.readFile('/hdr'), { code: 'EIO' });
    });

    test('a bad header version is EIO', async () => {
      await v.writeFile('/hdrv', data);
      await flip(await v.cipherPath('/hdrv'), 1);
      await assert.rejects(v.readFile('/hdrv'), { code: 'EIO' });
    });

    test('a file truncated mid-block: earlier blocks read, the last is EIO', async () => {
      await v.writeFile('/trunc', data);
      const cp = await v.cipherPath('/trunc');
      await fsp.truncate(cp, 18 + 2 * l.cipherBlockSize + 50);
      const h = await v.open('/trunc', 'r');
      try {
        assert.deepEqual(await h.read(8192, 0), data.subarray(0, 8192));
        await assert.rejects(h.read(10, 8192), { code: 'EIO' });
      } finally {
        await h.close();
      }
    });

    test('two blocks swapped within a file fail, and across files fail', async () => {
      await v.writeFile('/swap1', data);
      await v.writeFile('/swap2', data);
      const p1 = await v.cipherPath('/swap1');
      const p2 = await v.cipherPath('/swap2');
      const a = await fsp.readFile(p1);
      const b0 = a.subarray(18, 18 + l.cipherBlockSize);
      const b1 = a.subarray(18 + l.cipherBlockSize, 18 + 2 * l.cipherBlockSize);
      await fsp.writeFile(p1, Buffer.concat([a.subarray(0, 18), b1, b0, a.subarray(18 + 2 * l.cipherBlockSize)]));
      await assert.rejects(v.readFile('/swap1'), { code: 'EIO' });
      const b = await fsp.readFile(p2);
      await fsp.writeFile(p2, Buffer.concat([b.subarray(0, 18), a.subarray(18, 18 + l.cipherBlockSize), b.subarray(18 + l.cipherBlockSize)]));
      const h = await v.open('/swap2', 'r');
      await assert.rejects(h.read(1, 0), { code: 'EIO' });
      assert.deepEqual(await h.read(4096, 4096), data.subarray(4096, 8192));
      await h.close();
    });

    test('a tampered symlink target and xattr value are EIO', async () => {
      await v.symlink('target', '/link');
      const lp = await v.cipherPath('/link');
      const stored = await fsp.readlink(lp);
      await fsp.rm(lp);
      await fsp.symlink((stored[0] === 'A' ? 'B' : 'A') + stored.slice(1), lp);
      await assert.rejects(v.readlink('/link'), { code: 'EIO' });
      await assert.rejects(v.stat('/link'), { code: 'EIO' });
      await v.writeFile('/xa', 'x');
      await v.setxattr('/xa', 'user.secret', Buffer.from('value'));
      const xp = await v.cipherPath('/xa');
      const [stored2] = await xattr.listAttributes(xp);
      const val = await xattr.getAttribute(xp, stored2!);
      val[val.length - 1]! ^= 1;
      await xattr.setAttribute(xp, stored2!, val);
      await assert.rejects(v.getxattr('/xa', 'user.secret'), { code: 'EIO' });
    });

    test('undecryptable names are hidden with a log line; reading changes nothing on disk', async () => {
      await v.mkdir('/d');
      await v.writeFile('/d/good', 'x');
      const cd = await v.cipherPath('/d');
      await fsp.writeFile(join(cd, 'invalid_name_here'), 'junk');
      await fsp.writeFile(join(cd, 'AAAAAAAAAAAAAAAAAAAAAA'), 'junk');
      await fsp.writeFile(join(cd, 'gocryptfs.longname.orphan'), 'junk');
      const before = await snapshot(tmp);
      log.lines.length = 0;
      assert.deepEqual(await v.readdir('/d'), ['good']);
      assert.equal(log.lines.length, 3);
      for (const name of ['/f-nonce', '/hdr', '/trunc', '/swap1']) await v.readFile(name).catch(() => undefined);
      assert.deepEqual(await snapshot(tmp), before);
    });
  });
}

test('a damaged diriv makes its directory EIO, not a wrong listing', async () => {
  const tmp = makeTempDir();
  try {
    const v = await Vault.init(tmp, { password: 'pw', scryptLogN: 10, logger: new Recorder() });
    await v.mkdir('/d');
    await v.writeFile('/d/f', 'x');
    const iv = join(await v.cipherPath('/d'), 'gocryptfs.diriv');
    await fsp.chmod(iv, 0o644);
    await fsp.writeFile(iv, Buffer.alloc(16));
    await v.close();
    const v2 = await Vault.open(tmp, { password: 'pw', logger: new Recorder() });
    await assert.rejects(v2.readdir('/d'), { code: 'EIO' });
    await assert.rejects(v2.readFile('/d/f'), { code: 'EIO' });
    await v2.close();
  } finally {
    removeTempDir(tmp);
  }
});
