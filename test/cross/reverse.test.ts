/**
 * Reverse mode against the real gocryptfs 2.3: for one plaintext tree
 * (long names, symlinks, hard links, a FIFO, empty, block-sized,
 * multi-block and sparse files) and one config, `tscryptfs -reverse` and
 * `gocryptfs -reverse` show the same view — `diff -r`, `cmp` of every
 * file, and the same names, types, modes, sizes, link counts, owners,
 * times and targets in `find` listings. gocryptfs then forward-mounts our
 * view and must show the original tree. Per name format: default (config
 * from gocryptfs -init -reverse), -deterministic-names and -plaintextnames
 * (config from tscryptfs -init -reverse), -longnamemax 62 (gocryptfs).
 * Then the excludes: both hide exactly the same entries, and only those.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { describeRun, initCipherdir, mountImpl, PASSWORD, run, unmountAndReap, withMount, type MountImpl } from '../helpers/mount.js';
import { useMountTmp } from '../helpers/mount-suite.js';
import { ReverseView } from '../../src/reverse/index.js';
import { BIN } from '../helpers/paths.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 120_000, ...needs('mount', 'gocryptfs') };
const REVERSE_CONF = '.gocryptfs.reverse.conf';
const dir = useMountTmp('reverse');
let tmp = '';
before(() => {
  tmp = dir.tmp;
});

/** Deterministic pseudo-random bytes (the same tree every run). */
function bytes(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

const LONG_FILE = 'L'.repeat(200);
const LONG_DIR = 'D'.repeat(180);
const LONG_LINK = 'S'.repeat(190);

async function makeTree(root: string): Promise<void> {
  const p = (...parts: string[]): string => join(root, ...parts);
  await fsp.mkdir(p('sub', LONG_DIR), { recursive: true });
  await fsp.mkdir(p('cache', 'deeper'), { recursive: true });
  await fsp.writeFile(p('a.txt'), 'hello\n');
  await fsp.writeFile(p('empty'), '');
  await fsp.writeFile(p('block_4096.bin'), bytes(4096, 1));
  await fsp.writeFile(p('multi_10000.bin'), bytes(10000, 2));
  await fsp.writeFile(p('multi_keep.bin'), bytes(12289, 3));
  const fh = await fsp.open(p('sparse'), 'w');
  await fh.write(Buffer.from('end\n'), 0, 4, 20000);
  await fh.close();
  await fsp.writeFile(p('x.log'), 'log\n');
  await fsp.writeFile(p('cache', 'c1'), 'c1');
  await fsp.writeFile(p('cache', 'deeper', 'c2'), 'c2');
  await fsp.symlink('a.txt', p('link'));
  await fsp.symlink('/nonexistent/absolute', p('abslink'));
  await fsp.symlink('../a.txt', p('sub', 'uplink'));
  await fsp.symlink('a.txt', p('sub', LONG_LINK));
  await fsp.link(p('a.txt'), p('sub', 'hard'));
  await fsp.link(p('multi_10000.bin'), p('sub', 'hard_multi'));
  await fsp.writeFile(p('sub', LONG_FILE), 'long name\n');
  await fsp.writeFile(p('sub', 'n'.repeat(175)), 'kept');
  await fsp.writeFile(p('sub', 'n'.repeat(176)), 'hashed');
  await fsp.writeFile(p('sub', LONG_DIR, 'f'), 'in a long dir\n');
  await fsp.writeFile(p('sub', 'gocryptfs.conf'), 'not a config');
  await fsp.writeFile(p('sub', 'gocryptfs.diriv'), 'not an IV');
  await fsp.chmod(p('sub', 'hard'), 0o640);
  await fsp.chmod(p('cache'), 0o750);
  const r = await run('mkfifo', [p('fifo')]);
  assert.equal(r.code, 0, describeRun('mkfifo', r));
  // Fixed times (the diriv and .name files take theirs from their directory / file).
  // rsync -a leaves a fifo's, symlink's or directory's mtime alone when it
  // equals the source's to the second, so entries made within the second
  // of the copy would keep the copy's own times: give them all old ones.
  await fsp.utimes(p('fifo'), 1_600_000_000, 1_600_000_000);
  for (const l of [p('link'), p('abslink'), p('sub', 'uplink'), p('sub', LONG_LINK)]) await fsp.lutimes(l, 1_600_000_000, 1_600_000_000);
  for (const d of [p('sub', LONG_DIR), p('sub'), p('cache', 'deeper'), p('cache'), root]) await fsp.utimes(d, 1_600_000_000, 1_600_000_000);
}

/** `find` listing: path, type+mode, size, links, owner, mtime, link target (no inode numbers). */
async function listing(root: string): Promise<string[]> {
  const r = await run('find', [root, '-mindepth', '1', '-printf', '%P %M %s %n %U %G %T@ %l\\n']);
  assert.equal(r.code, 0, describeRun('find', r));
  return r.stdout.split('\n').filter((l) => l !== '').sort();
}

/** The view's regular files (relative paths). */
async function regularFiles(root: string): Promise<string[]> {
  const r = await run('find', [root, '-type', 'f', '-printf', '%P\\n']);
  return r.stdout.split('\n').filter((l) => l !== '').sort();
}

/** Entries of the view that share an inode number must be hard links of one file (virtual files get their own numbers). */
async function assertInodesUnique(root: string, what: string): Promise<void> {
  const r = await run('find', [root, '-printf', '%i %y %n %P\\n']);
  const byIno = new Map<string, string[]>();
  for (const l of r.stdout.split('\n').filter((x) => x !== '')) {
    const [ino, type, nlink, path] = l.split(' ');
    const group = byIno.get(ino!) ?? [];
    group.push(`${type} ${nlink} ${path}`);
    byIno.set(ino!, group);
  }
  for (const group of byIno.values()) {
    if (group.length === 1) continue;
    assert.ok(group.every((g) => g.startsWith(`f ${group.length} `)), `${what}: entries share an inode number: ${group.join(', ')}`);
  }
}

/** `diff -r` (without following symlinks; FIFOs named in `skip` left out, diff cannot compare them), then `cmp` of every file. */
async function assertSameView(ours: string, theirs: string, what: string): Promise<void> {
  assert.deepEqual(await listing(ours), await listing(theirs), `${what}: find listings`);
  await assertInodesUnique(ours, what);
  const fifos = (await run('find', [ours, '-type', 'p', '-printf', '%f\\n'])).stdout.split('\n').filter((l) => l !== '');
  const d = await run('diff', ['-r', '--no-dereference', ...fifos.flatMap((f) => ['-x', f]), ours, theirs]);
  assert.equal(d.code, 0, `${what}: ${describeRun('diff -r', d)}`);
  const files = await regularFiles(ours);
  assert.ok(files.length > 10, `${what}: only ${files.length} files`);
  for (const f of files) {
    const c = await run('cmp', [join(ours, f), join(theirs, f)]);
    assert.equal(c.code, 0, `${what}: ${describeRun(`cmp ${f}`, c)}`);
  }
}

/** `impl` forward-mounts our view (read-only) and must show the plaintext tree (minus the reverse config). */
async function assertForwardGivesBack(view: string, plain: string, fwd: string, what: string, exclude: string[] = [], impl: MountImpl = 'gocryptfs', flags: string[] = []): Promise<void> {
  await withMount(impl, view, fwd, { flags: ['-ro', ...flags] }, async (m) => {
    const want = (await listing(plain)).filter((l) => !l.startsWith(`${REVERSE_CONF} `) && !exclude.some((x) => l === x || l.startsWith(`${x} `) || l.startsWith(`${x}/`)));
    const got = await listing(m);
    // Directory sizes differ (the view's directories hold gocryptfs.diriv and .name files); compare them without.
    const noDirSize = (l: string): string => l.replace(/^(\S+ d\S+) \d+ /, '$1 - ');
    assert.deepEqual(got.map(noDirSize), want.map(noDirSize), `${what}: ${impl} forward mount of our view vs the plaintext`);
    if (exclude.length === 0) {
      const d = await run('diff', ['-r', '--no-dereference', '-x', REVERSE_CONF, '-x', 'fifo', plain, m]);
      assert.equal(d.code, 0, `${what}: ${describeRun('diff -r plain forward', d)}`);
    }
  });
}

const VARIANTS: { name: string; initBy: MountImpl; flags: string[]; customConfig?: true }[] = [
  { name: 'default', initBy: 'gocryptfs', flags: [] },
  { name: 'custom-config', initBy: 'tscryptfs', flags: [], customConfig: true },
  { name: 'deterministic-names', initBy: 'tscryptfs', flags: ['-deterministic-names'] },
  { name: 'plaintextnames', initBy: 'tscryptfs', flags: ['-plaintextnames'] },
  { name: 'longnamemax62', initBy: 'gocryptfs', flags: ['-longnamemax', '62'] },
];

for (const v of VARIANTS) {
  test(`reverse view ${v.name}: tscryptfs = gocryptfs byte for byte; gocryptfs forward-mounts it back, tscryptfs an rsync copy of it`, T, async () => {
    const base = join(tmp, v.name);
    const plain = join(base, 'plain');
    await fsp.mkdir(plain, { recursive: true });
    await makeTree(plain);
    // -config: the config lives outside PLAINDIR and the view has no gocryptfs.conf.
    const config = v.customConfig ? ['-config', join(base, 'reverse.conf')] : [];
    await initCipherdir(v.initBy, plain, ['-reverse', ...config, ...v.flags]);
    const ours = join(base, 'ours');
    const theirs = join(base, 'theirs');
    await mountImpl('tscryptfs', plain, ours, { flags: ['-reverse', ...config] });
    try {
      await withMount('gocryptfs', plain, theirs, { flags: ['-reverse', ...config] }, (m) => assertSameView(ours, m, v.name));
      assert.equal((await fsp.readdir(ours)).includes('gocryptfs.conf'), !v.customConfig, 'gocryptfs.conf in the view');
      await assertForwardGivesBack(ours, plain, join(base, 'fwd'), v.name, [], 'gocryptfs', config);
      // The backup use: rsync the view elsewhere (hard links kept), mount the copy.
      const copy = join(base, 'copy');
      const r = await run('rsync', ['-aH', `${ours}/`, `${copy}/`]);
      assert.equal(r.code, 0, describeRun('rsync -aH', r));
      await assertForwardGivesBack(copy, plain, join(base, 'fwd-ts'), `${v.name} (rsync copy)`, [], 'tscryptfs', config);
    } finally {
      await unmountAndReap(ours);
    }
  });
}

test('excludes: -exclude, -exclude-wildcard, -exclude-from hide the same entries as gocryptfs, and only those', T, async () => {
  const base = join(tmp, 'excludes');
  const plain = join(base, 'plain');
  await fsp.mkdir(plain, { recursive: true });
  await makeTree(plain);
  await initCipherdir('gocryptfs', plain, ['-reverse']);
  const patterns = join(tmp, 'patterns.txt');
  await fsp.writeFile(patterns, '# a comment\nmulti*\n!multi_keep.bin\n');
  // Not -exclude and -e mixed: gocryptfs 2.3 then keeps only the values of the spelling given last (pflag), tscryptfs keeps all.
  const flags = ['-reverse', '-e', 'a.txt', '-e', `sub/${LONG_FILE}`, '-ew', '*.log', '-ew', 'cache/', '-exclude-from', patterns];
  const ours = join(base, 'ours-ex');
  await mountImpl('tscryptfs', plain, ours, { flags });
  try {
    await withMount('gocryptfs', plain, join(base, 'theirs-ex'), { flags }, (m) => assertSameView(ours, m, 'excludes'));
    // What is hidden: exactly these (go-gitignore's "cache/" hides what is in cache, not cache itself).
    const hidden = ['a.txt', `sub/${LONG_FILE}`, 'x.log', 'cache/c1', 'cache/deeper', 'multi_10000.bin'];
    await assertForwardGivesBack(ours, plain, join(base, 'fwd-ex'), 'excludes', hidden);
    // Looking up a hidden entry by its encrypted name is refused, as in gocryptfs.
    const view = await ReverseView.open(plain, { password: PASSWORD });
    await assert.rejects(fsp.stat(join(ours, view.encryptPath('a.txt'))), { code: 'EPERM' });
    await assert.rejects(fsp.stat(join(ours, view.encryptPath('x.log'))), { code: 'EPERM' });
    await fsp.stat(join(ours, view.encryptPath('sub/hard'))); // the same inode under a name that is not excluded
  } finally {
    await unmountAndReap(ours);
  }
});

test('-one-file-system: a mount point inside PLAINDIR shows only its gocryptfs.diriv, as in gocryptfs', T, async () => {
  const base = join(tmp, 'onefs');
  const plain = join(base, 'plain');
  const inner = join(plain, 'inner');
  await fsp.mkdir(join(plain, 'same'), { recursive: true });
  await fsp.mkdir(inner);
  await fsp.writeFile(join(plain, 'same', 'f'), 'same fs');
  await initCipherdir('gocryptfs', plain, ['-reverse']);
  const m = await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tscryptfs-test', inner]);
  assert.equal(m.code, 0, describeRun('mount -t tmpfs', m));
  try {
    await fsp.writeFile(join(inner, 'other'), 'other fs');
    await fsp.utimes(inner, 1_600_000_000, 1_600_000_000);
    const ours = join(base, 'ours');
    await mountImpl('tscryptfs', plain, ours, { flags: ['-reverse', '-one-file-system'] });
    try {
      await withMount('gocryptfs', plain, join(base, 'theirs'), { flags: ['-reverse', '-one-file-system'] }, async (theirs) => {
        assert.deepEqual(await listing(ours), await listing(theirs), 'find listings');
        const d = await run('diff', ['-r', '--no-dereference', ours, theirs]);
        assert.equal(d.code, 0, describeRun('diff -r', d));
      });
      const innerView = (await listing(ours)).filter((l) => l.includes('/')).map((l) => l.split(' ')[0]!);
      assert.equal(innerView.filter((p) => p.endsWith('/gocryptfs.diriv')).length, 2, 'both directories have a diriv');
      assert.equal(innerView.length, 3, `same/f, same/diriv, inner/diriv only: ${innerView.join(', ')}`);
    } finally {
      await unmountAndReap(ours);
    }
  } finally {
    const u = await run('umount', [inner]);
    assert.equal(u.code, 0, describeRun('umount tmpfs', u));
  }
});

test('reverse exit codes: config exists → 7, config without AES-SIV → 1, unreadable -exclude-from → 29', T, async () => {
  const plain = join(tmp, 'exit-codes-plain');
  await fsp.mkdir(plain);
  await fsp.writeFile(join(plain, 'f'), 'x');
  await initCipherdir('gocryptfs', plain, ['-reverse']);
  const again = await run('node', [BIN, '-init', '-reverse', '-q', '-extpass', 'echo test', '-scryptn', '10', plain]);
  assert.equal(again.code, 7, describeRun('second -init -reverse', again));
  assert.match(again.stderr, /already exists/);

  const gcm = join(tmp, 'gcm-plain');
  await fsp.mkdir(gcm);
  await fsp.writeFile(join(gcm, 'f'), 'x');
  const conf = join(tmp, 'gcm.conf');
  await initCipherdir('tscryptfs', join(tmp, 'gcm-cipher'), ['-config', conf]);
  await fsp.mkdir(join(tmp, 'gcm-mnt'));
  const noSiv = await run('node', [BIN, '-reverse', '-q', '-extpass', 'echo test', '-config', conf, gcm, join(tmp, 'gcm-mnt')]);
  assert.equal(noSiv.code, 1, describeRun('-reverse on a GCM config', noSiv));
  assert.match(noSiv.stderr, /AES-SIV is required by reverse mode/);

  await fsp.mkdir(join(tmp, 'ex-mnt'));
  const noFile = await run('node', [BIN, '-reverse', '-q', '-extpass', 'echo test', '-exclude-from', join(tmp, 'nope'), plain, join(tmp, 'ex-mnt')]);
  assert.equal(noFile.code, 29, describeRun('-exclude-from missing file', noFile));
});
