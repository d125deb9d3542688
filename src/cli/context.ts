/**
 * What every action gets from main.ts: the parsed flags, the output, and
 * the resolved paths. An action is `(ctx) => Promise<void>`; it reports
 * failure by throwing CliError.
 */
import type { BackendName } from '../crypto/index.js';
import type { ParsedArgs } from './flags/command-line.js';
import type { Output } from './output.js';
import type { PasswordSources } from './password.js';

export interface CliContext {
  args: ParsedArgs;
  out: Output;
  /** Absolute CIPHERDIR. */
  cipherdir: string;
  /** Absolute config file path (-config, or CIPHERDIR/gocryptfs.conf). */
  configPath: string;
  /** True when -config was given. */
  configCustom: boolean;
  /** Crypto backend chosen by -openssl (auto = node). */
  backend: BackendName;
  passwordSources: PasswordSources;
}

export type Action = (ctx: CliContext) => Promise<void>;
