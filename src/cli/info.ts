/**
 * -info CIPHERDIR: the config's non-secret settings, in exactly the layout
 * of `gocryptfs -info` (labels padded to 19 columns). Any problem loading
 * the config is exit code 8.
 */
import { confFormat, contentEncryptionName, readConfFile, type ConfFile } from '../config/index.js';
import type { CliContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';

export function formatInfo(conf: ConfFile): string {
  const s = conf.ScryptObject;
  const algo = contentEncryptionName(confFormat(conf).cipher);
  return (
    `Creator:           ${conf.Creator ?? ''}\n` +
    `FeatureFlags:      ${conf.FeatureFlags.join(' ')}\n` +
    `EncryptedKey:      ${conf.EncryptedKey.length}B\n` +
    `ScryptObject:      Salt=${s.Salt.length}B N=${s.N} R=${s.R} P=${s.P} KeyLen=${s.KeyLen}\n` +
    `contentEncryption: ${algo}\n`
  );
}

export async function runInfo(ctx: CliContext): Promise<void> {
  let conf: ConfFile;
  try {
    conf = await readConfFile(ctx.configPath);
  } catch (err) {
    throw new CliError(EXIT.LoadConf, `Loading config file failed: ${(err as Error).message}`);
  }
  ctx.out.print(formatInfo(conf));
}
