/**
 * Pure-TypeScript AEGIS (draft-irtf-cfrg-aegis-aead, the revision whose test
 * vectors are in test/fixtures/aegis-vectors, which is also what libaegis
 * as bundled in go-libaegis v0.2.11 computes).
 *
 * One engine covers both families and every degree of parallelism:
 *   family '256', lanes 1/2/4 = AEGIS-256 / AEGIS-256X2 / AEGIS-256X4
 *   family '128', lanes 1/2/4 = AEGIS-128L / AEGIS-128X2 / AEGIS-128X4
 * (the draft's "Implementation Considerations": a degree of 1 is the base
 * algorithm, since ctx[0] = Byte(0) || Byte(0) is all zero).
 *
 * ⚠ The AES round is TABLE-BASED (see ./aes-round.ts): not constant-time
 * with respect to cache timing. The native addon is the constant-time path.
 *
 * State layout: one Uint32Array; AES block V[j, i] (block j of lane i) is the
 * four little-endian words at ((j * lanes) + i) * 4, so "row" j of all lanes
 * is one contiguous run of 4·lanes words, matching how a rate block is split
 * over the lanes. A scratch row follows the state.
 */
import { constantTimeEqual } from '../constant-time.js';
import { load32, roundInPlace, roundInPlaceXor, store32 } from './aes-round.js';

export type AegisFamily = '128' | '256';
export type AegisLanes = 1 | 2 | 4;
export type AegisTagLength = 16 | 32;

/** C0 and C1 from the draft (Fibonacci numbers mod 256), as little-endian words. */
const C0 = wordsOf([0x00, 0x01, 0x01, 0x02, 0x03, 0x05, 0x08, 0x0d, 0x15, 0x22, 0x37, 0x59, 0x90, 0xe9, 0x79, 0x62]);
const C1 = wordsOf([0xdb, 0x3d, 0x18, 0x55, 0x6d, 0xc2, 0x2f, 0xf1, 0x20, 0x11, 0x31, 0x42, 0x73, 0xb5, 0x28, 0xdd]);

function wordsOf(bytes: number[]): Uint32Array {
  const w = new Uint32Array(4);
  for (let i = 0; i < 4; i++) w[i] = load32(Uint8Array.from(bytes), 4 * i);
  return w;
}

/**
 * The AEGIS state machine for one variant. Not reentrant (keeps its state in
 * preallocated arrays); every call runs to completion synchronously, so one
 * engine per variant can serve a whole JS thread.
 */
export class AegisEngine {
  readonly family: AegisFamily;
  readonly lanes: AegisLanes;
  readonly keySize: number;
  readonly nonceSize: number;
  /** Bytes absorbed per update: 32·lanes (128 family) or 16·lanes (256 family). */
  readonly rate: number;
  /** AES blocks per lane: 8 or 6. */
  readonly #blocks: number;
  /** Words in one row (one block index across all lanes). */
  readonly #row: number;
  readonly #s: Uint32Array;
  /** One rate block of input words (message, AD, or key material during init). */
  readonly #m: Uint32Array;
  /** Keystream words for one rate block. */
  readonly #z: Uint32Array;
  /** A zero-padded partial rate block (bytes). */
  readonly #pad: Uint8Array;

  constructor(family: AegisFamily, lanes: AegisLanes) {
    this.family = family;
    this.lanes = lanes;
    this.keySize = family === '128' ? 16 : 32;
    this.nonceSize = this.keySize;
    this.rate = (family === '128' ? 32 : 16) * lanes;
    this.#blocks = family === '128' ? 8 : 6;
    this.#row = 4 * lanes;
    this.#s = new Uint32Array((this.#blocks + 1) * this.#row);
    this.#m = new Uint32Array(this.rate / 4);
    this.#z = new Uint32Array(this.rate / 4);
    this.#pad = new Uint8Array(this.rate);
  }

  /** Update(M) (256 family) / Update(M0, M1) (128 family) with M taken from `m`. */
  #update(m: Uint32Array): void {
    const s = this.#s;
    const L = this.#row;
    const B = this.#blocks;
    const scratch = B * L;
    const last = (B - 1) * L;
    // V'[0] needs the old V[B-1]; everything else is done in place from the top down.
    for (let w = 0; w < L; w++) s[scratch + w] = s[last + w];
    if (B === 8) {
      for (let j = 7; j >= 5; j--) for (let w = 0; w < L; w += 4) roundInPlace(s, j * L + w, (j - 1) * L + w);
      for (let w = 0; w < L; w += 4) roundInPlaceXor(s, 4 * L + w, 3 * L + w, m, L + w);
      for (let j = 3; j >= 1; j--) for (let w = 0; w < L; w += 4) roundInPlace(s, j * L + w, (j - 1) * L + w);
    } else {
      for (let j = 5; j >= 1; j--) for (let w = 0; w < L; w += 4) roundInPlace(s, j * L + w, (j - 1) * L + w);
    }
    for (let w = 0; w < L; w += 4) roundInPlaceXor(s, w, scratch + w, m, w);
  }

  /** XORs ctx[i] = Byte(i) || Byte(D-1) || 0^112 into V[a, i] and V[b, i]. */
  #addContext(a: number, b: number): void {
    if (this.lanes === 1) return; // ctx[0] is zero for D = 1
    const s = this.#s;
    const L = this.#row;
    for (let i = 0; i < this.lanes; i++) {
      const ctx = i | ((this.lanes - 1) << 8);
      s[a * L + 4 * i] ^= ctx;
      s[b * L + 4 * i] ^= ctx;
    }
  }

  #init(key: Uint8Array, nonce: Uint8Array): void {
    const s = this.#s;
    const L = this.#row;
    const m = this.#m;
    if (this.family === '256') {
      const k0 = new Uint32Array(4);
      const k1 = new Uint32Array(4);
      const n0 = new Uint32Array(4);
      const n1 = new Uint32Array(4);
      for (let w = 0; w < 4; w++) {
        k0[w] = load32(key, 4 * w);
        k1[w] = load32(key, 16 + 4 * w);
        n0[w] = load32(nonce, 4 * w);
        n1[w] = load32(nonce, 16 + 4 * w);
      }
      for (let w = 0; w < L; w++) {
        const c = w & 3;
        s[w] = k0[c] ^ n0[c];
        s[L + w] = k1[c] ^ n1[c];
        s[2 * L + w] = C1[c];
        s[3 * L + w] = C0[c];
        s[4 * L + w] = k0[c] ^ C0[c];
        s[5 * L + w] = k1[c] ^ C1[c];
      }
      const feed = (f: (c: number) => number): void => {
        for (let w = 0; w < L; w++) m[w] = f(w & 3);
        this.#addContext(3, 5);
        this.#update(m);
      };
      for (let r = 0; r < 4; r++) {
        feed((c) => k0[c]);
        feed((c) => k1[c]);
        feed((c) => k0[c] ^ n0[c]);
        feed((c) => k1[c] ^ n1[c]);
      }
      k0.fill(0);
      k1.fill(0);
    } else {
      const k = new Uint32Array(4);
      const n = new Uint32Array(4);
      for (let w = 0; w < 4; w++) {
        k[w] = load32(key, 4 * w);
        n[w] = load32(nonce, 4 * w);
      }
      for (let w = 0; w < L; w++) {
        const c = w & 3;
        s[w] = k[c] ^ n[c];
        s[L + w] = C1[c];
        s[2 * L + w] = C0[c];
        s[3 * L + w] = C1[c];
        s[4 * L + w] = k[c] ^ n[c];
        s[5 * L + w] = k[c] ^ C0[c];
        s[6 * L + w] = k[c] ^ C1[c];
        s[7 * L + w] = k[c] ^ C0[c];
        m[w] = n[c]; // M0 = nonce in every lane
        m[L + w] = k[c]; // M1 = key in every lane
      }
      for (let r = 0; r < 10; r++) {
        this.#addContext(3, 7);
        this.#update(m);
      }
      k.fill(0);
    }
  }

  /** z = the keystream for the next rate block, from the current state. */
  #keystream(): void {
    const s = this.#s;
    const L = this.#row;
    const z = this.#z;
    if (this.#blocks === 8) {
      for (let w = 0; w < L; w++) {
        z[w] = s[6 * L + w] ^ s[L + w] ^ (s[2 * L + w] & s[3 * L + w]);
        z[L + w] = s[2 * L + w] ^ s[5 * L + w] ^ (s[6 * L + w] & s[7 * L + w]);
      }
    } else {
      for (let w = 0; w < L; w++) z[w] = s[L + w] ^ s[4 * L + w] ^ s[5 * L + w] ^ (s[2 * L + w] & s[3 * L + w]);
    }
  }

  /** Loads one full rate block of `src` at `off` into #m. */
  #loadBlock(src: Uint8Array, off: number): void {
    const m = this.#m;
    for (let w = 0; w < m.length; w++) m[w] = load32(src, off + 4 * w);
  }

  /** Loads `src[off..off+len)` zero-padded to a rate block into #m (len < rate). */
  #loadPartial(src: Uint8Array, off: number, len: number): void {
    const pad = this.#pad;
    pad.fill(0);
    pad.set(src.subarray(off, off + len));
    this.#loadBlock(pad, 0);
  }

  #absorbAd(ad: Uint8Array): void {
    const rate = this.rate;
    const full = ad.length - (ad.length % rate);
    for (let off = 0; off < full; off += rate) {
      this.#loadBlock(ad, off);
      this.#update(this.#m);
    }
    if (full < ad.length) {
      this.#loadPartial(ad, full, ad.length - full);
      this.#update(this.#m);
    }
  }

  /** Finalize(|ad|, |msg|): writes the tag to out[off..off+tagLen). */
  #finalize(adLen: number, msgLen: number, tagLen: AegisTagLength, out: Uint8Array, off: number): void {
    const s = this.#s;
    const L = this.#row;
    const m = this.#m;
    const B = this.#blocks;
    const u = [(adLen * 8) >>> 0, Math.floor((adLen * 8) / 0x100000000) >>> 0, (msgLen * 8) >>> 0, Math.floor((msgLen * 8) / 0x100000000) >>> 0];
    const src = B === 8 ? 2 : 3; // t = V[2] ^ u (128 family) or V[3] ^ u (256 family), every lane
    for (let w = 0; w < L; w++) m[w] = s[src * L + w] ^ u[w & 3];
    if (B === 8) for (let w = 0; w < L; w++) m[L + w] = m[w]; // Update(t, t)
    for (let r = 0; r < 7; r++) this.#update(m);
    // Tag: XOR of state blocks [from, to) over every lane.
    const fold = (from: number, to: number, at: number): void => {
      for (let c = 0; c < 4; c++) {
        let t = 0;
        for (let j = from; j < to; j++) for (let i = 0; i < this.lanes; i++) t ^= s[j * L + 4 * i + c];
        store32(out, at + 4 * c, t);
      }
    };
    if (tagLen === 16) {
      fold(0, B === 8 ? 7 : 6, off);
    } else {
      fold(0, B / 2, off);
      fold(B / 2, B, off + 16);
    }
  }

  /**
   * @internal Test hooks for the draft's "Update Test Vector" and "Initial
   * State (after initialization)" entries. State bytes are V[j, i] in the
   * order j-major, lane-minor (16 bytes each); `msg` is one rate block.
   */
  debugUpdate(state: Uint8Array, msg: Uint8Array): Uint8Array {
    const s = this.#s;
    const n = this.#blocks * this.#row;
    for (let w = 0; w < n; w++) s[w] = load32(state, 4 * w);
    this.#loadBlock(msg, 0);
    this.#update(this.#m);
    return this.#dumpState();
  }

  /** @internal See `debugUpdate`: the state right after Init(key, nonce). */
  debugInit(key: Uint8Array, nonce: Uint8Array): Uint8Array {
    this.#init(key, nonce);
    return this.#dumpState();
  }

  #dumpState(): Uint8Array {
    const n = this.#blocks * this.#row;
    const out = new Uint8Array(4 * n);
    for (let w = 0; w < n; w++) store32(out, 4 * w, this.#s[w]);
    this.#wipe();
    return out;
  }

  #wipe(): void {
    this.#s.fill(0);
    this.#m.fill(0);
    this.#z.fill(0);
    this.#pad.fill(0);
  }

  /**
   * Encrypts `msg` under (key, nonce, ad); writes ciphertext (msg.length
   * bytes) then the tag to `out` at `off`. `out` may be `msg` itself only if
   * `off` is msg's own offset (in-place encryption). Sizes are the caller's job.
   */
  encryptInto(
    key: Uint8Array,
    nonce: Uint8Array,
    msg: Uint8Array,
    ad: Uint8Array,
    tagLen: AegisTagLength,
    out: Uint8Array,
    off: number,
  ): void {
    const rate = this.rate;
    const m = this.#m;
    const z = this.#z;
    this.#init(key, nonce);
    this.#absorbAd(ad);
    const len = msg.length;
    const full = len - (len % rate);
    for (let p = 0; p < full; p += rate) {
      this.#keystream();
      this.#loadBlock(msg, p);
      for (let w = 0; w < m.length; w++) store32(out, off + p + 4 * w, m[w] ^ z[w]);
      this.#update(m);
    }
    if (full < len) {
      const rest = len - full;
      this.#keystream();
      this.#loadPartial(msg, full, rest);
      const pad = this.#pad;
      for (let w = 0; w < m.length; w++) store32(pad, 4 * w, m[w] ^ z[w]);
      out.set(pad.subarray(0, rest), off + full);
      this.#update(m);
    }
    this.#finalize(ad.length, len, tagLen, out, off + len);
    this.#wipe();
  }

  /**
   * Decrypts `ct` and checks `tag`; writes the plaintext to `out` at `off`.
   * Returns false (and zeroes what it wrote) if the tag does not verify.
   */
  decryptInto(
    key: Uint8Array,
    nonce: Uint8Array,
    ct: Uint8Array,
    tag: Uint8Array,
    ad: Uint8Array,
    out: Uint8Array,
    off: number,
  ): boolean {
    const rate = this.rate;
    const m = this.#m;
    const z = this.#z;
    this.#init(key, nonce);
    this.#absorbAd(ad);
    const len = ct.length;
    const full = len - (len % rate);
    for (let p = 0; p < full; p += rate) {
      this.#keystream();
      this.#loadBlock(ct, p);
      for (let w = 0; w < m.length; w++) {
        m[w] ^= z[w];
        store32(out, off + p + 4 * w, m[w]);
      }
      this.#update(m);
    }
    if (full < len) {
      const rest = len - full;
      this.#keystream();
      this.#loadPartial(ct, full, rest);
      const pad = this.#pad;
      for (let w = 0; w < m.length; w++) store32(pad, 4 * w, m[w] ^ z[w]);
      pad.fill(0, rest); // DecPartial: v = ZeroPad(Truncate(out, |cn|))
      out.set(pad.subarray(0, rest), off + full);
      this.#loadBlock(pad, 0);
      this.#update(m);
    }
    const expected = new Uint8Array(tag.length);
    this.#finalize(ad.length, len, tag.length as AegisTagLength, expected, 0);
    this.#wipe();
    const ok = constantTimeEqual(expected, tag);
    expected.fill(0);
    if (!ok) out.fill(0, off, off + len);
    return ok;
  }
}
