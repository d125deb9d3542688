/**
 * The optional batched AES-256-GCM addon (native/src/gcm_batch.c, built at
 * install time next to the AEGIS addon). It seals or opens every 4 KiB
 * block of a request in one call through node's own OpenSSL, reusing one
 * cipher context, where JavaScript has to build a cipher object per block.
 * Missing (no compiler) or refused (TSCRYPTFS_NATIVE_GCM=0), the per-block
 * node:crypto path is used; both give the same bytes.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface GcmBatchBinding {
  /** Block k of `out` = nonce_k(16) || ct_k || tag_k(16). */
  sealBlocks(key: Uint8Array, nonces: Uint8Array, plaintext: Uint8Array, blockSize: number, aads: Uint8Array, aadLen: number, out: Uint8Array): void;
  /** -1 on success, else the first block whose tag failed (out is zeroed). */
  openBlocks(key: Uint8Array, sealed: Uint8Array, cipherBlockSize: number, aads: Uint8Array, aadLen: number, out: Uint8Array): number;
}

const ADDON = 'native/build/Release/tscryptfs_gcm.node';

/** Loaded once per process; null when unavailable. The module cannot change while we run. */
let cached: GcmBatchBinding | null | undefined;

export function gcmBatchBinding(): GcmBatchBinding | null {
  if (cached !== undefined) return cached;
  cached = null;
  if (process.env.TSCRYPTFS_NATIVE_GCM === '0') return cached;
  // dist/src/crypto/ when compiled, src/crypto/ when run from source.
  for (const rel of [`../../../${ADDON}`, `../../${ADDON}`]) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (!existsSync(path)) continue;
    try {
      cached = createRequire(import.meta.url)(path) as GcmBatchBinding;
    } catch {
      cached = null;
    }
    break;
  }
  return cached;
}
