/**
 * The values reverse mode derives from encrypted paths instead of drawing
 * them at random (Documentation/format.md §9.2), so the encrypted view of an unchanged
 * plaintext tree is the same on every mount:
 *
 *   pathiv(P, purpose) = SHA-256(P || 0x00 || purpose)[0:16]
 *
 * where P is the path relative to the view root in encrypted form
 * (`/`-separated, no leading slash, root = ""). Pure functions.
 */
import { createHash } from 'node:crypto';

export type PathIvPurpose = 'DIRIV' | 'FILEID' | 'SYMLINKIV' | 'BLOCK0IV';

export const PATHIV_LEN = 16;

export function pathIV(cipherPath: string, purpose: PathIvPurpose): Buffer {
  return createHash('sha256').update(cipherPath, 'latin1').update('\0').update(purpose, 'ascii').digest().subarray(0, PATHIV_LEN);
}

/** The two values a file's content needs: its header's file ID and the nonce of block 0. */
export interface FileIVs {
  fileId: Buffer;
  block0IV: Buffer;
}

export function fileIVs(cipherPath: string): FileIVs {
  return { fileId: pathIV(cipherPath, 'FILEID'), block0IV: pathIV(cipherPath, 'BLOCK0IV') };
}

const U64 = (1n << 64n) - 1n;

/** The nonce of block n: block 0's nonce with n added (mod 2^64) to its low 8 bytes, big-endian. */
export function blockIV(block0IV: Uint8Array, n: number): Buffer {
  const iv = Buffer.from(block0IV);
  iv.writeBigUInt64BE((iv.readBigUInt64BE(8) + BigInt(n)) & U64, 8);
  return iv;
}
