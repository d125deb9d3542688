/**
 * Directory operations on a real mount of MOUNT_IMPL (see
 * test/helpers/mount.ts): readdir (what it hides and skips), mkdir and
 * its diriv, rmdir, long names, rename of files and directories with the
 * errno Linux filesystems return.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { Vault } from '../../src/index.js';
import { nameOfLength, prng } from '../helpers/tree.js';
import { initCipherdir, logPathFor, PASSWORD, run, withMount } from '../helpers/mount.js';
import { assertBytes, assertFsckClean, cipherEntries, cipherPathOf, rejectsWith, useMountFixture } from '../helpers/mount-suite.js';
import { needs } from '../helpers/requirements.js';

const fx = useMountFixture('dirs');
const T = { timeout: 60_000, ...needs('mount', 'gocryptfs', 'python3') };

const sorted = async (p: string): Promise<string[]> => (await fsp.readdir(p)).sort();

test('readdir lists exactly the created names with their types; hides gocryptfs.conf, gocryptfs.diriv and .name files', T, async () => {
  await fsp.mkdir(fx.p('ls'));
  const long = nameOfLength('long', 255);
  await fsp.writeFile(fx.p('ls', 'file.txt'), 'f');
  await fsp.mkdir(fx.p('ls', 'sub'));
  await fsp.symlink('file.txt', fx.p('ls', 'link'));
  await fsp.writeFile(fx.p('ls', long), 'long');
  await fsp.writeFile(fx.p('ls', '.hidden'), 'dot');
  await fsp.writeFile(fx.p('ls', 'ünï cødé 名前'), 'utf8');

  const names = ['.hidden', 'file.txt', 'link', long, 'sub', 'ünï cødé 名前'].sort();
  assert.deepEqual(await sorted(fx.p('ls')), names);
  const types = Object.fromEntries((await fsp.readdir(fx.p('ls'), { withFileTypes: true })).map((d) => [d.name, d.isFile() ? 'f' : d.isDirectory() ? 'd' : d.isSymbolicLink() ? 'l' : '?']));
  assert.deepEqual(types, { '.hidden': 'f', 'file.txt': 'f', link: 'l', [long]: 'f', sub: 'd', 'ünï cødé 名前': 'f' });
  assert.deepEqual(await fsp.readdir(fx.p('ls', 'sub')), [], 'a new directory is empty (its diriv is hidden)');

  // The cipher side does have the hidden files.
  const cdir = await cipherPathOf(fx.cipherdir, 'ls');
  const onDisk = await fsp.readdir(cdir);
  assert.ok(onDisk.includes('gocryptfs.diriv'));
  assert.equal(onDisk.filter((n) => n.startsWith('gocryptfs.longname.') && n.endsWith('.name')).length, 1, 'one .name file on disk');
  assert.equal(onDisk.length, names.length + 2, 'entries + diriv + one .name file');

  const root = await fsp.readdir(fx.mnt);
  assert.ok(!root.includes('gocryptfs.conf') && !root.includes('gocryptfs.diriv'), 'root hides gocryptfs.conf and gocryptfs.diriv');
  await rejectsWith(fsp.stat(fx.p('gocryptfs.diriv')), 'ENOENT', 'stat of gocryptfs.diriv through the mount');
  await rejectsWith(fsp.stat(fx.p('ls', 'gocryptfs.diriv')), 'ENOENT', 'stat of a subdirectory diriv through the mount');
  await rejectsWith(fsp.readdir(fx.p('ls', 'file.txt')), 'ENOTDIR', 'readdir of a file');
  await rejectsWith(fsp.readdir(fx.p('nothere')), 'ENOENT', 'readdir of a missing directory');

  // A large directory: readdir returns every entry once (several getdents calls).
  await fsp.mkdir(fx.p('many'));
  const many = Array.from({ length: 600 }, (_, i) => `entry_${String(i).padStart(4, '0')}_${'x'.repeat(i % 50)}`);
  for (const n of many) await fsp.writeFile(fx.p('many', n), '');
  assert.deepEqual(await sorted(fx.p('many')), many.sort());
});

/** readdir(3) as C sees it: name, d_type, d_ino (python3's ctypes; Node's Dirent stats entries of unknown type itself). */
const RAW_READDIR = `
import ctypes, json, sys
class D(ctypes.Structure):
    _fields_ = [('ino', ctypes.c_uint64), ('off', ctypes.c_int64), ('reclen', ctypes.c_uint16), ('type', ctypes.c_uint8), ('name', ctypes.c_char * 256)]
libc = ctypes.CDLL(None)
libc.opendir.restype = ctypes.c_void_p
libc.readdir.restype = ctypes.POINTER(D)
libc.readdir.argtypes = [ctypes.c_void_p]
libc.closedir.argtypes = [ctypes.c_void_p]
d = libc.opendir(sys.argv[1].encode())
out = []
while True:
    e = libc.readdir(d)
    if not e: break
    out.append([e.contents.name.decode(), e.contents.type, str(e.contents.ino)])
libc.closedir(d)
print(json.dumps(out))
`;

test('readdir hands out each entry\'s type and inode number (d_type, d_ino), so rm -r and find need no stat to tell them', T, async () => {
  await fsp.mkdir(fx.p('dt'));
  await fsp.writeFile(fx.p('dt', 'file'), 'f');
  await fsp.mkdir(fx.p('dt', 'dir'));
  await fsp.symlink('file', fx.p('dt', 'link'));
  await run('mkfifo', [fx.p('dt', 'fifo')]);
  const r = await run('python3', ['-c', RAW_READDIR, fx.p('dt')]);
  assert.equal(r.code, 0, r.stderr);
  const listed = (JSON.parse(r.stdout) as [string, number, string][]).filter(([n]) => n !== '.' && n !== '..');
  const DT = { file: 8, dir: 4, link: 10, fifo: 1 } as Record<string, number>;
  assert.deepEqual(listed.map(([n]) => n).sort(), Object.keys(DT).sort());
  for (const [name, type, ino] of listed) {
    assert.equal(type, DT[name], `d_type of ${name}`);
    assert.equal(ino, String((await fsp.lstat(fx.p('dt', name), { bigint: true })).ino), `d_ino of ${name}`);
  }
});

/**
 * A name of one whole block (16 bytes, base64url) that does not decrypt in
 * the cipher directory `rel`: most do not, but about one in 256 does, under
 * a directory's random IV, when its padding happens to come out right (then
 * it is listed, as gocryptfs lists it).
 */
async function undecryptableBlock(rel: string): Promise<string> {
  const v = await Vault.open(fx.cipherdir, { password: PASSWORD, readOnly: true });
  try {
    for (let i = 0; i < 256; i++) {
      const name = Buffer.alloc(16, i).toString('base64url');
      if (await v.decryptPath(`${rel}/${name}`).then(() => false, () => true)) return name;
    }
    throw new Error(`every one-block name decrypts in ${rel}`);
  } finally {
    await v.close();
  }
}

test('readdir skips names in CIPHERDIR that do not decrypt, and logs each one', T, async () => {
  await fsp.mkdir(fx.p('bad'));
  await fsp.writeFile(fx.p('bad', 'good.txt'), 'good');
  const cdir = await cipherPathOf(fx.cipherdir, 'bad');
  const planted = ['notbase64!', await undecryptableBlock(relative(fx.cipherdir, cdir)), 'gocryptfs.longname.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'];
  for (const n of planted) await fsp.writeFile(join(cdir, n), 'planted');
  try {
    assert.deepEqual(await fsp.readdir(fx.p('bad')), ['good.txt']);
    assert.equal(await fsp.readFile(fx.p('bad', 'good.txt'), 'utf8'), 'good', 'the good file is still fine');
    // The daemon says something about each skipped name (in its log: -nosyslog sends it to stderr).
    await new Promise((r) => setTimeout(r, 200));
    const log = await fsp.readFile(logPathFor(fx.impl, fx.mnt), 'utf8');
    for (const n of planted) assert.ok(log.includes(n), `the log mentions ${n}:\n${log}`);
  } finally {
    for (const n of planted) await fsp.unlink(join(cdir, n));
  }
});

test('mkdir: a diriv of 16 bytes, mode 0444, in the new cipher directory; modes; EEXIST, ENOENT, ENOTDIR', T, async () => {
  await fsp.mkdir(fx.p('newdir'), { mode: 0o750 });
  const st = await fsp.stat(fx.p('newdir'));
  assert.ok(st.isDirectory());
  assert.equal(st.mode & 0o7777, 0o750);
  assert.ok(st.nlink >= 2, 'a directory has at least 2 links');
  const cdir = await cipherPathOf(fx.cipherdir, 'newdir');
  const diriv = await fsp.stat(join(cdir, 'gocryptfs.diriv'));
  assert.equal(diriv.size, 16);
  assert.equal(diriv.mode & 0o7777, 0o444);
  assert.equal((await fsp.stat(cdir)).mode & 0o7777, 0o750, 'the cipher directory has the mode');

  await fsp.mkdir(fx.p('newdir', 'child'));
  await fsp.mkdir(fx.p('umasked'), { mode: 0o777 });
  assert.equal((await fsp.stat(fx.p('umasked'))).mode & 0o777, 0o755, 'the umask (022) applies');
  const ivA = await fsp.readFile(join(cdir, 'gocryptfs.diriv'));
  const ivB = await fsp.readFile(join(await cipherPathOf(fx.cipherdir, 'umasked'), 'gocryptfs.diriv'));
  assert.ok(!ivA.equals(ivB), 'each directory gets its own IV');

  await rejectsWith(fsp.mkdir(fx.p('newdir')), 'EEXIST', 'mkdir of an existing directory');
  await fsp.writeFile(fx.p('plainfile'), '');
  await rejectsWith(fsp.mkdir(fx.p('plainfile')), 'EEXIST', 'mkdir over a file');
  await rejectsWith(fsp.mkdir(fx.p('nope', 'x')), 'ENOENT', 'mkdir below a missing directory');
  await rejectsWith(fsp.mkdir(fx.p('plainfile', 'x')), 'ENOTDIR', 'mkdir below a file');
});

test('rmdir: an empty directory goes with its diriv; ENOTEMPTY, ENOTDIR, ENOENT', T, async () => {
  await fsp.mkdir(fx.p('rm'));
  const cdir = await cipherPathOf(fx.cipherdir, 'rm');
  await fsp.rmdir(fx.p('rm'));
  await rejectsWith(fsp.stat(fx.p('rm')), 'ENOENT', 'stat after rmdir');
  await rejectsWith(fsp.stat(cdir), 'ENOENT', 'the cipher directory is gone');

  await fsp.mkdir(fx.p('full'));
  await fsp.writeFile(fx.p('full', 'f'), 'x');
  await rejectsWith(fsp.rmdir(fx.p('full')), 'ENOTEMPTY', 'rmdir of a non-empty directory');
  assert.deepEqual(await fsp.readdir(fx.p('full')), ['f'], 'the failed rmdir changed nothing');
  assert.equal(await fsp.readFile(fx.p('full', 'f'), 'utf8'), 'x');
  await fsp.mkdir(fx.p('full2'));
  await fsp.mkdir(fx.p('full2', 'sub'));
  await rejectsWith(fsp.rmdir(fx.p('full2')), 'ENOTEMPTY', 'rmdir of a directory with a subdirectory');
  await fsp.writeFile(fx.p('fileonly'), '');
  await rejectsWith(fsp.rmdir(fx.p('fileonly')), 'ENOTDIR', 'rmdir of a file');
  await rejectsWith(fsp.rmdir(fx.p('nothing')), 'ENOENT', 'rmdir of a missing directory');

  // A directory that held files, emptied, goes; so does a long-named one; nothing is left on disk.
  await fsp.unlink(fx.p('full', 'f'));
  await fsp.rmdir(fx.p('full'));
  const long = nameOfLength('rmdirlong', 250);
  await fsp.mkdir(fx.p(long));
  await fsp.writeFile(fx.p(long, 'x'), 'x');
  await fsp.unlink(fx.p(long, 'x'));
  await fsp.rmdir(fx.p(long));
  assert.ok(!(await fsp.readdir(fx.mnt)).includes(long));
  const leftovers = (await fsp.readdir(fx.cipherdir)).filter((n) => n.startsWith('gocryptfs.') && !['gocryptfs.conf', 'gocryptfs.diriv'].includes(n));
  const longnames = leftovers.filter((n) => n.startsWith('gocryptfs.longname.'));
  // Every remaining .name belongs to a live object.
  for (const n of longnames.filter((x) => x.endsWith('.name'))) assert.ok(longnames.includes(n.slice(0, -5)), `orphaned ${n}`);
  assert.deepEqual(leftovers.filter((n) => !n.startsWith('gocryptfs.longname.')), [], 'no gocryptfs.* leftovers');
});

test('long names: 255-byte names created, stat-ed, listed, renamed, unlinked; 256 bytes fail with ENAMETOOLONG', T, async () => {
  await fsp.mkdir(fx.p('long'));
  const at = (n: string): string => fx.p('long', n);
  const n255 = nameOfLength('L', 255);
  const n176 = nameOfLength('M', 176);
  const n175 = nameOfLength('S', 175);
  const data = prng('long', 5000);
  await fsp.writeFile(at(n255), data);
  await fsp.writeFile(at(n175), 'kept short on disk');
  assert.equal((await fsp.stat(at(n255))).size, 5000);
  assertBytes(await fsp.readFile(at(n255)), data);
  const cdir = await cipherPathOf(fx.cipherdir, 'long');
  const disk = await cipherEntries(cdir);
  const hashed = disk.filter((n) => n.startsWith('gocryptfs.longname.') && !n.endsWith('.name'));
  assert.equal(hashed.length, 1, `255-byte name is hashed on disk: ${disk.join(' ')}`);
  assert.ok(disk.includes(hashed[0] + '.name'), 'with its .name file');
  assert.equal((await fsp.stat(join(cdir, hashed[0] + '.name'))).mode & 0o7777, 0o400 | 0o40 | 0o4, '.name file mode 0444');

  // Long -> long (same dir), long -> short, short -> long, across directories.
  await fsp.rename(at(n255), at(n176));
  assertBytes(await fsp.readFile(at(n176)), data, 'after long -> long');
  await fsp.rename(at(n176), at('short'));
  assertBytes(await fsp.readFile(at('short')), data, 'after long -> short');
  await fsp.mkdir(fx.p('long', 'other'));
  await fsp.rename(at('short'), fx.p('long', 'other', n255));
  assertBytes(await fsp.readFile(fx.p('long', 'other', n255)), data, 'after short -> long across directories');
  assert.deepEqual(await sorted(fx.p('long')), [n175, 'other'].sort());
  // A long-named directory with contents, renamed to another long name.
  const d1 = nameOfLength('D', 200);
  const d2 = nameOfLength('E', 255);
  await fsp.mkdir(at(d1));
  await fsp.writeFile(fx.p('long', d1, n255), 'inner');
  await fsp.rename(at(d1), at(d2));
  assert.equal(await fsp.readFile(fx.p('long', d2, n255), 'utf8'), 'inner');

  // Long name over an existing long name.
  await fsp.writeFile(at(n176), 'target');
  await fsp.rename(fx.p('long', 'other', n255), at(n176));
  assertBytes(await fsp.readFile(at(n176)), data, 'long replaces long');

  await fsp.unlink(at(n176));
  await rejectsWith(fsp.stat(at(n176)), 'ENOENT', 'stat after unlink of a long name');
  await rejectsWith(fsp.writeFile(at(nameOfLength('X', 256)), 'x'), 'ENAMETOOLONG', 'create with a 256-byte name');
  await rejectsWith(fsp.mkdir(at(nameOfLength('Y', 256))), 'ENAMETOOLONG', 'mkdir with a 256-byte name');
  await rejectsWith(fsp.rename(at(n175), at(nameOfLength('Z', 256))), 'ENAMETOOLONG', 'rename to a 256-byte name');

  // Every hashed object on disk still has its .name, and vice versa.
  const after = await cipherEntries(cdir);
  for (const n of after.filter((x) => x.startsWith('gocryptfs.longname.'))) {
    const partner = n.endsWith('.name') ? n.slice(0, -5) : n + '.name';
    assert.ok(after.includes(partner), `${n} has its partner ${partner}`);
  }
});

test('rename files: same directory, across directories, replacing a target (even while it is open)', T, async () => {
  await fsp.mkdir(fx.p('rf'));
  await fsp.mkdir(fx.p('rf', 'a'));
  await fsp.mkdir(fx.p('rf', 'b'));
  const data = prng('rf', 9000);
  await fsp.writeFile(fx.p('rf', 'a', 'one'), data, { mode: 0o640 });
  await fsp.rename(fx.p('rf', 'a', 'one'), fx.p('rf', 'a', 'two'));
  await rejectsWith(fsp.stat(fx.p('rf', 'a', 'one')), 'ENOENT', 'old name after rename');
  assertBytes(await fsp.readFile(fx.p('rf', 'a', 'two')), data);
  assert.equal((await fsp.stat(fx.p('rf', 'a', 'two'))).mode & 0o777, 0o640, 'mode kept');

  await fsp.rename(fx.p('rf', 'a', 'two'), fx.p('rf', 'b', 'three'));
  assert.deepEqual(await fsp.readdir(fx.p('rf', 'a')), []);
  assertBytes(await fsp.readFile(fx.p('rf', 'b', 'three')), data, 'across directories');

  await fsp.writeFile(fx.p('rf', 'b', 'victim'), 'old content');
  const victim = await fsp.open(fx.p('rf', 'b', 'victim'), 'r');
  try {
    await fsp.rename(fx.p('rf', 'b', 'three'), fx.p('rf', 'b', 'victim'));
    assertBytes(await fsp.readFile(fx.p('rf', 'b', 'victim')), data, 'replaced target shows the new content');
    const buf = Buffer.alloc(20);
    const { bytesRead } = await victim.read(buf, 0, 20, 0);
    assert.equal(buf.subarray(0, bytesRead).toString(), 'old content', 'an open handle on the replaced file still reads the old content');
  } finally {
    await victim.close();
  }
  assert.deepEqual(await fsp.readdir(fx.p('rf', 'b')), ['victim']);

  // Renaming onto itself changes nothing; a missing source is ENOENT; a missing target directory is ENOENT.
  await fsp.rename(fx.p('rf', 'b', 'victim'), fx.p('rf', 'b', 'victim'));
  assertBytes(await fsp.readFile(fx.p('rf', 'b', 'victim')), data, 'rename onto itself');
  await rejectsWith(fsp.rename(fx.p('rf', 'nothing'), fx.p('rf', 'x')), 'ENOENT', 'rename of a missing file');
  await rejectsWith(fsp.rename(fx.p('rf', 'b', 'victim'), fx.p('rf', 'nodir', 'x')), 'ENOENT', 'rename into a missing directory');
  await rejectsWith(fsp.rename(fx.p('rf', 'b', 'victim'), fx.p('rf', 'b', 'victim', 'x')), 'ENOTDIR', 'rename below a file');
});

test('rename directories: with contents, across directories, over an empty directory; ENOTEMPTY, ENOTDIR, EISDIR, EINVAL', T, async () => {
  await fsp.mkdir(fx.p('rd'));
  const at = (...p: string[]): string => fx.p('rd', ...p);
  await fsp.mkdir(at('src'));
  await fsp.mkdir(at('src', 'deep'));
  await fsp.writeFile(at('src', 'deep', 'f.txt'), 'deep file');
  await fsp.writeFile(at('src', nameOfLength('ln', 220)), 'long child');
  await fsp.mkdir(at('elsewhere'));
  await fsp.rename(at('src'), at('elsewhere', 'moved'));
  assert.equal(await fsp.readFile(at('elsewhere', 'moved', 'deep', 'f.txt'), 'utf8'), 'deep file', 'contents follow (diriv moved along)');
  assert.equal(await fsp.readFile(at('elsewhere', 'moved', nameOfLength('ln', 220)), 'utf8'), 'long child');
  await fsp.writeFile(at('elsewhere', 'moved', 'deep', 'new.txt'), 'created after the move');
  assert.deepEqual(await sorted(at('elsewhere', 'moved', 'deep')), ['f.txt', 'new.txt']);

  // Over an empty directory: replaced.
  await fsp.mkdir(at('empty'));
  await fsp.rename(at('elsewhere', 'moved'), at('empty'));
  assert.equal(await fsp.readFile(at('empty', 'deep', 'f.txt'), 'utf8'), 'deep file');
  assert.deepEqual(await sorted(at('elsewhere')), []);

  // Error cases; each leaves both sides untouched.
  await fsp.mkdir(at('d1'));
  await fsp.mkdir(at('d2'));
  await fsp.writeFile(at('d2', 'keep'), 'k');
  await fsp.writeFile(at('file'), 'f');
  await rejectsWith(fsp.rename(at('d1'), at('d2')), 'ENOTEMPTY', 'directory over a non-empty directory');
  await rejectsWith(fsp.rename(at('d1'), at('file')), 'ENOTDIR', 'directory over a file');
  await rejectsWith(fsp.rename(at('file'), at('d1')), 'EISDIR', 'file over a directory');
  await rejectsWith(fsp.rename(at('d2'), at('d2', 'inside')), 'EINVAL', 'directory into itself');
  await rejectsWith(fsp.rename(at('empty'), at('empty', 'deep', 'under')), 'EINVAL', 'directory into its own subdirectory');
  assert.deepEqual(await sorted(at('d2')), ['keep']);
  assert.equal(await fsp.readFile(at('file'), 'utf8'), 'f');
  assert.deepEqual(await sorted(fx.p('rd')), ['d1', 'd2', 'elsewhere', 'empty', 'file']);

  // A long-named directory moved into another long-named directory.
  const l1 = nameOfLength('ld1', 240);
  const l2 = nameOfLength('ld2', 255);
  await fsp.mkdir(at(l1));
  await fsp.mkdir(at(l2));
  await fsp.writeFile(at(l1, 'x'), 'x in l1');
  await fsp.rename(at(l1), at(l2, l1));
  assert.equal(await fsp.readFile(at(l2, l1, 'x'), 'utf8'), 'x in l1');
  const cdir = await cipherPathOf(fx.cipherdir, join('rd', l2, l1));
  assert.ok(basename(cdir).startsWith('gocryptfs.longname.'));
  assert.ok((await fsp.readdir(dirname(cdir))).includes(basename(cdir) + '.name'));
});

test('a new name of any kind moves its directory\'s mtime and ctime at once, a symlink too (pjdfstest symlink/00.t)', T, async () => {
  // Each directory's attributes are read (and cached) first; a second later
  // one new entry goes into each, and stat must see the new times at once.
  const make: Record<string, (d: string) => Promise<unknown>> = {
    file: (d) => fsp.writeFile(join(d, 'n'), 'x'),
    dir: (d) => fsp.mkdir(join(d, 'n')),
    symlink: (d) => fsp.symlink('target', join(d, 'n')),
    link: (d) => fsp.link(fx.p('times-src'), join(d, 'n')),
    'rename in': (d) => fsp.rename(fx.p('times-moved'), join(d, 'n')),
  };
  await fsp.writeFile(fx.p('times-src'), 's');
  await fsp.writeFile(fx.p('times-moved'), 'm');
  const before = new Map<string, { mtimeMs: number; ctimeMs: number }>();
  for (const kind of Object.keys(make)) {
    await fsp.mkdir(fx.p(`times-${kind}`));
    before.set(kind, await fsp.stat(fx.p(`times-${kind}`)));
  }
  await new Promise((r) => setTimeout(r, 1100));
  const stale: string[] = [];
  for (const [kind, fn] of Object.entries(make)) {
    const d = fx.p(`times-${kind}`);
    await fn(d);
    const st = await fsp.stat(d);
    const old = before.get(kind)!;
    if (!(st.mtimeMs > old.mtimeMs && st.ctimeMs > old.ctimeMs)) stale.push(`${kind}: mtime ${old.mtimeMs} -> ${st.mtimeMs}, ctime ${old.ctimeMs} -> ${st.ctimeMs}`);
  }
  assert.deepEqual(stale, [], 'the directory shows its new times right after the change');
  for (const kind of Object.keys(make)) await fsp.rm(fx.p(`times-${kind}`), { recursive: true });
  await fsp.unlink(fx.p('times-src'));
});

test('with -plaintextnames: gocryptfs.conf at the root is hidden and refused with EPERM', T, async () => {
  const cdir = join(fx.tmp, 'ptn-cipher');
  await initCipherdir(fx.impl, cdir, ['-plaintextnames']);
  await withMount(fx.impl, cdir, join(fx.tmp, 'ptn-mnt'), {}, async (mnt) => {
    assert.deepEqual(await fsp.readdir(mnt), []);
    await rejectsWith(fsp.stat(join(mnt, 'gocryptfs.conf')), 'EPERM', 'stat of gocryptfs.conf');
    await rejectsWith(fsp.writeFile(join(mnt, 'gocryptfs.conf'), 'x'), 'EPERM', 'create of gocryptfs.conf');
    await fsp.mkdir(join(mnt, 'd'));
    await fsp.writeFile(join(mnt, 'd', 'gocryptfs.conf'), 'fine below the root');
    await fsp.writeFile(join(mnt, 'f.txt'), 'plain name');
    assert.deepEqual((await fsp.readdir(mnt)).sort(), ['d', 'f.txt']);
    assert.ok((await fsp.readdir(cdir)).includes('f.txt'), 'plaintext name on disk');
  });
});

test('teardown: unmounts cleanly, nothing left mounted, gocryptfs -fsck finds no problems', T, async () => {
  await fx.teardown();
  await assertFsckClean(fx.cipherdir);
});
