/**
 * AES block operations on @noble/ciphers (pure JS, table-based), through
 * its public, documented modes only: `ecb` and `cbc` without padding, and
 * `ctr` (a 128-bit big-endian counter, the one RFC 5297 asks for). Those
 * are stable API across releases, unlike the package's `unsafe` round
 * functions.
 *
 * Each call builds a one-shot cipher object (noble refuses a second
 * encrypt on one object), which expands the key schedule again. That costs
 * the noble backend some speed on short inputs (EME names) and a little on
 * 4 KiB blocks (Documentation/performance.md, "The noble backend"); the
 * noble backend is
 * the independent pure-TypeScript path, not the fast one, and an API that
 * holds across releases matters more there.
 */
import { nobleAes } from './noble.js';
import { AES_BLOCK, requireWholeBlocks, type AesBlockCipher } from './aes-block.js';
import { requireLength } from './errors.js';

const NO_PADDING = { disablePadding: true } as const;
const ZERO_IV = new Uint8Array(AES_BLOCK);

export class NobleAesBlockCipher implements AesBlockCipher {
  readonly keyLength: number;
  /** A private copy: noble keeps a reference to the key it is given. */
  readonly #key: Uint8Array;

  constructor(key: Uint8Array) {
    requireLength(key, [16, 24, 32], 'AES key');
    this.keyLength = key.length;
    this.#key = Uint8Array.from(key);
  }

  encryptBlocks(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, false, 'AES-ECB');
    return nobleAes().ecb(this.#key, NO_PADDING).encrypt(blocks);
  }

  decryptBlocks(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, false, 'AES-ECB');
    return nobleAes().ecb(this.#key, NO_PADDING).decrypt(blocks);
  }

  cbcMacLastBlock(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, true, 'AES-CBC-MAC');
    // The chain's last block is the MAC. The contract lets us clobber
    // `blocks`, so the chain is written over it where noble can (its output
    // must be 4-byte aligned).
    const out = nobleAes().cbc(this.#key, ZERO_IV, NO_PADDING).encrypt(blocks, blocks.byteOffset % 4 === 0 ? blocks : undefined);
    return out.slice(out.length - AES_BLOCK);
  }

  ctr(counter: Uint8Array, data: Uint8Array): Uint8Array {
    requireLength(counter, AES_BLOCK, 'AES-CTR counter block');
    return nobleAes().ctr(this.#key, counter).encrypt(data);
  }
}
