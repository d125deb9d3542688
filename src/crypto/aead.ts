/**
 * The one interface every content cipher implements.
 *
 * gocryptfs seals file blocks, symlink targets, xattr values and the wrapped
 * master key with an AEAD. The nonce is chosen by the caller (content layer)
 * and stored in front of the sealed bytes; `seal` returns only what follows
 * the nonce on disk. For AES-GCM and XChaCha20-Poly1305 that is
 * `ciphertext || tag`; for AES-SIV it is `tag(SIV) || ciphertext`
 * (Documentation/format.md §5.2). AEGIS-256X2 ('aegis', gocryptfs's
 * unmerged aegis branch, format.md §5.6) is stored
 * like GCM: `nonce(32) || ciphertext || tag(16)`.
 */
export type CipherName = 'aes-gcm' | 'aes-siv' | 'xchacha' | 'aegis';

/**
 * Which implementation the caller asks for (-openssl): 'node' (node:crypto,
 * and for AEGIS the native addon when it is there) or 'noble' (pure
 * TypeScript). All implementations give identical bytes.
 */
export type BackendName = 'node' | 'noble';

/**
 * The implementation an Aead actually runs: a BackendName, or for AEGIS
 * 'native' (the C addon) or 'ts' (pure TypeScript).
 */
export type ImplementationName = BackendName | 'native' | 'ts';

/**
 * Whether `aead`'s arithmetic runs in JavaScript: the noble backend,
 * AEGIS in TypeScript, and AES-SIV (S2V and CMAC here, over an AES
 * primitive). Otherwise OpenSSL or the native addons do it, and
 * JavaScript only hands buffers over.
 */
export function arithmeticInJs(aead: Pick<Aead, 'cipher' | 'backend'>): boolean {
  return aead.backend === 'noble' || aead.backend === 'ts' || aead.cipher === 'aes-siv';
}

export interface Aead {
  /** The cipher this object implements. */
  readonly cipher: CipherName;
  /** The implementation that does the work. */
  readonly backend: ImplementationName;
  /** Nonce length in bytes (16 for GCM with GCMIV128 and SIV, 24 for XChaCha, 32 for AEGIS). */
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
  /**
   * Optional batch form of `seal` for consecutive file blocks (AEGIS has
   * it): `plaintext` cut into `blockSize` blocks (the last may be shorter),
   * block k sealed with nonces[k·nonceSize...] and aads[k·aadLen...]
   * (aadLen = aads.length / blocks); returns the blocks as stored on disk,
   * back to back: nonce || sealed. Same bytes as calling `seal` per block.
   * With `out` (exactly the result's size) the result is written there.
   */
  sealBlocks?(nonces: Uint8Array, plaintext: Uint8Array, aads: Uint8Array, blockSize?: number, out?: Uint8Array): Uint8Array;
  /**
   * Optional batch form of `open` for what `sealBlocks` produced. Throws
   * EAUTH with `blockIndex` set to the first bad block; never returns
   * partial plaintext. With `out` (exactly the result's size) the
   * plaintext is written there, and `out` is zeroed when a block fails.
   */
  openBlocks?(sealed: Uint8Array, aads: Uint8Array, blockSize?: number, out?: Uint8Array): Uint8Array;
}

/** Error raised when a tag does not verify. */
export function authError(what = 'message authentication failed'): Error & { code: string } {
  const err = new Error(what) as Error & { code: string };
  err.code = 'EAUTH';
  return err;
}
