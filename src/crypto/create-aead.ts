/**
 * The one entry point the rest of tscryptfs uses to get a content cipher.
 * Each cipher's implementation is imported when it is first asked for, so
 * that a process loads only the cipher it uses (a mount's start-up pays
 * for every module it loads).
 */
import type { Aead, BackendName, CipherName } from './aead.js';
import { requireBackend } from './aead-checks.js';
import { invalidArgument } from './errors.js';

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
 * Rejects with code EINVAL for a wrong key length, nonce size, cipher or
 * backend, and ENOTSUP for AEGIS when no AEGIS implementation may run here
 * (TSCRYPTFS_AEGIS, see aegis/mode.ts).
 */
export async function createAead(cipher: CipherName, key: Uint8Array, options: CreateAeadOptions = {}): Promise<Aead> {
  const backend = requireBackend(options.backend ?? 'node');
  const { nonceSize } = options;
  const fixedNonce = (size: number): void => {
    if (nonceSize !== undefined && nonceSize !== size) {
      throw invalidArgument(`${cipher} uses ${size}-byte nonces, not ${nonceSize}`);
    }
  };
  switch (cipher) {
    case 'aes-gcm':
      return (await import('./aes-gcm.js')).createAesGcm(key, backend, nonceSize ?? 16);
    case 'aes-siv': {
      const { AesSivAead, AES_SIV_NONCE_SIZE } = await import('./aes-siv.js');
      fixedNonce(AES_SIV_NONCE_SIZE);
      return new AesSivAead(key, backend);
    }
    case 'xchacha': {
      const { createXChaCha20Poly1305, XCHACHA_NONCE_SIZE } = await import('./xchacha.js');
      fixedNonce(XCHACHA_NONCE_SIZE);
      return createXChaCha20Poly1305(key, backend);
    }
    case 'aegis': {
      fixedNonce(AEGIS_NONCE_SIZE);
      const { Aegis256X2Aead } = await import('./aegis/aegis-aead.js');
      return new Aegis256X2Aead(key, backend === 'noble' ? 'ts' : undefined);
    }
    default:
      throw invalidArgument(`unknown cipher ${String(cipher)}`);
  }
}
