/**
 * AES block operations on node:crypto (OpenSSL, AES-NI where available).
 *
 * Creating a Cipher object costs more than encrypting a few blocks, so one
 * ECB encryptor, one ECB decryptor and one CBC encryptor are created lazily
 * per key and reused. That is sound because padding is off and every
 * update() gets whole blocks: OpenSSL then buffers nothing between calls, and
 * ECB carries no state at all. CBC does carry state - the last ciphertext
 * block becomes the next IV - which `cbcMacLastBlock` cancels by XORing that
 * block into the first input block (E(prev ⊕ prev ⊕ M1) = E(M1), i.e. every
 * call behaves as if started with a zero IV). CTR needs a new IV per call,
 * so it gets a fresh (cheap, IV-only) cipher each time.
 */
import { createCipheriv, createDecipheriv, createSecretKey, type Cipher, type Decipher, type KeyObject } from 'node:crypto';
import { AES_BLOCK, requireWholeBlocks, type AesBlockCipher } from './aes-block.js';
import { requireLength } from './errors.js';

const ZERO_IV = new Uint8Array(AES_BLOCK);

export class NodeAesBlockCipher implements AesBlockCipher {
  readonly keyLength: number;
  readonly #key: KeyObject;
  readonly #bits: number;
  #ecbEncryptor: Cipher | undefined;
  #ecbDecryptor: Decipher | undefined;
  #cbcEncryptor: Cipher | undefined;
  /** Last output block of #cbcEncryptor (its current chaining value). */
  readonly #cbcChain = new Uint8Array(AES_BLOCK);

  constructor(key: Uint8Array) {
    requireLength(key, [16, 24, 32], 'AES key');
    this.keyLength = key.length;
    this.#bits = key.length * 8;
    this.#key = createSecretKey(key);
  }

  encryptBlocks(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, false, 'AES-ECB');
    if (this.#ecbEncryptor === undefined) {
      this.#ecbEncryptor = createCipheriv(`aes-${this.#bits}-ecb`, this.#key, null).setAutoPadding(false);
    }
    return this.#ecbEncryptor.update(blocks);
  }

  decryptBlocks(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, false, 'AES-ECB');
    if (this.#ecbDecryptor === undefined) {
      this.#ecbDecryptor = createDecipheriv(`aes-${this.#bits}-ecb`, this.#key, null).setAutoPadding(false);
    }
    return this.#ecbDecryptor.update(blocks);
  }

  cbcMacLastBlock(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, true, 'AES-CBC-MAC');
    if (this.#cbcEncryptor === undefined) {
      this.#cbcEncryptor = createCipheriv(`aes-${this.#bits}-cbc`, this.#key, ZERO_IV).setAutoPadding(false);
    }
    const chain = this.#cbcChain;
    for (let i = 0; i < AES_BLOCK; i++) blocks[i] ^= chain[i];
    let out: Uint8Array;
    try {
      out = this.#cbcEncryptor.update(blocks);
      if (out.length !== blocks.length) throw new Error('AES-CBC-MAC: unexpected OpenSSL output length');
    } catch (err) {
      // The chaining value is unknown now: start over with a fresh zero-IV encryptor.
      this.#cbcEncryptor = undefined;
      chain.fill(0);
      throw err;
    }
    const last = out.subarray(out.length - AES_BLOCK);
    chain.set(last);
    return new Uint8Array(last);
  }

  ctr(counter: Uint8Array, data: Uint8Array): Uint8Array {
    requireLength(counter, AES_BLOCK, 'AES-CTR counter block');
    return createCipheriv(`aes-${this.#bits}-ctr`, this.#key, counter).update(data);
  }
}
