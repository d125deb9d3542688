/**
 * Sealing and opening content blocks (FORMAT.md §4.3–§4.8), and the single
 * AEAD messages used for symlink targets and xattr values (§6, §7).
 *
 * A block on disk is `nonce || sealed`, where `sealed` is what the AEAD
 * returns. Every block's AAD is BE64(blockNo) || fileID, so blocks cannot
 * be moved within or between files without failing authentication.
 */
import { randomBytes, type Aead } from '../crypto/index.js';
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
    const nonce = randomBytes(this.nonceSize);
    return Buffer.concat([nonce, this.aead.seal(nonce, plain, this.blockAad(n, fileId))]);
  }

  /**
   * Decrypts one cipher block. A full-size all-zero block is a hole and
   * reads as 4096 zero bytes. Throws BlockError on anything else that
   * does not authenticate.
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

  /** Seals consecutive plaintext blocks starting at block `first` into one buffer. */
  sealBlocks(first: number, fileId: Uint8Array, plain: Uint8Array): Buffer {
    const parts: Buffer[] = [];
    for (let off = 0, n = first; off < plain.length; off += BLOCK_SIZE, n++) {
      parts.push(this.sealBlock(n, fileId, plain.subarray(off, Math.min(off + BLOCK_SIZE, plain.length))));
    }
    return Buffer.concat(parts);
  }

  /**
   * Opens consecutive cipher blocks starting at block `first`. Stops at the
   * first bad block and throws BlockError naming it.
   */
  openBlocks(first: number, fileId: Uint8Array, cipher: Uint8Array): Buffer {
    const { cipherBlockSize } = this.layout;
    const parts: Uint8Array[] = [];
    for (let off = 0, n = first; off < cipher.length; off += cipherBlockSize, n++) {
      parts.push(this.openBlock(n, fileId, cipher.subarray(off, Math.min(off + cipherBlockSize, cipher.length))));
    }
    return Buffer.concat(parts);
  }

  /** One AEAD message with AAD BE64(0): symlink targets and xattr values. Empty stays empty. */
  sealMessage(plain: Uint8Array): Buffer {
    if (plain.length === 0) return Buffer.alloc(0);
    const nonce = randomBytes(this.nonceSize);
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
