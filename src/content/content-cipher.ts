/**
 * Sealing and opening content blocks (Documentation/format.md §5.7, §6.3),
 * and the single AEAD messages used for symlink targets and xattr values
 * (§8.1, §8.3).
 *
 * A block on disk is `nonce || sealed`, where `sealed` is what the AEAD
 * returns. Every block's AAD is BE64(blockNo) || fileID, so blocks cannot
 * be moved within or between files without failing authentication.
 *
 * When the AEAD has the batch calls (AEGIS), runs of blocks are sealed and
 * opened in one call (nonces cut from one pool, one native call for a
 * whole FUSE request); the bytes are the same as block by block.
 */
import type { Aead } from '../crypto/aead.js';
import { randomNonces } from '../crypto/random.js';
import { BLOCK_SIZE, layout, type Layout } from './layout.js';

export class BlockError extends Error {
  readonly code = 'EBADBLOCK';
  constructor(
    message: string,
    readonly blockNo: number,
  ) {
    super(message);
  }
}

const ZERO_AAD = new Uint8Array(8);

function isAllZero(buf: Uint8Array): boolean {
  for (let i = 0; i < buf.length; i++) if (buf[i] !== 0) return false;
  return true;
}

export class ContentCipher {
  readonly layout: Layout;
  readonly nonceSize: number;

  constructor(readonly aead: Aead) {
    this.nonceSize = aead.nonceSize;
    this.layout = layout(aead.nonceSize, aead.tagSize);
  }

  /** AAD of block n of file fileId: BE64(n) || fileId. */
  blockAad(n: number, fileId: Uint8Array): Buffer {
    const aad = Buffer.allocUnsafe(8 + fileId.length);
    aad.writeBigUInt64BE(BigInt(n), 0);
    aad.set(fileId, 8);
    return aad;
  }

  /** Encrypts one plaintext block (1..4096 bytes) with a fresh nonce. */
  sealBlock(n: number, fileId: Uint8Array, plain: Uint8Array): Buffer {
    const nonce = randomNonces(this.nonceSize);
    return Buffer.concat([nonce, this.aead.seal(nonce, plain, this.blockAad(n, fileId))]);
  }

  /**
   * Decrypts one cipher block. A full-size all-zero block is a hole and
   * reads as 4096 zero bytes (native twin, for a mount's reads and writes:
   * content_is_hole in native/fastpath/content.c). Throws BlockError on
   * anything else that does not authenticate.
   */
  openBlock(n: number, fileId: Uint8Array, block: Uint8Array): Uint8Array {
    const { cipherBlockSize } = this.layout;
    if (block.length === cipherBlockSize && isAllZero(block)) return new Uint8Array(BLOCK_SIZE);
    if (block.length <= this.layout.overhead) {
      throw new BlockError(`block ${n} is truncated (${block.length} bytes)`, n);
    }
    const nonce = block.subarray(0, this.nonceSize);
    if (isAllZero(nonce)) throw new BlockError(`block ${n} has an all-zero nonce`, n);
    try {
      return this.aead.open(nonce, block.subarray(this.nonceSize), this.blockAad(n, fileId));
    } catch {
      throw new BlockError(`block ${n} failed authentication`, n);
    }
  }

  /** The AADs of blocks first..first+count-1, back to back. */
  blockAads(first: number, count: number, fileId: Uint8Array): Buffer {
    const len = 8 + fileId.length;
    const aads = Buffer.allocUnsafe(count * len);
    for (let k = 0; k < count; k++) {
      // BE64(block number) as two 32-bit halves: no BigInt per block (block numbers stay below 2^53).
      const n = first + k;
      aads.writeUInt32BE(Math.floor(n / 0x1_0000_0000), k * len);
      aads.writeUInt32BE(n >>> 0, k * len + 4);
      aads.set(fileId, k * len + 8);
    }
    return aads;
  }

  /**
   * Seals consecutive plaintext blocks starting at block `first` into one
   * buffer: nonces from the pool, one output allocation, and one
   * AEAD call for the whole run when the AEAD has a batch call (AEGIS).
   */
  sealBlocks(first: number, fileId: Uint8Array, plain: Uint8Array, into?: Buffer): Buffer {
    const count = Math.ceil(plain.length / BLOCK_SIZE);
    const nonces = randomNonces(count * this.nonceSize);
    const aads = this.blockAads(first, count, fileId);
    // Every byte of `out` is written (nonce, ciphertext, tag), so it need not be zeroed first.
    const sealedLen = plain.length + count * this.layout.overhead;
    const out = into !== undefined && into.length >= sealedLen ? into.subarray(0, sealedLen) : Buffer.allocUnsafe(sealedLen);
    if (this.aead.sealBlocks !== undefined && count > 0) {
      this.aead.sealBlocks(nonces, plain, aads, BLOCK_SIZE, out);
      return out;
    }
    const aadLen = 8 + fileId.length;
    let pos = 0;
    for (let k = 0; k < count; k++) {
      const nonce = nonces.subarray(k * this.nonceSize, (k + 1) * this.nonceSize);
      const block = plain.subarray(k * BLOCK_SIZE, Math.min((k + 1) * BLOCK_SIZE, plain.length));
      out.set(nonce, pos);
      pos += nonce.length;
      const sealed = this.aead.seal(nonce, block, aads.subarray(k * aadLen, (k + 1) * aadLen));
      out.set(sealed, pos);
      pos += sealed.length;
    }
    return out;
  }

  /** Plaintext bytes in `cipher`, a run of whole blocks with a possibly shorter last one. */
  plainLength(cipher: Uint8Array): number {
    const count = Math.ceil(cipher.length / this.layout.cipherBlockSize);
    return Math.max(0, cipher.length - count * this.layout.overhead);
  }

  /**
   * Opens consecutive cipher blocks starting at block `first`. Stops at the
   * first bad block and throws BlockError naming it. With `out`, of
   * exactly plainLength(cipher) bytes, the plaintext goes there (a read
   * lands in the caller's buffer without a copy).
   */
  openBlocks(first: number, fileId: Uint8Array, cipher: Uint8Array, out?: Uint8Array): Buffer {
    const { cipherBlockSize } = this.layout;
    if (this.aead.openBlocks !== undefined && this.batchable(cipher)) {
      const count = Math.ceil(cipher.length / cipherBlockSize);
      try {
        const plain = this.aead.openBlocks(cipher, this.blockAads(first, count, fileId), BLOCK_SIZE, out);
        return Buffer.from(plain.buffer, plain.byteOffset, plain.length);
      } catch (err) {
        const k = (err as { blockIndex?: unknown }).blockIndex;
        if (typeof k === 'number') throw new BlockError(`block ${first + k} failed authentication`, first + k);
        throw err;
      }
    }
    const parts: Uint8Array[] = [];
    for (let off = 0, n = first; off < cipher.length; off += cipherBlockSize, n++) {
      parts.push(this.openBlock(n, fileId, cipher.subarray(off, Math.min(off + cipherBlockSize, cipher.length))));
    }
    if (out === undefined) return Buffer.concat(parts);
    let pos = 0;
    for (const p of parts) {
      out.set(p, pos);
      pos += p.length;
    }
    return Buffer.from(out.buffer, out.byteOffset, pos);
  }

  /**
   * True when no block needs openBlock's special rules (holes, all-zero
   * nonces, blocks too short to hold a byte), so the batch call may open them.
   */
  private batchable(cipher: Uint8Array): boolean {
    const { cipherBlockSize, overhead } = this.layout;
    for (let off = 0; off < cipher.length; off += cipherBlockSize) {
      if (Math.min(cipher.length - off, cipherBlockSize) <= overhead) return false;
      if (isAllZero(cipher.subarray(off, off + this.nonceSize))) return false;
    }
    return true;
  }

  /** One AEAD message with AAD BE64(0): symlink targets and xattr values. Empty stays empty. */
  sealMessage(plain: Uint8Array): Buffer {
    if (plain.length === 0) return Buffer.alloc(0);
    const nonce = randomNonces(this.nonceSize);
    return Buffer.concat([nonce, this.aead.seal(nonce, plain, ZERO_AAD)]);
  }

  /** Opens a message from sealMessage. Throws BlockError (block -1) if it does not authenticate. */
  openMessage(sealed: Uint8Array): Buffer {
    if (sealed.length === 0) return Buffer.alloc(0);
    if (sealed.length < this.layout.overhead) throw new BlockError('message is truncated', -1);
    const nonce = sealed.subarray(0, this.nonceSize);
    if (isAllZero(nonce)) throw new BlockError('message has an all-zero nonce', -1);
    try {
      return Buffer.from(this.aead.open(nonce, sealed.subarray(this.nonceSize), ZERO_AAD));
    } catch {
      throw new BlockError('message failed authentication', -1);
    }
  }
}
