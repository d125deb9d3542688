/**
 * S2V, the "string to vector" PRF of RFC 5297 §2.4 that computes the
 * synthetic IV of AES-SIV from a vector of byte strings.
 */
import type { BackendName } from './aead.js';
import { AES_BLOCK } from './aes-block.js';
import { Cmac, cmacPaddedLength } from './cmac.js';
import { invalidArgument } from './errors.js';
import { dblBigEndian } from './gf128.js';

/** RFC 5297 §7 / §2.6: at most 127 components (126 associated data + the plaintext). */
export const S2V_MAX_INPUTS = 127;

export class S2v {
  readonly #cmac: Cmac;
  /** AES-CMAC(K, <zero>), the constant start value of D. */
  readonly #cmacZero: Uint8Array;

  constructor(key: Uint8Array, backend: BackendName = 'node') {
    this.#cmac = new Cmac(key, backend);
    this.#cmacZero = this.#cmac.mac(new Uint8Array(AES_BLOCK));
  }

  /** V = S2V(K, S1, ..., Sn) (RFC 5297 §2.4). */
  compute(inputs: readonly Uint8Array[]): Uint8Array {
    const n = inputs.length;
    if (n > S2V_MAX_INPUTS) throw invalidArgument(`S2V takes at most ${S2V_MAX_INPUTS} inputs, got ${n}`);
    if (n === 0) {
      // "if n = 0 then return V = AES-CMAC(K, <one>)"
      const one = new Uint8Array(AES_BLOCK);
      one[AES_BLOCK - 1] = 1;
      return this.#cmac.mac(one);
    }
    // D = AES-CMAC(K, <zero>); for i = 1 to n-1: D = dbl(D) xor AES-CMAC(K, Si)
    const d = Uint8Array.from(this.#cmacZero);
    for (let i = 0; i < n - 1; i++) {
      dblBigEndian(d, d);
      const m = this.#cmac.mac(inputs[i]);
      for (let j = 0; j < AES_BLOCK; j++) d[j] ^= m[j];
    }
    const last = inputs[n - 1];
    const len = last.length;
    if (len >= AES_BLOCK) {
      // T = Sn xorend D: D is XORed into the rightmost 16 bytes of Sn.
      const t = new Uint8Array(cmacPaddedLength(len));
      t.set(last);
      for (let j = 0; j < AES_BLOCK; j++) t[len - AES_BLOCK + j] ^= d[j];
      return this.#cmac.macScratch(t, len);
    }
    // T = dbl(D) xor pad(Sn), pad = Sn || 1 || 0* up to 128 bits.
    const t = dblBigEndian(d);
    for (let j = 0; j < len; j++) t[j] ^= last[j];
    t[len] ^= 0x80;
    return this.#cmac.macScratch(t, AES_BLOCK);
  }
}

/** One-shot S2V over the given inputs (RFC 5297 §2.4), node backend. */
export function s2v(key: Uint8Array, ...inputs: Uint8Array[]): Uint8Array {
  return new S2v(key).compute(inputs);
}
