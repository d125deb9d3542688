/**
 * The one interface every content cipher implements.
 *
 * gocryptfs seals file blocks, symlink targets, xattr values and the wrapped
 * master key with an AEAD. The nonce is chosen by the caller (content layer)
 * and stored in front of the sealed bytes; `seal` returns only what follows
 * the nonce on disk. For AES-GCM and XChaCha20-Poly1305 that is
 * `ciphertext || tag`; for AES-SIV it is `tag(SIV) || ciphertext` (FORMAT.md §4.4).
 */
export type CipherName = 'aes-gcm' | 'aes-siv' | 'xchacha';

/** Which implementation does the arithmetic. Both must give identical bytes. */
export type BackendName = 'node' | 'noble';

export interface Aead {
  /** The cipher this object implements. */
  readonly cipher: CipherName;
  /** The backend that implements it. */
  readonly backend: BackendName;
  /** Nonce length in bytes (16 for GCM with GCMIV128 and SIV, 24 for XChaCha). */
  readonly nonceSize: number;
  /** Bytes `seal` adds to the plaintext (the 16-byte tag). */
  readonly tagSize: number;
  /** Encrypts and authenticates; returns the bytes stored after the nonce. */
  seal(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array;
  /**
   * Checks and decrypts the bytes stored after the nonce. Throws an Error
   * with `code: 'EAUTH'` when authentication fails; never returns unverified
   * plaintext.
   */
  open(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array;
}

/** Error raised when a tag does not verify. */
export function authError(what = 'message authentication failed'): Error & { code: string } {
  const err = new Error(what) as Error & { code: string };
  err.code = 'EAUTH';
  return err;
}
