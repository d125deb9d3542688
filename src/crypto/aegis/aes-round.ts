/**
 * The single AES encryption round AEGIS is built from
 * (draft-irtf-cfrg-aegis-aead §2: `AESRound(in, rk)` = SubBytes, ShiftRows,
 * MixColumns, AddRoundKey; the same operation as x86 `AESENC`).
 *
 * ⚠ TIMING SIDE CHANNEL — THIS IS A TABLE-BASED AES ROUND. ⚠
 * The round looks up the 256-entry "T-tables" below with indices taken from
 * the secret state. Which cache lines those lookups touch depends on the
 * data, so on a machine shared with an attacker (other processes, other VMs,
 * other tabs) cache-timing attacks of the Bernstein / Osvik–Shamir–Tromer
 * kind may recover AEGIS state and keystream. JavaScript offers no
 * constant-time table access and no AES instructions; the tables are 4 KiB
 * in total, small enough to stay in L1, which narrows but does not close the
 * channel. @noble/ciphers' AES (tscryptfs's 'noble' backend) has the same
 * property. Use the native AES-NI addon (`native/`, see ./native.ts) where
 * timing matters; this code is the portable fallback.
 *
 * Word convention: an AES block is four little-endian 32-bit words, word c
 * holding column c (bytes 4c..4c+3 of the block, row r in bits 8r..8r+7).
 */
import { invalidArgument } from '../errors.js';

/** The AES S-box, computed from its definition (GF(2^8) inverse, then the affine map). */
export const SBOX: Uint8Array = (() => {
  const sbox = new Uint8Array(256);
  // Walk the multiplicative group with generator 3: p runs over 3^i, q over 3^-i.
  let p = 1;
  let q = 1;
  do {
    p = p ^ ((p << 1) & 0xff) ^ (p & 0x80 ? 0x1b : 0); // p *= 3
    q ^= q << 1; // q /= 3
    q ^= q << 2;
    q ^= q << 4;
    q &= 0xff;
    if (q & 0x80) q ^= 0x09;
    const rot = (x: number, n: number): number => ((x << n) | (x >>> (8 - n))) & 0xff;
    sbox[p] = q ^ rot(q, 1) ^ rot(q, 2) ^ rot(q, 3) ^ rot(q, 4) ^ 0x63;
  } while (p !== 1);
  sbox[0] = 0x63;
  return sbox;
})();

function xtime(x: number): number {
  return ((x << 1) ^ (x & 0x80 ? 0x1b : 0)) & 0xff;
}

/**
 * The four AES "T-tables" in one array: TT[256·r + x] is the MixColumns
 * contribution of byte x in row r after SubBytes, as a little-endian column
 * word. Row 0 is (2·S, S, S, 3·S); rows 1..3 are that word rotated one more
 * byte each. (One 4 KiB array is measurably faster in V8 than four.)
 */
const TT = new Uint32Array(1024);
for (let x = 0; x < 256; x++) {
  const s = SBOX[x];
  const s2 = xtime(s);
  const s3 = s2 ^ s;
  const w = (s2 | (s << 8) | (s << 16) | (s3 << 24)) >>> 0;
  TT[x] = w;
  TT[256 + x] = ((w << 8) | (w >>> 24)) >>> 0;
  TT[512 + x] = ((w << 16) | (w >>> 16)) >>> 0;
  TT[768 + x] = ((w << 24) | (w >>> 8)) >>> 0;
}

/**
 * `s[out..out+3] = AESRound(s[inp..inp+3], s[out..out+3])`: the round key is
 * the block being replaced, which is exactly AEGIS's `V'[j] = AESRound(V[j-1], V[j])`.
 * ShiftRows is folded into which input column feeds each row. `inp` and
 * `out` must be different blocks.
 */
export function roundInPlace(s: Uint32Array, out: number, inp: number): void {
  const x0 = s[inp];
  const x1 = s[inp + 1];
  const x2 = s[inp + 2];
  const x3 = s[inp + 3];
  const t = TT;
  s[out] ^= t[x0 & 0xff] ^ t[256 | ((x1 >>> 8) & 0xff)] ^ t[512 | ((x2 >>> 16) & 0xff)] ^ t[768 | (x3 >>> 24)];
  s[out + 1] ^= t[x1 & 0xff] ^ t[256 | ((x2 >>> 8) & 0xff)] ^ t[512 | ((x3 >>> 16) & 0xff)] ^ t[768 | (x0 >>> 24)];
  s[out + 2] ^= t[x2 & 0xff] ^ t[256 | ((x3 >>> 8) & 0xff)] ^ t[512 | ((x0 >>> 16) & 0xff)] ^ t[768 | (x1 >>> 24)];
  s[out + 3] ^= t[x3 & 0xff] ^ t[256 | ((x0 >>> 8) & 0xff)] ^ t[512 | ((x1 >>> 16) & 0xff)] ^ t[768 | (x2 >>> 24)];
}

/** Like `roundInPlace`, with the round key `s[out..out+3] ^ m[mo..mo+3]` (a message block is absorbed). */
export function roundInPlaceXor(s: Uint32Array, out: number, inp: number, m: Uint32Array, mo: number): void {
  const x0 = s[inp];
  const x1 = s[inp + 1];
  const x2 = s[inp + 2];
  const x3 = s[inp + 3];
  const t = TT;
  s[out] ^= m[mo] ^ t[x0 & 0xff] ^ t[256 | ((x1 >>> 8) & 0xff)] ^ t[512 | ((x2 >>> 16) & 0xff)] ^ t[768 | (x3 >>> 24)];
  s[out + 1] ^= m[mo + 1] ^ t[x1 & 0xff] ^ t[256 | ((x2 >>> 8) & 0xff)] ^ t[512 | ((x3 >>> 16) & 0xff)] ^ t[768 | (x0 >>> 24)];
  s[out + 2] ^= m[mo + 2] ^ t[x2 & 0xff] ^ t[256 | ((x3 >>> 8) & 0xff)] ^ t[512 | ((x0 >>> 16) & 0xff)] ^ t[768 | (x1 >>> 24)];
  s[out + 3] ^= m[mo + 3] ^ t[x3 & 0xff] ^ t[256 | ((x0 >>> 8) & 0xff)] ^ t[512 | ((x1 >>> 16) & 0xff)] ^ t[768 | (x2 >>> 24)];
}

export function load32(b: Uint8Array, i: number): number {
  return b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
}

export function store32(b: Uint8Array, i: number, v: number): void {
  b[i] = v;
  b[i + 1] = v >>> 8;
  b[i + 2] = v >>> 16;
  b[i + 3] = v >>> 24;
}

/**
 * `AESRound(input, rk)` on 16-byte blocks (the draft's "AESRound Test
 * Vector"); table-based, see the warning at the top of this file.
 */
export function aesRound(input: Uint8Array, rk: Uint8Array): Uint8Array {
  if (!(input instanceof Uint8Array) || input.length !== 16 || !(rk instanceof Uint8Array) || rk.length !== 16) {
    throw invalidArgument('aesRound: input and round key must be 16-byte Uint8Arrays');
  }
  const s = new Uint32Array(8);
  for (let i = 0; i < 4; i++) {
    s[i] = load32(input, 4 * i);
    s[4 + i] = load32(rk, 4 * i);
  }
  roundInPlace(s, 4, 0);
  const out = new Uint8Array(16);
  for (let i = 0; i < 4; i++) store32(out, 4 * i, s[4 + i]);
  return out;
}
