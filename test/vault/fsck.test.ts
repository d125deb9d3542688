/**
 * The filesystem check (src/vault/fsck) on trees made with the Vault, for
 * every cipher and name mode: a clean tree has no findings; every kind of
 * damage is reported with the right kind and plaintext path, once; holes
 * and hard links are no problem; the check changes nothing on disk.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault, type CipherName, type Logger } from '../../src/index.js';
import { layout } from '../../src/content/index.js';
import { fsckCipherdir, corruptPaths, type FsckReport } from '../../src/vault/fsck/index.js';
import * as xattr from '../../src/util/xattr-io.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { treeState } from '../helpers/tree-state.js';
import { internalAccess } from '../../src/vault/internal-access.js';

const quiet: Logger = { warn: () => undefined };
const NONCE: Record<CipherName, number> = { 'aes-gcm': 16, 'aes-siv': 16, xchacha: 24, aegis: 32 };

interface Mode {
  label: string;
  cipher: CipherName;
  plaintextNames?: boolean;
  deterministicNames?: boolean;
}

const MODES: Mode[] = [
  { label: 'aes-gcm', cipher: 'aes-gcm' },
  { label: 'aes-siv', cipher: 'aes-siv' },
  { label: 'xchacha', cipher: 'xchacha' },
  { label: 'aegis', cipher: 'aegis' },
  { label: 'aes-gcm -plaintextnames', cipher: 'aes-gcm', plaintextNames: true },
  { label: 'aes-gcm -deterministic-names', cipher: 'aes-gcm', deterministicNames: true },
];

async function flip(p: string, off: number): Promise<void> {
  const fh = await fsp.open(p, 'r+');
  const b = Buffer.alloc(1);
  await fh.read(b, 0, 1, off);
  b[0]! ^= 0x40;
  await fh.write(b, 0, 1, off);
  await fh.close();
}

const data = Buffer.alloc(3 * 4096 + 100);
for (let i = 0; i < data.length; i++) data[i] = (i * 13) & 0xff;
const LONG_A = 'a'.repeat(200);
const LONG_B = 'b'.repeat(200);

for (const mode of MODES) {
  describe(`fsck (${mode.label})`, () => {
    let tmp: string;
    let v: Vault;
    let key: Uint8Array;
    const l = layout(NONCE[mode.cipher], 16);
    const names = !mode.plaintextNames;
    const run = (): Promise<FsckReport> => fsckCipherdir(tmp, { format: v.format, masterKey: key, skipUnreadable: false });

    before(async () => {
      tmp = makeTempDir();
      v = await Vault.init(tmp, { password: 'pw', scryptLogN: 10, logger: quiet, cipher: mode.cipher, ...(mode.plaintextNames && { plaintextNames: true }), ...(mode.deterministicNames && { deterministicNames: true }) });
      key = internalAccess(v).masterKey();
      for (const f of ['f', 'h', 'short', 't', 's1', 's2', 'ok', 'x', 'x2']) await v.writeFile(`/${f}`, data);
      await v.writeFile('/empty', '');
      const sp = await v.open('/sparse', 'w');
      await sp.write(Buffer.from('end'), 5 << 20);
      await sp.close();
      await v.link('/f', '/f-link');
      await v.symlink('target/of/link', '/l');
      await v.setxattr('/x', 'user.note', Buffer.from('value'));
      await v.setxattr('/ok', 'user.fine', Buffer.from('fine'));
      await v.mkdir('/d');
      await v.mkdir('/e');
      await v.writeFile('/e/inside', 'x');
      await v.writeFile(`/d/${LONG_A}`, 'long a');
      await v.writeFile(`/d/${LONG_B}`, 'long b');
      await v.writeFile('/d/good', 'good');
    });
    after(async () => {
      await v.close();
      removeTempDir(tmp);
    });

    test('a clean tree (holes, hard links, long names, xattrs, empty files) has no findings', async () => {
      const r = await run();
      assert.deepEqual(r.findings, []);
      assert.equal(r.aborted, false);
      assert.equal(r.dirs, 3);
      assert.ok(r.files >= 14, `files ${r.files}`);
    });

    test('every kind of damage is reported once, with its kind and plaintext path; the check writes nothing', async () => {
      const cp = (p: string): Promise<string> => v.cipherPath(p);
      await flip(await cp('/f'), 18 + l.cipherBlockSize + 200); // block 1
      await flip(await cp('/f'), 18 + 2 * l.cipherBlockSize + 20); // block 2
      await flip(await cp('/h'), 1); // header version
      await fsp.truncate(await cp('/short'), 10);
      await fsp.truncate(await cp('/t'), 18 + l.cipherBlockSize + 10);
      const s1 = await fsp.readFile(await cp('/s1'));
      const s2p = await cp('/s2');
      const s2 = await fsp.readFile(s2p);
      await fsp.writeFile(s2p, Buffer.concat([s2.subarray(0, 18), s1.subarray(18, 18 + l.cipherBlockSize), s2.subarray(18 + l.cipherBlockSize)]));
      const xp = await cp('/x');
      const [stored] = await xattr.listAttributes(xp);
      const val = await xattr.getAttribute(xp, stored!);
      val[val.length - 1]! ^= 1;
      await xattr.setAttribute(xp, stored!, val);
      await xattr.setAttribute(await cp('/x2'), 'user.gocryptfs.AAAAAAAAAA', Buffer.from('junk'));
      await flip(await cp('/sparse'), 18 + (5 << 20) / 4096 * l.cipherBlockSize + 40); // the data after a 5 MiB hole
      const expected: Array<[string, string]> = [
        ['block', 'sparse'],
        ['block', 'f'],
        ['block', 'f'],
        ['header', 'h'],
        ['header', 'short'],
        ['block', 't'],
        ['block', 's2'],
        ['xattr-value', 'x'],
        ['xattr-name', 'x2'],
      ];
      if (names) {
        const lp = await cp('/l');
        const target = await fsp.readlink(lp);
        await fsp.rm(lp);
        await fsp.symlink((target[0] === 'A' ? 'B' : 'A') + target.slice(1), lp);
        expected.push(['symlink', 'l']);
        const d = await cp('/d');
        await fsp.writeFile(join(d, 'AAAAAAAAAA'), 'junk');
        expected.push(['name', 'd/AAAAAAAAAA']);
        const la = await cp(`/d/${LONG_A}`);
        const lb = await cp(`/d/${LONG_B}`);
        const laName = la.slice(d.length + 1);
        const lbName = lb.slice(d.length + 1);
        await fsp.rm(`${la}.name`); // missing .name file
        await fsp.chmod(`${lb}.name`, 0o644);
        await fsp.writeFile(`${lb}.name`, (await fsp.readFile(`${lb}.name`, 'latin1')).replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))); // .name of the wrong entry
        expected.push(['longname', `d/${laName}`], ['longname', `d/${lbName}`]);
        await fsp.writeFile(join(d, 'gocryptfs.longname.orphaned.name'), 'x');
        expected.push(['orphan-name-file', 'd/gocryptfs.longname.orphaned.name']);
      }
      if (v.format.dirIV) {
        const iv = join(await cp('/e'), 'gocryptfs.diriv');
        await fsp.chmod(iv, 0o644);
        await fsp.writeFile(iv, Buffer.alloc(16));
        expected.push(['diriv', 'e']);
      }
      const before = await treeState(tmp);
      const r = await run();
      assert.deepEqual(await treeState(tmp), before, 'fsck changed the cipher directory');
      const got = r.findings.map((f) => [f.kind, f.path] as [string, string]);
      const sort = (a: Array<[string, string]>): Array<[string, string]> => [...a].sort((x, y) => (x.join() < y.join() ? -1 : 1));
      assert.deepEqual(sort(got), sort(expected), JSON.stringify(r.findings, null, 1));
      assert.equal(corruptPaths(r).length, new Set(expected.map((e) => e[1])).size);
      for (const f of r.findings) assert.ok(f.cipherPath.startsWith(tmp + '/'), f.cipherPath);
      const blockF = r.findings.filter((f) => f.path === 'f').map((f) => f.detail);
      assert.match(blockF[0]!, /^block 1 failed authentication, cipher offset \d+$/);
      assert.match(blockF[1]!, /^block 2 failed authentication/);
    });

    test('an abort signal stops the walk and says so', async () => {
      const ac = new AbortController();
      ac.abort();
      const r = await fsckCipherdir(tmp, { format: v.format, masterKey: key, signal: ac.signal });
      assert.equal(r.aborted, true);
      assert.deepEqual(r.findings, []);
    });
  });
}
