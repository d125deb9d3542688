/**
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha-03 §2.3; libsodium's
 * `crypto_aead_xchacha20poly1305_ietf`) content encryption
 * (Documentation/format.md §5.5):
 * 32-byte key, 24-byte nonce, sealed = ct || tag(16).
 */
import { nodeAeadOpen, nodeAeadSeal } from './node-aead.js';
import { BATCH_XCHACHA, nativeBatchCalls } from './native-batch.js';
import { nobleChaCha } from './noble.js';
import { authError, type Aead, type BackendName } from './aead.js';
import { CheckedAead, requireBackend } from './aead-checks.js';
import { requireLength } from './errors.js';
import { hchacha20 } from './hchacha20.js';

export const XCHACHA_KEY_SIZE = 32;
export const XCHACHA_NONCE_SIZE = 24;

abstract class XChaChaBase extends CheckedAead {
  protected readonly label = 'XChaCha20-Poly1305';
  readonly cipher = 'xchacha' as const;
  readonly nonceSize = XCHACHA_NONCE_SIZE;
  protected readonly key: Uint8Array;

  constructor(key: Uint8Array) {
    super();
    requireLength(key, XCHACHA_KEY_SIZE, 'XChaCha20-Poly1305 key');
    this.key = Uint8Array.from(key);
  }

}

/**
 * Built from parts like gocryptfs's OpenSSL backend (draft §2.3.1):
 * subkey = HChaCha20(key, nonce[0:16]), then RFC 8439 ChaCha20-Poly1305
 * with the 12-byte nonce 00000000 || nonce[16:24].
 */
export class NodeXChaCha20Poly1305 extends XChaChaBase {
  readonly backend = 'node' as const;
  /** Runs of content blocks through the batched addon when it was built (same bytes). */
  readonly sealBlocks?: Aead['sealBlocks'];
  readonly openBlocks?: Aead['openBlocks'];

  constructor(key: Uint8Array) {
    super(key);
    const batch = nativeBatchCalls(BATCH_XCHACHA, key, XCHACHA_NONCE_SIZE);
    if (batch) {
      this.sealBlocks = batch.sealBlocks;
      this.openBlocks = batch.openBlocks;
    }
  }

  #subkeyAndNonce(nonce: Uint8Array): [Uint8Array, Uint8Array] {
    const subkey = hchacha20(this.key, nonce.subarray(0, 16));
    const n12 = new Uint8Array(12);
    n12.set(nonce.subarray(16, 24), 4);
    return [subkey, n12];
  }

  protected sealChecked(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    const [subkey, n12] = this.#subkeyAndNonce(nonce);
    try {
      return nodeAeadSeal('chacha20-poly1305', subkey, n12, plaintext, aad);
    } finally {
      subkey.fill(0);
    }
  }

  protected openChecked(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    const [subkey, n12] = this.#subkeyAndNonce(nonce);
    try {
      return nodeAeadOpen('chacha20-poly1305', subkey, n12, sealed, aad);
    } finally {
      subkey.fill(0);
    }
  }
}

/** @noble/ciphers `xchacha20poly1305` (no per-key state to keep for ChaCha). */
export class NobleXChaCha20Poly1305 extends XChaChaBase {
  readonly backend = 'noble' as const;

  protected sealChecked(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    return nobleChaCha().xchacha20poly1305(this.key, nonce, aad).encrypt(plaintext);
  }

  protected openChecked(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    try {
      return nobleChaCha().xchacha20poly1305(this.key, nonce, aad).decrypt(sealed);
    } catch {
      throw authError();
    }
  }
}

export function createXChaCha20Poly1305(key: Uint8Array, backend: BackendName = 'node'): Aead {
  return requireBackend(backend) === 'node' ? new NodeXChaCha20Poly1305(key) : new NobleXChaCha20Poly1305(key);
}
