/**
 * AES-CMAC (RFC 4493; NIST SP 800-38B) for 128/192/256-bit keys, on either
 * backend. The subkeys K1, K2 (RFC 4493 §2.3) are computed once per key.
 */
import type { BackendName } from './aead.js';
import { AES_BLOCK, type AesBlockCipher } from './aes-block.js';
import { createAesBlockCipher } from './aes-block-factory.js';
import { dblBigEndian } from './gf128.js';

/** Size of the scratch buffer `Cmac.macScratch` needs for an n-byte message. */
export function cmacPaddedLength(n: number): number {
  // RFC 4493 §2.4 step 2-3: n blocks, at least one; a partial or empty last block is padded.
  return n > 0 && n % AES_BLOCK === 0 ? n : (Math.floor(n / AES_BLOCK) + 1) * AES_BLOCK;
}

export class Cmac {
  readonly #aes: AesBlockCipher;
  readonly #k1: Uint8Array;
  readonly #k2: Uint8Array;

  constructor(key: Uint8Array, backend: BackendName = 'node') {
    this.#aes = createAesBlockCipher(key, backend);
    // RFC 4493 §2.3: L = AES-K(0^128); K1 = dbl(L); K2 = dbl(K1).
    const l = this.#aes.encryptBlocks(new Uint8Array(AES_BLOCK));
    this.#k1 = dblBigEndian(l);
    this.#k2 = dblBigEndian(this.#k1);
    l.fill(0);
  }

  /** AES-CMAC(K, message), 16 bytes (RFC 4493 §2.4). */
  mac(message: Uint8Array): Uint8Array {
    const scratch = new Uint8Array(cmacPaddedLength(message.length));
    scratch.set(message);
    return this.macScratch(scratch, message.length);
  }

  /**
   * Same as `mac`, for callers that already hold the message in a buffer
   * they own: `scratch` must be `cmacPaddedLength(length)` bytes, hold the
   * message in `[0, length)` and zeros after it. It is overwritten.
   * This lets S2V build its final input in place without another copy.
   */
  macScratch(scratch: Uint8Array, length: number): Uint8Array {
    if (scratch.length !== cmacPaddedLength(length)) throw new RangeError('CMAC scratch buffer has the wrong size');
    const last = scratch.length - AES_BLOCK;
    let subkey = this.#k1;
    if (length !== scratch.length) {
      // RFC 4493 §2.4 step 4: incomplete last block -> padding(M_n) XOR K2,
      // padding = a single 1 bit then zeros.
      scratch[length] = 0x80;
      subkey = this.#k2;
    }
    for (let i = 0; i < AES_BLOCK; i++) scratch[last + i] ^= subkey[i];
    // Steps 5-6: CBC over M_1 .. M_last with a zero IV; T = the last block.
    return this.#aes.cbcMacLastBlock(scratch);
  }
}

/** One-shot AES-CMAC (RFC 4493); key of 16, 24 or 32 bytes. */
export function cmac(key: Uint8Array, message: Uint8Array, backend: BackendName = 'node'): Uint8Array {
  return new Cmac(key, backend).mac(message);
}
