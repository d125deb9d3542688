/**
 * Writes, reads and truncates through the Vault against an in-memory model
 * of the plaintext, for every cipher, plus the cipher-side shapes gocryptfs
 * produces (Documentation/format.md §6.4).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { Vault, type CipherName } from '../../src/index.js';
import { layout, plainSizeToCipherSize } from '../../src/content/index.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

/** Deterministic pseudo-random bytes (xorshift32). */
function prng(seed: number): (n: number) => Buffer {
  let x = seed >>> 0 || 1;
  return (n) => {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      b[i] = x & 0xff;
    }
    return b;
  };
}

const CIPHERS: CipherName[] = ['aes-gcm', 'aes-siv', 'xchacha', 'aegis'];
const OVERHEAD: Record<CipherName, [number, number]> = { 'aes-gcm': [16, 16], 'aes-siv': [16, 16], xchacha: [24, 16], aegis: [32, 16] };
const EDGES = [0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 12287, 12300, 20000];

for (const cipher of CIPHERS) {
  describe(`content through the Vault (${cipher})`, () => {
    let tmp: string;
    let v: Vault;
    const l = layout(...OVERHEAD[cipher]);
    before(async () => {
      tmp = makeTempDir();
      v = await Vault.init(tmp, { password: 'pw', cipher, scryptLogN: 10 });
    });
    after(async () => {
      await v.close();
      removeTempDir(tmp);
    });

    const cipherSize = async (p: string): Promise<number> => (await fsp.stat(await v.cipherPath(p))).size;

    test('random writes and truncates around block edges match a model', async () => {
      const rnd = prng(cipher.length * 7919);
      const pick = (n: number): number => rnd(4).readUInt32LE(0) % n;
      let model = Buffer.alloc(0);
      const h = await v.open('/model.bin', 'w+');
      try {
        for (let step = 0; step < 300; step++) {
          const op = pick(10);
          if (op < 6) {
            const off = Math.max(0, EDGES[pick(EDGES.length)]! + pick(9) - 4);
            const len = [1, 17, 4095, 4096, 4097, 9000][pick(6)]!;
            const data = rnd(len);
            await h.write(data, off);
            if (model.length < off + len) model = Buffer.concat([model, Buffer.alloc(off + len - model.length)]);
            data.copy(model, off);
          } else if (op < 8) {
            const size = Math.max(0, EDGES[pick(EDGES.length)]! + pick(5) - 2);
            await h.truncate(size);
            model = size <= model.length ? model.subarray(0, size) : Buffer.concat([model, Buffer.alloc(size - model.length)]);
          } else {
            const off = pick(model.length + 10);
            const len = 1 + pick(10000);
            assert.deepEqual(await h.read(len, off), model.subarray(off, off + len), `step ${step} read ${off}+${len}`);
          }
          assert.equal(await h.size(), model.length, `step ${step} size`);
        }
      } finally {
        await h.close();
      }
      assert.deepEqual(await v.readFile('/model.bin'), model);
      assert.equal(await cipherSize('/model.bin'), plainSizeToCipherSize(l, model.length));
      assert.equal((await v.stat('/model.bin')).size, model.length);
    });

    test('a write past the end leaves holes: zero blocks on disk, zeros on read', async () => {
      await v.writeFile('/hole_seek.bin', 'start');
      const h = await v.open('/hole_seek.bin', 'r+');
      await h.write(Buffer.from('end\n'), 12388);
      await h.close();
      assert.equal((await v.stat('/hole_seek.bin')).size, 12392);
      const raw = await fsp.readFile(await v.cipherPath('/hole_seek.bin'));
      assert.equal(raw.length, plainSizeToCipherSize(l, 12392));
      const cbs = l.cipherBlockSize;
      assert.ok(raw.subarray(18 + cbs, 18 + 3 * cbs).every((b) => b === 0), 'blocks 1 and 2 are holes');
      const want = Buffer.alloc(12392);
      want.write('start', 0);
      want.write('end\n', 12388);
      assert.deepEqual(await v.readFile('/hole_seek.bin'), want);
    });

    test('growing with truncate: aligned is all holes, unaligned seals the last block', async () => {
      await v.writeFile('/aligned', '');
      await v.truncate('/aligned', 8192);
      const a = await fsp.readFile(await v.cipherPath('/aligned'));
      assert.equal(a.length, plainSizeToCipherSize(l, 8192));
      assert.ok(a.subarray(18).every((b) => b === 0));
      await v.writeFile('/unaligned', '');
      await v.truncate('/unaligned', 10000);
      const u = await fsp.readFile(await v.cipherPath('/unaligned'));
      assert.equal(u.length, plainSizeToCipherSize(l, 10000));
      assert.ok(u.subarray(18, 18 + 2 * l.cipherBlockSize).every((b) => b === 0));
      assert.ok(!u.subarray(18 + 2 * l.cipherBlockSize).every((b) => b === 0));
      assert.deepEqual(await v.readFile('/unaligned'), Buffer.alloc(10000));
      // Growing within one block keeps the data.
      await v.writeFile('/small', 'abc');
      await v.truncate('/small', 200);
      assert.deepEqual(await v.readFile('/small'), Buffer.concat([Buffer.from('abc'), Buffer.alloc(197)]));
    });

    test('truncate to zero removes the header; the next write makes a new file ID', async () => {
      await v.writeFile('/t0', 'hello');
      const id1 = (await fsp.readFile(await v.cipherPath('/t0'))).subarray(2, 18);
      await v.truncate('/t0', 0);
      assert.equal(await cipherSize('/t0'), 0);
      await v.writeFile('/t0', 'again', { flag: 'r+' });
      const id2 = (await fsp.readFile(await v.cipherPath('/t0'))).subarray(2, 18);
      assert.notDeepEqual(id1, id2);
      assert.equal((await v.readFile('/t0')).toString(), 'again');
    });

    test('O_APPEND appends at the end seen by every handle; two handles share the size', async () => {
      await v.writeFile('/app', 'ab');
      const a = await v.open('/app', 'a');
      const b = await v.open('/app', 'r+');
      await a.write(Buffer.from('cd'));
      await b.write(Buffer.from('X'), 0);
      await a.write(Buffer.from('ef'), 0); // position ignored with O_APPEND
      assert.equal(await b.size(), 6);
      await a.close();
      await b.close();
      assert.equal((await v.readFile('/app')).toString(), 'Xbcdef');
    });

    test('concurrent writes to one file through several handles never lose a block', async () => {
      const handles = await Promise.all([0, 1, 2, 3].map(() => v.open('/conc', 'a+')));
      await v.truncate('/conc', 0);
      await Promise.all(handles.map((h, i) => Promise.all([0, 1, 2, 3].map((j) => h.write(Buffer.alloc(1000, 65 + i), (i * 4 + j) * 1000)))));
      await Promise.all(handles.map((h) => h.close()));
      const all = await v.readFile('/conc');
      assert.equal(all.length, 16000);
      for (let i = 0; i < 4; i++) for (let j = 0; j < 4000; j++) assert.equal(all[i * 4000 + j], 65 + i);
    });

    test('a 1-18 byte cipher file reads as empty and is rewritten on the next write', async () => {
      await v.writeFile('/short', 'data');
      const cp = await v.cipherPath('/short');
      await fsp.truncate(cp, 18);
      assert.equal((await v.stat('/short')).size, 0);
      assert.equal((await v.readFile('/short')).length, 0);
      await v.writeFile('/short', 'new', { flag: 'r+' });
      assert.equal((await v.readFile('/short')).toString(), 'new');
    });
  });
}
