/** The one entry point the rest of tscryptfs uses to get a content cipher. */
import type { Aead, BackendName, CipherName } from './aead.js';
import { requireBackend } from './aead-checks.js';
import { createAesGcm } from './aes-gcm.js';
import { AesSivAead, AES_SIV_KEY_SIZE, AES_SIV_NONCE_SIZE } from './aes-siv.js';
import { Aegis256X2Aead } from './aegis/index.js';
import { invalidArgument } from './errors.js';
import { createXChaCha20Poly1305, XCHACHA_KEY_SIZE, XCHACHA_NONCE_SIZE } from './xchacha.js';

/** AEGIS-256X2 key and nonce sizes (Documentation/format.md §5.2, §5.6). */
export const AEGIS_KEY_SIZE = 32;
export const AEGIS_NONCE_SIZE = 32;

export interface CreateAeadOptions {
  /**
   * Which implementation to use; default 'node'. For AEGIS, 'node' means the
   * native addon when it is available (else the TypeScript one) and 'noble'
   * the TypeScript one.
   */
  backend?: BackendName;
  /**
   * Nonce length. Only AES-GCM has a choice: 16 (default, GCMIV128) or 12
   * (config files written before the HKDF flag). For the other ciphers it
   * may be omitted or must equal their fixed size (16 SIV, 24 XChaCha, 32 AEGIS).
   */
  nonceSize?: number;
}

/**
 * Returns the AEAD for `cipher` keyed with `key` (32 bytes; 64 for AES-SIV).
 * Throws code EINVAL for a wrong key length, nonce size, cipher or backend,
 * and ENOTSUP for AEGIS when no AEGIS implementation may run here
 * (TSCRYPTFS_AEGIS, see aegis/mode.ts).
 */
export function createAead(cipher: CipherName, key: Uint8Array, options: CreateAeadOptions = {}): Aead {
  const backend = requireBackend(options.backend ?? 'node');
  const { nonceSize } = options;
  const fixedNonce = (size: number): void => {
    if (nonceSize !== undefined && nonceSize !== size) {
      throw invalidArgument(`${cipher} uses ${size}-byte nonces, not ${nonceSize}`);
    }
  };
  switch (cipher) {
    case 'aes-gcm':
      return createAesGcm(key, backend, nonceSize ?? 16);
    case 'aes-siv':
      fixedNonce(AES_SIV_NONCE_SIZE);
      return new AesSivAead(key, backend);
    case 'xchacha':
      fixedNonce(XCHACHA_NONCE_SIZE);
      return createXChaCha20Poly1305(key, backend);
    case 'aegis':
      fixedNonce(AEGIS_NONCE_SIZE);
      return new Aegis256X2Aead(key, backend === 'noble' ? 'ts' : undefined);
    default:
      throw invalidArgument(`unknown cipher ${String(cipher)}`);
  }
}

/** Key length `createAead` expects for `cipher`. */
export function aeadKeySize(cipher: CipherName): number {
  switch (cipher) {
    case 'aes-gcm':
      return 32;
    case 'aes-siv':
      return AES_SIV_KEY_SIZE;
    case 'xchacha':
      return XCHACHA_KEY_SIZE;
    case 'aegis':
      return AEGIS_KEY_SIZE;
    default:
      throw invalidArgument(`unknown cipher ${String(cipher)}`);
  }
}
