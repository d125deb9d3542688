/**
 * EME (ECB-Mix-ECB), the wide-block tweakable cipher of Halevi & Rogaway,
 * "A Parallelizable Enciphering Mode" (CT-RSA 2004), exactly as implemented
 * by github.com/rfjakob/eme and used by gocryptfs for file names
 * (Documentation/format.md §7.4): AES-256, 16-byte tweak, 1..128 blocks, and the
 * little-endian GF(2^128) doubling of the EME-32 draft (IEEE P1619.2).
 *
 * Each of the three AES layers is one batched call into the backend.
 */
import type { BackendName } from './aead.js';
import { AES_BLOCK } from './aes-block.js';
import { createAesBlockCipher } from './aes-block-factory.js';
import { invalidArgument, requireLength } from './errors.js';
import { dblLittleEndian } from './gf128.js';

export const EME_KEY_SIZE = 32;
export const EME_TWEAK_SIZE = 16;
/** rfjakob/eme accepts 1 to 16*8 = 128 blocks. */
export const EME_MAX_BLOCKS = 128;

export class Eme {
  readonly #forward: (blocks: Uint8Array) => Uint8Array;
  readonly #inverse: (blocks: Uint8Array) => Uint8Array;
  /** L_j = 2^(j+1) · E(0^16) for j = 0..127, concatenated (key-dependent, computed once). */
  readonly #lTable: Uint8Array;

  constructor(key: Uint8Array, backend: BackendName = 'node') {
    requireLength(key, EME_KEY_SIZE, 'EME key');
    const aes = createAesBlockCipher(key, backend);
    this.#forward = (blocks) => aes.encryptBlocks(blocks);
    this.#inverse = (blocks) => aes.decryptBlocks(blocks);
    const table = new Uint8Array(EME_MAX_BLOCKS * AES_BLOCK);
    let l = dblLittleEndian(aes.encryptBlocks(new Uint8Array(AES_BLOCK)));
    for (let j = 0; j < EME_MAX_BLOCKS; j++) {
      table.set(l, j * AES_BLOCK);
      l = dblLittleEndian(l);
    }
    this.#lTable = table;
  }

  /** EME-encrypts `data` (16..2048 bytes, a multiple of 16) under `tweak`. */
  encrypt(tweak: Uint8Array, data: Uint8Array): Uint8Array {
    return this.#transform(tweak, data, this.#forward);
  }

  /** Inverse of `encrypt`. */
  decrypt(tweak: Uint8Array, data: Uint8Array): Uint8Array {
    return this.#transform(tweak, data, this.#inverse);
  }

  /**
   * One EME pass. Decryption is the same computation with the AES inverse in
   * the three cipher layers (L stays E-based), see rfjakob/eme Transform().
   */
  #transform(t: Uint8Array, p: Uint8Array, aes: (blocks: Uint8Array) => Uint8Array): Uint8Array {
    requireLength(t, EME_TWEAK_SIZE, 'EME tweak');
    if (!(p instanceof Uint8Array) || p.length % AES_BLOCK !== 0 || p.length < AES_BLOCK || p.length > EME_MAX_BLOCKS * AES_BLOCK) {
      throw invalidArgument(`EME data must be a multiple of 16 bytes between 16 and ${EME_MAX_BLOCKS * AES_BLOCK}, got ${p?.length}`);
    }
    const n = p.length;
    const lTable = this.#lTable;

    // Layer 1: PPP_j = E(P_j xor L_j).
    const pp = new Uint8Array(n);
    for (let i = 0; i < n; i++) pp[i] = p[i] ^ lTable[i];
    const ppp = aes(pp);

    // MP = T xor PPP_0 xor ... xor PPP_{m-1}; MC = E(MP); M = MP xor MC.
    const mp = Uint8Array.from(t);
    for (let o = 0; o < n; o += AES_BLOCK) {
      for (let i = 0; i < AES_BLOCK; i++) mp[i] ^= ppp[o + i];
    }
    const mc = aes(mp);
    const m = new Uint8Array(AES_BLOCK);
    const ccc0 = new Uint8Array(AES_BLOCK);
    for (let i = 0; i < AES_BLOCK; i++) {
      m[i] = mp[i] ^ mc[i];
      ccc0[i] = mc[i] ^ t[i];
    }

    // CCC_j = PPP_j xor 2^j·M (j >= 1), in place; CCC_0 = MC xor T xor CCC_1 .. CCC_{m-1}.
    for (let o = AES_BLOCK; o < n; o += AES_BLOCK) {
      dblLittleEndian(m, m);
      for (let i = 0; i < AES_BLOCK; i++) {
        const c = ppp[o + i] ^ m[i];
        ppp[o + i] = c;
        ccc0[i] ^= c;
      }
    }
    ppp.set(ccc0, 0);

    // Layer 3: C_j = E(CCC_j) xor L_j.
    const c = aes(ppp);
    for (let i = 0; i < n; i++) c[i] ^= lTable[i];
    return c;
  }
}
