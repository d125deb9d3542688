/**
 * Real programs inside a mount of MOUNT_IMPL (see test/helpers/mount.ts):
 * cp -a and diff -r, tar, rsync, git, sqlite3, an editor-style save by
 * rename-over. Needs rsync, sqlite3, git, attr (setfattr/getfattr) and
 * python3 installed (test dependencies).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import * as xattr from '../../src/util/xattr-io.js';
import { diffManifests, fsSide, prng, readManifest, type ManifestEntry } from '../helpers/tree.js';
import { run } from '../helpers/mount.js';
import { assertBytes, assertFsckClean, cipherEntries, cipherPathOf, ok, useMountFixture } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const fx = useMountFixture('programs');
const T = { timeout: 120_000, ...needs('mount', 'gocryptfs', 'python3') };
const SIZES = [0, 1, 4095, 4096, 4097, (1 << 20) + 13];

for (const tool of ['rsync', 'sqlite3', 'git', 'tar', 'diff', 'setfattr']) {
  const r = await run('sh', ['-c', `command -v ${tool}`]);
  if (r.code !== 0) throw new Error(`${tool} is required by the mount tests (a test dependency; install it with apt-get)`);
}

let src = '';

/** The reference tree, outside the mount: every interesting size, nesting, a symlink, a hard link, modes, xattrs, old times. */
before(async () => {
  src = join(fx.tmp, 'src');
  await fsp.mkdir(join(src, 'sub', 'deeper'), { recursive: true });
  for (const size of SIZES) await fsp.writeFile(join(src, `file_${size}.bin`), prng(`prog-${size}`, size));
  await fsp.writeFile(join(src, 'sub', 'deeper', 'nested.txt'), 'nested\n');
  await fsp.writeFile(join(src, 'sub', 'private.txt'), 'private\n', { mode: 0o600 });
  await fsp.mkdir(join(src, 'closed'), { mode: 0o700 });
  await fsp.writeFile(join(src, 'closed', 'x.txt'), 'in a 0700 dir\n');
  await fsp.symlink('../file_1.bin', join(src, 'sub', 'link_up'));
  await fsp.symlink('/nonexistent/absolute', join(src, 'dangling'));
  await fsp.link(join(src, 'file_4096.bin'), join(src, 'sub', 'hardlink.bin'));
  await xattr.setAttribute(join(src, 'file_4097.bin'), 'user.tag', 'tagged');
  await fsp.writeFile(join(src, 'ünï cødé.txt'), 'utf-8 name\n');
  // Old, distinct times on everything, set bottom-up (rsync compares whole seconds: a source
  // time in the same second as the copy would not be copied, and the test would be flaky).
  let n = 0;
  const age = async (dir: string): Promise<void> => {
    for (const d of await fsp.readdir(dir, { withFileTypes: true })) {
      const p = join(dir, d.name);
      if (d.isDirectory()) await age(p);
      const t = new Date(Date.UTC(2010, 4, 6, 7, 8, 9) + 1000 * 3600 * ++n + 500);
      await fsp.lutimes(p, t, t);
    }
  };
  await age(src);
});

function assertManifest(actual: ManifestEntry[], expected: ManifestEntry[], what: string): void {
  const d = diffManifests(actual, expected);
  assert.equal(d, '', `${what}:\n${d}`);
}

/** mtimes (ms) of every entry below `root` except symlinks, by relative path. */
async function mtimes(root: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const d of await fsp.readdir(join(root, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      if (d.isSymbolicLink()) continue;
      out[r] = Math.floor((await fsp.lstat(join(root, r))).mtimeMs);
      if (d.isDirectory()) await walk(r);
    }
  };
  await walk('');
  return out;
}

async function diffR(a: string, b: string): Promise<void> {
  await ok('diff', ['-r', '--no-dereference', a, b]);
}

test('cp -a into the mount and back out: diff -r is clean; modes, times, symlinks, hard links and xattrs kept', T, async () => {
  const want = await readManifest(fsSide(src));
  await ok('cp', ['-a', src, fx.p('cp')]);
  await diffR(src, fx.p('cp'));
  assertManifest(await readManifest(fsSide(fx.p('cp'))), want, 'the copy in the mount');
  assert.deepEqual(await mtimes(fx.p('cp')), await mtimes(src), 'mtimes preserved in the mount');

  const out = join(fx.tmp, 'cp-out');
  await ok('cp', ['-a', fx.p('cp'), out]);
  await diffR(src, out);
  assertManifest(await readManifest(fsSide(out)), want, 'the copy back out');
  assert.deepEqual(await mtimes(out), await mtimes(src), 'mtimes preserved on the way out');
});

test('tar: archive into the mount, extract inside the mount, archive again out of it', T, async () => {
  const want = await readManifest(fsSide(src));
  await ok('tar', ['--xattrs', '--xattrs-include=user.*', '-C', src, '-cf', fx.p('tree.tar'), '.']);
  await fsp.mkdir(fx.p('tarx'));
  await ok('tar', ['--xattrs', '--xattrs-include=user.*', '-C', fx.p('tarx'), '-xpf', fx.p('tree.tar')]);
  await diffR(src, fx.p('tarx'));
  assertManifest(await readManifest(fsSide(fx.p('tarx'))), want, 'extracted in the mount');
  assert.deepEqual(await mtimes(fx.p('tarx')), await mtimes(src), 'tar restores mtimes in the mount');

  const outTar = join(fx.tmp, 'again.tar');
  await ok('tar', ['--xattrs', '--xattrs-include=user.*', '-C', fx.p('tarx'), '-cf', outTar, '.']);
  // Same names (the order, and so which name of a hard link is stored as the link, follows readdir).
  const listIn = await ok('tar', ['-tf', fx.p('tree.tar')]);
  const listOut = await ok('tar', ['-tf', outTar]);
  assert.equal(listOut.split('\n').sort().join('\n'), listIn.split('\n').sort().join('\n'), 'both archives list the same names');
  const tarOut = join(fx.tmp, 'tar-out');
  await fsp.mkdir(tarOut);
  await ok('tar', ['--xattrs', '--xattrs-include=user.*', '-C', tarOut, '-xpf', outTar]);
  await diffR(src, tarOut);
  assertManifest(await readManifest(fsSide(tarOut)), want, 'extracted outside from the archive made in the mount');
});

test('rsync -aHX in (full, delta, --inplace) and out; a checksum pass finds nothing to do', T, async () => {
  const want = async (): Promise<ManifestEntry[]> => readManifest(fsSide(src));
  const dst = fx.p('rs');
  await ok('rsync', ['-aHX', src + '/', dst + '/']);
  await diffR(src, dst);
  assertManifest(await readManifest(fsSide(dst)), await want(), 'rsync into the mount');
  assert.deepEqual(await mtimes(dst), await mtimes(src), 'rsync keeps mtimes');

  // A change in the middle of the big file: delta transfer (temp file + rename).
  const big = join(src, `file_${(1 << 20) + 13}.bin`);
  const h = await fsp.open(big, 'r+');
  await h.write(Buffer.from('changed in the middle'), 0, 21, 500_000);
  await h.close();
  // Distinct whole-second mtimes: rsync's quick check compares size and mtime in seconds.
  await fsp.utimes(big, new Date('2015-01-01T00:00:00Z'), new Date('2015-01-01T00:00:00Z'));
  await ok('rsync', ['-aHX', '--no-whole-file', src + '/', dst + '/']);
  await diffR(src, dst);

  // And --inplace: rsync rewrites parts of the existing file.
  const h2 = await fsp.open(big, 'r+');
  await h2.write(Buffer.from('changed in place'), 0, 16, 700_001);
  await h2.close();
  await fsp.utimes(big, new Date('2016-01-01T00:00:00Z'), new Date('2016-01-01T00:00:00Z'));
  await fsp.appendFile(join(src, 'file_4095.bin'), 'grows by a block boundary');
  await ok('rsync', ['-aHX', '--inplace', '--no-whole-file', src + '/', dst + '/']);
  await diffR(src, dst);
  assertManifest(await readManifest(fsSide(dst)), await want(), 'after --inplace');
  const check = await ok('rsync', ['-aHXi', '--checksum', '--dry-run', src + '/', dst + '/']);
  assert.equal(check.trim(), '', `a checksum pass finds nothing to transfer:\n${check}`);

  const out = join(fx.tmp, 'rs-out');
  await ok('rsync', ['-aHX', dst + '/', out + '/']);
  await diffR(src, out);
  assertManifest(await readManifest(fsSide(out)), await want(), 'rsync out of the mount');
});

test('git: init, add, commit, status, gc, fsck and a local clone inside the mount', T, async () => {
  const env = { ...process.env, HOME: fx.tmp, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.org', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.org' };
  const repo = fx.p('repo');
  const git = (args: string[], cwd = repo): Promise<string> => ok('git', args, { cwd, env });
  await fsp.mkdir(repo);
  await git(['init', '-q', '-b', 'main']);
  await fsp.writeFile(join(repo, 'README'), 'hello git\n');
  await fsp.mkdir(join(repo, 'src'));
  await fsp.writeFile(join(repo, 'src', 'big.bin'), prng('git-big', 300_000));
  await fsp.writeFile(join(repo, 'src', 'script.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  await git(['add', '.']);
  await git(['commit', '-q', '-m', 'first']);
  assert.equal(await git(['status', '--porcelain']), '', 'clean after the first commit');

  await fsp.appendFile(join(repo, 'README'), 'more\n');
  await fsp.writeFile(join(repo, 'new.txt'), 'untracked\n');
  assert.equal(await git(['status', '--porcelain']), ' M README\n?? new.txt\n');
  await git(['add', '-A']);
  await git(['commit', '-q', '-m', 'second']);
  assert.equal(await git(['status', '--porcelain']), '');
  assert.equal((await git(['log', '--oneline'])).trim().split('\n').length, 2);
  await git(['gc', '-q']);
  await git(['fsck', '--full', '--strict']);
  assert.equal(await git(['status', '--porcelain']), '', 'clean after gc');

  // A local clone hard-links the objects and then checks that each link lstat()s like its
  // source (same size among others). gocryptfs 2.3 answers LINK with the cipher file's size,
  // which git 2.39.5+ rejects ("hardlink different from source"): it gets --no-hardlinks.
  await git(['clone', '-q', ...(fx.impl === 'gocryptfs' ? ['--no-hardlinks'] : []), repo, fx.p('clone')], fx.mnt);
  assert.equal(await git(['log', '--format=%s'], fx.p('clone')), 'second\nfirst\n');
  assert.equal(await fsp.readFile(fx.p('clone', 'README'), 'utf8'), 'hello git\nmore\n');
  assert.equal((await fsp.stat(fx.p('clone', 'src', 'script.sh'))).mode & 0o777, 0o755, 'the executable bit survives');
  await git(['fsck', '--full'], fx.p('clone'));
});

test('sqlite3: 5000 rows, updates, deletes, VACUUM; integrity_check ok, with a rollback journal and with WAL', T, async () => {
  for (const mode of ['DELETE', 'WAL']) {
    const db = fx.p(`db-${mode}.sqlite`);
    const script = `PRAGMA journal_mode=${mode};
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, payload BLOB);
CREATE INDEX t_name ON t(name);
BEGIN;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5000)
INSERT INTO t(id, name, payload) SELECT x, 'row ' || x, randomblob(200 + x % 700) FROM c;
COMMIT;
UPDATE t SET name = name || ' updated' WHERE id % 7 = 0;
DELETE FROM t WHERE id % 11 = 0;
PRAGMA integrity_check;
SELECT count(*) FROM t;
SELECT count(*) FROM t WHERE name LIKE '% updated';
`;
    const out = (await ok('sqlite3', ['-batch', db], { input: script })).trim().split('\n');
    assert.equal(out[0]?.toLowerCase(), mode.toLowerCase(), `journal mode ${mode}`);
    assert.deepEqual(out.slice(1), ['ok', String(5000 - Math.floor(5000 / 11)), String(Math.floor(5000 / 7) - Math.floor(5000 / 77))]);
    // A second process opens it again: VACUUM, then check.
    const out2 = (await ok('sqlite3', ['-batch', db], { input: 'VACUUM;\nPRAGMA integrity_check;\nSELECT count(*) FROM t;\n' })).trim();
    assert.equal(out2, `ok\n${5000 - Math.floor(5000 / 11)}`);
  }
});

test('save by rename-over: temp file + fsync + rename over the original; sed -i; a backup-and-replace editor', T, async () => {
  const f = fx.p('document.txt');
  await fsp.writeFile(f, 'version 1\n', { mode: 0o640 });
  const oldHandle = await fsp.open(f, 'r');
  try {
    // As editors do: write a temp file beside it, fsync, rename over.
    const tmpName = fx.p('.document.txt.swp-tmp');
    const h = await fsp.open(tmpName, 'w', 0o640);
    await h.write('version 2, saved by rename\n');
    await h.sync();
    await h.close();
    await fsp.rename(tmpName, f);
    assert.equal(await fsp.readFile(f, 'utf8'), 'version 2, saved by rename\n');
    const buf = Buffer.alloc(100);
    const { bytesRead } = await oldHandle.read(buf, 0, 100, 0);
    assert.equal(buf.subarray(0, bytesRead).toString(), 'version 1\n', 'a reader of the old version still sees it');
  } finally {
    await oldHandle.close();
  }
  assert.equal((await fsp.stat(f)).mode & 0o777, 0o640);

  // sed -i (temp file + rename, copying mode).
  await ok('sed', ['-i', 's/version 2/version 3/', f]);
  assert.equal(await fsp.readFile(f, 'utf8'), 'version 3, saved by rename\n');
  assert.equal((await fsp.stat(f)).mode & 0o777, 0o640, 'sed -i keeps the mode');

  // Backup-and-replace: rename to f~, write a new f, remove f~.
  await fsp.rename(f, f + '~');
  await fsp.writeFile(f, 'version 4\n');
  await fsp.unlink(f + '~');
  assert.equal(await fsp.readFile(f, 'utf8'), 'version 4\n');

  // Many quick saves of a bigger file.
  let last: Buffer = Buffer.alloc(0);
  for (let i = 0; i < 20; i++) {
    last = prng(`save-${i}`, 5000 + i * 300);
    await fsp.writeFile(fx.p('.big.tmp'), last);
    await fsp.rename(fx.p('.big.tmp'), fx.p('big.doc'));
  }
  assertBytes(await fsp.readFile(fx.p('big.doc')), last, 'after 20 saves');
  const names = (await fsp.readdir(fx.mnt)).filter((n) => n.includes('document') || n.includes('big.'));
  assert.deepEqual(names.sort(), ['big.doc', 'document.txt'], 'no temp files left in the mount');
  // And on disk: the root holds exactly as many objects as the mount shows.
  assert.equal((await cipherEntries(fx.cipherdir)).filter((n) => !n.startsWith('gocryptfs.')).length, (await fsp.readdir(fx.mnt)).length);
  await cipherPathOf(fx.cipherdir, 'big.doc');
});

test('teardown: unmounts cleanly, nothing left mounted, gocryptfs -fsck finds no problems', T, async () => {
  await fx.teardown();
  await assertFsckClean(fx.cipherdir);
});
