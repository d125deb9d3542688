/**
 * -masterkey HEX, -masterkey=stdin and -zerokey (Documentation/format.md §4.3): a master
 * key from the command line instead of the config file's password.
 */
import { bool, str, type ParsedArgs } from './flags/command-line.js';
import { CliError, EXIT } from './exit-codes.js';
import type { Output } from './output.js';
import { readPasswordOnce, wipe } from './password.js';

export const MASTER_KEY_LEN = 32;

/** Hex (dashes ignored) → 32 bytes; anything else is exit code 14. */
export function unhexMasterKey(text: string): Buffer {
  const hex = text.replace(/-/g, '');
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) {
    const bad = /[^0-9a-fA-F]/.exec(hex);
    const why = bad ? `invalid character ${JSON.stringify(bad[0])}` : 'odd number of hex digits';
    throw new CliError(EXIT.MasterKey, `Could not parse master key: ${why}`);
  }
  const key = Buffer.from(hex, 'hex');
  if (key.length !== MASTER_KEY_LEN) {
    wipe(key);
    throw new CliError(EXIT.MasterKey, `Master key has length ${key.length} but we require length ${MASTER_KEY_LEN}`);
  }
  return key;
}

/** True when -masterkey or -zerokey was given. */
export function hasMasterKeyArg(args: ParsedArgs): boolean {
  return str(args, 'masterkey') !== '' || bool(args, 'zerokey');
}

/**
 * The key from -masterkey / -zerokey, or null when neither was given
 * (then the caller unlocks the config file with a password).
 */
export async function masterKeyFromArgs(args: ParsedArgs, out: Output): Promise<Buffer | null> {
  const mk = str(args, 'masterkey');
  const c = out.colors;
  if (mk === 'stdin') {
    const text = await readPasswordOnce({ extpass: [], passfile: [] }, out, 'Masterkey');
    try {
      const key = unhexMasterKey(text.toString('latin1').trim());
      out.info('Using explicit master key.');
      return key;
    } finally {
      wipe(text);
    }
  }
  if (mk !== '') {
    const key = unhexMasterKey(mk);
    out.info('Using explicit master key.');
    out.info(
      `${c.yellow}THE MASTER KEY IS VISIBLE VIA "ps ax" AND MAY BE STORED IN YOUR SHELL HISTORY!\n` +
        `ONLY USE THIS MODE FOR EMERGENCIES${c.reset}`,
    );
    return key;
  }
  if (bool(args, 'zerokey')) {
    out.info('Using all-zero dummy master key.');
    out.info(`${c.yellow}ZEROKEY MODE PROVIDES NO SECURITY AT ALL AND SHOULD ONLY BE USED FOR TESTING.${c.reset}`);
    return Buffer.alloc(MASTER_KEY_LEN);
  }
  return null;
}
