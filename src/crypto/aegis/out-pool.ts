/**
 * Output buffers for seal/open. Allocating a fresh ArrayBuffer per 4 KiB
 * block costs more than AEGIS itself does on AES-NI
 * (Documentation/performance.md, "The AEGIS output pool"),
 * so small outputs are carved out of a shared slab, the way
 * `Buffer.allocUnsafe` serves small sizes from its pool (and so the way the
 * node:crypto backends' `Buffer.concat` results already are): a returned
 * array may be a view into a larger ArrayBuffer, so code must honour its
 * `byteOffset` and `length`. Every byte of a returned array is written by
 * the caller (ciphertext, tag or plaintext) before it is handed out.
 */
const SLAB_SIZE = 256 * 1024;
const MAX_POOLED = 32 * 1024;

let slab = new ArrayBuffer(0);
let used = 0;

export function allocOutput(n: number): Uint8Array {
  if (n > MAX_POOLED) return new Uint8Array(n);
  if (used + n > slab.byteLength) {
    slab = new ArrayBuffer(SLAB_SIZE);
    used = 0;
  }
  const out = new Uint8Array(slab, used, n);
  used += (n + 7) & ~7; // keep views 8-byte aligned
  return out;
}
