/**
 * AES-SIV (RFC 5297), generic over the three key sizes (32/48/64 bytes =
 * AES-128/192/256 for both halves). Output layout is the RFC's: V || C.
 */
import { authError, type BackendName } from './aead.js';
import { AES_BLOCK, type AesBlockCipher } from './aes-block.js';
import { createAesBlockCipher } from './aes-block-factory.js';
import { constantTimeEqual } from './constant-time.js';
import { invalidArgument, requireLength } from './errors.js';
import { S2V_MAX_INPUTS, S2v } from './s2v.js';

export const SIV_KEY_LENGTHS = [32, 48, 64] as const;

/**
 * Q = V with the 31st and 63rd bit (counting from the right) cleared, i.e.
 * the top bits of bytes 8 and 12, so CTR implementations that carry only
 * within 32 or 64 bits agree with a full 128-bit counter (RFC 5297 §2.5-2.6).
 */
function counterFromV(v: Uint8Array): Uint8Array {
  const q = Uint8Array.from(v);
  q[8] &= 0x7f;
  q[12] &= 0x7f;
  return q;
}

export class Siv {
  readonly #s2v: S2v;
  readonly #ctr: AesBlockCipher;

  /** `key` = K1 || K2 (RFC 5297 §2.6): K1 keys S2V, K2 keys CTR. */
  constructor(key: Uint8Array, backend: BackendName = 'node') {
    requireLength(key, SIV_KEY_LENGTHS, 'AES-SIV key');
    const half = key.length / 2;
    this.#s2v = new S2v(key.subarray(0, half), backend);
    this.#ctr = createAesBlockCipher(key.subarray(half), backend);
  }

  /** SIV-ENCRYPT(K, P, AD1..ADn) (RFC 5297 §2.6): returns V || C. */
  seal(associatedData: readonly Uint8Array[], plaintext: Uint8Array): Uint8Array {
    this.#checkAd(associatedData);
    const v = this.#s2v.compute([...associatedData, plaintext]);
    const c = this.#ctr.ctr(counterFromV(v), plaintext);
    const out = new Uint8Array(AES_BLOCK + c.length);
    out.set(v);
    out.set(c, AES_BLOCK);
    return out;
  }

  /**
   * SIV-DECRYPT(K, Z, AD1..ADn) (RFC 5297 §2.7): `sealed` = V || C.
   * Throws EAUTH (and wipes the candidate plaintext) when T != V.
   */
  open(associatedData: readonly Uint8Array[], sealed: Uint8Array): Uint8Array {
    this.#checkAd(associatedData);
    if (sealed.length < AES_BLOCK) throw authError('AES-SIV: ciphertext shorter than the 16-byte SIV');
    const v = sealed.subarray(0, AES_BLOCK);
    const p = this.#ctr.ctr(counterFromV(v), sealed.subarray(AES_BLOCK));
    const t = this.#s2v.compute([...associatedData, p]);
    if (!constantTimeEqual(t, v)) {
      p.fill(0);
      throw authError();
    }
    return p;
  }

  #checkAd(ad: readonly Uint8Array[]): void {
    if (ad.length > S2V_MAX_INPUTS - 1) throw invalidArgument(`AES-SIV takes at most ${S2V_MAX_INPUTS - 1} associated data items`);
  }
}

/** One-shot SIV-ENCRYPT (RFC 5297 §2.6); returns V || C. */
export function sivSeal(key: Uint8Array, ad: readonly Uint8Array[], plaintext: Uint8Array, backend: BackendName = 'node'): Uint8Array {
  return new Siv(key, backend).seal(ad, plaintext);
}

/** One-shot SIV-DECRYPT (RFC 5297 §2.7); throws code EAUTH on a bad tag. */
export function sivOpen(key: Uint8Array, ad: readonly Uint8Array[], sealed: Uint8Array, backend: BackendName = 'node'): Uint8Array {
  return new Siv(key, backend).open(ad, sealed);
}
