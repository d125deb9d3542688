/**
 * AES block operations on @noble/ciphers (pure JS, table-based).
 *
 * Uses the library's low-level round functions (`unsafe.encrypt/decrypt` on
 * an expanded key) so the key schedule is computed once per key instead of
 * once per call as its high-level `ecb()`/`ctr()` wrappers do. The round
 * functions take the block as four little-endian 32-bit words; data is
 * processed through Uint32Array views of buffers this module allocated
 * (so always aligned), byte-swapped first on big-endian hosts.
 */
import { unsafe } from '@noble/ciphers/aes.js';
import { AES_BLOCK, requireWholeBlocks, type AesBlockCipher } from './aes-block.js';
import { requireLength } from './errors.js';

type Words = { s0: number; s1: number; s2: number; s3: number };
type RoundFn = (xk: Uint32Array, s0: number, s1: number, s2: number, s3: number) => Words;

const encryptWords = unsafe.encrypt as unknown as RoundFn;
const decryptWords = unsafe.decrypt as unknown as RoundFn;

const LITTLE_ENDIAN_HOST = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** A little-endian word view of `bytes` (byteOffset must be a multiple of 4); converts in place on big-endian hosts. */
function leWords(bytes: Uint8Array): Uint32Array {
  const w = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 2);
  if (!LITTLE_ENDIAN_HOST) swapWords(w);
  return w;
}

/** Undoes `leWords` on big-endian hosts. */
function releaseWords(w: Uint32Array): void {
  if (!LITTLE_ENDIAN_HOST) swapWords(w);
}

function swapWords(w: Uint32Array): void {
  for (let i = 0; i < w.length; i++) {
    const v = w[i];
    w[i] = ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);
  }
}

function load32(b: Uint8Array, i: number): number {
  return b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
}

function store32(b: Uint8Array, i: number, v: number): void {
  b[i] = v;
  b[i + 1] = v >>> 8;
  b[i + 2] = v >>> 16;
  b[i + 3] = v >>> 24;
}

/** ECB over a copy of `src`, transformed in place. */
function ecb(round: RoundFn, xk: Uint32Array, src: Uint8Array): Uint8Array {
  const dst = Uint8Array.from(src);
  const w = leWords(dst);
  for (let i = 0; i < w.length; i += 4) {
    const r = round(xk, w[i], w[i + 1], w[i + 2], w[i + 3]);
    w[i] = r.s0;
    w[i + 1] = r.s1;
    w[i + 2] = r.s2;
    w[i + 3] = r.s3;
  }
  releaseWords(w);
  return dst;
}

export class NobleAesBlockCipher implements AesBlockCipher {
  readonly keyLength: number;
  readonly #key: Uint8Array;
  readonly #encKey: Uint32Array;
  #decKey: Uint32Array | undefined;

  constructor(key: Uint8Array) {
    requireLength(key, [16, 24, 32], 'AES key');
    this.keyLength = key.length;
    this.#key = Uint8Array.from(key);
    this.#encKey = unsafe.expandKeyLE(this.#key);
  }

  encryptBlocks(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, false, 'AES-ECB');
    return ecb(encryptWords, this.#encKey, blocks);
  }

  decryptBlocks(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, false, 'AES-ECB');
    this.#decKey ??= unsafe.expandKeyDecLE(this.#key);
    return ecb(decryptWords, this.#decKey, blocks);
  }

  cbcMacLastBlock(blocks: Uint8Array): Uint8Array {
    requireWholeBlocks(blocks, true, 'AES-CBC-MAC');
    const xk = this.#encKey;
    // The contract lets us clobber `blocks`; copy only if it is not word-aligned.
    const w = leWords(blocks.byteOffset % 4 === 0 ? blocks : Uint8Array.from(blocks));
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (let i = 0; i < w.length; i += 4) {
      const r = encryptWords(xk, s0 ^ w[i], s1 ^ w[i + 1], s2 ^ w[i + 2], s3 ^ w[i + 3]);
      s0 = r.s0; s1 = r.s1; s2 = r.s2; s3 = r.s3;
    }
    const out = new Uint8Array(AES_BLOCK);
    store32(out, 0, s0);
    store32(out, 4, s1);
    store32(out, 8, s2);
    store32(out, 12, s3);
    return out;
  }

  ctr(counter: Uint8Array, data: Uint8Array): Uint8Array {
    requireLength(counter, AES_BLOCK, 'AES-CTR counter block');
    const xk = this.#encKey;
    const n = data.length;
    const whole = n - (n % AES_BLOCK);
    const out = Uint8Array.from(data);
    const cb = Uint8Array.from(counter);
    const w = leWords(out.subarray(0, whole));
    const blockCount = Math.ceil(n / AES_BLOCK);
    for (let b = 0, i = 0; b < blockCount; b++, i += 4) {
      const r = encryptWords(xk, load32(cb, 0), load32(cb, 4), load32(cb, 8), load32(cb, 12));
      if (i < w.length) {
        w[i] ^= r.s0;
        w[i + 1] ^= r.s1;
        w[i + 2] ^= r.s2;
        w[i + 3] ^= r.s3;
      } else {
        // Final partial block: XOR with the leading bytes of the key stream block.
        const ks = new Uint8Array(AES_BLOCK);
        store32(ks, 0, r.s0);
        store32(ks, 4, r.s1);
        store32(ks, 8, r.s2);
        store32(ks, 12, r.s3);
        for (let j = whole; j < n; j++) out[j] ^= ks[j - whole];
        ks.fill(0);
      }
      // 128-bit big-endian increment: the carry ripples from byte 15 upwards.
      for (let j = AES_BLOCK - 1; j >= 0; j--) {
        cb[j] = (cb[j] + 1) & 0xff;
        if (cb[j] !== 0) break;
      }
    }
    releaseWords(w);
    return out;
  }
}
