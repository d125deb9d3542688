/**
 * The "load the config, then get the master key" step shared by -passwd
 * and mounting (gocryptfs main.go loadConfig): the config must load and
 * validate first (11 / 27), then an AEGIS filesystem needs a runnable AEGIS
 * (32; not for -passwd, which never touches file content), then
 * -masterkey or the password (14 / 9), then the unwrap (12).
 */
import { confFormat, readConfFile, unlockConf, type ConfFile } from '../config/index.js';
import { hasCode } from '../util/errors.js';
import { requireAegisIfUsed } from './aegis-check.js';
import { bool } from './flags/command-line.js';
import type { CliContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { masterKeyFromArgs } from './masterkey.js';
import { readPasswordOnce, wipe } from './password.js';

/** Reads and validates the config file; exit codes as gocryptfs's mount / -passwd. */
export async function loadConfFile(path: string): Promise<ConfFile> {
  try {
    return await readConfFile(path);
  } catch (err) {
    const msg = `Cannot open config file: ${(err as Error).message}`;
    if (hasCode(err, 'ECONFIGINVALID')) throw new CliError(EXIT.DeprecatedFS, msg);
    if (hasCode(err, 'ECONFIGMISSING', 'ECONFIGPARSE')) throw new CliError(EXIT.Other, msg);
    throw err;
  }
}

export interface LoadedConfig {
  conf: ConfFile;
  masterKey: Buffer;
  /** True when the key came from -masterkey / -zerokey, not from the password. */
  keyFromArgs: boolean;
}

/** Config + master key. The caller must wipe `masterKey` when done. */
export async function loadConfig(ctx: CliContext): Promise<LoadedConfig> {
  const conf = await loadConfFile(ctx.configPath);
  if (!bool(ctx.args, 'passwd')) requireAegisIfUsed(confFormat(conf).cipher);
  const fromArgs = await masterKeyFromArgs(ctx.args, ctx.out);
  if (fromArgs) return { conf, masterKey: fromArgs, keyFromArgs: true };
  if (conf.FeatureFlags.includes('FIDO2')) {
    // -fido2 itself is rejected earlier as unsupported.
    throw new CliError(EXIT.Usage, 'Masterkey encrypted using FIDO2 token; tscryptfs does not support FIDO2 tokens (use -masterkey).');
  }
  const pw = await readPasswordOnce(ctx.passwordSources, ctx.out);
  ctx.out.info('Decrypting master key');
  try {
    const mk = await unlockConf(conf, pw);
    return { conf, masterKey: Buffer.from(mk), keyFromArgs: false };
  } catch (err) {
    if (hasCode(err, 'EPASSWORD')) throw new CliError(EXIT.PasswordIncorrect, 'Password incorrect.');
    // A malformed EncryptedKey fails the unwrap in gocryptfs too (exit 12).
    if (hasCode(err, 'ECONFIGPARSE')) throw new CliError(EXIT.PasswordIncorrect, `Cannot decrypt the master key: ${(err as Error).message}`);
    if (hasCode(err, 'ECONFIGINVALID')) throw new CliError(EXIT.ScryptParams, (err as Error).message);
    throw err;
  } finally {
    wipe(pw);
  }
}

