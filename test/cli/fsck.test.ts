/**
 * tscryptfs -fsck against gocryptfs -fsck: the gocryptfs-made fixtures and
 * upstream example filesystems are clean (the check the CLI runs, called
 * in-process; the CLI itself and gocryptfs on one of them); a damaged copy gives both exit 26 and the same
 * set of reported paths (plus the orphaned .name file only we see); the
 * check leaves the cipher directory as it was; progress appears on a
 * terminal only; -masterkey works as for mounting.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FORWARD_VECTORS, fixtureMasterKey, materializeExample, materializeVector } from '../helpers/fixtures.js';
import { VECTORS_DIR } from '../helpers/paths.js';
import { treeState } from '../helpers/tree-state.js';
import { BIN, cleanup, gocryptfs, jsonOf, lines, tempDir, tscryptfs } from './helpers.js';
import { findingLine } from '../../src/cli/fsck.js';
import { run } from '../helpers/mount.js';
import { Vault } from '../../src/index.js';
import { fsckCipherdir, type FsckFinding, type FsckReport } from '../../src/vault/fsck/index.js';
import { needs } from '../helpers/requirements.js';
import { internalAccess } from '../../src/vault/internal-access.js';

let tmp: string;
before(async () => {
  tmp = await tempDir('tscryptfs-fsck-');
});
after(async () => {
  await cleanup(tmp);
});

const passfile = (fixture: string): string[] => ['-passfile', join(VECTORS_DIR, fixture, 'password.txt')];

/** The paths an -fsck output reports, in gocryptfs's wording (ours uses the same). */
function reportedPaths(stdout: string): string[] {
  const out = new Set<string>();
  for (const l of lines(stdout)) {
    if (!l.startsWith('fsck: ') || l.startsWith('fsck: summary')) continue;
    const entry = /^fsck: (?:corrupt entry|orphaned long name file) in dir ("(?:[^"\\]|\\.)*"): ("(?:[^"\\]|\\.)*")/.exec(l);
    if (entry) {
      const dir = JSON.parse(entry[1]!) as string;
      const name = JSON.parse(entry[2]!) as string;
      out.add(dir === '' ? name : `${dir}/${name}`);
      continue;
    }
    const first = /^fsck: [^"]*("(?:[^"\\]|\\.)*")/.exec(l);
    if (first) out.add(JSON.parse(first[1]!) as string);
  }
  return [...out].sort();
}

/** The check in-process (the library call the CLI makes), with the password "test" or the fixture's. */
async function libraryFsck(dir: string, password: string): Promise<FsckReport> {
  const v = await Vault.open(dir, { password, readOnly: true });
  try {
    return await fsckCipherdir(dir, { format: v.format, masterKey: internalAccess(v).masterKey() });
  } finally {
    await v.close();
  }
}

describe('fixtures: clean for tscryptfs and gocryptfs', () => {
  for (const fx of FORWARD_VECTORS) {
    test(fx, async () => {
      const dir = join(tmp, `clean-${fx}`);
      await materializeVector(fx, dir);
      const before = await treeState(dir);
      const r = await libraryFsck(dir, readFileSync(join(VECTORS_DIR, fx, 'password.txt'), 'utf8').trim());
      assert.deepEqual(r.findings, []);
      assert.ok(r.files > 5, `${r.files} files`);
      assert.deepEqual(await treeState(dir), before, 'fsck changed the cipher directory');
    });
  }
  for (const ex of ['v0.9', 'v1.1-aessiv', 'v1.3', 'v2.2-deterministic-names', 'v2.2-xchacha', 'v2.2-xchacha-deterministic-names']) {
    test(`upstream example ${ex} (older formats)`, async () => {
      const dir = join(tmp, `example-${ex}`);
      await materializeExample(ex, dir);
      assert.deepEqual((await libraryFsck(dir, 'test')).findings, []);
    });
  }
  test('the CLI on one of them: exit 0 and the summary; with -q nothing; gocryptfs agrees', needs('mount', 'gocryptfs'), async () => {
    const dir = join(tmp, 'clean-aesgcm');
    const before = await treeState(dir);
    const ours = await tscryptfs(['-fsck', ...passfile('aesgcm'), dir]);
    assert.equal(ours.code, 0, ours.stdout + ours.stderr);
    assert.match(ours.stdout, /Checking filesystem\.\.\.\nfsck summary: no problems found\n$/);
    const quiet = await tscryptfs(['-fsck', '-q', ...passfile('aesgcm'), dir]);
    assert.equal(quiet.code, 0);
    assert.equal(quiet.stdout, '', 'with -q a clean check prints nothing, as gocryptfs');
    const json = await tscryptfs(['-fsck', '-json', ...passfile('aesgcm'), dir]);
    assert.equal(json.code, 0, json.stderr);
    const doc = jsonOf(json, 'fsck');
    assert.deepEqual([doc.findings, doc.skipped, doc.exitCode], [[], [], 0]);
    assert.match(json.stderr, /Checking filesystem\.\.\.\nfsck summary: no problems found\n$/);
    assert.deepEqual(await treeState(dir), before, 'fsck changed the cipher directory');
    const go = await gocryptfs(['-fsck', ...passfile('aesgcm'), dir]);
    assert.equal(go.code, 0, go.stdout + go.stderr);
  });
});

describe('a damaged copy of the aesgcm fixture', () => {
  let dir: string;
  const paths = JSON.parse(readFileSync(join(VECTORS_DIR, 'aesgcm', 'paths.json'), 'utf8')) as Array<{ plain: string; cipher: string }>;
  const cipherOf = (plain: string): string => join(dir, paths.find((p) => p.plain === plain)!.cipher);

  before(async () => {
    dir = join(tmp, 'damaged');
    await materializeVector('aesgcm', dir);
    const flip = async (p: string, off: number): Promise<void> => {
      const b = await fsp.readFile(p);
      b[off]! ^= 1;
      await fsp.writeFile(p, b);
    };
    await flip(cipherOf('file_5000.bin'), 18 + 100); // block 0 ciphertext
    await flip(cipherOf('block_4096.bin'), 1); // header version
    await fsp.truncate(cipherOf('hole_seek.bin'), 18 + 4096 + 32 + 10); // last block cut short
    await fsp.writeFile(join(cipherOf('dir1'), 'AAAAAAAAAA'), 'junk'); // name that does not decrypt
    const long = cipherOf('n176_' + 'b'.repeat(171));
    await fsp.rm(`${long}.name`); // long-name entry without its .name
    const iv = join(cipherOf('dir1/dir2'), 'gocryptfs.diriv');
    await fsp.chmod(iv, 0o644);
    await fsp.writeFile(iv, Buffer.alloc(16)); // all-zero diriv
    const link = cipherOf('symlink_abs');
    const target = await fsp.readlink(link);
    await fsp.rm(link);
    await fsp.symlink((target[0] === 'A' ? 'B' : 'A') + target.slice(1), link); // target does not authenticate
    await fsp.writeFile(join(dir, 'gocryptfs.longname.orphaned.name'), 'x'); // .name with no entry
  });

  test('tscryptfs and gocryptfs: exit 26, the same corrupt paths; ours also the orphaned .name file; nothing changed', needs('mount', 'gocryptfs'), async () => {
    assert.ok(paths.some((p) => p.plain.startsWith('n176_')), 'fixture has the long name');
    const before = await treeState(dir);
    const ours = await tscryptfs(['-fsck', '-q', ...passfile('aesgcm'), dir]);
    assert.deepEqual(await treeState(dir), before, 'fsck changed the cipher directory');
    const go = await gocryptfs(['-fsck', ...passfile('aesgcm'), dir]);
    assert.equal(ours.code, 26, ours.stdout + ours.stderr);
    assert.equal(go.code, 26, go.stdout + go.stderr);
    const expected = ['block_4096.bin', 'dir1/AAAAAAAAAA', 'dir1/dir2', 'file_5000.bin', 'hole_seek.bin', 'symlink_abs', paths.find((p) => p.plain.startsWith('n176_'))!.cipher].sort();
    assert.deepEqual(reportedPaths(go.stdout), expected, go.stdout);
    assert.deepEqual(reportedPaths(ours.stdout), [...expected, 'gocryptfs.longname.orphaned.name'].sort(), ours.stdout);
    assert.match(ours.stdout, /\nfsck summary: 8 corrupt files, 0 files skipped\n$/);
    assert.equal(ours.stderr, '');
    // Each line names the cipher file too.
    assert.match(ours.stdout, new RegExp(`fsck: corrupt file "file_5000.bin": block 0 failed authentication, cipher offset 18 \\(cipher file ${cipherOf('file_5000.bin')}\\)`));
  });

  test('-json: one document with every finding of the text output (kind, paths, block), the summary, exit 26', async () => {
    const text = await tscryptfs(['-fsck', '-q', ...passfile('aesgcm'), dir]);
    const r = await tscryptfs(['-fsck', '-json', ...passfile('aesgcm'), dir]);
    assert.equal(r.code, 26, r.stderr);
    const doc = jsonOf(r, 'fsck');
    const findings = doc.findings as Array<FsckFinding & { block: number | null; cipherOffset: number | null; item: string | null }>;
    // Each finding is a line of the text output, in the same order.
    const asText = findings.map((f) => findingLine({ kind: f.kind, path: f.path, cipherPath: f.cipherPath, detail: f.detail, ...(f.item !== null && { item: f.item }) }));
    assert.deepEqual(asText, lines(text.stdout).filter((l) => !l.startsWith('fsck summary')));
    const block0 = findings.find((f) => f.path === 'file_5000.bin')!;
    assert.deepEqual([block0.kind, block0.cipherPath, block0.block, block0.cipherOffset, block0.item], ['block', cipherOf('file_5000.bin'), 0, 18, null]);
    const cut = findings.find((f) => f.path === 'hole_seek.bin')!;
    assert.deepEqual([cut.kind, cut.block, cut.cipherOffset], ['block', 1, 18 + 4096 + 32]);
    assert.ok(findings.filter((f) => f.kind !== 'block').every((f) => f.block === null && f.cipherOffset === null));
    assert.equal(findings.find((f) => f.kind === 'name')!.item, 'AAAAAAAAAA');
    const { corruptFiles, skippedFiles, dirs, files, bytes, aborted } = doc.summary as Record<string, number | boolean>;
    assert.deepEqual([corruptFiles, skippedFiles, aborted], [8, 0, false]);
    assert.ok((dirs as number) > 1 && (files as number) > 5 && (bytes as number) > 4096, JSON.stringify(doc.summary));
    assert.equal(doc.exitCode, 26);
    assert.equal(doc.cipherdir, dir);
    // Messages on stderr only, and no finding line there either.
    assert.equal(r.stderr, `passfile: reading from file ${JSON.stringify(passfile('aesgcm')[1])}\nDecrypting master key\nChecking filesystem...\n`);
  });

  test('on a read-only bind mount of the cipher directory: the same report (it never writes)', needs('root'), async () => {
    const ro = join(tmp, 'ro-view');
    await fsp.mkdir(ro);
    assert.equal((await run('mount', ['--bind', dir, ro])).code, 0);
    try {
      assert.equal((await run('mount', ['-o', 'remount,bind,ro', ro])).code, 0);
      const onRo = await tscryptfs(['-fsck', '-q', ...passfile('aesgcm'), ro]);
      const onRw = await tscryptfs(['-fsck', '-q', ...passfile('aesgcm'), dir]);
      assert.equal(onRo.code, 26, onRo.stdout + onRo.stderr);
      assert.equal(onRo.stdout, onRw.stdout.split(dir).join(ro));
      assert.equal(onRo.stderr, '');
    } finally {
      await run('umount', [ro]);
    }
  });

  test('-masterkey instead of the password (format from the flags)', async () => {
    const r = await tscryptfs(['-fsck', '-q', '-masterkey', fixtureMasterKey('aesgcm'), dir]);
    assert.equal(r.code, 26, r.stdout + r.stderr);
    assert.match(r.stdout, /fsck summary: 8 corrupt files/);
  });

  test('a wrong password is exit 12 and no check', async () => {
    const r = await tscryptfs(['-fsck', '-q', '-extpass', 'echo wrong', dir]);
    assert.equal(r.code, 12, r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout, /fsck summary/);
  });

  test('progress goes to a terminal only: none on a pipe, a redrawn line on a pty', async () => {
    const piped = await tscryptfs(['-fsck', ...passfile('aesgcm'), dir], { env: { TSCRYPTFS_PROGRESS_MS: '0' } });
    assert.doesNotMatch(piped.stdout + piped.stderr, /\r|dirs, \d+ files/);
    const cmd = [process.execPath, BIN, '-fsck', ...passfile('aesgcm'), dir].map((s) => `'${s}'`).join(' ');
    const onPty = await new Promise<string>((resolve, reject) => {
      const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, NO_COLOR: '1', TSCRYPTFS_PROGRESS_MS: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('error', reject);
      child.on('close', () => resolve(out));
    });
    assert.match(onPty, /\r\x1b\[Kfsck: \d+ dirs, \d+ files, [\d.]+ MiB checked: /);
    assert.match(onPty, /fsck summary: 8 corrupt files/);
  });
});

test('not root: unreadable entries are skipped, not corrupt (exit 26, "re-run as root")', needs('root', 'others-reach-checkout'), async () => {
  await fsp.chmod(tmp, 0o755);
  const dir = join(tmp, 'unreadable');
  await fsp.mkdir(dir);
  const v = await Vault.init(dir, { password: 'pw', scryptLogN: 10 });
  const key = Buffer.from(internalAccess(v).masterKey()).toString('hex');
  try {
    await v.mkdir('/closed');
    await v.writeFile('/closed/inside', 'x');
    await v.writeFile('/private', 'secret');
    await v.writeFile('/public', 'hello');
    await fsp.chmod(await v.cipherPath('/closed'), 0o700);
    await fsp.chmod(await v.cipherPath('/private'), 0o600);
  } finally {
    await v.close();
  }
  const r = await run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, BIN, '-fsck', '-q', '-masterkey', key, dir]);
  assert.equal(r.code, 26, r.stdout + r.stderr);
  assert.match(r.stdout, /^fsck: skipped "closed": cannot read directory: EACCES/m);
  assert.match(r.stdout, /^fsck: skipped "private": cannot read file: EACCES/m);
  assert.match(r.stdout, /fsck summary: 0 corrupt files, 2 files skipped\n$/);
  assert.match(r.stderr, /fsck: re-run this program as root to check all files!/);
  const json = await run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, BIN, '-fsck', '-json', '-masterkey', key, dir]);
  assert.equal(json.code, 26, json.stderr);
  const doc = JSON.parse(json.stdout) as { findings: unknown[]; skipped: Array<{ path: string; detail: string }>; summary: { skippedFiles: number } };
  assert.deepEqual([doc.findings, doc.skipped.map((s) => s.path).sort(), doc.summary.skippedFiles], [[], ['closed', 'private'], 2]);
});

test('SIGINT stops the check: "fsck: aborted", exit 11', async () => {
  const dir = join(tmp, 'interrupt');
  await fsp.mkdir(dir);
  const v = await Vault.init(dir, { password: 'pw', scryptLogN: 10 });
  try {
    await v.writeFile('/big', Buffer.alloc(96 << 20, 1));
  } finally {
    await v.close();
  }
  const r = await new Promise<{ code: number | null; stdout: string; ms: number }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, '-fsck', '-extpass', 'echo pw', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    let sent = 0;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (!sent && stdout.includes('Checking filesystem...')) {
        sent = Date.now();
        child.kill('SIGINT');
      }
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, ms: Date.now() - sent }));
  });
  assert.equal(r.code, 11, r.stdout);
  assert.match(r.stdout, /fsck: aborted\n$/);
  assert.doesNotMatch(r.stdout, /fsck summary/);
  assert.ok(r.ms < 5000, `stopped ${r.ms} ms after SIGINT`);
});
