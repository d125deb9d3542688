/**
 * tscryptfs command line: the same checks in the same order as gocryptfs's
 * main(), then one action per file:
 *
 *   -version, -hh, -speed     need no CIPHERDIR (version.ts, help.ts, speed.ts)
 *   -info                     info.ts
 *   -init                     init.ts
 *   -passwd                   passwd.ts
 *   -fsck                     fsck.ts
 *   CIPHERDIR MOUNTPOINT      mount.ts
 *
 * A new action is one more entry in ACTIONS plus its file.
 */
import { promises as fsp } from 'node:fs';
import { join, resolve } from 'node:path';
import { CONF_NAME } from '../config/conf-name.js';
import { REVERSE_CONF_NAME } from '../reverse/conf-name.js';
import type { BackendName } from '../crypto/index.js';
import { bool, list, parseArgs, prettyArgs, str, type ParsedArgs } from './flags/command-line.js';
import { FLAGS } from './flags/flag-table.js';
import { parseGoBool } from './flags/go-values.js';
import { compileGlob } from '../names/badname.js';
import type { Action, CliContext } from './context.js';
import { hasCode } from '../util/errors.js';
import { CliError, EXIT } from './exit-codes.js';
import { describeError, Output, PROGRAM_NAME } from './output.js';
import { scrubProcessArgv } from './redact.js';
import { switchWarnings } from '../util/switches.js';

/**
 * Operation flags; at most one may be given, and each takes exactly one
 * CIPHERDIR. Each action's module is loaded when it runs, so that -h or
 * -info does not load the mount, FUSE and native modules.
 */
const ACTIONS: ReadonlyArray<{ flag: string; load: () => Promise<Action> }> = [
  { flag: 'info', load: async () => (await import('./info.js')).runInfo },
  { flag: 'init', load: async () => (await import('./init.js')).runInit },
  { flag: 'passwd', load: async () => (await import('./passwd.js')).runPasswd },
  { flag: 'fsck', load: async () => (await import('./fsck.js')).runFsck },
];

/** The actions that can print their result as JSON (-json). */
const JSON_ACTIONS = ['info', 'fsck', 'speed', 'version'];

/** -openssl=auto|true|false → our backend (auto and true: node:crypto). */
function backendFromArgs(args: ParsedArgs): BackendName {
  const v = str(args, 'openssl');
  if (v === 'auto') return 'node';
  const b = parseGoBool(v);
  if (b === undefined) throw new CliError(EXIT.Usage, `Invalid "-openssl" setting: ${JSON.stringify(v)} is not true, false or auto`);
  return b ? 'node' : 'noble';
}

/** Option combinations gocryptfs refuses right after parsing (all exit 1). */
function checkCombinations(args: ParsedArgs): void {
  const extpass = list(args, 'extpass').length > 0;
  const passfile = list(args, 'passfile').length > 0;
  const masterkey = str(args, 'masterkey') !== '';
  if (extpass && passfile) throw new CliError(EXIT.Usage, 'The options -extpass and -passfile cannot be used at the same time');
  if (passfile && masterkey) throw new CliError(EXIT.Usage, 'The options -passfile and -masterkey cannot be used at the same time');
  if (extpass && masterkey) throw new CliError(EXIT.Usage, 'The options -extpass and -masterkey cannot be used at the same time');
  if (extpass && str(args, 'fido2') !== '') throw new CliError(EXIT.Usage, 'The options -extpass and -fido2 cannot be used at the same time');
  if (bool(args, 'json') && !JSON_ACTIONS.some((a) => bool(args, a))) {
    throw new CliError(EXIT.Usage, '-json only works with -info, -fsck, -speed or -version');
  }
  const idle = args.values.get('idle');
  if (typeof idle === 'number' && idle < 0) throw new CliError(EXIT.Usage, 'Idle timeout cannot be less than 0');
  const lnm = args.values.get('longnamemax');
  if (typeof lnm === 'number' && lnm > 0 && lnm < 62) {
    throw new CliError(EXIT.Usage, `-longnamemax: value ${lnm} is outside allowed range 62 ... 255`);
  }
  for (const pattern of list(args, 'badname')) {
    try {
      compileGlob(pattern);
    } catch (err) {
      throw new CliError(EXIT.Usage, (err as Error).message.replace(/^EINVAL: /, ''));
    }
  }
  const owner = str(args, 'force_owner');
  if (owner !== '') {
    const parts = owner.split(':');
    if (parts.length !== 2) throw new CliError(EXIT.Usage, 'force_owner must be in form UID:GID');
    for (const [i, p] of parts.entries()) {
      if (!/^\d+$/.test(p) || Number(p) > 0xffffffff) {
        throw new CliError(EXIT.Usage, `force_owner: Unable to parse ${i === 0 ? 'UID' : 'GID'} ${p} as positive integer`);
      }
    }
  }
}

/** Flags that parse but whose feature does not exist yet: fail clearly instead of pretending. */
function checkUnimplemented(args: ParsedArgs): void {
  if (!bool(args, 'reverse')) {
    // gocryptfs checks -exclude only; the other two would be silently ignored, which helps nobody.
    const given = ['exclude', 'exclude-wildcard', 'exclude-from'].find((f) => list(args, f).length > 0);
    if (given) throw new CliError(EXIT.ExcludeError, `-${given} only works in reverse mode`);
  }
  if (bool(args, 'reverse') && bool(args, 'fsck')) throw new CliError(EXIT.Usage, 'Running -fsck with -reverse is not supported');
  for (const spec of FLAGS) {
    if (spec.status !== 'unimplemented' || !args.given.has(spec.name)) continue;
    const v = args.values.get(spec.name);
    if (v === false || (Array.isArray(v) && v.length === 0)) continue; // e.g. -reverse=false
    throw new CliError(EXIT.Usage, `-${spec.name} is not implemented yet`);
  }
}

async function isDir(dir: string): Promise<void> {
  const st = await fsp.stat(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
}

/** Runs the CLI on argv (without node and script path); resolves to the exit code. */
export async function main(argv: readonly string[], out = new Output()): Promise<number> {
  try {
    await dispatch(argv, out);
    return EXIT.OK;
  } catch (err) {
    if (err instanceof CliError) {
      if (err.message !== '') out.fatal(err.message);
      return err.exitCode;
    }
    // Not expected: still one line, no stack trace unless -d.
    out.fatal((err as Error)?.message ?? String(err));
    if (out.debugEnabled && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    return EXIT.Other;
  }
}

async function dispatch(argv: readonly string[], out: Output): Promise<void> {
  const args = parseArgs(argv);
  out.json = bool(args, 'json');
  out.debugEnabled = bool(args, 'debug');
  out.debug(`cli args: ${prettyArgs(argv)}`);
  for (const line of switchWarnings()) out.warn(line);
  if (bool(args, 'help')) {
    (await import('./help.js')).helpShort(out);
    return;
  }
  const backend = backendFromArgs(args);
  checkCombinations(args);

  if (bool(args, 'version')) {
    const { printVersion, versionReport } = await import('./version.js');
    if (out.json) out.printJson(versionReport());
    else printVersion(out);
    return;
  }
  if (bool(args, 'hh')) {
    (await import('./help.js')).helpLong(out);
    return;
  }
  if (bool(args, 'speed')) {
    await (await import('./speed.js')).runSpeed(out);
    return;
  }
  const pos = args.positional;
  if (pos.length === 0) {
    if (args.given.size === 0) {
      (await import('./help.js')).helpShort(out); // a bare "tscryptfs"
      throw new CliError(EXIT.Usage, '');
    }
    throw new CliError(EXIT.Usage, 'CIPHERDIR argument is missing');
  }
  checkUnimplemented(args);

  const cipherdir = resolve(pos[0]!);
  try {
    await isDir(cipherdir);
  } catch (err) {
    throw new CliError(EXIT.CipherDir, `Invalid cipherdir: ${describeError(err)}`);
  }
  out.quiet = bool(args, 'quiet');
  out.wpanic = bool(args, 'wpanic');

  const configFlag = str(args, 'config');
  const configCustom = configFlag !== '';
  const configPath = configCustom ? resolve(configFlag) : join(cipherdir, bool(args, 'reverse') ? REVERSE_CONF_NAME : CONF_NAME);
  if (configCustom) out.info(`Using config file at custom location ${configPath}`);

  const ctx: CliContext = {
    args,
    out,
    cipherdir,
    configPath,
    configCustom,
    backend,
    passwordSources: { extpass: list(args, 'extpass'), passfile: list(args, 'passfile') },
  };

  const ops = ACTIONS.filter((a) => bool(args, a.flag));
  if (ops.length === 0) {
    if (pos.length !== 2) {
      out.info(`Wrong number of arguments (have ${pos.length}, want 2). You passed: ${prettyArgs(argv)}`);
      throw new CliError(EXIT.Usage, `Usage: ${PROGRAM_NAME} [OPTIONS] CIPHERDIR MOUNTPOINT [-o COMMA-SEPARATED-OPTIONS]`);
    }
    await (await import('./mount.js')).runMount(ctx);
    return;
  }
  if (ops.length > 1) throw new CliError(EXIT.Usage, 'At most one of -info, -init, -passwd, -fsck is allowed');
  if (pos.length !== 1) {
    throw new CliError(EXIT.Usage, `The options -info, -init, -passwd, -fsck take exactly one argument, ${pos.length} given`);
  }
  await (await ops[0]!.load())(ctx);
}

/** Entry point for bin/tscryptfs: sets the exit code, lets output drain. */
export function run(): void {
  // A reader that went away (`tscryptfs -hh | head -1`) is not an error worth a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (hasCode(err, 'EPIPE')) process.exit(process.exitCode ?? 0);
      throw err;
    });
  }
  const argv = process.argv.slice(2);
  scrubProcessArgv(argv);
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`${PROGRAM_NAME}: ${(err as Error)?.message ?? String(err)}\n`);
      process.exitCode = EXIT.Other;
    },
  );
}
