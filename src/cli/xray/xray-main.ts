/**
 * tscryptfs-xray, the counterpart of gocryptfs-xray (same flags, output
 * and exit codes):
 *
 *   tscryptfs-xray [-aessiv|-xchacha|-aegis] FILE     header and blocks of a cipher file
 *   tscryptfs-xray -dumpmasterkey CONFIG              master key (password on stdin / terminal)
 *   tscryptfs-xray -encrypt-paths|-decrypt-paths [-0] SOCKET
 *                                                     translate paths from stdin through a mount's -ctlsock
 *
 * Flags follow Go's flag package: -x or --x, -x=value, parsing stops at the
 * first argument that is not a flag; an unknown flag is exit 2, a wrong
 * number of arguments exit 1 (with the usage).
 */
import { openSync, closeSync } from 'node:fs';
import type { CipherName } from '../../crypto/index.js';
import { readConfFile, unlockConf } from '../../config/index.js';
import { hasCode } from '../../util/errors.js';
import { CliError, EXIT } from '../exit-codes.js';
import { describeError, Output } from '../output.js';
import { readPasswordOnce, wipe } from '../password.js';
import { packageVersion } from '../version.js';
import { inspectFile } from './inspect.js';
import { transformPaths } from './paths.js';

const NAME = 'tscryptfs-xray';

const BOOL_FLAGS = ['0', 'aegis', 'aessiv', 'decrypt-paths', 'dumpmasterkey', 'encrypt-paths', 'version', 'xchacha'] as const;
type BoolFlag = (typeof BOOL_FLAGS)[number];

const FLAG_HELP: [string, string][] = [
  ['0', 'Use \\0 instead of \\n as separator'],
  ['aegis', 'Assume AEGIS-256X2 mode instead of AES-GCM'],
  ['aessiv', 'Assume AES-SIV mode instead of AES-GCM'],
  ['decrypt-paths', 'Decrypt file paths using gocryptfs control socket'],
  ['dumpmasterkey', 'Decrypt and dump the master key'],
  ['encrypt-paths', 'Encrypt file paths using gocryptfs control socket'],
  ['fido2 string', 'Protect the masterkey using a FIDO2 token instead of a password (not supported)'],
  ['version', 'Print version information'],
  ['xchacha', 'Assume XChaCha20-Poly1305 mode instead of AES-GCM'],
];

export interface XrayIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  stdin: AsyncIterable<Buffer | string>;
}

function versionLine(): string {
  return `${NAME} ${packageVersion()}; node ${process.version}; ${process.platform}/${process.arch}\n`;
}

/** Go's flag.PrintDefaults layout: one-letter flags on one line, others with the text on the next. */
function usage(io: XrayIo): void {
  io.stdout.write(`${versionLine()}\n`);
  const opts = FLAG_HELP.map(([f, h]) => (f.length === 1 ? `  -${f}\t${h}\n` : `  -${f}\n    \t${h}\n`)).join('');
  io.stderr.write(
    `Usage: ${NAME} [OPTIONS] FILE\n\nOptions:\n${opts}\nExamples:\n` +
      `  ${NAME} myfs/mCXnISiv7nEmyc0glGuhTQ\n  ${NAME} -dumpmasterkey myfs/gocryptfs.conf\n  ${NAME} -encrypt-paths myfs.sock\n`,
  );
}

interface XrayArgs {
  flags: Set<BoolFlag>;
  fido2: string;
  positional: string[];
}

/** Go flag parsing; a number is the exit code to stop with (Go flag package: -h → 0, bad flag → 2). */
function parse(argv: readonly string[], io: XrayIo): XrayArgs | number {
  const a: XrayArgs = { flags: new Set(), fido2: '', positional: [] };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    if (arg.length < 2 || arg[0] !== '-') break;
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq >= 0 ? body.slice(0, eq) : body;
    const value = eq >= 0 ? body.slice(eq + 1) : undefined;
    if (name === 'h' || name === 'help') {
      usage(io);
      return 0;
    }
    if (name === 'fido2') {
      const v = value ?? argv[++i];
      if (v === undefined) {
        io.stderr.write('flag needs an argument: -fido2\n');
        usage(io);
        return 2;
      }
      a.fido2 = v;
      continue;
    }
    if (!(BOOL_FLAGS as readonly string[]).includes(name)) {
      io.stderr.write(`flag provided but not defined: -${name}\n`);
      usage(io);
      return 2;
    }
    const on = value === undefined ? true : ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value) ? true : ['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value) ? false : null;
    if (on === null) {
      io.stderr.write(`invalid boolean value ${JSON.stringify(value)} for -${name}: parse error\n`);
      usage(io);
      return 2;
    }
    if (on) a.flags.add(name as BoolFlag);
    else a.flags.delete(name as BoolFlag);
  }
  a.positional = argv.slice(i);
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
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
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
