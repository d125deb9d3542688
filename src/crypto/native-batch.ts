/**
 * The optional batched AEAD addon (native/crypto/batch_aead.c, built at
 * install time next to the AEGIS addon): AES-256-GCM and
 * XChaCha20-Poly1305 over every 4 KiB block of a request in one call,
 * through node's own OpenSSL with one reused cipher context, where
 * JavaScript has to build a cipher object per block. Missing (no compiler)
 * or refused (TSCRYPTFS_NATIVE_BATCH=0), the per-block node:crypto path is
 * used; both give the same bytes (test/unit/crypto-native-batch.test.ts).
 */
import { loadNativeAddon } from '../util/native-addon.js';
import { authError, type Aead } from './aead.js';
import { TAG_SIZE } from './aead-checks.js';
import { envSwitch } from '../util/switches.js';

export const BATCH_GCM = 0;
export const BATCH_XCHACHA = 1;
type BatchCipher = typeof BATCH_GCM | typeof BATCH_XCHACHA;

export interface BatchBinding {
  /** Block k of `out` = nonce_k || ct_k || tag_k(16). */
  sealBlocks(cipher: BatchCipher, key: Uint8Array, nonces: Uint8Array, plaintext: Uint8Array, blockSize: number, aads: Uint8Array, aadLen: number, out: Uint8Array): void;
  /** -1 on success, else the first block whose tag failed (out is zeroed). */
  openBlocks(cipher: BatchCipher, key: Uint8Array, sealed: Uint8Array, cipherBlockSize: number, aads: Uint8Array, aadLen: number, out: Uint8Array): number;
  /** What the binding's setAssistHook takes: lets its waiting threads seal chunks of a large sealBlocks (native/crypto/shared_job.h). */
  assistHook(): object;
  /** [jobs opened to other threads, chunks they sealed], for this process so far. */
  sharedJobStats(): [number, number];
  /**
   * scrypt's SMix of each 128r-byte part of `block`, off the JS thread
   * (native/crypto/scrypt_smix.c); absent where the compiler had no vector
   * extensions. src/config/scrypt.ts does the rest of scrypt around it.
   */
  scryptSmix?(block: Uint8Array, N: number, r: number): Promise<Buffer>;
}

/** Loaded once per process; null when unavailable (the file cannot change while we run). */
let cached: BatchBinding | null | undefined;

export function batchBinding(): BatchBinding | null {
  if (cached !== undefined) return cached;
  cached = envSwitch('TSCRYPTFS_NATIVE_BATCH') ? loadNativeAddon<BatchBinding>('tscryptfs_batch.node') : null;
  return cached;
}

/** The Aead batch calls for `cipher` under `key`, or undefined when the addon is missing. */
export function nativeBatchCalls(cipher: BatchCipher, key: Uint8Array, nonceSize: number): Pick<Aead, 'sealBlocks' | 'openBlocks'> | undefined {
  const b = batchBinding();
  if (!b) return undefined;
  const raw = Uint8Array.from(key);
  const perBlock = nonceSize + TAG_SIZE;
  const aadLen = (aads: Uint8Array, count: number): number => (count === 0 ? 0 : aads.length / count);
  return {
    sealBlocks(nonces, plaintext, aads, blockSize = 4096, out) {
      const count = Math.ceil(plaintext.length / blockSize);
      const o = out ?? Buffer.allocUnsafe(plaintext.length + count * perBlock);
      b.sealBlocks(cipher, raw, nonces, plaintext, blockSize, aads, aadLen(aads, count), o);
      return o;
    },
    openBlocks(sealed, aads, blockSize = 4096, out) {
      const count = Math.ceil(sealed.length / (blockSize + perBlock));
      const o = out ?? Buffer.allocUnsafe(sealed.length - count * perBlock);
      const bad = b.openBlocks(cipher, raw, sealed, blockSize + perBlock, aads, aadLen(aads, count), o);
      if (bad >= 0) {
        o.fill(0); // the bad block's bytes were never authenticated
        throw Object.assign(authError(`block ${bad} failed authentication`), { blockIndex: bad });
      }
      return o;
    },
  };
}
