/**
 * HKDF-SHA256 (RFC 5869) as gocryptfs uses it to derive every subkey from
 * the master key (Documentation/format.md §4.5): empty salt (RFC 5869 §2.2: "if not
 * provided, it is set to a string of HashLen zeros"), ASCII info string.
 */
import { hkdfSync } from 'node:crypto';
import { invalidArgument } from './errors.js';

/** The info strings gocryptfs passes to HKDF, one per subkey (format.md §4.5). */
export const HKDF_INFO = {
  eme: 'EME filename encryption',
  gcm: 'AES-GCM file content encryption',
  siv: 'AES-SIV file content encryption',
  xchacha: 'XChaCha20-Poly1305 file content encryption',
} as const;

const SHA256_LEN = 32;
const EMPTY = new Uint8Array(0);

/**
 * Generic HKDF-SHA256 extract-and-expand (RFC 5869 §2.2 + §2.3).
 * `length` must be 1..255·32 (RFC 5869 §2.3: L <= 255*HashLen).
 */
export function hkdfSha256Salted(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array | string, length: number): Uint8Array {
  if (!Number.isSafeInteger(length) || length < 1 || length > 255 * SHA256_LEN) {
    throw invalidArgument(`HKDF-SHA256 output length must be 1..${255 * SHA256_LEN}, got ${length}`);
  }
  return new Uint8Array(hkdfSync('sha256', ikm, salt, info, length));
}

/** HKDF-SHA256 with an empty salt, the way gocryptfs calls it. */
export function hkdfSha256(ikm: Uint8Array, info: string, length: number): Uint8Array {
  return hkdfSha256Salted(ikm, EMPTY, info, length);
}
