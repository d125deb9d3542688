/**
 * tscryptfs-xray, the counterpart of gocryptfs-xray (same flags, output
 * and exit codes):
 *
 *   tscryptfs-xray [-aessiv|-xchacha|-aegis] FILE     header and blocks of a cipher file
 *   tscryptfs-xray -dumpmasterkey CONFIG              master key (password on stdin / terminal)
 *   tscryptfs-xray -encrypt-paths|-decrypt-paths [-0] SOCKET
 *                                                     translate paths from stdin through a mount's -ctlsock
 *
 * Flags follow Go's flag package, read by the scanner tscryptfs uses too
 * (../flags/go-flags.ts): -x or --x, -x=value, parsing stops at the first
 * argument that is not a flag; an unknown flag is exit 2, a wrong number of
 * arguments exit 1 (with the usage).
 */
import { openSync, closeSync } from 'node:fs';
import type { CipherName } from '../../crypto/index.js';
import { readConfFile, unlockConf } from '../../config/index.js';
import { hasCode } from '../../util/errors.js';
import { CliError, EXIT } from '../exit-codes.js';
import { flagLookup, type FlagSpec } from '../flags/flag-table.js';
import { GoFlagError, scanGoFlags } from '../flags/go-flags.js';
import { describeError, goQuote, Output } from '../output.js';
import { readPasswordOnce, wipe } from '../password.js';
import { packageVersion } from '../version-line.js';
import { inspectFile } from './inspect.js';
import { transformPaths } from './paths.js';

const NAME = 'tscryptfs-xray';

/** gocryptfs-xray's flags (-h and -help are Go's flag package's own). */
export const XRAY_FLAGS: readonly FlagSpec[] = [
  { name: '0', kind: 'bool', status: 'ok', help: 'Use \\0 instead of \\n as separator' },
  { name: 'aegis', kind: 'bool', status: 'ok', help: 'Assume AEGIS-256X2 mode instead of AES-GCM' },
  { name: 'aessiv', kind: 'bool', status: 'ok', help: 'Assume AES-SIV mode instead of AES-GCM' },
  { name: 'decrypt-paths', kind: 'bool', status: 'ok', help: 'Decrypt file paths using gocryptfs control socket' },
  { name: 'dumpmasterkey', kind: 'bool', status: 'ok', help: 'Decrypt and dump the master key' },
  { name: 'encrypt-paths', kind: 'bool', status: 'ok', help: 'Encrypt file paths using gocryptfs control socket' },
  { name: 'fido2', kind: 'string', status: 'unimplemented', help: 'Protect the masterkey using a FIDO2 token instead of a password (not supported)' },
  { name: 'version', kind: 'bool', status: 'ok', help: 'Print version information' },
  { name: 'xchacha', kind: 'bool', status: 'ok', help: 'Assume XChaCha20-Poly1305 mode instead of AES-GCM' },
];
const findXrayFlag = flagLookup(XRAY_FLAGS);

export interface XrayIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  stdin: AsyncIterable<Buffer | string>;
}

function versionLine(): string {
  return `${NAME} ${packageVersion()}; node ${process.version}; ${process.platform}/${process.arch}\n`;
}

/**
 * Go's flag.PrintDefaults layout, flags sorted by name: a one-letter
 * boolean has its text on the same line, every other flag on the next;
 * a string flag shows its type.
 */
function usage(io: XrayIo): void {
  io.stdout.write(`${versionLine()}\n`);
  const opts = [...XRAY_FLAGS]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((f) => {
      const term = f.kind === 'string' ? `${f.name} string` : f.name;
      return term.length === 1 ? `  -${term}\t${f.help}\n` : `  -${term}\n    \t${f.help}\n`;
    })
    .join('');
  io.stderr.write(
    `Usage: ${NAME} [OPTIONS] FILE\n\nOptions:\n${opts}\nExamples:\n` +
      `  ${NAME} myfs/mCXnISiv7nEmyc0glGuhTQ\n  ${NAME} -dumpmasterkey myfs/gocryptfs.conf\n  ${NAME} -encrypt-paths myfs.sock\n`,
  );
}

interface XrayArgs {
  /** The boolean flags that are on. */
  flags: Set<string>;
  fido2: string;
  positional: string[];
}

/** Go's flag package's message for what the scanner could not read. */
function goFlagMessage(err: GoFlagError): string {
  switch (err.problem) {
    case 'unknown':
      return `flag provided but not defined: -${err.flag}`;
    case 'needs-value':
      return `flag needs an argument: -${err.flag}`;
    case 'not-bool':
      return `invalid boolean value ${goQuote(err.value ?? '')} for -${err.flag}: parse error`;
    case 'bad-syntax':
      return `bad flag syntax: ${err.word}`;
  }
}

/**
 * Reads argv as Go's flag package does (flags end at the first argument);
 * a number is the exit code to stop with: -h and -help, which Go answers
 * when no flag of that name exists, print the usage and exit 0, a flag it
 * cannot read exits 2 after the usage.
 */
function parse(argv: readonly string[], io: XrayIo): XrayArgs | number {
  const a: XrayArgs = { flags: new Set(), fido2: '', positional: [] };
  try {
    for (const w of scanGoFlags(argv, findXrayFlag, { interspersed: false })) {
      if (w.type === 'arg') a.positional.push(w.value);
      else if (w.type === 'flag' && typeof w.value === 'string') a.fido2 = w.value;
      else if (w.type === 'flag' && w.value) a.flags.add(w.spec.name);
      else if (w.type === 'flag') a.flags.delete(w.spec.name);
    }
  } catch (err) {
    if (!(err instanceof GoFlagError)) throw err;
    if (err.problem === 'unknown' && (err.flag === 'h' || err.flag === 'help')) {
      usage(io);
      return 0;
    }
    io.stderr.write(`${goFlagMessage(err)}\n`);
    usage(io);
    return 2;
  }
  return a;
}

async function dumpMasterKey(path: string, io: XrayIo): Promise<number> {
  let conf;
  try {
    conf = await readConfFile(path);
  } catch (err) {
    io.stderr.write(`${describeError(err)}\n`);
    return hasCode(err, 'ECONFIGINVALID') ? EXIT.DeprecatedFS : EXIT.Other;
  }
  if (conf.FeatureFlags.includes('FIDO2')) {
    io.stderr.write('Masterkey encrypted using FIDO2 token; tscryptfs-xray does not support FIDO2 tokens.\n');
    return EXIT.Usage;
  }
  const out = new Output({ stdout: { write: () => true }, stderr: process.stderr } as never);
  out.quiet = true;
  let pw: Buffer;
  try {
    pw = await readPasswordOnce({ extpass: [], passfile: [] }, out);
  } catch (err) {
    io.stderr.write(`${(err as Error).message}\n`);
    return err instanceof CliError ? err.exitCode : EXIT.ReadPassword;
  }
  let key: Uint8Array;
  try {
    key = await unlockConf(conf, pw);
  } catch (err) {
    io.stderr.write(hasCode(err, 'EPASSWORD') ? 'Password incorrect.\n' : `${(err as Error).message}\n`);
    return EXIT.LoadConf;
  } finally {
    wipe(pw);
  }
  io.stdout.write(`${Buffer.from(key).toString('hex')}\n`);
  wipe(key);
  return 0;
}

/** Runs tscryptfs-xray on argv (without node and script); resolves to the exit code. */
export async function xrayMain(argv: readonly string[], io: XrayIo): Promise<number> {
  const parsed = parse(argv, io);
  if (typeof parsed === 'number') return parsed;
  const { flags, positional } = parsed;
  if (flags.has('version')) {
    io.stdout.write(versionLine());
    return 0;
  }
  const ops = (['dumpmasterkey', 'decrypt-paths', 'encrypt-paths'] as const).filter((f) => flags.has(f));
  if (ops.length > 1) {
    io.stdout.write(`fatal: ${ops.length} operations were requested\n`);
    return 1;
  }
  if (positional.length !== 1) {
    usage(io);
    return 1;
  }
  const target = positional[0]!;
  if (parsed.fido2 !== '') {
    io.stderr.write('-fido2 is not supported by tscryptfs-xray\n');
    return 1;
  }
  if (flags.has('decrypt-paths')) return transformPaths(target, 'DecryptPath', flags.has('0'), io);
  if (flags.has('encrypt-paths')) return transformPaths(target, 'EncryptPath', flags.has('0'), io);
  // As gocryptfs-xray: the file must open before anything else happens.
  try {
    closeSync(openSync(target, 'r'));
  } catch (err) {
    io.stdout.write(`${describeError(err)}\n`);
    return 1;
  }
  if (flags.has('dumpmasterkey')) return dumpMasterKey(target, io);
  const cipher: CipherName = flags.has('aessiv') ? 'aes-siv' : flags.has('xchacha') ? 'xchacha' : flags.has('aegis') ? 'aegis' : 'aes-gcm';
  const r = inspectFile(target, cipher);
  io.stdout.write(r.stdout);
  return r.code;
}

/** Entry point of bin/tscryptfs-xray. */
export function runXray(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (hasCode(err, 'EPIPE')) process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  xrayMain(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${NAME}: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = EXIT.Other;
    },
  );
}
