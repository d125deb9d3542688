/**
 * Sync conflict copies through the library (Documentation/format.md
 * §7.12): shown names never take a real entry's name (a counter is added),
 * two copies with one label get counters in the order of their names on
 * disk, a real entry always wins a lookup, each copy works for every call
 * (stat, read, write, truncate, chmod, xattrs), Vault.conflicts describes
 * them, noConflicts and -badname show the directory as gocryptfs does,
 * names that are no tool's copy stay hidden, and a name of a renamed
 * gocryptfs.diriv's that happens to decrypt under the directory's own IV is
 * still shown as that IV's conflict.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import type { FormatOptions } from '../../src/config/format.js';
import { Vault, type Logger } from '../../src/index.js';
import { DIRIV_NAME } from '../../src/names/diriv.js';
import { internalAccess } from '../../src/vault/internal-access.js';
import { fsckCipherdir } from '../../src/vault/fsck/index.js';
import { deriveCiphers } from '../../src/vault/keys.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

let tmp = '';
before(() => {
  tmp = makeTempDir('tscryptfs-conflicts-');
});
after(() => removeTempDir(tmp));

const PASSWORD = 'conflicts';
const quiet: Logger = { warn: () => undefined };

/** A new cipher directory holding `files`, and an open Vault on it. */
async function vaultWith(name: string, files: Record<string, string>, opts: { noConflicts?: boolean; badname?: string[]; logger?: Logger } = {}): Promise<{ v: Vault; dir: string }> {
  const dir = join(tmp, name);
  await fsp.mkdir(dir);
  const v = await Vault.init(dir, { password: PASSWORD, scryptLogN: 10, logger: opts.logger ?? quiet });
  for (const [p, data] of Object.entries(files)) await v.writeFile(p, data);
  await v.close();
  return { v: await Vault.open(dir, { password: PASSWORD, logger: opts.logger ?? quiet, ...opts }), dir };
}

/** Turns the cipher file of `from` into a copy of `of` renamed with `suffix`, as a sync tool leaves it. */
async function makeCopy(v: Vault, from: string, of: string, suffix: string): Promise<void> {
  await fsp.rename(await v.cipherPath(from), (await v.cipherPath(of)) + suffix);
}

test("a copy's shown name never takes a real entry's: a counter is added; the real entry keeps its name and content", async () => {
  const { v } = await vaultWith('taken', { '/report.odt': 'canonical', '/report (conflict copy 1).odt': 'a real file', '/other': 'the copy' });
  try {
    await makeCopy(v, '/other', '/report.odt', ' (1)');
    assert.deepEqual((await v.readdir('/')).sort(), ['report (conflict copy 1 2).odt', 'report (conflict copy 1).odt', 'report.odt']);
    assert.equal(String(await v.readFile('/report (conflict copy 1).odt')), 'a real file');
    assert.equal(String(await v.readFile('/report (conflict copy 1 2).odt')), 'the copy');
  } finally {
    await v.close();
  }
});

test('two copies with one label get counters in the byte order of their names on disk', async () => {
  const { v } = await vaultWith('same-label', { '/a.txt': 'a', '/x': 'from device A', '/y': 'from device B' });
  try {
    await makeCopy(v, '/x', '/a.txt', '.sync-conflict-20261205-081500-AAAAAAA');
    await makeCopy(v, '/y', '/a.txt', '.sync-conflict-20261205-081533-BBBBBBB');
    const label = 'Syncthing 2026-12-05 08.15';
    assert.deepEqual((await v.readdir('/')).sort(), ['a.txt', `a (conflict ${label} 2).txt`, `a (conflict ${label}).txt`].sort());
    assert.equal(String(await v.readFile(`/a (conflict ${label}).txt`)), 'from device A');
    assert.equal(String(await v.readFile(`/a (conflict ${label} 2).txt`)), 'from device B');
  } finally {
    await v.close();
  }
});

test('a copy works for every call; Vault.conflicts describes it; creating a conflict-like name where none is makes an ordinary entry', async () => {
  const { v } = await vaultWith('calls', { '/notes.md': 'mine', '/theirs': 'theirs, longer' });
  try {
    await makeCopy(v, '/theirs', '/notes.md', ' (conflicted copy 2026-12-05 081500)');
    const shown = '/notes (conflict Nextcloud 2026-12-05 08.15).md';
    const [c, ...rest] = await v.conflicts('/');
    assert.equal(rest.length, 0);
    assert.equal(c!.shown, shown.slice(1));
    assert.equal(c!.plain, 'notes.md');
    assert.equal(c!.kind, 'copy');
    assert.equal(c!.tool, 'Nextcloud');
    assert.equal(c!.diskName, c!.canonical + ' (conflicted copy 2026-12-05 081500)');
    assert.equal((await v.stat(shown)).size, 'theirs, longer'.length);
    await v.truncate(shown, 6);
    await v.chmod(shown, 0o600);
    await v.setxattr(shown, 'user.k', Buffer.from('v'));
    assert.deepEqual(await v.listxattr(shown), ['user.k']);
    const f = await v.open(shown, 'r+');
    await f.write(Buffer.from('THEIRS'), 0);
    await f.close();
    assert.equal(String(await v.readFile(shown)), 'THEIRS');
    assert.equal((await v.stat(shown)).mode & 0o777, 0o600);
    assert.equal(String(await v.readFile('/notes.md')), 'mine', 'the canonical entry is untouched');
    // A name that only looks like a shown one is an ordinary new entry.
    await v.writeFile('/plan (conflict Syncthing 2020-01-01 00.00).txt', 'ordinary');
    assert.equal(String(await v.readFile('/plan (conflict Syncthing 2020-01-01 00.00).txt')), 'ordinary');
    assert.equal((await v.conflicts('/')).length, 1);
    // Resolved by rename: an ordinary encrypted name, no copy left.
    await v.rename(shown, '/notes.md');
    assert.equal(String(await v.readFile('/notes.md')), 'THEIRS');
    assert.deepEqual(await v.conflicts('/'), []);
    await assert.rejects(v.stat(shown), { code: 'ENOENT' });
  } finally {
    await v.close();
  }
});

test('noConflicts and a matching -badname pattern show the directory as gocryptfs does', async () => {
  const { v, dir } = await vaultWith('gocryptfs-view', { '/r.txt': 'r', '/c': 'c' });
  await makeCopy(v, '/c', '/r.txt', ' (1)');
  await v.close();
  const hidden = await Vault.open(dir, { password: PASSWORD, logger: quiet, noConflicts: true });
  try {
    assert.deepEqual(await hidden.readdir('/'), ['r.txt']);
    assert.deepEqual(await hidden.conflicts('/'), []);
    await assert.rejects(hidden.stat('/r (conflict copy 1).txt'), { code: 'ENOENT' });
  } finally {
    await hidden.close();
  }
  const bad = await Vault.open(dir, { password: PASSWORD, logger: quiet, badname: ['*'] });
  try {
    assert.deepEqual((await bad.readdir('/')).sort(), ['r.txt', 'r.txt (1) GOCRYPTFS_BAD_NAME']);
  } finally {
    await bad.close();
  }
});

test("names that are no tool's copy stay hidden and are logged", async () => {
  const lines: string[] = [];
  const logger: Logger = { warn: (m) => void lines.push(m) };
  const { v, dir } = await vaultWith('junk', { '/k.txt': 'k' }, { logger });
  try {
    const junk = ['AAAAAAAAAAAAAAAAAAAAAA', 'QmFkIG5hbWU-DESKTOP-X1', 'zzzz (1)', 'Yy_conflict-20261205-081500', 'gocryptfs.longname.nothing (1)'];
    for (const n of junk) await fsp.writeFile(join(dir, n), 'x');
    assert.deepEqual(await v.readdir('/'), ['k.txt']);
    for (const n of junk) assert.ok(lines.some((l) => l.includes(n) && l.includes('hidden')), `${n} logged: ${lines.join('\n')}`);
  } finally {
    await v.close();
  }
});

test("a renamed diriv's name that decrypts under the directory's own IV to bytes that are not text is shown as that IV's conflict", async () => {
  const { v, dir } = await vaultWith('doubtful', {});
  try {
    await v.mkdir('/proj');
    await v.writeFile('/proj/mine.txt', 'mine');
    const proj = await v.cipherPath('/proj');
    const ivA = await fsp.readFile(join(proj, DIRIV_NAME));
    const ivB = Buffer.alloc(16, 0x5b);
    // The default format of a new cipher directory.
    const format: FormatOptions = { cipher: 'aes-gcm', hkdf: true, plaintextNames: false, dirIV: true, raw64: true, longNameMax: 255, longNames: true };
    const codec = (await deriveCiphers(internalAccess(v).masterKey(), format)).names!;
    // One name of B's that decrypts under A's IV (valid padding, no '/' or NUL, not UTF-8), one that does not.
    let lucky = '';
    let plain = '';
    for (let i = 0; lucky === '' || plain === ''; i++) {
      const name = `b-${i}.txt`;
      const under = codec.decryptName(codec.encryptName(Buffer.from(name), ivB), ivA);
      if (under === null) plain ||= name;
      else if (!isUtf8(under)) lucky ||= name;
    }
    for (const name of [lucky, plain]) {
      await v.writeFile(`/proj/${name}`, `B's ${name}`);
      await fsp.rename(await v.cipherPath(`/proj/${name}`), join(proj, codec.diskName(codec.encryptName(Buffer.from(name), ivB))));
    }
    await fsp.writeFile(join(proj, 'gocryptfs.sync-conflict-20261205-081500-BBBBBBB.diriv'), ivB, { mode: 0o444 });
    const label = 'Syncthing 2026-12-05 08.15';
    const shown = (n: string): string => n.replace('.txt', ` (conflict ${label}).txt`);
    assert.deepEqual((await v.readdir('/proj')).sort(), ['mine.txt', shown(lucky), shown(plain)].sort());
    for (const name of [lucky, plain]) assert.equal(String(await v.readFile(`/proj/${shown(name)}`)), `B's ${name}`);
    const found = await v.conflicts('/proj');
    assert.deepEqual(found.map((c) => [c.plain, c.kind]).sort(), [[lucky, 'iv'], [plain, 'iv']].sort());
    // The check sees the directory as the listing does.
    const report = await fsckCipherdir(dir, { format: v.format, masterKey: internalAccess(v).masterKey(), skipUnreadable: false });
    assert.deepEqual(
      report.findings.map((f) => f.path).sort(),
      ['proj/gocryptfs.sync-conflict-20261205-081500-BBBBBBB.diriv', `proj/${shown(lucky)}`, `proj/${shown(plain)}`].sort(),
    );
    assert.ok(report.findings.every((f) => f.kind === 'iv-conflict'));
  } finally {
    await v.close();
  }
});
