import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { promises as fsp, readFileSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { cleanup, gocryptfs, initVault, lines, ROOT, snapshot, speedWithoutAegis, tempDir, tscryptfs } from './helpers.js';
import { aegisNativeAvailable, aegisNativeStatus } from '../../src/crypto/index.js';
import { needs } from '../helpers/requirements.js';

let tmp: string;
let vault: string; // password "pw"
let mnt: string;
before(async () => {
  tmp = await tempDir();
  vault = await initVault(tmp, 'vault');
  mnt = join(tmp, 'mnt');
  await fsp.mkdir(mnt);
});
after(async () => {
  await cleanup(tmp);
});

const pkgVersion = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const VERSION_LINE = `tscryptfs ${pkgVersion}; node ${process.version}; ${process.platform}/${process.arch}`;

/** The first 12 hex digits of the sha256 of the fork's C sources (native/fuse-native/source-hash.js), which its binary carries. */
const FUSE_SOURCES = (createRequire(join(ROOT, 'native', 'fuse-native', 'index.js'))('./source-hash.js') as { sourceHash: () => string }).sourceHash().slice(0, 12);

test('-version and --version: one line: the help header, then the parts that matter', async () => {
  for (const flag of ['-version', '--version']) {
    const r = await tscryptfs([flag]);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.equal(lines(r.stdout).length, 1, r.stdout);
    assert.ok(r.stdout.startsWith(`${VERSION_LINE}; `), r.stdout);
    assert.ok(r.stdout.includes(`; OpenSSL ${process.versions.openssl}; `), r.stdout);
  }
});

test('a TSCRYPTFS_ variable set to a value it does not take: one warning line each, naming the default that applies; the command runs', async () => {
  const r = await tscryptfs(['-version'], { env: { TSCRYPTFS_SPIN: '0', TSCRYPTFS_NATIVE_BATCH: 'off', TSCRYPTFS_FS_IO: '' } });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout.startsWith(`${VERSION_LINE}; `), r.stdout);
  assert.deepEqual(lines(r.stderr), [
    'tscryptfs: TSCRYPTFS_NATIVE_BATCH="off" is not 0: the default (on) applies',
    'tscryptfs: TSCRYPTFS_SPIN="0" is not ANSWER,LOOP: the default (40,200) applies',
  ]);
});

test('-version with FUSE and the native addons: the binding\'s sources, libfuse, AEGIS code path, batched AEAD', { ...needs('mount', 'native') }, async () => {
  const r = await tscryptfs(['-version']);
  const libfuse = basename(realpathSync('/usr/lib/x86_64-linux-gnu/libfuse.so.2')).replace('libfuse.so.', '');
  const path = aegisNativeStatus().implementation!;
  assert.equal(r.stdout, `${VERSION_LINE}; fuse-native 2.2.6-tscryptfs sources ${FUSE_SOURCES}; libfuse ${libfuse}; OpenSSL ${process.versions.openssl}; AEGIS native ${path}; batched AEAD native\n`);
  const off = await tscryptfs(['-version'], { env: { TSCRYPTFS_AEGIS: 'off', TSCRYPTFS_NATIVE_BATCH: '0' } });
  assert.match(off.stdout, /; AEGIS off; batched AEAD off\n$/);
  const ts = await tscryptfs(['-version'], { env: { TSCRYPTFS_AEGIS: 'ts' } });
  assert.match(ts.stdout, /; AEGIS TypeScript; batched AEAD native\n$/);
});

test('-h, -help, --help: short help, exit 0', async () => {
  for (const flag of ['-h', '-help', '--help']) {
    const r = await tscryptfs([flag]);
    assert.equal(r.code, 0);
    const l = lines(r.stdout);
    assert.equal(l[0], VERSION_LINE);
    assert.equal(l[2], 'Usage: tscryptfs -init|-passwd|-info [OPTIONS] CIPHERDIR');
    assert.ok(l.some((x) => x.startsWith('  -init ')));
  }
});

/** The flag spellings in the option rows of a help text ("  -idle, -i DURATION   text" gives -idle and -i). */
function helpFlags(text: string): string[][] {
  return text
    .split('\n')
    .filter((l) => /^  -/.test(l))
    .map((l) => l.slice(2).split(/\s{2,}/)[0]!.match(/-[\w-]+/g) ?? []);
}

test('-h groups the common options by action; every one of them is in -hh', async () => {
  const short = (await tscryptfs(['-h'])).stdout;
  for (const group of ['Mounting (tscryptfs CIPHERDIR MOUNTPOINT):', 'Creating a cipher directory (-init):', 'Password and key (every action that opens CIPHERDIR):', 'Other actions:']) {
    assert.ok(short.includes(`\n${group}\n`), `group ${group}`);
  }
  const long = new Set(helpFlags((await tscryptfs(['-hh'])).stdout).flat());
  const shown = helpFlags(short).filter((names) => names[0] !== '--');
  assert.ok(shown.length >= 30, `${shown.length} options in -h`);
  for (const names of shown) for (const n of names) assert.ok(long.has(n), `${n} (in -h) is in -hh`);
});

test('every option gocryptfs\'s -h shows is in our -h', needs('gocryptfs'), async () => {
  const ours = new Set(helpFlags((await tscryptfs(['-h'])).stdout).flat());
  const theirs = helpFlags((await gocryptfs(['-h'])).stdout + (await gocryptfs(['-h'])).stderr);
  assert.ok(theirs.length >= 25, `gocryptfs -h lists ${theirs.length} options`);
  for (const names of theirs) if (names[0] !== '--') assert.ok(names.some((n) => ours.has(n)), `${names.join(', ')} (gocryptfs -h) is in tscryptfs -h`);
});

test('-hh: every option, including mount options and the -speed rule', async () => {
  const r = await tscryptfs(['-hh']);
  assert.equal(r.code, 0);
  for (const opt of ['-allow_other', '-ctlsock PATH', '-extpass CMD', '-fsck', '-idle, -i DURATION', '-ko OPTS', '-masterkey HEX', '-notifypid PID', '-raw64', '-reverse', '-scryptn N', '-sharedstorage', '-zerokey']) {
    assert.ok(r.stdout.includes(`  ${opt} `), `missing ${opt}`);
  }
  assert.match(r.stdout, /\(selected in auto mode\)" marks the backend/);
});

test('no arguments: short help on stdout, exit 1 (as gocryptfs)', needs('gocryptfs'), async () => {
  const r = await tscryptfs([]);
  assert.equal(r.code, 1);
  assert.equal(lines(r.stdout)[0], VERSION_LINE);
  assert.equal(r.stderr, '');
  assert.equal((await gocryptfs([])).code, 1);
});

describe('usage errors → 1', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['unknown flag', ['-bogus'], /^tscryptfs: Invalid command line: "tscryptfs" "-bogus": unknown flag: --bogus\. Try 'tscryptfs -help'\.$/],
    ['unknown double-dash flag', ['--bogus', 'x'], /unknown flag: --bogus/],
    ['missing value', ['-info', '-config'], /flag needs an argument: --config/],
    ['bad integer', ['-scryptn', 'ten', 'x'], /Invalid command line/],
    ['bad duration', ['-idle', 'soon', 'x', 'y'], /Invalid command line/],
    ['flags but no CIPHERDIR', ['-q'], /^tscryptfs: CIPHERDIR argument is missing$/],
    ['two actions', ['-info', '-passwd', '.'], /At most one of -info, -init, -passwd, -fsck is allowed/],
    ['-o without value', ['x', '-o'], /The "-o" option requires an argument/],
    ['-o o', ['-o', 'o', 'x'], /You can't pass "-o" to "-o"/],
    ['bad -openssl', ['-openssl', 'maybe', 'x'], /Invalid "-openssl" setting/],
    ['-fido2', ['-fido2', '/dev/x', 'x'], /-fido2 is not implemented yet/],
    ['bad -force_owner', ['-force_owner', 'abc', 'x', 'y'], /force_owner must be in form UID:GID/],
  ];
  for (const [name, args, re] of cases) {
    test(name, async () => {
      const r = await tscryptfs(args, { cwd: tmp });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(lines(r.stderr).length, 1, r.stderr);
      assert.match(lines(r.stderr)[0]!, re);
    });
  }
  test('-exclude without -reverse → 29 (as gocryptfs)', async () => {
    const r = await tscryptfs(['-exclude', 'a', vault, mnt]);
    assert.equal(r.code, 29);
  });
  test('-exclude-wildcard, -exclude-from without -reverse → 29 too', async () => {
    assert.equal((await tscryptfs(['-ew', '*.o', vault, mnt])).code, 29);
    assert.equal((await tscryptfs(['-exclude-from', '/dev/null', vault, mnt])).code, 29);
  });
});

test('"-o q,info" expands like gocryptfs; "--" stops option parsing', async () => {
  const r = await tscryptfs([vault, '-o', 'info']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Creator: {11}tscryptfs/);
  const dashDir = join(tmp, '-dash');
  await fsp.mkdir(dashDir);
  await fsp.copyFile(join(vault, 'gocryptfs.conf'), join(dashDir, 'gocryptfs.conf'));
  const r2 = await tscryptfs(['-info', '--', '-dash'], { cwd: tmp });
  assert.equal(r2.code, 0, r2.stderr);
  const r3 = await tscryptfs(['-info', '-dash'], { cwd: tmp });
  assert.equal(r3.code, 1, 'without "--" it is a flag');
});

describe('mount (CIPHERDIR MOUNTPOINT): the checks before mounting fail with gocryptfs\'s codes and change nothing', () => {
  async function expectMount(args: string[], input: string, code: number, stderr: RegExp | string): Promise<void> {
    const before = await snapshot(tmp);
    const r = await tscryptfs(args, { input });
    assert.equal(r.code, code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`);
    if (typeof stderr === 'string') assert.equal(r.stderr, stderr);
    else assert.match(r.stderr, stderr);
    assert.deepEqual(await snapshot(tmp), before);
  }
  test('mount options parse; a wrong password still → 12', () =>
    expectMount(['-fg', '-ro', '-allow_other', '-nonempty', '-kernel_cache', '-fsname', 'x', '-ko', 'noatime', '-idle', '10m', '-sharedstorage', '-nodev', '-nosuid', '-noexec', '-fusedebug', '-notifypid', '0', vault, mnt], 'nope\n', 12, 'tscryptfs: Password incorrect.\n'));
  test('wrong password → 12', () => expectMount([vault, mnt], 'nope\n', 12, 'tscryptfs: Password incorrect.\n'));
  test('empty password → 9', () => expectMount([vault, mnt], '', 9, /Got empty Password/));
  test('-masterkey (bad) → 14', () => expectMount(['-masterkey', '1234', vault, mnt], '', 14, /Master key has length 2/));
  test('missing CIPHERDIR → 6', () => expectMount([join(tmp, 'nope'), mnt], '', 6, /Invalid cipherdir/));
  test('missing MOUNTPOINT → 10', () => expectMount([vault, join(tmp, 'nope')], 'pw\n', 10, /Invalid mountpoint/));
  test('MOUNTPOINT inside CIPHERDIR → 10', () => expectMount([vault, join(vault, 'sub')], 'pw\n', 10, /is contained in cipherdir/));
  test('missing config → 11', async () => {
    const empty = join(tmp, 'emptycipher');
    await fsp.mkdir(empty, { recursive: true });
    await expectMount([empty, mnt], 'pw\n', 11, /Cannot open config file/);
  });
  test('unknown feature flag → 27 (before the password)', async () => {
    const dir = join(tmp, 'future');
    await fsp.mkdir(dir, { recursive: true });
    const conf = JSON.parse(await fsp.readFile(join(vault, 'gocryptfs.conf'), 'utf8'));
    conf.FeatureFlags.push('FutureFlag');
    await fsp.writeFile(join(dir, 'gocryptfs.conf'), JSON.stringify(conf));
    await expectMount([dir, mnt], '', 27, /unsupported feature flag "FutureFlag"/);
  });
});

test('-speed: version, cpu line, ten rows (AEGIS per implementation), auto-mode markers', async () => {
  const r = await tscryptfs(['-speed'], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  const l = lines(r.stdout);
  assert.ok(l[0]!.startsWith(`${VERSION_LINE}; fuse-native `), l[0]);
  assert.match(l[1]!, /^cpu: .+; (with|no) AES acceleration$/);
  const names = [
    'AES-GCM-256-OpenSSL',
    'AES-GCM-256-noble',
    'AES-SIV-512-OpenSSL',
    'AES-SIV-512-noble',
    'XChaCha20-Poly1305-OpenSSL',
    'XChaCha20-Poly1305-noble',
    'AEGIS-256X2-native',
    'AEGIS-256X2-ts',
    'AEGIS-128X2-native',
    'AEGIS-128X2-ts',
  ];
  assert.equal(l.length, 2 + names.length);
  // Auto mode: node:crypto for the 2.3 ciphers; for AEGIS-256X2 the native addon when it is there, else TypeScript.
  const aegisAuto = aegisNativeAvailable() ? 'AEGIS-256X2-native' : 'AEGIS-256X2-ts';
  names.forEach((name, i) => {
    const row = l[2 + i]!;
    const selected = name.endsWith('-OpenSSL') || name === aegisAuto;
    const na = name.endsWith('-native') && !aegisNativeAvailable();
    const value = na ? '    N/A' : '[ \\d]{4,}\\d\\.\\d\\d MB/s';
    assert.match(row, new RegExp(`^${name.padEnd(26)}\\t${value}${selected ? '\\t\\(selected in auto mode\\)' : ''}$`));
  });
});

test('-speed with TSCRYPTFS_AEGIS=off: the AEGIS rows are N/A and unmarked (in-process, short rows)', async () => {
  const text = await speedWithoutAegis(false);
  const rows = lines(text).filter((x) => x.startsWith('AEGIS-'));
  assert.equal(rows.length, 4);
  for (const row of rows) assert.match(row, /^AEGIS-\S+\s*\t    N\/A$/);
  assert.equal(lines(text).filter((x) => x.endsWith('(selected in auto mode)')).length, 3, text);
});
