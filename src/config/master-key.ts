/**
 * Wrapping the 32-byte master key into `EncryptedKey` (Documentation/format.md §4.2):
 * one AES-256-GCM message, AAD = BE64(0), keyed by the scrypt output
 * (through HKDF when the HKDF flag is set), with a 128-bit nonce under
 * HKDF and a 96-bit nonce in legacy configs.
 */
// The modules themselves, not the crypto barrel: unlocking a config needs
// AES-GCM and HKDF only, and the other ciphers cost every command that reads
// a config their loading (Documentation/performance.md, "Start-up").
import { createAesGcm } from '../crypto/aes-gcm.js';
import { hkdfSha256, HKDF_INFO } from '../crypto/hkdf.js';
import { randomBytes } from '../crypto/random.js';
import { configError, hasCode } from '../util/errors.js';

export const MASTER_KEY_LEN = 32;
const AAD = new Uint8Array(8); // BE64(0)

function wrapKey(kek: Uint8Array, hkdf: boolean): { key: Uint8Array; nonceSize: number } {
  return hkdf ? { key: hkdfSha256(kek, HKDF_INFO.gcm, 32), nonceSize: 16 } : { key: kek, nonceSize: 12 };
}

export function wrapMasterKey(masterKey: Uint8Array, kek: Uint8Array, hkdf: boolean): Uint8Array {
  const { key, nonceSize } = wrapKey(kek, hkdf);
  const nonce = randomBytes(nonceSize);
  const sealed = createAesGcm(key, 'node', nonceSize).seal(nonce, masterKey, AAD);
  return Buffer.concat([nonce, sealed]);
}

/** Throws EPASSWORD when the tag does not verify (a wrong password). */
export function unwrapMasterKey(encryptedKey: Uint8Array, kek: Uint8Array, hkdf: boolean): Uint8Array {
  const { key, nonceSize } = wrapKey(kek, hkdf);
  if (encryptedKey.length !== nonceSize + MASTER_KEY_LEN + 16) {
    throw configError('ECONFIGPARSE', `EncryptedKey is ${encryptedKey.length} bytes, expected ${nonceSize + MASTER_KEY_LEN + 16}`);
  }
  const nonce = encryptedKey.subarray(0, nonceSize);
  try {
    return createAesGcm(key, 'node', nonceSize).open(nonce, encryptedKey.subarray(nonceSize), AAD);
  } catch (err) {
    if (hasCode(err, 'EAUTH')) throw configError('EPASSWORD', 'Password incorrect.');
    throw err;
  }
}

/**
 * Parses a master key as given to `-masterkey`: 64 hex digits, dashes
 * (gocryptfs prints 8 groups of 8) and whitespace ignored.
 */
export function parseMasterKeyHex(text: string): Uint8Array {
  const hex = text.replace(/[-\s]/g, '');
  if (!/^[0-9a-fA-F]*$/.test(hex) || hex.length !== MASTER_KEY_LEN * 2) {
    throw configError('EMASTERKEY', `master key must be ${MASTER_KEY_LEN} bytes as hex (64 digits), got ${hex.length} digits`);
  }
  return Buffer.from(hex, 'hex');
}

/** The form gocryptfs shows on -init: 8 groups of 8 hex digits joined by dashes. */
export function formatMasterKey(key: Uint8Array): string {
  const hex = Buffer.from(key).toString('hex');
  return hex.match(/.{8}/g)!.join('-');
}
