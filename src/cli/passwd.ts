/**
 * -passwd CIPHERDIR: re-wrap the master key under a new password, keeping
 * every feature flag (and scrypt N unless -scryptn is given). The password
 * questions are those of gocryptfs 2.3:
 *
 *   1. the old password ("Password"), read once from the usual source;
 *      skipped with -masterkey / -zerokey;
 *   2. "Please enter your new password.", read like a new password
 *      (twice on a terminal).
 *
 * Both come from the same source: -extpass runs the program twice,
 * -passfile reads the same file twice (so the password stays the same
 * unless the program's output changes), stdin gives one line each.
 *
 * With -masterkey the old config is first hard-linked to
 * gocryptfs.conf.bak. The config is replaced atomically, so a failure
 * leaves the old one untouched.
 */
import { promises as fsp } from 'node:fs';
import { rewrapConf, writeConfFile, type ConfFile } from '../config/index.js';
import { hasCode } from '../util/errors.js';
import type { CliContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { scryptLogN } from './init.js';
import { loadConfig } from './load-config.js';
import { describeError } from './output.js';
import { readPasswordTwice, wipe } from './password.js';

export async function runPasswd(ctx: CliContext): Promise<void> {
  const { out } = ctx;
  const c = out.colors;
  // gocryptfs fails on a bad -scryptn only after both passwords (exit 13); we check first.
  const logN = ctx.args.given.has('scryptn') ? scryptLogN(ctx.args, EXIT.ScryptParams) : undefined;
  const { conf, masterKey, keyFromArgs } = await loadConfig(ctx);
  let newConf: ConfFile;
  try {
    if (conf.FeatureFlags.includes('FIDO2')) {
      throw new CliError(EXIT.Usage, 'Password change is not supported on FIDO2-enabled filesystems.');
    }
    out.info('Please enter your new password.');
    const newPw = await readPasswordTwice(ctx.passwordSources, out);
    try {
      newConf = await rewrapConf(conf, masterKey, newPw, logN);
    } catch (err) {
      if (hasCode(err, 'ECONFIGINVALID')) throw new CliError(EXIT.ScryptParams, (err as Error).message);
      throw err;
    } finally {
      wipe(newPw);
    }
  } finally {
    wipe(masterKey);
  }

  let backup: string | null = null;
  if (keyFromArgs) {
    // Resetting a forgotten password: keep the old config until the user has checked the new one.
    backup = `${ctx.configPath}.bak`;
    try {
      await fsp.link(ctx.configPath, backup);
    } catch (err) {
      throw new CliError(EXIT.Init, `Could not create backup file: ${describeError(err)}`);
    }
    out.info(
      `${c.grey}A copy of the old config file has been created at ${JSON.stringify(backup)}.\n` +
        `Delete it after you have verified that you can access your files with the new password.${c.reset}`,
    );
  }
  try {
    await writeConfFile(ctx.configPath, newConf);
  } catch (err) {
    if (backup) await fsp.unlink(backup).catch(() => undefined);
    throw new CliError(EXIT.WriteConf, (err as Error).message);
  }
  out.info(`${c.green}Password changed.${c.reset}`);
}
