import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/vault/index.js';
import {
  cleanup,
  gocryptfs,
  initVault,
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
function fresh(extra: string[] = [], password = 'old'): Promise<string> {
  return initVault(tmp, `v${counter++}`, extra, password);
}

async function masterKeyOf(dir: string, password: string): Promise<string> {
  const v = await Vault.open(dir, { password });
  const key = Buffer.from(internalAccess(v).masterKey()).toString('hex');
  await v.close();
  return key;
}

async function opens(dir: string, password: string): Promise<boolean> {
  try {
    await (await Vault.open(dir, { password })).close();
    return true;
  } catch {
    return false;
  }
}

test('-passwd via stdin: line 1 old password, line 2 new password', needs('gocryptfs'), async () => {
  const dir = await fresh(['-aessiv', '-longnamemax', '100']);
  const key = await masterKeyOf(dir, 'old');
  const before = await readConfJson(join(dir, 'gocryptfs.conf'));
  const r = await tscryptfs(['-passwd', dir], { input: 'old\nnew\n' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(lines(r.stdout), [
    'Reading Password from stdin',
    'Decrypting master key',
    'Please enter your new password.',
    'Reading Password from stdin',
    'Password changed.',
  ]);
  const afterConf = await readConfJson(join(dir, 'gocryptfs.conf'));
  assert.deepEqual(afterConf.FeatureFlags, before.FeatureFlags, 'flags kept');
  assert.equal(afterConf.LongNameMax, 100);
  assert.equal(afterConf.Creator, before.Creator);
  assert.equal(afterConf.ScryptObject.N, 1024, 'N kept');
  assert.notEqual(afterConf.ScryptObject.Salt, before.ScryptObject.Salt, 'new salt');
  assert.equal(await modeOf(join(dir, 'gocryptfs.conf')), 0o400);
  assert.deepEqual((await fsp.readdir(dir)).sort(), ['gocryptfs.conf', 'gocryptfs.diriv'], 'no tmp or bak file left');
  assert.equal(await opens(dir, 'old'), false);
  assert.equal(await masterKeyOf(dir, 'new'), key, 'same master key under the new password');
  assert.equal(xrayMasterKey(join(dir, 'gocryptfs.conf'), 'new'), key, 'gocryptfs-xray agrees');
});

test('-passwd -scryptn 11 changes N; --passwd spelling', async () => {
  const dir = await fresh();
  const r = await tscryptfs(['--passwd', '--scryptn=11', '-q', dir], { input: 'old\nnew\n' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '');
  assert.equal((await readConfJson(join(dir, 'gocryptfs.conf'))).ScryptObject.N, 2048);
  assert.ok(await opens(dir, 'new'));
});

test('-passwd -extpass: the program answers both questions (same password, new salt)', async () => {
  const dir = await fresh([], 'ext');
  const salt = (await readConfJson(join(dir, 'gocryptfs.conf'))).ScryptObject.Salt;
  const r = await tscryptfs(['-passwd', '-extpass', 'echo ext', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout).filter((l) => l.startsWith('Reading password from extpass program "echo"')).length, 2);
  assert.notEqual((await readConfJson(join(dir, 'gocryptfs.conf'))).ScryptObject.Salt, salt);
  assert.ok(await opens(dir, 'ext'));
});

test('-passwd -extpass: a program that changes its answer sets the new password', async () => {
  const dir = await fresh([], 'first');
  const state = join(tmp, `state${counter++}`);
  // Prints "first" on the first call, "second" afterwards.
  const script = `if [ -e ${state} ]; then echo second; else touch ${state}; echo first; fi`;
  const r = await tscryptfs(['-passwd', '-q', '-extpass', 'sh', '-extpass', '-c', '-extpass', script, dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(await opens(dir, 'second'));
});

test('-passwd -passfile: the file answers both questions', async () => {
  const dir = await fresh([], 'filepw');
  const pf = join(tmp, `pf${counter++}`);
  await fsp.writeFile(pf, 'filepw\n');
  const r = await tscryptfs(['-passwd', '-passfile', pf, dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout).filter((l) => l === `passfile: reading from file "${pf}"`).length, 2);
  assert.ok(await opens(dir, 'filepw'));
});

test('-passwd -masterkey HEX: no old password, old config kept as .bak', async () => {
  const dir = await fresh();
  const key = await masterKeyOf(dir, 'old');
  const dashed = key.match(/.{8}/g)!.join('-');
  const r = await tscryptfs(['-passwd', '-masterkey', dashed, dir], { input: 'reset\n' });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(lines(r.stdout).includes('Using explicit master key.'));
  assert.ok(lines(r.stdout).includes(`A copy of the old config file has been created at "${join(dir, 'gocryptfs.conf.bak')}".`));
  assert.ok(await opens(dir, 'reset'));
  assert.equal(await masterKeyOf(dir, 'reset'), key);
  assert.equal(await modeOf(join(dir, 'gocryptfs.conf.bak')), 0o400);
  // A second reset refuses to overwrite the backup (7) and changes nothing.
  const before = await snapshot(dir);
  const r2 = await tscryptfs(['-passwd', '-masterkey', key, dir], { input: 'again\n' });
  assert.equal(r2.code, 7);
  assert.match(r2.stderr, /Could not create backup file: link .*gocryptfs.conf.bak: file already exists/);
  assert.deepEqual(await snapshot(dir), before);
});

test('-passwd -masterkey=stdin: key on line 1, new password on line 2', async () => {
  const dir = await fresh();
  const key = await masterKeyOf(dir, 'old');
  const r = await tscryptfs(['-passwd', '-masterkey=stdin', dir], { input: `${key}\nfromstdin\n` });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout)[0], 'Reading Masterkey from stdin');
  assert.ok(await opens(dir, 'fromstdin'));
});

describe('-passwd failures change nothing', needs('gocryptfs'), () => {
  async function expectFailure(
    setup: (dir: string) => Promise<void> | void,
    args: (dir: string) => string[],
    input: string,
    code: number,
    stderr: RegExp,
    gocryptfsAgrees = true,
  ): Promise<void> {
    const dir = await fresh();
    await setup(dir);
    const before = await snapshot(dir);
    const r = await tscryptfs(args(dir), { input });
    assert.equal(r.code, code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.match(r.stderr, stderr);
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.deepEqual(await snapshot(dir), before);
    if (gocryptfsAgrees) {
      const g = await gocryptfs(args(dir), { input });
      assert.equal(g.code, code, `gocryptfs: ${g.stderr}`);
      assert.deepEqual(await snapshot(dir), before);
    }
  }
  const plain = (d: string): string[] => ['-passwd', d];
  const editConf = (fn: (c: Record<string, unknown> & { FeatureFlags: string[] }) => void) => async (dir: string) => {
    const p = join(dir, 'gocryptfs.conf');
    const c = JSON.parse(await fsp.readFile(p, 'utf8'));
    fn(c);
    await fsp.chmod(p, 0o600);
    await fsp.writeFile(p, JSON.stringify(c));
    await fsp.chmod(p, 0o400);
  };

  test('wrong old password → 12', () => expectFailure(() => undefined, plain, 'wrong\nnew\n', 12, /^tscryptfs: Password incorrect\.$/m));
  test('empty old password → 9', () => expectFailure(() => undefined, plain, '\nnew\n', 9, /Got empty Password from stdin/));
  test('empty new password → 9', () => expectFailure(() => undefined, plain, 'old\n\n', 9, /Got empty Password from stdin/));
  test('no new password (EOF) → 9', () => expectFailure(() => undefined, plain, 'old\n', 9, /Got empty Password from stdin/));
  test('missing config → 11', () => expectFailure((d) => fsp.rm(join(d, 'gocryptfs.conf')), plain, 'old\nnew\n', 11, /Cannot open config file/));
  test('unparsable config → 11', () =>
    expectFailure(
      async (d) => {
        await fsp.chmod(join(d, 'gocryptfs.conf'), 0o600);
        await fsp.writeFile(join(d, 'gocryptfs.conf'), '{bad');
      },
      plain,
      'old\nnew\n',
      11,
      /Cannot open config file/,
    ));
  test('empty config → 11', () =>
    expectFailure(
      async (d) => {
        await fsp.chmod(join(d, 'gocryptfs.conf'), 0o600);
        await fsp.writeFile(join(d, 'gocryptfs.conf'), '');
      },
      plain,
      'old\nnew\n',
      11,
      /Cannot open config file/,
    ));
  test('unknown feature flag → 27', () =>
    expectFailure(editConf((c) => c.FeatureFlags.push('FutureFlag')), plain, 'old\nnew\n', 27, /unsupported feature flag "FutureFlag"/));
  test('Version 3 → 27', () => expectFailure(editConf((c) => (c.Version = 3)), plain, 'old\nnew\n', 27, /format version 3/));
  test('weak scrypt N → 27', () =>
    expectFailure(editConf((c) => ((c.ScryptObject as { N: number }).N = 512)), plain, 'old\nnew\n', 27, /scrypt N=512/));
  test('-masterkey too short → 14', () =>
    expectFailure(() => undefined, (d) => ['-passwd', '-masterkey', 'abcd', d], 'new\n', 14, /Master key has length 2 but we require length 32/));
  test('-masterkey not hex → 14', () =>
    expectFailure(() => undefined, (d) => ['-passwd', '-masterkey', 'zz'.repeat(32), d], 'new\n', 14, /Could not parse master key/));
  test('-masterkey=stdin garbage → 14', () =>
    expectFailure(() => undefined, (d) => ['-passwd', '-masterkey=stdin', d], 'nothex\nnew\n', 14, /Could not parse master key/));
  test('-masterkey with -extpass → 1', () =>
    expectFailure(() => undefined, (d) => ['-passwd', '-masterkey', '00'.repeat(32), '-extpass', 'echo x', d], '', 1, /-extpass and -masterkey cannot be used/));
  test('-scryptn 5 → 13 (checked before any password)', () =>
    expectFailure(() => undefined, (d) => ['-passwd', '-scryptn', '5', d], 'old\nnew\n', 13, /scryptn below 10/));
  test('config cannot be replaced → 24', () =>
    // A stale temp file makes the O_EXCL create fail; it is not ours, so it stays.
    expectFailure((d) => fsp.writeFile(join(d, 'gocryptfs.conf.tmp'), 'x'), plain, 'old\nnew\n', 24, /cannot write config file/));
});
