/**
 * Every byte of a cipher file is authenticated: flipping any bit anywhere
 * (header, any block's nonce, ciphertext or tag, the short last block)
 * makes reading the file fail with EIO and a log line, never return other
 * bytes. For every content cipher, on a file of two full blocks and a
 * partial one.
 *
 * CI flips one bit in every 97th byte (about 90 positions per cipher);
 * `npm run test:long` (TSCRYPTFS_LONG_TESTS=1) flips every bit of every
 * byte (about 100,000 reads per cipher).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { Vault, type CipherName, type Logger } from '../../src/index.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const LONG = process.env.TSCRYPTFS_LONG_TESTS === '1';
const STRIDE = LONG ? 1 : 97;
const BITS = LONG ? [0, 1, 2, 3, 4, 5, 6, 7] : [0];

for (const cipher of ['aes-gcm', 'aes-siv', 'xchacha', 'aegis'] as CipherName[]) {
  describe(`bit flips (${cipher})`, () => {
    let tmp: string;
    let v: Vault;
    const lines: string[] = [];
    const log: Logger = { warn: (m) => lines.push(m) };
    const data = Buffer.alloc(2 * 4096 + 1000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 131 + 7) & 0xff;

    before(async () => {
      tmp = makeTempDir();
      v = await Vault.init(tmp, { password: 'pw', cipher, scryptLogN: 10, logger: log });
      await v.writeFile('/f', data);
    });
    after(async () => {
      await v.close();
      removeTempDir(tmp);
    });

    test(`a flipped bit at any ${LONG ? '' : 'sampled '}position is EIO with a log line, never other bytes`, { timeout: LONG ? 3_600_000 : 60_000 }, async () => {
      const cp = await v.cipherPath('/f');
      const fd = openSync(cp, 'r+');
      const one = Buffer.alloc(1);
      let checked = 0;
      try {
        const size = (await v.stat('/f')).size;
        assert.equal(size, data.length);
        const cipherSize = fstatSync(fd).size;
        for (let off = 0; off < cipherSize; off += STRIDE) {
          for (const bit of BITS) {
            readSync(fd, one, 0, 1, off);
            const orig = one[0]!;
            one[0] = orig ^ (1 << bit);
            writeSync(fd, one, 0, 1, off);
            lines.length = 0;
            let result: Buffer | NodeJS.ErrnoException;
            try {
              result = await v.readFile('/f');
            } catch (err) {
              result = err as NodeJS.ErrnoException;
            }
            one[0] = orig;
            writeSync(fd, one, 0, 1, off);
            assert.ok(!Buffer.isBuffer(result), `offset ${off} bit ${bit}: read succeeded${result instanceof Buffer && result.equals(data) ? ' (same bytes)' : ' WITH OTHER BYTES'}`);
            assert.equal(result.code, 'EIO', `offset ${off} bit ${bit}: ${result.message}`);
            assert.equal(lines.length, 1, `offset ${off} bit ${bit}: log ${JSON.stringify(lines)}`);
            assert.ok(lines[0]!.startsWith(`${cp}: `), lines[0]);
            checked++;
          }
        }
      } finally {
        closeSync(fd);
      }
      assert.deepEqual(await v.readFile('/f'), data, 'restored');
      assert.ok(checked >= (LONG ? 8 * 8000 : 80), `${checked} flips`);
    });
  });
}
