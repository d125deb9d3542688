/**
 * The password-to-key step: scrypt with gocryptfs's parameter limits
 * (Documentation/format.md §4.1; gocryptfs internal/configfile/scrypt.go).
 */
import { pbkdf2, scrypt as nodeScrypt } from 'node:crypto';
import { promisify } from 'node:util';
import { batchBinding } from '../crypto/native-batch.js';
import { configError } from '../util/errors.js';

export interface ScryptParams {
  Salt: Uint8Array;
  /** The cost itself (a power of two), not its log2. */
  N: number;
  R: number;
  P: number;
  KeyLen: number;
}

/** `-scryptn` accepts log2(N) in this range; 16 is the default. */
export const SCRYPT_LOGN_MIN = 10;
export const SCRYPT_LOGN_MAX = 28;
export const SCRYPT_LOGN_DEFAULT = 16;
const MIN_SALT_LEN = 32;
const KEY_LEN = 32;

/** Fresh parameters as `-init` writes them. */
export function newScryptParams(logN: number, salt: Uint8Array): ScryptParams {
  if (!Number.isInteger(logN) || logN < SCRYPT_LOGN_MIN || logN > SCRYPT_LOGN_MAX) {
    throw configError('ECONFIGINVALID', `scryptn must be between ${SCRYPT_LOGN_MIN} and ${SCRYPT_LOGN_MAX}, got ${logN}`);
  }
  return { Salt: salt, N: 2 ** logN, R: 8, P: 1, KeyLen: KEY_LEN };
}

/** Rejects what gocryptfs rejects on load (weak or nonsensical parameters). */
export function validateScryptParams(p: ScryptParams): void {
  const log2 = Math.log2(p.N);
  if (!Number.isInteger(log2) || log2 < SCRYPT_LOGN_MIN || log2 > SCRYPT_LOGN_MAX) {
    throw configError('ECONFIGINVALID', `scrypt N=${p.N} is not a power of two in 2^${SCRYPT_LOGN_MIN}..2^${SCRYPT_LOGN_MAX}`);
  }
  if (p.R < 8) throw configError('ECONFIGINVALID', `scrypt R=${p.R} is below the minimum 8`);
  if (p.P < 1) throw configError('ECONFIGINVALID', `scrypt P=${p.P} is below the minimum 1`);
  if (p.Salt.length < MIN_SALT_LEN) {
    throw configError('ECONFIGINVALID', `scrypt salt is ${p.Salt.length} bytes, minimum is ${MIN_SALT_LEN}`);
  }
  if (p.KeyLen !== KEY_LEN) throw configError('ECONFIGINVALID', `scrypt KeyLen=${p.KeyLen} is not ${KEY_LEN}`);
  if (p.R * p.P >= 2 ** 30) throw configError('ECONFIGINVALID', 'scrypt R*P is too large');
}

/**
 * Derives the key-encryption key, off the event loop. Every backend uses
 * it: gocryptfs's -openssl chooses the content cipher's implementation
 * only.
 */
export async function deriveKek(password: Uint8Array, p: ScryptParams): Promise<Uint8Array> {
  validateScryptParams(p);
  try {
    return await scryptKey(password, p.Salt, p.N, p.R, p.P, p.KeyLen);
  } catch (err) {
    throw configError('ECONFIGINVALID', `scrypt failed: ${(err as Error).message}`, err);
  }
}

const pbkdf2Async = promisify(pbkdf2);

/**
 * scrypt (RFC 7914 §6): with the native batch addon, PBKDF2-HMAC-SHA256 from
 * node:crypto around the addon's SMix (native/crypto/scrypt_smix.c), which
 * takes about half of OpenSSL's time for N=2^16; without it (or with
 * TSCRYPTFS_NATIVE_BATCH=0), node:crypto's scrypt. Both give the same bytes
 * (test/unit/scrypt-native.test.ts).
 */
export async function scryptKey(password: Uint8Array, salt: Uint8Array, N: number, r: number, p: number, keyLen: number): Promise<Uint8Array> {
  const smix = batchBinding()?.scryptSmix;
  if (!smix) {
    // Node's default maxmem (32 MiB) is below what N=2^16 needs.
    const maxmem = 128 * N * r * 2 + 1024 * 1024;
    return new Promise((resolve, reject) => nodeScrypt(password, salt, keyLen, { N, r, p, maxmem }, (err, key) => (err ? reject(err) : resolve(key))));
  }
  const b = await pbkdf2Async(password, salt, 1, 128 * r * p, 'sha256');
  const mixed = await smix(b, N, r);
  b.fill(0);
  const key = await pbkdf2Async(password, mixed, 1, keyLen, 'sha256');
  mixed.fill(0);
  return key;
}
