/**
 * Seal throughput, the measurement behind `gocryptfs -speed`
 * (Documentation/format.md §12.2):
 * encrypt 4096-byte blocks with a 24-byte AAD, report MB/s (10^6 bytes/s).
 *
 * Each block gets its own random nonce (from the pool the mount's come
 * from, randomNonces) and AAD, as on disk. When the AEAD
 * has a batch call (`sealBlocks`), blocks are sealed the way the mount
 * seals them: a run of `batch` blocks per call (32 = one 128 KiB FUSE
 * write).
 */
import { performance } from 'node:perf_hooks';
import type { Aead } from './aead.js';
import { invalidArgument } from './errors.js';
import { randomNonces } from './random.js';

export interface SpeedOptions {
  /** Plaintext bytes per seal; default 4096. */
  blockSize?: number;
  /** How long to keep sealing; default 500 ms. */
  durationMs?: number;
  /** Blocks per sealBlocks call when the AEAD has one; default 32; 1 seals block by block with `seal`. */
  batch?: number;
}

/**
 * Seals blocks for about `durationMs` with a fresh random nonce each time
 * (as the write path does) and returns the plaintext throughput in MB/s.
 */
export function measureSealThroughput(aead: Pick<Aead, 'nonceSize' | 'seal' | 'sealBlocks'>, opts: SpeedOptions = {}): number {
  const blockSize = opts.blockSize ?? 4096;
  const durationMs = opts.durationMs ?? 500;
  const batch = opts.batch ?? 32;
  if (!Number.isSafeInteger(blockSize) || blockSize < 0) throw invalidArgument(`bad block size ${blockSize}`);
  if (!(durationMs > 0)) throw invalidArgument(`bad duration ${durationMs}`);
  if (!Number.isSafeInteger(batch) || batch < 1) throw invalidArgument(`bad batch ${batch}`);
  if (aead.sealBlocks !== undefined && batch > 1 && blockSize > 0) return measureBatched(aead.sealBlocks.bind(aead), aead.nonceSize, blockSize, batch, durationMs);
  const plaintext = new Uint8Array(blockSize);
  const aad = new Uint8Array(24);
  const ns = aead.nonceSize;
  // Warm-up so the JIT and lazily created cipher objects are not timed.
  for (let i = 0; i < 8; i++) aead.seal(randomNonces(ns), plaintext, aad);

  let sealed = 0;
  const start = performance.now();
  let now = start;
  do {
    aead.seal(randomNonces(ns), plaintext, aad);
    sealed++;
    now = performance.now();
  } while (now - start < durationMs);
  const seconds = (now - start) / 1000;
  return (sealed * blockSize) / seconds / 1e6;
}

type SealBlocks = NonNullable<Aead['sealBlocks']>;

/** measureSealThroughput through a batch call, `batch` blocks at a time. */
function measureBatched(sealBlocks: SealBlocks, ns: number, blockSize: number, batch: number, durationMs: number): number {
  const plaintext = new Uint8Array(blockSize * batch);
  const aads = new Uint8Array(24 * batch);
  const out = new Uint8Array(plaintext.length + batch * (ns + 16));
  // A warm-up as long as the run: the first 0.3-0.5 s of a process seal 10-15 % slower (native AEGIS on an AMD EPYC).
  const warm = performance.now() + durationMs;
  do sealBlocks(randomNonces(ns * batch), plaintext, aads, blockSize, out);
  while (performance.now() < warm);

  let calls = 0;
  const start = performance.now();
  let now = start;
  do {
    sealBlocks(randomNonces(ns * batch), plaintext, aads, blockSize, out);
    calls++;
    now = performance.now();
  } while (now - start < durationMs);
  return (calls * plaintext.length) / ((now - start) / 1000) / 1e6;
}
