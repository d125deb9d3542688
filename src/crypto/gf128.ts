/**
 * Multiplication by x ("doubling") in GF(2^128) modulo
 * x^128 + x^7 + x^2 + x + 1, in the two byte orders the formats use.
 * Both are branch-free in the secret bit, and safe with `out === x`.
 */

/**
 * Big-endian doubling of RFC 4493 §2.3 / RFC 5297 §2.3 (CMAC subkeys, S2V):
 * the 16 bytes are one big-endian number shifted left by one bit; if the top
 * bit fell out, 0x87 is XORed into the last byte.
 */
export function dblBigEndian(x: Uint8Array, out: Uint8Array = new Uint8Array(16)): Uint8Array {
  const carry = x[0] >>> 7;
  for (let i = 0; i < 15; i++) out[i] = ((x[i] << 1) | (x[i + 1] >>> 7)) & 0xff;
  out[15] = ((x[15] << 1) & 0xff) ^ (0x87 & -carry);
  return out;
}

/**
 * Little-endian doubling used by EME (Halevi–Rogaway 2003, as implemented by
 * github.com/rfjakob/eme `multByTwo`; Documentation/format.md §7.4): byte 0 is the least
 * significant, so bits move towards byte 15 and 0x87 goes into byte 0.
 */
export function dblLittleEndian(x: Uint8Array, out: Uint8Array = new Uint8Array(16)): Uint8Array {
  const carry = x[15] >>> 7;
  for (let i = 15; i > 0; i--) out[i] = ((x[i] << 1) | (x[i - 1] >>> 7)) & 0xff;
  out[0] = ((x[0] << 1) & 0xff) ^ (0x87 & -carry);
  return out;
}
