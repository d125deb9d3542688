/**
 * -init CIPHERDIR: create gocryptfs.conf (mode 0400) and the root
 * gocryptfs.diriv (0444) in an empty directory, like `gocryptfs -init`:
 *
 *   CIPHERDIR missing / not a dir / not empty     6
 *   bad flag combination                          1
 *   -aegis, but AEGIS cannot run here             32
 *   password unreadable, empty, mismatch          9
 *   config cannot be written, bad -scryptn        24
 *   anything else after the password (diriv)      7
 *
 * On failure nothing is left behind. On success the master key is shown
 * once, but only when stdout is a terminal (never into a log file).
 */
import { promises as fsp } from 'node:fs';
import { isatty } from 'node:tty';
import { join, relative, isAbsolute } from 'node:path';
import { DEFAULT_LONGNAMEMAX } from '../config/index.js';
import type { CipherName } from '../crypto/index.js';
import { DIRIV_NAME } from '../names/index.js';
import { hasCode } from '../util/errors.js';
import { createConf, writeConfFile } from '../config/index.js';
import { formatFromInitOptions, Vault } from '../vault/index.js';
import { requireAegisIfUsed } from './aegis-check.js';
import { bool, num, type ParsedArgs } from './flags/command-line.js';
import type { CliContext } from './context.js';
import { cpuHasAes } from './cpu.js';
import { CliError, EXIT } from './exit-codes.js';
import { hasMasterKeyArg } from './masterkey.js';
import { describeError, PROGRAM_NAME, type Output } from './output.js';
import { readPasswordTwice, wipe } from './password.js';
import { packageVersion } from './version-line.js';
import { internalAccess } from '../vault/internal-access.js';

/** log2(N) from -scryptn: 0 or less means the default, as in gocryptfs. */
export function scryptLogN(args: ParsedArgs, exitCode: number): number {
  const n = num(args, 'scryptn');
  if (n <= 0) return 16;
  if (n < 10) throw new CliError(exitCode, 'scryptn below 10 is too low to make sense');
  if (n > 28) throw new CliError(exitCode, 'scryptn above 28 is too high (the limit is 28)');
  return n;
}

/** "Invalid cipherdir" unless `dir` is an existing, empty directory (exit 6). */
async function assertEmptyDir(dir: string): Promise<void> {
  let entries: string[];
  try {
    const st = await fsp.stat(dir);
    if (!st.isDirectory()) throw new CliError(EXIT.CipherDir, `Invalid cipherdir: ${dir} is not a directory`);
    entries = await fsp.readdir(dir);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(EXIT.CipherDir, `Invalid cipherdir: ${describeError(err)}`);
  }
  if (entries.length > 0) throw new CliError(EXIT.CipherDir, `Invalid cipherdir: directory ${dir} not empty`);
}

async function exists(path: string): Promise<boolean> {
  try {
    await fsp.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** gocryptfs's master key reminder: 8 groups of 8 hex digits on two lines. */
export function masterKeyReminder(key: Uint8Array, grey = '', reset = ''): string {
  const groups = Buffer.from(key).toString('hex').match(/.{8}/g)!;
  const chunked = `${groups.slice(0, 4).join('-')}-\n    ${groups.slice(4).join('-')}`;
  return (
    '\nYour master key is:\n\n' +
    `    ${grey}${chunked}${reset}\n\n` +
    'If the gocryptfs.conf file becomes corrupted or you ever forget your password,\n' +
    'there is only one hope for recovery: The master key. Print it to a piece of\n' +
    'paper and store it in a drawer. This message is only printed once.\n'
  );
}

function printMasterKey(key: Uint8Array, out: Output): void {
  if (out.quiet) return;
  if (!isatty(1)) {
    out.info('Not running on a terminal, suppressing master key display');
    return;
  }
  out.info(masterKeyReminder(key, out.colors.grey, out.colors.reset));
}

/** The path to show in "You can now mount it using: ...". */
function friendlyPath(cipherdir: string): string {
  let p = relative(process.cwd(), cipherdir) || '.';
  if (p.startsWith('../') || p === '..' || isAbsolute(p)) p = cipherdir;
  if (p.includes(' ')) p = `"${p}"`;
  return p;
}

function checkInitFlags(ctx: CliContext): { cipher: CipherName; logN: number } {
  const a = ctx.args;
  // -reverse implies -aessiv (deterministic nonces are only safe with SIV).
  const chosen = ['aessiv', 'xchacha', 'aegis'].filter((c) => bool(a, c) || (c === 'aessiv' && bool(a, 'reverse')));
  if (chosen.length > 1) {
    throw new CliError(EXIT.Usage, `The options ${chosen.map((c) => `-${c}`).join(' and ')} cannot be used at the same time`);
  }
  if (bool(a, 'xchacha') && !bool(a, 'hkdf')) {
    throw new CliError(EXIT.Usage, 'The option -xchacha needs -hkdf (XChaCha20-Poly1305 requires HKDF)');
  }
  if (bool(a, 'aegis') && !bool(a, 'hkdf')) {
    throw new CliError(EXIT.Usage, 'The option -aegis needs -hkdf (AEGIS-256X2 requires HKDF)');
  }
  if (hasMasterKeyArg(a)) {
    throw new CliError(EXIT.Usage, 'The options -masterkey and -zerokey cannot be used with -init (a new random master key is created)');
  }
  const cipher: CipherName = bool(a, 'xchacha') ? 'xchacha' : bool(a, 'aegis') ? 'aegis' : chosen.includes('aessiv') ? 'aes-siv' : 'aes-gcm';
  requireAegisIfUsed(cipher);
  return { cipher, logN: scryptLogN(a, EXIT.WriteConf) };
}

export async function runInit(ctx: CliContext): Promise<void> {
  const { args: a, out, cipherdir, configPath } = ctx;
  // Reverse mode: the directory holds the plaintext and need not be empty; only the config is new.
  const reverse = bool(a, 'reverse');
  if (!reverse) await assertEmptyDir(cipherdir);
  const { cipher, logN } = checkInitFlags(ctx);
  if ((reverse || ctx.configCustom) && (await exists(configPath))) {
    throw new CliError(EXIT.Init, `Config file ${JSON.stringify(configPath)} already exists`);
  }
  if (!reverse && cipher !== 'xchacha' && !cpuHasAes()) {
    out.info(
      `${out.colors.yellow}Notice: Your CPU does not have AES acceleration. Consider using -xchacha for better performance.${out.colors.reset}`,
    );
  }
  if (ctx.passwordSources.extpass.length === 0) out.info('Choose a password for protecting your files.');
  const password = await readPasswordTwice(ctx.passwordSources, out);

  const longNameMax = num(a, 'longnamemax') || DEFAULT_LONGNAMEMAX;
  const dirivPath = join(cipherdir, DIRIV_NAME);
  let masterKey: Uint8Array;
  const init = {
    password,
    cipher,
    plaintextNames: bool(a, 'plaintextnames'),
    deterministicNames: bool(a, 'deterministic-names'),
    longNameMax,
    raw64: bool(a, 'raw64'),
    hkdf: bool(a, 'hkdf'),
    scryptLogN: logN,
    configPath,
    creator: `${PROGRAM_NAME} ${packageVersion()}`,
    backend: ctx.backend,
  };
  try {
    if (reverse) {
      const created = await createConf({ format: formatFromInitOptions(init), password, scryptLogN: logN, creator: init.creator });
      await writeConfFile(configPath, created.conf);
      masterKey = created.masterKey;
    } else {
      const vault = await Vault.init(cipherdir, init);
      masterKey = internalAccess(vault).masterKey();
      await vault.close();
    }
  } catch (err) {
    const msg = (err as Error).message;
    // Someone filled the directory since our check: none of it is ours.
    if (hasCode(err, 'ENOTEMPTY')) throw new CliError(EXIT.CipherDir, `Invalid cipherdir: ${msg}`);
    // Leave nothing behind: the directory was empty (or, reverse, had no config) and the config did not exist.
    await fsp.rm(configPath, { force: true }).catch(() => undefined);
    if (!reverse) await fsp.rm(dirivPath, { force: true }).catch(() => undefined);
    if (hasCode(err, 'ECONFIGWRITE')) throw new CliError(EXIT.WriteConf, msg);
    throw new CliError(EXIT.Init, msg);
  } finally {
    wipe(password);
  }
  printMasterKey(masterKey, out);
  wipe(masterKey);

  const c = out.colors;
  out.info(`${c.green}The ${reverse ? 'gocryptfs-reverse' : 'gocryptfs'} filesystem has been created successfully.${c.reset}`);
  out.info(`${c.grey}You can now mount it using: ${PROGRAM_NAME}${reverse ? ' -reverse' : ''} ${friendlyPath(cipherdir)} MOUNTPOINT${c.reset}`);
}
