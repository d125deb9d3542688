/**
 * AES-SIV-512 content encryption as gocryptfs uses it (Documentation/format.md §5.4):
 * a 64-byte key (K1 = key[0:32] for S2V, K2 = key[32:64] for CTR), 16-byte
 * nonce passed as the last associated-data item (RFC 5297 §3 nonce-based
 * use) after the block AAD, sealed output = V(16) || ciphertext.
 * Both backends run the same RFC 5297 code over their own AES primitives.
 */
import type { Aead, BackendName } from './aead.js';
import { requireBackend, requireBytes, requireNonce, TAG_SIZE } from './aead-checks.js';
import { requireLength } from './errors.js';
import { Siv } from './siv.js';

export const AES_SIV_KEY_SIZE = 64;
export const AES_SIV_NONCE_SIZE = 16;

export class AesSivAead implements Aead {
  readonly cipher = 'aes-siv' as const;
  readonly backend: BackendName;
  readonly nonceSize = AES_SIV_NONCE_SIZE;
  readonly tagSize = TAG_SIZE;
  readonly #siv: Siv;

  constructor(key: Uint8Array, backend: BackendName = 'node') {
    requireLength(key, AES_SIV_KEY_SIZE, 'AES-SIV-512 key');
    this.backend = requireBackend(backend);
    this.#siv = new Siv(key, backend);
  }

  seal(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    requireNonce(nonce, this.nonceSize, 'AES-SIV');
    requireBytes(plaintext, 'plaintext');
    requireBytes(aad, 'aad');
    return this.#siv.seal([aad, nonce], plaintext);
  }

  open(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    requireNonce(nonce, this.nonceSize, 'AES-SIV');
    requireBytes(sealed, 'sealed data');
    requireBytes(aad, 'aad');
    return this.#siv.open([aad, nonce], sealed);
  }
}
