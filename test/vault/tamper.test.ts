/**
 * The tamper matrix, for every content cipher: bad cipher data is EIO (or
 * ENOENT, or a hidden name) for what it touches, always with a log line
 * naming the cipher path and the reason, and never wrong plaintext; the
 * rest stays readable; reading changes nothing on disk.
 *
 * Cases: a flipped bit in the header (file ID, version), in a block's
 * nonce, ciphertext and tag; a file truncated mid-block and inside its
 * header; two blocks swapped within a file and across files; the names of
 * two files swapped within a directory (the one case the format cannot
 * detect, see below) and across directories; a damaged, swapped and
 * missing .name file; a zeroed, short and missing diriv; a tampered
 * symlink target and xattr value; undecryptable names.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join, basename } from 'node:path';
import * as xattr from '../../src/util/xattr-io.js';
import { Vault, type CipherName, type Logger } from '../../src/index.js';
import { layout } from '../../src/content/index.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { treeState } from '../helpers/tree-state.js';
import { flipBits } from '../helpers/tamper.js';

class Recorder implements Logger {
  lines: string[] = [];
  warn(m: string): void {
    this.lines.push(m);
  }
}

const NONCE: Record<CipherName, number> = { 'aes-gcm': 16, 'aes-siv': 16, xchacha: 24, aegis: 32 };

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const flip = (p: string, off: number): Promise<void> => flipBits(p, off);

/** Replaces a read-only file's content (.name files and dirivs are 0444). */
async function overwrite(p: string, data: string | Buffer): Promise<void> {
  await fsp.chmod(p, 0o644);
  await fsp.writeFile(p, data);
  await fsp.chmod(p, 0o444);
}

for (const cipher of ['aes-gcm', 'aes-siv', 'xchacha', 'aegis'] as CipherName[]) {
  describe(`tamper matrix (${cipher})`, () => {
    let tmp: string;
    let v: Vault;
    const log = new Recorder();
    const l = layout(NONCE[cipher], 16);
    const data = Buffer.alloc(3 * 4096 + 100);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;
    const other = Buffer.alloc(5000, 0x5a);

    before(async () => {
      tmp = makeTempDir();
      v = await Vault.init(tmp, { password: 'pw', cipher, scryptLogN: 10, logger: log });
    });
    after(async () => {
      await v.close();
      removeTempDir(tmp);
    });

    /** `op` fails with `code`, and exactly `lines` log lines appear, the first matching `re`. */
    async function expectFailure(op: () => Promise<unknown>, code: 'EIO' | 'ENOENT', re: RegExp | null, lines = 1): Promise<void> {
      log.lines.length = 0;
      await assert.rejects(op(), (err: NodeJS.ErrnoException) => {
        assert.equal(err.code, code);
        assert.doesNotMatch(err.message, new RegExp(esc(tmp)), 'errors name plaintext paths, never cipher paths');
        return true;
      });
      assert.equal(log.lines.length, lines, log.lines.join('\n'));
      if (re) assert.match(log.lines[0]!, re);
    }

    for (const [part, offInBlock] of [
      ['nonce', 3],
      ['ciphertext', NONCE[cipher] + 100],
      ['tag', l.cipherBlockSize - 1],
    ] as const) {
      test(`a flipped bit in block 1's ${part} is EIO for that block only, logged with path and block`, async () => {
        const name = `/f-${part}`;
        await v.writeFile(name, data);
        const cp = await v.cipherPath(name);
        // SIV stores its tag first: the last byte of the block is ciphertext there; either way it must fail.
        await flip(cp, 18 + l.cipherBlockSize + offInBlock);
        const h = await v.open(name, 'r');
        try {
          assert.deepEqual(await h.read(4096, 0), data.subarray(0, 4096));
          await expectFailure(() => h.read(10, 4096 + 5), 'EIO', new RegExp(`^${esc(cp)}: block 1 failed authentication \\(cipher offset ${18 + l.cipherBlockSize}\\)$`));
          await expectFailure(() => h.read(8192, 0), 'EIO', /block 1 failed authentication/);
          assert.deepEqual(await h.read(4096 + 100, 8192), data.subarray(8192));
        } finally {
          await h.close();
        }
      });
    }

    test('a flipped bit in the header file ID: every block is EIO (block 0 logged)', async () => {
      await v.writeFile('/hdr', data);
      const cp = await v.cipherPath('/hdr');
      await flip(cp, 5);
      await expectFailure(() => v.readFile('/hdr'), 'EIO', new RegExp(`^${esc(cp)}: block 0 failed authentication`));
      const h = await v.open('/hdr', 'r');
      await expectFailure(() => h.read(10, 8192), 'EIO', /block 2 failed authentication/);
      await h.close();
    });

    test('a bad header version is EIO, logged', async () => {
      await v.writeFile('/hdrv', data);
      const cp = await v.cipherPath('/hdrv');
      await flip(cp, 1);
      await expectFailure(() => v.readFile('/hdrv'), 'EIO', new RegExp(`^${esc(cp)}: bad header: header version 3, expected 2`));
    });

    test('a file truncated mid-block: earlier blocks read, the cut block is EIO, logged', async () => {
      await v.writeFile('/trunc', data);
      const cp = await v.cipherPath('/trunc');
      await fsp.truncate(cp, 18 + 2 * l.cipherBlockSize + 50);
      const h = await v.open('/trunc', 'r');
      try {
        assert.deepEqual(await h.read(8192, 0), data.subarray(0, 8192));
        await expectFailure(() => h.read(10, 8192), 'EIO', new RegExp(`^${esc(cp)}: block 2 failed authentication`));
      } finally {
        await h.close();
      }
      // Cut so short that the last block cannot hold one byte: "truncated".
      await fsp.truncate(cp, 18 + 2 * l.cipherBlockSize + 5);
      await expectFailure(() => v.readFile('/trunc'), 'EIO', /block 2 is truncated \(5 bytes\)/);
    });

    test('a file truncated inside its header shows as empty (as in gocryptfs; -fsck reports it)', async () => {
      // Its plaintext size is 0, so nothing asks for its blocks: no read fails
      // and nothing is logged. test/vault/fsck.test.ts finds it ('header').
      await v.writeFile('/trunc-hdr', data);
      await fsp.truncate(await v.cipherPath('/trunc-hdr'), 10);
      assert.equal((await v.stat('/trunc-hdr')).size, 0);
      assert.equal((await v.readFile('/trunc-hdr')).length, 0);
    });

    test('two blocks swapped within a file: EIO, logged', async () => {
      await v.writeFile('/swap1', data);
      const p1 = await v.cipherPath('/swap1');
      const a = await fsp.readFile(p1);
      const b0 = a.subarray(18, 18 + l.cipherBlockSize);
      const b1 = a.subarray(18 + l.cipherBlockSize, 18 + 2 * l.cipherBlockSize);
      await fsp.writeFile(p1, Buffer.concat([a.subarray(0, 18), b1, b0, a.subarray(18 + 2 * l.cipherBlockSize)]));
      await expectFailure(() => v.readFile('/swap1'), 'EIO', new RegExp(`^${esc(p1)}: block 0 failed authentication`));
      const h = await v.open('/swap1', 'r');
      await expectFailure(() => h.read(1, 4096), 'EIO', /block 1 failed authentication/);
      assert.deepEqual(await h.read(4196, 8192), data.subarray(8192));
      await h.close();
    });

    test('a block copied from another file (same position): EIO, logged; the other blocks read', async () => {
      await v.writeFile('/donor', other);
      await v.writeFile('/swap2', data);
      const donor = await fsp.readFile(await v.cipherPath('/donor'));
      const p2 = await v.cipherPath('/swap2');
      const b = await fsp.readFile(p2);
      await fsp.writeFile(p2, Buffer.concat([b.subarray(0, 18), donor.subarray(18, 18 + l.cipherBlockSize), b.subarray(18 + l.cipherBlockSize)]));
      const h = await v.open('/swap2', 'r');
      await expectFailure(() => h.read(1, 0), 'EIO', new RegExp(`^${esc(p2)}: block 0 failed authentication`));
      assert.deepEqual(await h.read(4096, 4096), data.subarray(4096, 8192));
      await h.close();
      // Header and all: a whole cipher file copied over another is the other file (see the name swap below).
    });

    test('names of two files swapped within a directory: undetectable by the format, but no mixing', async () => {
      // gocryptfs binds blocks to their file (file ID) and names to their
      // directory (diriv), but not a file's content to its name: swapping two
      // cipher files' names in one directory swaps the two files, exactly as
      // with gocryptfs. Each still reads as the complete, authentic content of
      // the other file; nothing is a mix of both.
      await v.mkdir('/sw');
      await v.writeFile('/sw/a', data);
      await v.writeFile('/sw/b', other);
      const pa = await v.cipherPath('/sw/a');
      const pb = await v.cipherPath('/sw/b');
      await fsp.rename(pa, pa + '.tmp');
      await fsp.rename(pb, pa);
      await fsp.rename(pa + '.tmp', pb);
      assert.deepEqual(await v.readFile('/sw/a'), other);
      assert.deepEqual(await v.readFile('/sw/b'), data);
    });

    test('a file moved to another directory on the cipher side: hidden there with a log line, ENOENT by name', async () => {
      await v.mkdir('/m1');
      await v.writeFile('/m1/moved', data);
      const from = await v.cipherPath('/m1/moved');
      // Under another directory's IV a name decrypts to garbage that still
      // has valid padding about once in 256 tries (gocryptfs would then list
      // that garbage too): take a target directory where it does not.
      let to = '';
      let m2 = '';
      for (let i = 0; ; i++) {
        m2 = i === 0 ? '/m2' : `/m2-${i}`;
        await v.mkdir(m2);
        await v.writeFile(`${m2}/stays`, other);
        to = join(await v.cipherPath(m2), basename(from));
        await fsp.rename(from, to);
        if ((await v.readdir(m2)).length === 1 || i === 9) break;
        await fsp.rename(to, from);
      }
      log.lines.length = 0;
      assert.deepEqual(await v.readdir(m2), ['stays']);
      assert.equal(log.lines.length, 1);
      assert.match(log.lines[0]!, new RegExp(`^${esc(to)}: name does not decrypt, hidden$`));
      // The second listing answers from the vault's name memo: same names, same log line.
      assert.deepEqual(await v.readdir(m2), ['stays']);
      assert.equal(log.lines.length, 2);
      assert.equal(log.lines[1], log.lines[0]);
      await expectFailure(() => v.readFile(`${m2}/moved`), 'ENOENT', null, 0);
      await expectFailure(() => v.readFile('/m1/moved'), 'ENOENT', null, 0);
    });

    test('long names: a damaged .name file hides the entry (logged); a swapped pair of .name files hides both', async () => {
      await v.mkdir('/ln');
      const nameA = 'A'.repeat(200);
      const nameB = 'B'.repeat(200);
      const nameC = 'C'.repeat(200);
      await v.writeFile(`/ln/${nameA}`, 'content a');
      await v.writeFile(`/ln/${nameB}`, 'content b');
      await v.writeFile(`/ln/${nameC}`, 'content c');
      const pa = await v.cipherPath(`/ln/${nameA}`);
      const pb = await v.cipherPath(`/ln/${nameB}`);
      const pc = await v.cipherPath(`/ln/${nameC}`);
      const cnameA = await fsp.readFile(`${pa}.name`, 'latin1');
      await overwrite(`${pa}.name`, cnameA.slice(0, 10) + (cnameA[10] === 'x' ? 'y' : 'x') + cnameA.slice(11));
      log.lines.length = 0;
      assert.deepEqual((await v.readdir('/ln')).sort(), [nameB, nameC]);
      assert.deepEqual(log.lines, [`${pa}: long name without a valid .name file, hidden`]);
      // Opening by name needs only the hash, not the .name file: still the right content.
      assert.equal((await v.readFile(`/ln/${nameA}`)).toString(), 'content a');
      const cnameB = await fsp.readFile(`${pb}.name`, 'latin1');
      const cnameC = await fsp.readFile(`${pc}.name`, 'latin1');
      await overwrite(`${pb}.name`, cnameC);
      await overwrite(`${pc}.name`, cnameB);
      log.lines.length = 0;
      assert.deepEqual(await v.readdir('/ln'), []);
      assert.equal(log.lines.length, 3);
      await fsp.rm(`${pb}.name`, { force: true });
      log.lines.length = 0;
      assert.deepEqual(await v.readdir('/ln'), []);
      assert.ok(log.lines.some((x) => x === `${pb}: long name without a valid .name file, hidden`), log.lines.join('\n'));
    });

    test('a zeroed, short or missing diriv: the directory is EIO, logged with the reason', async () => {
      for (const [damage, reason] of [
        ['zero', 'diriv is all zero'],
        ['short', 'diriv is 15 bytes'],
        ['missing', 'diriv is missing'],
      ] as const) {
        const dir = `/iv-${damage}`;
        await v.mkdir(dir);
        await v.writeFile(`${dir}/f`, 'x');
        const cd = await v.cipherPath(dir);
        const iv = join(cd, 'gocryptfs.diriv');
        if (damage === 'missing') await fsp.rm(iv);
        else await overwrite(iv, damage === 'zero' ? Buffer.alloc(16) : Buffer.alloc(15, 1));
        // A fresh vault: no cached IV.
        const log2 = new Recorder();
        const v2 = await Vault.open(tmp, { password: 'pw', logger: log2 });
        try {
          await assert.rejects(v2.readdir(dir), { code: 'EIO' });
          await assert.rejects(v2.readFile(`${dir}/f`), { code: 'EIO' });
          assert.equal(log2.lines.length, 2);
          assert.match(log2.lines[0]!, new RegExp(`^${esc(cd)}: EIO: ${reason}`));
        } finally {
          await v2.close();
        }
      }
    });

    test('a tampered symlink target and xattr value are EIO, logged', async () => {
      await v.symlink('target', '/link');
      const lp = await v.cipherPath('/link');
      const stored = await fsp.readlink(lp);
      await fsp.rm(lp);
      await fsp.symlink((stored[0] === 'A' ? 'B' : 'A') + stored.slice(1), lp);
      await expectFailure(() => v.readlink('/link'), 'EIO', new RegExp(`^${esc(lp)}: symlink target does not decrypt: message failed authentication`));
      await expectFailure(() => v.stat('/link'), 'EIO', /symlink target does not decrypt/);
      await v.writeFile('/xa', 'x');
      await v.setxattr('/xa', 'user.secret', Buffer.from('value'));
      const xp = await v.cipherPath('/xa');
      const [stored2] = await xattr.listAttributes(xp);
      const val = await xattr.getAttribute(xp, stored2!);
      val[val.length - 1]! ^= 1;
      await xattr.setAttribute(xp, stored2!, val);
      await expectFailure(() => v.getxattr('/xa', 'user.secret'), 'EIO', new RegExp(`^${esc(xp)}: xattr ${esc(stored2!)} does not decrypt`));
    });

    test('undecryptable names are hidden with a log line; reading changes nothing on disk', async () => {
      await v.mkdir('/d');
      await v.writeFile('/d/good', 'x');
      const cd = await v.cipherPath('/d');
      await fsp.writeFile(join(cd, 'invalid_name_here'), 'junk');
      await fsp.writeFile(join(cd, 'AAAAAAAAAA'), 'junk');
      await fsp.writeFile(join(cd, 'gocryptfs.longname.orphan'), 'junk');
      const before = await treeState(tmp);
      log.lines.length = 0;
      assert.deepEqual(await v.readdir('/d'), ['good']);
      assert.equal(log.lines.length, 3);
      for (const name of ['/f-nonce', '/hdr', '/trunc', '/swap1', '/swap2', '/ln']) {
        await v.readFile(name).catch(() => undefined);
        await v.readdir(name).catch(() => undefined);
      }
      assert.deepEqual(await treeState(tmp), before);
    });
  });
}
