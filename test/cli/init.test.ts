import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/vault/index.js';
import {
  cleanup,
  gocryptfs,
  lines,
  modeOf,
  readConfJson,
  snapshot,
  tempDir,
  tscryptfs,
  xrayMasterKey,
} from './helpers.js';
import { needs } from '../helpers/requirements.js';
import { internalAccess } from '../../src/vault/internal-access.js';

let tmp: string;
before(async () => {
  tmp = await tempDir();
});
after(async () => {
  await cleanup(tmp);
});

let counter = 0;
async function emptyDir(): Promise<string> {
  const d = join(tmp, `d${counter++}`);
  await fsp.mkdir(d);
  return d;
}

// Documentation/format.md §3.5: flags written by -init, in gocryptfs's order.
const VARIANTS: Array<{ name: string; args: string[]; flags: string[]; diriv: boolean; longNameMax?: number; info: string }> = [
  { name: 'default', args: [], flags: ['HKDF', 'GCMIV128', 'DirIV', 'EMENames', 'LongNames', 'Raw64'], diriv: true, info: 'AES-GCM-256' },
  { name: '-aessiv', args: ['-aessiv'], flags: ['HKDF', 'GCMIV128', 'DirIV', 'EMENames', 'LongNames', 'Raw64', 'AESSIV'], diriv: true, info: 'AES-SIV-512' },
  { name: '-xchacha', args: ['-xchacha'], flags: ['HKDF', 'XChaCha20Poly1305', 'DirIV', 'EMENames', 'LongNames', 'Raw64'], diriv: true, info: 'XChaCha20-Poly1305' },
  { name: '-plaintextnames', args: ['-plaintextnames'], flags: ['HKDF', 'GCMIV128', 'PlaintextNames'], diriv: false, info: 'AES-GCM-256' },
  { name: '-deterministic-names', args: ['-deterministic-names'], flags: ['HKDF', 'GCMIV128', 'EMENames', 'LongNames', 'Raw64'], diriv: false, info: 'AES-GCM-256' },
  { name: '-longnamemax 62', args: ['-longnamemax', '62'], flags: ['HKDF', 'GCMIV128', 'DirIV', 'LongNameMax', 'EMENames', 'LongNames', 'Raw64'], diriv: true, longNameMax: 62, info: 'AES-GCM-256' },
  { name: '--longnamemax=100 (double dash, =value)', args: ['--longnamemax=100'], flags: ['HKDF', 'GCMIV128', 'DirIV', 'LongNameMax', 'EMENames', 'LongNames', 'Raw64'], diriv: true, longNameMax: 100, info: 'AES-GCM-256' },
  { name: '-raw64=false', args: ['-raw64=false'], flags: ['HKDF', 'GCMIV128', 'DirIV', 'EMENames', 'LongNames'], diriv: true, info: 'AES-GCM-256' },
  { name: '-hkdf=false', args: ['-hkdf=false'], flags: ['GCMIV128', 'DirIV', 'EMENames', 'LongNames', 'Raw64'], diriv: true, info: 'AES-GCM-256' },
  { name: '--aessiv --plaintextnames', args: ['--aessiv', '--plaintextnames'], flags: ['HKDF', 'GCMIV128', 'PlaintextNames', 'AESSIV'], diriv: false, info: 'AES-SIV-512' },
];

describe('-init variants', () => {
  for (const v of VARIANTS) {
    test(v.name, async () => {
      const dir = await emptyDir();
      const r = await tscryptfs(['-init', '-scryptn', '10', ...v.args, dir], { input: 'secret\n' });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      const conf = await readConfJson(join(dir, 'gocryptfs.conf'));
      assert.deepEqual(conf.FeatureFlags, v.flags);
      assert.equal(conf.LongNameMax, v.longNameMax);
      assert.equal(conf.Version, 2);
      assert.equal(conf.ScryptObject.N, 1024);
      assert.match(conf.Creator ?? '', /^tscryptfs \d+\.\d+\.\d+/);
      assert.equal(await modeOf(join(dir, 'gocryptfs.conf')), 0o400);
      const entries = (await fsp.readdir(dir)).sort();
      assert.deepEqual(entries, v.diriv ? ['gocryptfs.conf', 'gocryptfs.diriv'] : ['gocryptfs.conf']);
      if (v.diriv) {
        assert.equal(await modeOf(join(dir, 'gocryptfs.diriv')), 0o444);
        assert.equal((await fsp.stat(join(dir, 'gocryptfs.diriv'))).size, 16);
      }
      // Our own -info and the library agree with the flags.
      const info = await tscryptfs(['-info', dir]);
      assert.equal(info.code, 0);
      assert.equal(lines(info.stdout)[4], `contentEncryption: ${v.info}`);
      const vault = await Vault.open(dir, { password: 'secret' });
      await vault.writeFile('/hello.txt', 'hi');
      assert.equal((await vault.readFile('/hello.txt')).toString(), 'hi');
      await vault.close();
    });
  }
});

test('-init output without a terminal: no master key, gocryptfs wording', async () => {
  const dir = await emptyDir();
  const r = await tscryptfs(['-init', '-scryptn', '10', dir], { input: 'pw\n', cwd: tmp });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(lines(r.stdout), [
    'Choose a password for protecting your files.',
    'Reading Password from stdin',
    'Not running on a terminal, suppressing master key display',
    'The gocryptfs filesystem has been created successfully.',
    `You can now mount it using: tscryptfs ${dir.slice(tmp.length + 1)} MOUNTPOINT`,
  ]);
  assert.equal(r.stderr, '');
  assert.doesNotMatch(r.stdout, /[0-9a-f]{8}-[0-9a-f]{8}/);
});

test('-init -q prints nothing; --init --q spelling works too', async () => {
  for (const flags of [['-init', '-q'], ['--init', '--q'], ['--init', '--quiet']]) {
    const dir = await emptyDir();
    const r = await tscryptfs([...flags, '--scryptn', '10', dir], { input: 'pw\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, '');
  }
});

test('-init -extpass: program output is the password; no "Choose a password" line', async () => {
  const dir = await emptyDir();
  const r = await tscryptfs(['-init', '-scryptn=10', '-extpass', 'echo ext pass', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout)[0], 'Reading password from extpass program "echo", arguments: ["ext" "pass"]');
  const vault = await Vault.open(dir, { password: 'ext pass' });
  await vault.close();
});

test('-init -extpass given twice: literal program and arguments', async () => {
  const dir = await emptyDir();
  const r = await tscryptfs(['-q', '-init', '-scryptn', '10', '-extpass', 'sh', '-extpass', '-c', '-extpass', 'printf "a b\\nignored"', dir]);
  assert.equal(r.code, 0, r.stderr);
  const vault = await Vault.open(dir, { password: 'a b' });
  await vault.close();
});

test('-init -passfile: first line only, trailing garbage warned about', async () => {
  const dir = await emptyDir();
  const pf = join(tmp, 'pf.txt');
  await fsp.writeFile(pf, 'filepw\ngarbage\n');
  const r = await tscryptfs(['-init', '-scryptn', '10', '-passfile', pf, dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(lines(r.stdout).includes(`passfile: reading from file "${pf}"`));
  assert.match(r.stderr, /ignoring trailing garbage \(8 bytes\) after first line/);
  const vault = await Vault.open(dir, { password: 'filepw' });
  await vault.close();
});

test('-init -config FILE writes the config there and only the diriv into CIPHERDIR', async () => {
  const dir = await emptyDir();
  const conf = join(tmp, `custom${counter++}.conf`);
  const r = await tscryptfs(['-init', '-q', '-scryptn', '10', '-config', conf, dir], { input: 'pw\n' });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(await fsp.readdir(dir), ['gocryptfs.diriv']);
  assert.equal(await modeOf(conf), 0o400);
  const again = await emptyDir();
  const r2 = await tscryptfs(['-init', '-q', '-scryptn', '10', '-config', conf, again], { input: 'pw\n' });
  assert.equal(r2.code, 7, 'an existing config file is never overwritten');
  assert.deepEqual(await fsp.readdir(again), []);
});

describe('-init failures change nothing', () => {
  async function expectFailure(args: (dir: string) => string[], code: number, stderr: RegExp, input = 'pw\n', prepare?: (dir: string) => Promise<void>): Promise<void> {
    const dir = await emptyDir();
    if (prepare) await prepare(dir);
    const before = await snapshot(tmp);
    const r = await tscryptfs(args(dir), { input });
    assert.equal(r.code, code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stderr, stderr);
    assert.equal(lines(r.stderr).length, 1, `one error line: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.deepEqual(await snapshot(tmp), before);
  }

  test('non-empty CIPHERDIR → 6', () =>
    expectFailure((d) => ['-init', '-scryptn', '10', d], 6, /^tscryptfs: Invalid cipherdir: directory .* not empty$/m, 'pw\n', (d) =>
      fsp.writeFile(join(d, 'x'), 'x'),
    ));
  test('missing CIPHERDIR → 6', () =>
    expectFailure((d) => ['-init', '-scryptn', '10', join(d, 'nope')], 6, /Invalid cipherdir: stat .*nope: no such file or directory/));
  test('CIPHERDIR is a file → 6', () =>
    expectFailure((d) => ['-init', '-scryptn', '10', join(d, 'f')], 6, /is not a directory/, 'pw\n', (d) => fsp.writeFile(join(d, 'f'), '')));
  test('two positional arguments → 1', () =>
    expectFailure((d) => ['-init', '-scryptn', '10', d, d], 1, /take exactly one argument, 2 given/));
  test('-aessiv -xchacha → 1', () => expectFailure((d) => ['-init', '-aessiv', '-xchacha', d], 1, /-aessiv and -xchacha cannot be used at the same time/));
  test('-xchacha -hkdf=false → 1', () => expectFailure((d) => ['-init', '-xchacha', '-hkdf=false', d], 1, /-xchacha needs -hkdf/));
  test('-init -masterkey → 1', () => expectFailure((d) => ['-init', '-masterkey', '00'.repeat(32), d], 1, /cannot be used with -init/));
  test('unknown flag → 1', () => expectFailure((d) => ['-init', '-bogus', d], 1, /Invalid command line: .*unknown flag: --bogus/));
  test('-longnamemax 30 → 1', () => expectFailure((d) => ['-init', '-longnamemax', '30', d], 1, /outside allowed range 62 \.\.\. 255/));
  test('-longnamemax 300 → 1', () => expectFailure((d) => ['-init', '-longnamemax', '300', d], 1, /Invalid command line/));
  test('-raw64=maybe → 1', () => expectFailure((d) => ['-init', '-raw64=maybe', d], 1, /invalid argument "maybe" for "--raw64" flag/));
  test('-scryptn 5 → 24', () => expectFailure((d) => ['-init', '-scryptn', '5', d], 24, /scryptn below 10 is too low/));
  test('-scryptn 29 → 24', () => expectFailure((d) => ['-init', '-scryptn', '29', d], 24, /scryptn above 28/));
  test('empty password on stdin → 9', () => expectFailure((d) => ['-init', '-scryptn', '10', d], 9, /Got empty Password from stdin/, '\n'));
  test('closed stdin → 9', () => expectFailure((d) => ['-init', '-scryptn', '10', d], 9, /Got empty Password from stdin/, ''));
  test('empty -extpass output → 9', () => expectFailure((d) => ['-init', '-scryptn', '10', '-extpass', 'echo', d], 9, /extpass: password is empty/));
  test('failing -extpass program → 9', () => expectFailure((d) => ['-init', '-scryptn', '10', '-extpass', 'false', d], 9, /extpass program returned an error: exit status 1/));
  test('missing -extpass program → 9', () =>
    expectFailure((d) => ['-init', '-scryptn', '10', '-extpass', 'no-such-program-xyz', d], 9, /executable file not found/));
  test('missing -passfile → 9', () => expectFailure((d) => ['-init', '-scryptn', '10', '-passfile', join(d, 'nope'), d], 9, /passfile: could not open/));
  test('empty -passfile first line → 9', () =>
    expectFailure((d) => ['-init', '-scryptn', '10', '-passfile', join(tmp, 'emptyline.txt'), d], 9, /passfile: empty first line/, '', () =>
      fsp.writeFile(join(tmp, 'emptyline.txt'), '\nsecond\n'),
    ));
  test('-extpass with -passfile → 1', () =>
    expectFailure((d) => ['-init', '-extpass', 'echo x', '-passfile', '/dev/null', d], 1, /-extpass and -passfile cannot be used at the same time/));
  test('-reverse -xchacha → 1 (reverse implies -aessiv)', () => expectFailure((d) => ['-init', '-reverse', '-xchacha', d], 1, /-aessiv and -xchacha cannot be used at the same time/));
  test('-aegis -xchacha → 1', () => expectFailure((d) => ['-init', '-aegis', '-xchacha', d], 1, /-xchacha and -aegis cannot be used at the same time/));
  test('-aegis -hkdf=false → 1', () => expectFailure((d) => ['-init', '-aegis', '-hkdf=false', d], 1, /-aegis needs -hkdf/));
  test('config cannot be written → 24, no diriv left behind', () =>
    expectFailure((d) => ['-init', '-scryptn', '10', '-config', '/dev/null/x.conf', d], 24, /cannot write config file/));
});

test('gocryptfs reads what -init wrote: same -info, same master key', needs('gocryptfs'), async () => {
  for (const extra of [[], ['-xchacha'], ['-raw64=false', '-hkdf=false'], ['-longnamemax', '62', '-aessiv']]) {
    const dir = await emptyDir();
    const r = await tscryptfs(['-init', '-q', '-scryptn', '10', ...extra, dir], { input: 'pw\n' });
    assert.equal(r.code, 0, r.stderr);
    const ours = await tscryptfs(['-info', dir]);
    const theirs = await gocryptfs(['-info', dir]);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.equal(ours.stdout, theirs.stdout);
    const vault = await Vault.open(dir, { password: 'pw' });
    const key = Buffer.from(internalAccess(vault).masterKey()).toString('hex');
    await vault.close();
    assert.equal(xrayMasterKey(join(dir, 'gocryptfs.conf'), 'pw'), key);
  }
});
