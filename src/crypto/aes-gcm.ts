/**
 * AES-256-GCM (NIST SP 800-38D) content encryption (Documentation/format.md
 * §5.3): 16-byte nonces (GCMIV128; J0 then comes from GHASH, SP 800-38D §7.1
 * step 2) or the 12-byte nonces of the legacy config key wrap (format.md
 * §4.2). Sealed = ct || tag(16).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { nodeAeadOpen, nodeAeadSeal } from './node-aead.js';
import { nobleAes } from './noble.js';
import { authError, type Aead, type BackendName } from './aead.js';
import { CheckedAead, requireBackend } from './aead-checks.js';
import { BATCH_GCM, nativeBatchCalls } from './native-batch.js';
import { invalidArgument, requireLength } from './errors.js';

export const AES_GCM_KEY_SIZE = 32;
/** Nonce sizes gocryptfs uses: 16 (content, HKDF config) and 12 (pre-HKDF config). */
export const AES_GCM_NONCE_SIZES = [16, 12] as const;

abstract class AesGcmBase extends CheckedAead {
  protected readonly label = 'AES-GCM';
  readonly cipher = 'aes-gcm' as const;
  readonly nonceSize: number;

  constructor(key: Uint8Array, nonceSize: number) {
    super();
    requireLength(key, AES_GCM_KEY_SIZE, 'AES-256-GCM key');
    if (!(AES_GCM_NONCE_SIZES as readonly number[]).includes(nonceSize)) {
      throw invalidArgument(`AES-GCM nonce size must be 16 or 12, got ${nonceSize}`);
    }
    this.nonceSize = nonceSize;
  }
}

/**
 * OpenSSL's GCM through node:crypto; runs of content blocks go through the
 * batched addon (./native-batch.ts) when it was built, with the same bytes.
 */
export class NodeAesGcm extends AesGcmBase {
  readonly backend = 'node' as const;
  readonly #key: KeyObject;
  readonly sealBlocks?: Aead['sealBlocks'];
  readonly openBlocks?: Aead['openBlocks'];

  constructor(key: Uint8Array, nonceSize = 16) {
    super(key, nonceSize);
    this.#key = createSecretKey(key);
    const batch = nonceSize === 16 ? nativeBatchCalls(BATCH_GCM, key, nonceSize) : undefined;
    if (batch) {
      this.sealBlocks = batch.sealBlocks;
      this.openBlocks = batch.openBlocks;
    }
  }

  protected sealChecked(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    return nodeAeadSeal('aes-256-gcm', this.#key, nonce, plaintext, aad);
  }

  protected openChecked(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    return nodeAeadOpen('aes-256-gcm', this.#key, nonce, sealed, aad);
  }
}

/**
 * @noble/ciphers GCM. Its API takes the key per message and re-derives the
 * key schedule and GHASH table each time; it offers no way to keep them.
 */
export class NobleAesGcm extends AesGcmBase {
  readonly backend = 'noble' as const;
  readonly #key: Uint8Array;

  constructor(key: Uint8Array, nonceSize = 16) {
    super(key, nonceSize);
    this.#key = Uint8Array.from(key);
  }

  protected sealChecked(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    return nobleAes().gcm(this.#key, nonce, aad).encrypt(plaintext);
  }

  protected openChecked(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    try {
      return nobleAes().gcm(this.#key, nonce, aad).decrypt(sealed);
    } catch {
      throw authError();
    }
  }
}

export function createAesGcm(key: Uint8Array, backend: BackendName = 'node', nonceSize = 16): Aead {
  return requireBackend(backend) === 'node' ? new NodeAesGcm(key, nonceSize) : new NobleAesGcm(key, nonceSize);
}
