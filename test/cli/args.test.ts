import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bool, list, num, parseArgs, str } from '../../src/cli/flags/command-line.js';
import { expandOArgs } from '../../src/cli/flags/go-flags.js';
import { parseGoDuration, parseGoInt, splitCsv } from '../../src/cli/flags/go-values.js';
import { CliError } from '../../src/cli/exit-codes.js';
import { extpassCommand } from '../../src/cli/password.js';
import { unhexMasterKey } from '../../src/cli/masterkey.js';
import { masterKeyReminder } from '../../src/cli/init.js';
import { speedRowHead, speedRowTail } from '../../src/cli/speed.js';

function usage(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof CliError && err.exitCode === 1 && re.test(err.message));
}

test('parseArgs: single and double dash, =value, bool=false, aliases, --', () => {
  const a = parseArgs(['-init', '--aessiv', '-scryptn', '10', '--longnamemax=62', 'dir']);
  assert.deepEqual([...a.given].sort(), ['aessiv', 'init', 'longnamemax', 'scryptn']);
  assert.equal(num(a, 'scryptn'), 10);
  assert.equal(num(a, 'longnamemax'), 62);
  assert.deepEqual(a.positional, ['dir']);
  const b = parseArgs(['-raw64=false', '--hkdf=0', '-q', '-d', '-f', '-h', '-raw64=true']);
  assert.deepEqual([...b.given].sort(), ['debug', 'fg', 'help', 'hkdf', 'quiet', 'raw64']);
  assert.equal(bool(b, 'raw64'), true); // the last occurrence counts
  assert.equal(bool(b, 'hkdf'), false);
  const c = parseArgs(['-extpass', '-X', '-', '--', '-init']);
  assert.deepEqual(list(c, 'extpass'), ['-X']);
  assert.deepEqual(c.positional, ['-', '-init']);
  assert.equal(bool(c, 'init'), false);
  usage(() => parseArgs(['-nope']), /unknown flag: --nope/);
  usage(() => parseArgs(['--no-raw64']), /unknown flag: --no-raw64/);
  usage(() => parseArgs(['-passfile']), /flag needs an argument: --passfile/);
  usage(() => parseArgs(['-ro=maybe']), /invalid argument "maybe" for "--ro" flag/);
  usage(() => parseArgs(['-=x']), /bad flag syntax: --=x\./);
  usage(() => parseArgs(['---x']), /bad flag syntax: ---x\./);
  usage(() => parseArgs(['-scryptn', 'x']), /invalid argument "x" for "--scryptn" flag: not an integer\./);
  usage(() => parseArgs(['-idle', '5']), /invalid argument "5" for "--idle" flag: not a duration/);
  usage(() => parseArgs(['-extpass', '"a']), /invalid argument "\\"a" for "--extpass" flag: unterminated quote/);
});

test('expandOArgs: fstab kernel options (noatime, ...) from mount.fuse go to -ko', () => {
  assert.deepEqual(expandOArgs(['c', 'm', '-o', 'rw,noatime,passfile=/p,nodiratime,dev']), ['-rw', '-passfile=/p', '-dev', '-ko=noatime,nodiratime', 'c', 'm']);
});

test('expandOArgs: "-o a,b" becomes leading "-a -b" (gocryptfs prefixOArgs)', () => {
  assert.deepEqual(expandOArgs(['c', 'm', '-o', 'ro,allow_other,,fsname=x']), ['-ro', '-allow_other', '-fsname=x', 'c', 'm']);
  assert.deepEqual(expandOArgs(['-o=q', 'c']), ['-q', 'c']);
  assert.deepEqual(expandOArgs(['-o', 'q', '--', 'c']), ['-o', 'q', '--', 'c']);
});

test('parseArgs: defaults, given flags, repeated lists with comma splitting', () => {
  const a = parseArgs(['-init', '-extpass', 'a b', '-extpass=c,d', 'dir', '-raw64=false', '-idle', '1h30m']);
  assert.equal(bool(a, 'init'), true);
  assert.equal(bool(a, 'raw64'), false);
  assert.equal(bool(a, 'hkdf'), true);
  assert.equal(num(a, 'scryptn'), 16);
  assert.equal(num(a, 'longnamemax'), 255);
  assert.equal(num(a, 'idle'), 5_400_000);
  assert.equal(str(a, 'openssl'), 'auto');
  assert.deepEqual(list(a, 'extpass'), ['a b', 'c', 'd']);
  assert.deepEqual(a.positional, ['dir']);
  assert.deepEqual([...a.given].sort(), ['extpass', 'idle', 'init', 'raw64']);
  assert.equal(parseArgs([]).given.size, 0);
  usage(() => parseArgs(['-longnamemax', '256']), /Invalid command line/);
  usage(() => parseArgs(['-scryptn', 'x']), /Invalid command line/);
});

test('Go value syntax: ints, durations, CSV', () => {
  assert.equal(parseGoInt('16'), 16);
  assert.equal(parseGoInt('0x10'), 16);
  assert.equal(parseGoInt('-3'), -3);
  assert.equal(parseGoInt('010'), 8);
  assert.equal(parseGoInt('0'), 0);
  assert.equal(parseGoInt('1e3'), undefined);
  assert.equal(parseGoDuration('500s'), 500_000);
  assert.equal(parseGoDuration('2h45m'), 9_900_000);
  assert.equal(parseGoDuration('1.5m'), 90_000);
  assert.equal(parseGoDuration('0'), 0);
  assert.equal(parseGoDuration('-1s'), -1000);
  assert.equal(parseGoDuration('10'), undefined);
  assert.deepEqual(splitCsv('a,b'), ['a', 'b']);
  assert.deepEqual(splitCsv('"a,b",c'), ['a,b', 'c']);
  assert.deepEqual(splitCsv('x'), ['x']);
});

test('-extpass splitting: one value splits on every space, several are literal', () => {
  assert.deepEqual(extpassCommand(['echo a  b']), ['echo', 'a', '', 'b']);
  assert.deepEqual(extpassCommand(['my prog', '--']), ['my prog', '--']);
});

test('-masterkey parsing: dashes ignored, 32 bytes, else exit 14', () => {
  const hex = '00112233'.repeat(8);
  assert.equal(unhexMasterKey(hex.match(/.{8}/g)!.join('-')).toString('hex'), hex);
  for (const bad of ['', '00', 'zz'.repeat(32), '0'.repeat(63), '0'.repeat(66)]) {
    assert.throws(() => unhexMasterKey(bad), (e: unknown) => e instanceof CliError && e.exitCode === 14);
  }
});

test('master key reminder: gocryptfs layout, 4 groups per line', () => {
  const key = Buffer.from('b4d8b25c324dd6eaa328c9906e8a2a3c6038552a042ced4326cfff210c62957a', 'hex');
  assert.equal(
    masterKeyReminder(key),
    '\nYour master key is:\n\n' +
      '    b4d8b25c-324dd6ea-a328c990-6e8a2a3c-\n' +
      '    6038552a-042ced43-26cfff21-0c62957a\n\n' +
      'If the gocryptfs.conf file becomes corrupted or you ever forget your password,\n' +
      'there is only one hope for recovery: The master key. Print it to a piece of\n' +
      'paper and store it in a drawer. This message is only printed once.\n',
  );
});

test('-speed row format: %-26s TAB %8.2f MB/s [TAB (selected in auto mode)] (the aegis branch widened %7.2f)', () => {
  assert.equal(speedRowHead('AES-GCM-256-OpenSSL') + speedRowTail(885.956, false), 'AES-GCM-256-OpenSSL       \t  885.96 MB/s\n');
  assert.equal(speedRowHead('XChaCha20-Poly1305-OpenSSL') + speedRowTail(2266.67, true), 'XChaCha20-Poly1305-OpenSSL\t 2266.67 MB/s\t(selected in auto mode)\n');
  assert.equal(speedRowHead('AEGIS-256X2-native') + speedRowTail(12345.678, true), 'AEGIS-256X2-native        \t12345.68 MB/s\t(selected in auto mode)\n');
  assert.equal(speedRowTail(null, false), '    N/A\n');
});
