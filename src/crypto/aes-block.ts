/**
 * The raw AES operations the hand-written modes (EME, CMAC/S2V, SIV) are
 * built on. Implementations: aes-block-node.ts, aes-block-noble.ts; pick one
 * with `createAesBlockCipher` (aes-block-factory.ts). Each object is bound to
 * one key whose schedule is expanded once and then reused for every call.
 */
import { invalidArgument } from './errors.js';

export const AES_BLOCK = 16;

export interface AesBlockCipher {
  /** 16, 24 or 32 (AES-128/192/256). */
  readonly keyLength: number;
  /**
   * ECB encryption (FIPS 197 cipher on each 16-byte block, SP 800-38A §6.1).
   * `blocks.length` must be a multiple of 16. Returns a new array.
   */
  encryptBlocks(blocks: Uint8Array): Uint8Array;
  /** ECB decryption (FIPS 197 inverse cipher on each block). Returns a new array. */
  decryptBlocks(blocks: Uint8Array): Uint8Array;
  /**
   * The last ciphertext block of CBC encryption (SP 800-38A §6.2) with an
   * all-zero IV: the CBC-MAC core of CMAC (RFC 4493 §2.4 step 6).
   * `blocks.length` must be a non-zero multiple of 16; the contents of
   * `blocks` may be overwritten (it is the caller's scratch buffer).
   */
  cbcMacLastBlock(blocks: Uint8Array): Uint8Array;
  /**
   * CTR mode (SP 800-38A §6.5): XORs `data` (any length) with
   * E(counter), E(counter+1), ... where the 16-byte counter block is
   * incremented as one 128-bit big-endian integer (RFC 5297 §2.5).
   * `counter` itself is not modified. Returns a new array.
   */
  ctr(counter: Uint8Array, data: Uint8Array): Uint8Array;
}

/** Throws EINVAL unless `data` is a whole number of AES blocks (and, if asked, not empty). */
export function requireWholeBlocks(data: Uint8Array, nonEmpty: boolean, what: string): void {
  if (data.length % AES_BLOCK !== 0 || (nonEmpty && data.length === 0)) {
    throw invalidArgument(`${what}: length must be a ${nonEmpty ? 'non-zero ' : ''}multiple of 16, got ${data.length}`);
  }
}
