/**
 * HChaCha20 (draft-irtf-cfrg-xchacha-03 §2.2): the ChaCha20 block function
 * without the final feed-forward addition, used to turn a 256-bit key and the
 * first 16 nonce bytes into the subkey of XChaCha20. Node has no HChaCha20,
 * so the node backend of XChaCha20-Poly1305 needs this
 * (Documentation/format.md §5.5).
 */
import { requireLength } from './errors.js';

function load32(b: Uint8Array, i: number): number {
  return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0;
}

function store32(b: Uint8Array, i: number, v: number): void {
  b[i] = v;
  b[i + 1] = v >>> 8;
  b[i + 2] = v >>> 16;
  b[i + 3] = v >>> 24;
}

/**
 * Returns the 32-byte subkey HChaCha20(key, nonce16).
 * State (RFC 8439 §2.3): "expand 32-byte k" constants, the key words, then
 * the four nonce words (all little-endian); 20 rounds; output = state words
 * 0..3 and 12..15.
 */
export function hchacha20(key: Uint8Array, nonce16: Uint8Array): Uint8Array {
  requireLength(key, 32, 'HChaCha20 key');
  requireLength(nonce16, 16, 'HChaCha20 nonce');
  let x0 = 0x61707865, x1 = 0x3320646e, x2 = 0x79622d32, x3 = 0x6b206574;
  let x4 = load32(key, 0), x5 = load32(key, 4), x6 = load32(key, 8), x7 = load32(key, 12);
  let x8 = load32(key, 16), x9 = load32(key, 20), x10 = load32(key, 24), x11 = load32(key, 28);
  let x12 = load32(nonce16, 0), x13 = load32(nonce16, 4), x14 = load32(nonce16, 8), x15 = load32(nonce16, 12);
  // RFC 8439 §2.1 quarter round: a += b; d ^= a; d <<<= 16; c += d; b ^= c; b <<<= 12;
  //                             a += b; d ^= a; d <<<= 8;  c += d; b ^= c; b <<<= 7.
  // Inlined (column round, then diagonal round) ten times.
  for (let round = 0; round < 10; round++) {
    x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 16) | (x12 >>> 16);
    x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 12) | (x4 >>> 20);
    x0 = (x0 + x4) | 0; x12 ^= x0; x12 = (x12 << 8) | (x12 >>> 24);
    x8 = (x8 + x12) | 0; x4 ^= x8; x4 = (x4 << 7) | (x4 >>> 25);

    x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 16) | (x13 >>> 16);
    x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 12) | (x5 >>> 20);
    x1 = (x1 + x5) | 0; x13 ^= x1; x13 = (x13 << 8) | (x13 >>> 24);
    x9 = (x9 + x13) | 0; x5 ^= x9; x5 = (x5 << 7) | (x5 >>> 25);

    x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 16) | (x14 >>> 16);
    x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 12) | (x6 >>> 20);
    x2 = (x2 + x6) | 0; x14 ^= x2; x14 = (x14 << 8) | (x14 >>> 24);
    x10 = (x10 + x14) | 0; x6 ^= x10; x6 = (x6 << 7) | (x6 >>> 25);

    x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 16) | (x15 >>> 16);
    x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 12) | (x7 >>> 20);
    x3 = (x3 + x7) | 0; x15 ^= x3; x15 = (x15 << 8) | (x15 >>> 24);
    x11 = (x11 + x15) | 0; x7 ^= x11; x7 = (x7 << 7) | (x7 >>> 25);

    x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 16) | (x15 >>> 16);
    x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 12) | (x5 >>> 20);
    x0 = (x0 + x5) | 0; x15 ^= x0; x15 = (x15 << 8) | (x15 >>> 24);
    x10 = (x10 + x15) | 0; x5 ^= x10; x5 = (x5 << 7) | (x5 >>> 25);

    x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 16) | (x12 >>> 16);
    x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 12) | (x6 >>> 20);
    x1 = (x1 + x6) | 0; x12 ^= x1; x12 = (x12 << 8) | (x12 >>> 24);
    x11 = (x11 + x12) | 0; x6 ^= x11; x6 = (x6 << 7) | (x6 >>> 25);

    x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 16) | (x13 >>> 16);
    x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 12) | (x7 >>> 20);
    x2 = (x2 + x7) | 0; x13 ^= x2; x13 = (x13 << 8) | (x13 >>> 24);
    x8 = (x8 + x13) | 0; x7 ^= x8; x7 = (x7 << 7) | (x7 >>> 25);

    x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 16) | (x14 >>> 16);
    x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 12) | (x4 >>> 20);
    x3 = (x3 + x4) | 0; x14 ^= x3; x14 = (x14 << 8) | (x14 >>> 24);
    x9 = (x9 + x14) | 0; x4 ^= x9; x4 = (x4 << 7) | (x4 >>> 25);
  }
  const out = new Uint8Array(32);
  store32(out, 0, x0); store32(out, 4, x1); store32(out, 8, x2); store32(out, 12, x3);
  store32(out, 16, x12); store32(out, 20, x13); store32(out, 24, x14); store32(out, 28, x15);
  return out;
}
