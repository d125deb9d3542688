/**
 * AEGIS as tscryptfs AEADs (16-byte tags, sealed = ct || tag), with the
 * batched block calls the content layer uses for whole FUSE requests.
 * `Aegis256X2Aead` is gocryptfs's `AEGIS256X2` content cipher (cipher
 * name 'aegis'); `Aegis128X2Aead` and the other variants serve -speed and
 * benchmarks only.
 */
import { authError, type Aead } from '../aead.js';
import { requireBytes, requireNonce, TAG_SIZE } from '../aead-checks.js';
import { invalidArgument, requireLength } from '../errors.js';
import { AegisEngine } from './aegis-ts.js';
import { requireNative, resolveBackend, type AegisBackend } from './backend.js';
import { variantInfo } from './functions.js';
import type { AegisNativeBinding } from './native.js';
import { allocOutput } from './out-pool.js';
import type { AegisVariant, AegisVariantInfo } from './variants.js';

/**
 * The `Aead` shape with `cipher` widened to a string (AEGIS-128X2 is no
 * gocryptfs cipher), plus the batched block calls (required here).
 */
export interface AegisAead extends Omit<Aead, 'cipher' | 'backend' | 'sealBlocks' | 'openBlocks'> {
  readonly cipher: string;
  readonly backend: AegisBackend;
  readonly variant: AegisVariant;
  /**
   * Seals `plaintext` cut into `blockSize` blocks (the last may be shorter)
   * with nonces[k·nonceSize ...] and aads[k·aadLen ...] (aadLen =
   * aads.length / blocks), returning the blocks as stored on disk, back to
   * back: nonce || ct || tag. With `out` (exactly plaintext.length +
   * blocks·(nonceSize + 16) bytes, not overlapping the inputs) the result is
   * written there and `out` is returned.
   */
  sealBlocks(nonces: Uint8Array, plaintext: Uint8Array, aads: Uint8Array, blockSize?: number, out?: Uint8Array): Uint8Array;
  /**
   * Opens what `sealBlocks` produced (blocks of blockSize + nonceSize + 16
   * bytes, the last may be shorter). Throws EAUTH, with `blockIndex` set to
   * the first bad block, if any block fails; never returns partial plaintext
   * (a given `out`, of exactly the plaintext length, is zeroed then).
   */
  openBlocks(sealed: Uint8Array, aads: Uint8Array, blockSize?: number, out?: Uint8Array): Uint8Array;
}

function blockAuthError(title: string, what: string, index: number): Error {
  const err = authError(`${title}: block ${index} ${what}`) as Error & { blockIndex?: number };
  err.blockIndex = index;
  return err;
}

/** The caller's output buffer after a size check, or a new one. */
function outputBuffer(out: Uint8Array | undefined, size: number, what: string): Uint8Array {
  if (out === undefined) return new Uint8Array(size);
  requireLength(out, size, `${what} output`);
  return out;
}

function requireBlockSize(blockSize: number): void {
  if (!Number.isSafeInteger(blockSize) || blockSize <= 0 || blockSize > 0x40000000) {
    throw invalidArgument(`bad block size ${blockSize}`);
  }
}

/** Shared body of the AEAD classes. */
abstract class AegisAeadBase implements AegisAead {
  abstract readonly cipher: string;
  readonly backend: AegisBackend;
  readonly variant: AegisVariant;
  readonly nonceSize: number;
  readonly tagSize = TAG_SIZE;
  readonly #info: AegisVariantInfo;
  readonly #key: Uint8Array;
  readonly #native: AegisNativeBinding | null;
  readonly #engine: AegisEngine | null;

  protected constructor(variant: AegisVariant, key: Uint8Array, backend: AegisBackend | undefined) {
    const v = variantInfo(variant);
    requireLength(key, v.keySize, `${v.title} key`);
    this.backend = resolveBackend(backend);
    this.variant = variant;
    this.nonceSize = v.nonceSize;
    this.#info = v;
    this.#key = Uint8Array.from(key);
    this.#native = this.backend === 'native' ? requireNative() : null;
    this.#engine = this.backend === 'ts' ? new AegisEngine(v.family, v.lanes) : null;
  }

  /** Returns ct || tag; small results may be views into a shared slab (see ./out-pool.ts). */
  seal(nonce: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Uint8Array {
    requireNonce(nonce, this.nonceSize, this.#info.title);
    requireBytes(plaintext, 'plaintext');
    requireBytes(aad, 'aad');
    const out = allocOutput(plaintext.length + TAG_SIZE);
    if (this.#native !== null) this.#native.seal(this.#info.nativeId, this.#key, nonce, plaintext, aad, out);
    else this.#engine!.encryptInto(this.#key, nonce, plaintext, aad, TAG_SIZE, out, 0);
    return out;
  }

  open(nonce: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Uint8Array {
    requireNonce(nonce, this.nonceSize, this.#info.title);
    requireBytes(sealed, 'sealed data');
    requireBytes(aad, 'aad');
    if (sealed.length < TAG_SIZE) throw authError(`${this.#info.title}: ciphertext shorter than the tag`);
    const split = sealed.length - TAG_SIZE;
    const out = allocOutput(split);
    const ok =
      this.#native !== null
        ? this.#native.open(this.#info.nativeId, this.#key, nonce, sealed, aad, out)
        : this.#engine!.decryptInto(this.#key, nonce, sealed.subarray(0, split), sealed.subarray(split), aad, out, 0);
    if (!ok) throw authError();
    return out;
  }

  sealBlocks(nonces: Uint8Array, plaintext: Uint8Array, aads: Uint8Array, blockSize = 4096, out?: Uint8Array): Uint8Array {
    requireBytes(nonces, 'nonces');
    requireBytes(plaintext, 'plaintext');
    requireBytes(aads, 'aads');
    requireBlockSize(blockSize);
    const n = Math.ceil(plaintext.length / blockSize);
    const ns = this.nonceSize;
    if (nonces.length !== n * ns) throw invalidArgument(`sealBlocks: ${n} blocks need ${n * ns} nonce bytes, got ${nonces.length}`);
    const aadLen = n === 0 ? 0 : aads.length / n;
    if (!Number.isInteger(aadLen)) throw invalidArgument(`sealBlocks: ${aads.length} AAD bytes do not split into ${n} blocks`);
    out = outputBuffer(out, plaintext.length + n * (ns + TAG_SIZE), 'sealBlocks');
    if (n === 0) return out;
    if (this.#native !== null) {
      this.#native.sealBlocks(this.#info.nativeId, this.#key, nonces, plaintext, blockSize, aads, aadLen, out);
      return out;
    }
    const engine = this.#engine!;
    for (let k = 0, o = 0; k < n; k++) {
      const pt = plaintext.subarray(k * blockSize, Math.min(plaintext.length, (k + 1) * blockSize));
      const nonce = nonces.subarray(k * ns, (k + 1) * ns);
      out.set(nonce, o);
      engine.encryptInto(this.#key, nonce, pt, aads.subarray(k * aadLen, (k + 1) * aadLen), TAG_SIZE, out, o + ns);
      o += ns + pt.length + TAG_SIZE;
    }
    return out;
  }

  openBlocks(sealed: Uint8Array, aads: Uint8Array, blockSize = 4096, out?: Uint8Array): Uint8Array {
    requireBytes(sealed, 'sealed data');
    requireBytes(aads, 'aads');
    requireBlockSize(blockSize);
    const ns = this.nonceSize;
    const overhead = ns + TAG_SIZE;
    const cbs = blockSize + overhead;
    const n = Math.ceil(sealed.length / cbs);
    const aadLen = n === 0 ? 0 : aads.length / n;
    if (!Number.isInteger(aadLen)) throw invalidArgument(`openBlocks: ${aads.length} AAD bytes do not split into ${n} blocks`);
    if (n > 0 && sealed.length - (n - 1) * cbs < overhead) throw blockAuthError(this.#info.title, 'is shorter than nonce and tag', n - 1);
    out = outputBuffer(out, sealed.length - n * overhead, 'openBlocks');
    if (n === 0) return out;
    const bad =
      this.#native !== null
        ? this.#native.openBlocks(this.#info.nativeId, this.#key, sealed, cbs, aads, aadLen, out)
        : this.#openBlocksTs(sealed, aads, aadLen, blockSize, n, out);
    if (bad >= 0) throw blockAuthError(this.#info.title, 'failed authentication', bad);
    return out;
  }

  /** TypeScript body of openBlocks: -1, or the first bad block (out zeroed). */
  #openBlocksTs(sealed: Uint8Array, aads: Uint8Array, aadLen: number, blockSize: number, n: number, out: Uint8Array): number {
    const engine = this.#engine!;
    const ns = this.nonceSize;
    const cbs = blockSize + ns + TAG_SIZE;
    for (let k = 0; k < n; k++) {
      const blk = sealed.subarray(k * cbs, Math.min(sealed.length, (k + 1) * cbs));
      const split = blk.length - TAG_SIZE;
      const aad = aads.subarray(k * aadLen, (k + 1) * aadLen);
      if (!engine.decryptInto(this.#key, blk.subarray(0, ns), blk.subarray(ns, split), blk.subarray(split), aad, out, k * blockSize)) {
        out.fill(0);
        return k;
      }
    }
    return -1;
  }
}

/**
 * AEGIS-256X2 with 16-byte tags: gocryptfs's `AEGIS256X2` content cipher
 * (32-byte key, 32-byte nonce), CipherName 'aegis'.
 */
export class Aegis256X2Aead extends AegisAeadBase implements Aead {
  readonly cipher = 'aegis' as const;
  constructor(key: Uint8Array, backend?: AegisBackend) {
    super('aegis256x2', key, backend);
  }
}

/** AEGIS-128X2 with 16-byte tags (16-byte key and nonce). Not a gocryptfs cipher. */
export class Aegis128X2Aead extends AegisAeadBase {
  readonly cipher = 'aegis128x2' as const;
  constructor(key: Uint8Array, backend?: AegisBackend) {
    super('aegis128x2', key, backend);
  }
}

/** Any AEGIS variant with 16-byte tags (benchmarks); `cipher` is the variant name except for 256X2. */
export function createAegisAead(variant: AegisVariant, key: Uint8Array, backend?: AegisBackend): AegisAead {
  if (variant === 'aegis256x2') return new Aegis256X2Aead(key, backend);
  if (variant === 'aegis128x2') return new Aegis128X2Aead(key, backend);
  variantInfo(variant);
  return new (class extends AegisAeadBase {
    readonly cipher = variant;
    constructor() {
      super(variant, key, backend);
    }
  })();
}
