/**
 * tscryptfs-xray against the installed gocryptfs-xray 2.3, on the same
 * inputs: stdout and exit code of the header/block dump of every cipher
 * file of the GCM, SIV and XChaCha fixtures and of broken files;
 * -dumpmasterkey with right, wrong and empty passwords; -encrypt-paths and
 * -decrypt-paths (also -0) through one control socket of a tscryptfs mount,
 * forward and reverse, where stderr must match too; usage errors; and -aegis,
 * which only tscryptfs-xray has, against the bytes of an AEGIS file.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, promises as fsp, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, run, withMount, type RunResult } from '../helpers/mount.js';
import { useMountTmp } from '../helpers/mount-suite.js';
import { GOCRYPTFS_XRAY } from '../helpers/gocryptfs.js';
import { fixtureCipherPath, materializeVector, readManifest } from '../helpers/fixtures.js';
import { REPO_ROOT, VECTORS_DIR } from '../helpers/paths.js';
import { xrayMain } from '../../src/cli/xray/xray-main.js';
import { Vault } from '../../src/index.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 120_000, ...needs('gocryptfs') };
const XRAY = join(REPO_ROOT, 'bin', 'tscryptfs-xray');
const dir = useMountTmp('xray');
let tmp = '';
before(() => {
  tmp = dir.tmp;
});

const ours = (args: string[], input?: string): Promise<RunResult> => run(process.execPath, [XRAY, ...args], input === undefined ? {} : { input });
const theirs = (args: string[], input?: string): Promise<RunResult> => run(GOCRYPTFS_XRAY, args, input === undefined ? {} : { input });

/**
 * tscryptfs-xray run in this process (no node start-up per file; the bin is
 * the same function behind a three-line script, exercised by the other tests).
 */
async function oursInProcess(args: string[]): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await xrayMain(args, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, stdin: (async function* () {})() });
  return { code, signal: null, stdout, stderr };
}

async function assertSameInProcess(args: string[]): Promise<void> {
  const [a, b] = [await oursInProcess(args), await theirs(args)];
  assert.equal(a.stdout, b.stdout, `xray ${args.join(' ')}: stdout`);
  assert.equal(a.code, b.code, `xray ${args.join(' ')}: exit code`);
}

/** Same exit code and stdout (and stderr when `withStderr`). */
async function assertSame(args: string[], opts: { input?: string; withStderr?: boolean } = {}): Promise<RunResult> {
  const [a, b] = [await ours(args, opts.input), await theirs(args, opts.input)];
  const what = `xray ${args.join(' ')}`;
  assert.equal(a.stdout, b.stdout, `${what}: stdout`);
  assert.equal(a.code, b.code, `${what}: exit code (stderr: ${a.stderr})`);
  if (opts.withStderr) assert.equal(a.stderr, b.stderr, `${what}: stderr`);
  return a;
}

test('header and block dump: every cipher file of the GCM, SIV and XChaCha fixtures', T, async () => {
  const flags: Record<string, string[]> = { aesgcm: [], aessiv: ['-aessiv'], xchacha: ['-xchacha'] };
  let files = 0;
  for (const [v, f] of Object.entries(flags)) {
    const cdir = join(VECTORS_DIR, v, 'cipher');
    for (const name of readdirSync(cdir)) {
      const p = join(cdir, name);
      if (!lstatSync(p).isFile() || name.startsWith('gocryptfs.')) continue;
      await assertSameInProcess([...f, p]);
      files++;
    }
  }
  const expected = Object.keys(flags)
    .flatMap((v) => readManifest(v, 'cipher'))
    .filter((e) => e.type === 'file' && !e.path.includes('/') && !e.path.startsWith('gocryptfs.')).length;
  assert.equal(files, expected, 'every regular cipher file at the top of the three fixtures');
});

test('header and block dump: empty, short, truncated, zeroed, missing, a directory', T, async () => {
  const block = await fsp.readFile(join(VECTORS_DIR, 'aesgcm', 'cipher', fixtureCipherPath('aesgcm', 'file_5000.bin')));
  const cases: Record<string, Buffer> = {
    empty: Buffer.alloc(0),
    short: block.subarray(0, 5),
    truncated: block.subarray(0, 30),
    zeroheader: Buffer.alloc(18),
    badversion: Buffer.concat([Buffer.from([0, 3]), block.subarray(2)]),
    zeroid: Buffer.concat([Buffer.from([0, 2]), Buffer.alloc(16), block.subarray(18)]),
  };
  for (const [name, bytes] of Object.entries(cases)) {
    await fsp.writeFile(join(tmp, name), bytes);
    await assertSameInProcess([join(tmp, name)]);
  }
  await assertSameInProcess([join(tmp, 'missing')]);
  await assertSame([tmp]); // and once through bin/tscryptfs-xray
});

test('-dumpmasterkey: right, wrong and empty password; not a config', T, async () => {
  for (const v of ['aesgcm', 'reverse']) {
    const conf = v === 'reverse' ? join(VECTORS_DIR, v, 'plain', '.gocryptfs.reverse.conf') : join(VECTORS_DIR, v, 'cipher', 'gocryptfs.conf');
    const ok = await assertSame(['-dumpmasterkey', conf], { input: 'test\n' });
    assert.match(ok.stdout, /^[0-9a-f]{64}\n$/);
    await assertSame(['-dumpmasterkey', conf], { input: 'wrong\n' });
    await assertSame(['-dumpmasterkey', conf], { input: '' });
  }
  await assertSame(['-dumpmasterkey', join(tmp, 'nope.conf')]);
  await assertSame(['-dumpmasterkey', VECTORS_DIR], { input: 'test\n' });
});

/** Inputs for the path translation: good and bad lines, the last without a separator. */
function pathInput(sep: string, lines: string[]): string {
  return lines.join(sep);
}

test('-encrypt-paths / -decrypt-paths through a tscryptfs control socket, forward and reverse', { ...T, ...needs('mount', 'gocryptfs') }, async () => {
  const cdir = join(tmp, 'fwd');
  await materializeVector('aesgcm', cdir);
  const sock = join(tmp, 'fwd.sock');
  await withMount('tscryptfs', cdir, join(tmp, 'fwd-mnt'), { ctlsock: sock, flags: ['-ro'] }, async () => {
    const plain = ['dir1/dir2/nested.txt', '/dir1//dir2', 'missing/x', '', 'empty.txt', '../up'];
    for (const sep of ['\n', '\0']) {
      const flag = sep === '\0' ? ['-0'] : [];
      const enc = await assertSame(['-encrypt-paths', ...flag, sock], { input: pathInput(sep, plain), withStderr: true });
      const cipher = enc.stdout.split(sep).filter((l) => l !== '');
      assert.ok(cipher.length >= 3, enc.stdout);
      await assertSame(['-decrypt-paths', ...flag, sock], { input: pathInput(sep, [...cipher, 'AAAAAAAAAAAAAAAAAAAAAA', 'bad base64!']) + sep, withStderr: true });
    }
  });
  const plainDir = join(tmp, 'rev-plain');
  await fsp.mkdir(join(plainDir, 'sub'), { recursive: true });
  await fsp.writeFile(join(plainDir, 'sub', 'L'.repeat(200)), 'x');
  await initCipherdir('tscryptfs', plainDir, ['-reverse']);
  const rsock = join(tmp, 'rev.sock');
  await withMount('tscryptfs', plainDir, join(tmp, 'rev-mnt'), { ctlsock: rsock, flags: ['-reverse'] }, async () => {
    const enc = await assertSame(['-encrypt-paths', rsock], { input: `sub\nsub/${'L'.repeat(200)}\nnot/there\n`, withStderr: true });
    await assertSame(['-decrypt-paths', rsock], { input: enc.stdout + 'gocryptfs.diriv\n', withStderr: true });
  });
  await assertSame(['-decrypt-paths', join(tmp, 'no.sock')], { input: 'x\n' });
});

test('usage: no argument, unknown flag, two operations, -version', T, async () => {
  for (const args of [[], ['a', 'b'], ['-bogus', 'x'], ['-dumpmasterkey', '-encrypt-paths', 'x']]) {
    const [a, b] = [await ours(args), await theirs(args)];
    assert.equal(a.code, b.code, `${args.join(' ')}: exit code`);
    if (a.code !== 1 || args.length > 2) assert.equal(a.stdout.replace(/tscryptfs-xray [^\n]*/, 'V'), b.stdout.replace(/gocryptfs-xray [^\n]*/, 'V'), args.join(' '));
  }
  const v = await ours(['-version']);
  assert.equal(v.code, 0);
  assert.match(v.stdout, /^tscryptfs-xray \d+\.\d+\.\d+; node v\d+/);
});

test('-aegis (no gocryptfs-xray has it): 32-byte nonces, tags at the end, 4144-byte blocks', T, async (t) => {
  const cdir = join(tmp, 'aegis');
  await fsp.mkdir(cdir);
  let vault: Vault;
  try {
    vault = await Vault.init(cdir, { password: 'pw', cipher: 'aegis', scryptLogN: 10 });
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOTSUP') return t.skip('AEGIS is not available here (TSCRYPTFS_AEGIS)');
    throw err;
  }
  await vault.writeFile('/f', Buffer.alloc(5000, 7));
  const file = await vault.cipherPath('/f');
  await vault.close();
  const bytes = await fsp.readFile(file);
  const r = await oursInProcess(['-aegis', file]);
  assert.equal(r.code, 0);
  const hex = (a: number, b: number): string => bytes.subarray(a, b).toString('hex');
  assert.equal(
    r.stdout,
    `Header: Version: 2, Id: ${hex(2, 18)}, assuming Aegis256X2 mode\n` +
      `Block  0: IV: ${hex(18, 50)}, Tag: ${hex(18 + 4144 - 16, 18 + 4144)}, Offset:    18 Len: 4144\n` +
      `Block  1: IV: ${hex(4162, 4194)}, Tag: ${hex(bytes.length - 16, bytes.length)}, Offset:  4162 Len: ${bytes.length - 4162}\n`,
  );
});
