/**
 * What a -reverse mount needs besides the key and format: where the config
 * is (shown as gocryptfs.conf unless -config moved it) and the exclusion
 * patterns. -exclude-from files are read here, in the process the user
 * started, so that an unreadable file fails the command (exit 29) instead
 * of the background mount.
 */
import { readFileSync } from 'node:fs';
import { bool, list } from './flags/command-line.js';
import type { CliContext } from './context.js';
import { CliError, EXIT } from './exit-codes.js';
import { describeError } from './output.js';

export interface ReverseSettings {
  configPath: string;
  configCustom: boolean;
  /** -exclude paths, -exclude-wildcard patterns, and the contents of the -exclude-from files. */
  exclude: string[];
  excludeWildcard: string[];
  excludeFromContents: string[];
  /** -one-file-system. */
  oneFileSystem: boolean;
}

export async function reverseSettings(ctx: CliContext): Promise<ReverseSettings> {
  const excludeFromContents = list(ctx.args, 'exclude-from').map((file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new CliError(EXIT.ExcludeError, `Error reading exclusion patterns: ${describeError(err)}`);
    }
  });
  return {
    configPath: ctx.configPath,
    configCustom: ctx.configCustom,
    exclude: list(ctx.args, 'exclude'),
    excludeWildcard: list(ctx.args, 'exclude-wildcard'),
    excludeFromContents,
    oneFileSystem: bool(ctx.args, 'one-file-system'),
  };
}
