/** Argument checks shared by the Aead implementations. */
import { authError, type Aead, type BackendName, type CipherName } from './aead.js';
import { invalidArgument, requireLength } from './errors.js';

export const TAG_SIZE = 16;

export function requireBackend(backend: BackendName): BackendName {
  if (backend !== 'node' && backend !== 'noble') throw invalidArgument(`unknown crypto backend ${String(backend)}`);
  return backend;
}

export function requireNonce(nonce: Uint8Array, size: number, cipher: string): void {
  requireLength(nonce, size, `${cipher} nonce`);
}

export function requireBytes(data: Uint8Array, what: string): void {
  if (!(data instanceof Uint8Array)) throw invalidArgument(`${what} must be a Uint8Array`);
}

/**
 * The argument checks every stream-style AEAD (ciphertext || tag) makes
 * before it does any work; subclasses implement only the arithmetic.
 */
export abstract class CheckedAead implements Aead {
  abstract readonly cipher: CipherName;
  abstract readonly backend: BackendName;
  abstract readonly nonceSize: number;
  readonly tagSize = TAG_SIZE;
  /** Name used in error messages. */
  protected abstract readonly label: string;

  seal(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    requireNonce(nonce, this.nonceSize, this.label);
    requireBytes(plaintext, 'plaintext');
    requireBytes(aad, 'aad');
    return this.sealChecked(nonce, plaintext, aad);
  }

  open(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    requireNonce(nonce, this.nonceSize, this.label);
    requireBytes(sealed, 'sealed data');
    requireBytes(aad, 'aad');
    if (sealed.length < TAG_SIZE) throw authError(`${this.label}: ciphertext shorter than the tag`);
    return this.openChecked(nonce, sealed, aad);
  }

  protected abstract sealChecked(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array;
  protected abstract openChecked(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array;
}
