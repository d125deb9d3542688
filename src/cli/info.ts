/**
 * -info CIPHERDIR: the config's non-secret settings, in exactly the layout
 * of `gocryptfs -info` (labels padded to 19 columns), or with -json as one
 * document (Documentation/schemas/info.schema.json). Any problem loading
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

/** What -info -json prints: the same facts as the text, plus the format as tscryptfs reads it. */
export function infoJson(conf: ConfFile, configPath: string): object {
  const s = conf.ScryptObject;
  const f = confFormat(conf);
  return {
    configPath,
    creator: conf.Creator ?? '',
    version: conf.Version,
    featureFlags: conf.FeatureFlags,
    encryptedKeyLength: conf.EncryptedKey.length,
    scrypt: { saltLength: s.Salt.length, N: s.N, R: s.R, P: s.P, keyLen: s.KeyLen },
    contentEncryption: contentEncryptionName(f.cipher),
    format: {
      cipher: f.cipher,
      plaintextNames: f.plaintextNames,
      deterministicNames: !f.dirIV && !f.plaintextNames,
      raw64: f.raw64,
      hkdf: f.hkdf,
      longNameMax: f.longNameMax,
    },
  };
}

export async function runInfo(ctx: CliContext): Promise<void> {
  let conf: ConfFile;
  try {
    conf = await readConfFile(ctx.configPath);
  } catch (err) {
    throw new CliError(EXIT.LoadConf, `Loading config file failed: ${(err as Error).message}`);
  }
  if (ctx.out.json) ctx.out.printJson(infoJson(conf, ctx.configPath));
  else ctx.out.print(formatInfo(conf));
}
