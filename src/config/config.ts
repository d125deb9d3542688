/**
 * The config operations the CLI and the Vault need: create (for -init),
 * unlock (password → master key), and change the password (-passwd).
 */
import { randomBytes } from '../crypto/random.js';
import { type ConfFile, CONF_VERSION } from './conf-file.js';
import { formatFromFlags, flagsFromFormat, type FormatOptions } from './format.js';
import { deriveKek, newScryptParams, SCRYPT_LOGN_DEFAULT } from './scrypt.js';
import { wrapMasterKey, unwrapMasterKey, MASTER_KEY_LEN } from './master-key.js';
import { configError } from '../util/errors.js';

export interface CreateConfOptions {
  format: FormatOptions;
  password: Uint8Array;
  /** log2 of scrypt N, 10..28 (default 16). */
  scryptLogN?: number;
  creator?: string;
  /** Use this master key instead of a random one (tests, -masterkey re-init). */
  masterKey?: Uint8Array;
}

/** A new config and its master key, as -init makes them. Nothing is written. */
export async function createConf(opts: CreateConfOptions): Promise<{ conf: ConfFile; masterKey: Uint8Array }> {
  if (opts.password.length === 0) throw configError('ECONFIGINVALID', 'the password is empty');
  const masterKey = opts.masterKey ?? randomBytes(MASTER_KEY_LEN);
  const scrypt = newScryptParams(opts.scryptLogN ?? SCRYPT_LOGN_DEFAULT, randomBytes(32));
  const kek = await deriveKek(opts.password, scrypt);
  const conf: ConfFile = {
    Creator: opts.creator ?? 'tscryptfs',
    EncryptedKey: wrapMasterKey(masterKey, kek, opts.format.hkdf),
    ScryptObject: scrypt,
    Version: CONF_VERSION,
    FeatureFlags: flagsFromFormat(opts.format),
    LongNameMax: opts.format.longNameMax === 255 ? 0 : opts.format.longNameMax,
  };
  return { conf, masterKey };
}

/** The format settings stored in a config. */
export function confFormat(conf: ConfFile): FormatOptions {
  return formatFromFlags(conf.FeatureFlags, conf.LongNameMax);
}

/** Password → master key. Throws EPASSWORD on a wrong password. */
export async function unlockConf(conf: ConfFile, password: Uint8Array): Promise<Uint8Array> {
  if (conf.FeatureFlags.includes('FIDO2')) {
    throw configError('ECONFIGINVALID', 'this filesystem is protected by a FIDO2 token, which tscryptfs does not support');
  }
  const kek = await deriveKek(password, conf.ScryptObject);
  return unwrapMasterKey(conf.EncryptedKey, kek, conf.FeatureFlags.includes('HKDF'));
}

/**
 * The same master key under a new password (new salt and nonce), keeping
 * every flag and N unless a new log2(N) is given (Documentation/format.md §4.2).
 */
export async function rewrapConf(
  conf: ConfFile,
  masterKey: Uint8Array,
  newPassword: Uint8Array,
  scryptLogN?: number,
): Promise<ConfFile> {
  if (newPassword.length === 0) throw configError('ECONFIGINVALID', 'the new password is empty');
  const logN = scryptLogN ?? Math.log2(conf.ScryptObject.N);
  const scrypt = newScryptParams(logN, randomBytes(32));
  const kek = await deriveKek(newPassword, scrypt);
  return {
    ...conf,
    EncryptedKey: wrapMasterKey(masterKey, kek, conf.FeatureFlags.includes('HKDF')),
    ScryptObject: scrypt,
  };
}
