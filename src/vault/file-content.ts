/**
 * Reading, writing and truncating the plaintext of one open cipher file
 * (Documentation/format.md §6.3–§6.5). Callers hold the file's lock: a read lock for
 * `readContent`, the write lock for the others.
 */
import { BLOCK_SIZE, HEADER_LEN, blockNo, blockRange, cipherOffOfBlock, cipherSizeToPlainSize, plainSizeToCipherSize, newHeader, parseHeader, BlockError, type ContentCipher } from '../content/index.js';
import type { Logger } from '../util/logger.js';
import { fsError, hasCode } from '../util/errors.js';
import type { Preallocator } from './prealloc.js';
import { fstat, ftruncate, preadFull, pwriteFull } from '../util/fd-io.js';
import { fallocate } from '../util/native-sys.js';
import type { FileState } from './file-state.js';
import type { BufferPool } from './buffer-pool.js';

/** One open cipher file: its descriptor, shared state and what we need to report problems. */
export interface ContentFile {
  fd: number;
  state: FileState;
  cipher: ContentCipher;
  /** The cipher path, for log lines. */
  cipherPath: string;
  log: Logger;
  /** Where ciphertext is read into and sealed into (the vault's, shared by its files). */
  buffers: BufferPool;
  /** Reserves space before each write (absent: no preallocation). */
  prealloc?: Preallocator;
}

function eio(f: ContentFile, what: string): Error {
  f.log.warn(`${f.cipherPath}: ${what}`);
  return fsError('EIO', 'read', undefined, what);
}

export async function cipherSize(f: ContentFile): Promise<number> {
  return (await fstat(f.fd)).size;
}

/** Writes cipher bytes at `off`, their space reserved first so a full disk cannot leave half a block. */
async function writeAt(f: ContentFile, data: Uint8Array, off: number): Promise<void> {
  f.prealloc?.reserve(f.fd, off, data.length);
  await pwriteFull(f.fd, data, off);
}

export async function plainSize(f: ContentFile): Promise<number> {
  return cipherSizeToPlainSize(f.cipher.layout, await cipherSize(f));
}

/** The file ID, reading the header when not cached; null for a file with no complete header. */
async function readFileId(f: ContentFile): Promise<Buffer | null> {
  if (f.state.fileId) return f.state.fileId;
  const hdr = await preadFull(f.fd, HEADER_LEN, 0);
  if (hdr.length < HEADER_LEN) {
    if (hdr.length > 0) f.log.warn(`${f.cipherPath}: file is ${hdr.length} bytes, shorter than a header; treated as empty`);
    return null;
  }
  try {
    f.state.fileId = parseHeader(hdr);
  } catch (err) {
    throw eio(f, `bad header: ${(err as Error).message}`);
  }
  return f.state.fileId;
}

/**
 * Plaintext bytes [pos, pos+len) into `dst` (at least `len` bytes); returns
 * how many, fewer at end of file. A bad block is EIO, logged with its
 * number. Block-aligned reads decrypt straight into `dst`. Native twin, for
 * a mount's reads: fp_read in native/fastpath/read.c.
 */
export async function readContentInto(f: ContentFile, pos: number, len: number, dst: Uint8Array): Promise<number> {
  if (len <= 0) return 0;
  const { first, last } = blockRange(pos, len);
  const l = f.cipher.layout;
  const want = (last - first + 1) * l.cipherBlockSize;
  const scratch = f.buffers.take(want);
  try {
    const cipher = await preadFull(f.fd, want, cipherOffOfBlock(l, first), scratch.subarray(0, want));
    return await openInto(f, first, pos, len, cipher, dst);
  } finally {
    f.buffers.give(scratch);
  }
}

/** readContentInto's second half: the blocks from `first` are in `cipher`. */
async function openInto(f: ContentFile, first: number, pos: number, len: number, cipher: Buffer, dst: Uint8Array): Promise<number> {
  if (cipher.length === 0) return 0;
  const l = f.cipher.layout;
  const fileId = await readFileId(f);
  if (!fileId) return 0;
  const skip = pos - first * BLOCK_SIZE;
  const plainLen = f.cipher.plainLength(cipher);
  const direct = skip === 0 && plainLen <= dst.length;
  let plain: Buffer;
  try {
    plain = f.cipher.openBlocks(first, fileId, cipher, direct ? dst.subarray(0, plainLen) : undefined);
  } catch (err) {
    if (err instanceof BlockError) throw eio(f, `${err.message} (cipher offset ${cipherOffOfBlock(l, err.blockNo)})`);
    throw err;
  }
  const n = Math.max(0, Math.min(len, plain.length - skip));
  if (!direct) dst.set(plain.subarray(skip, skip + n));
  return n;
}

/** Plaintext bytes [pos, pos+len), fewer at end of file. A bad block is EIO, logged with its number. */
export async function readContent(f: ContentFile, pos: number, len: number): Promise<Buffer> {
  if (len <= 0) return Buffer.alloc(0);
  const dst = Buffer.allocUnsafe(len);
  return dst.subarray(0, await readContentInto(f, pos, len, dst));
}

/** The file ID to write with, creating a fresh header when the file has none. */
async function fileIdForWrite(f: ContentFile, cSize: number): Promise<Buffer> {
  if (cSize > HEADER_LEN) {
    const id = await readFileId(f);
    if (id) return id;
  }
  const { header, fileId } = newHeader();
  await writeAt(f, header, 0);
  f.state.fileId = fileId;
  return fileId;
}

/**
 * Writes whole blocks covering [pos, pos+data.length), merging the old
 * contents of partially covered blocks (read-modify-write).
 */
async function writeBlocks(f: ContentFile, fileId: Buffer, pos: number, data: Uint8Array, oldPlainSize: number): Promise<void> {
  const { first, last } = blockRange(pos, data.length);
  const start = first * BLOCK_SIZE;
  const end = Math.max(pos + data.length, Math.min(oldPlainSize, (last + 1) * BLOCK_SIZE));
  const cipherOff = cipherOffOfBlock(f.cipher.layout, first);
  if (pos === start && end === pos + data.length) {
    // Whole blocks (or a new tail): nothing old to merge, seal the caller's bytes directly.
    await sealAndWrite(f, first, fileId, data, cipherOff);
    return;
  }
  const buf = Buffer.alloc(end - start);
  const readOld = async (n: number): Promise<void> => {
    const off = n * BLOCK_SIZE;
    if (off >= oldPlainSize) return;
    const old = await readContent(f, off, Math.min(BLOCK_SIZE, oldPlainSize - off));
    buf.set(old, off - start);
  };
  if (pos > start) await readOld(first);
  if ((pos + data.length) % BLOCK_SIZE !== 0 && pos + data.length < end && (last !== first || pos === start)) {
    await readOld(last);
  }
  buf.set(data, pos - start);
  await sealAndWrite(f, first, fileId, buf, cipherOff);
}

/** Seals `plain` as the blocks from `first` and writes them at `cipherOff`, through a pooled buffer. */
async function sealAndWrite(f: ContentFile, first: number, fileId: Buffer, plain: Uint8Array, cipherOff: number): Promise<void> {
  const scratch = f.buffers.take(f.cipher.layout.cipherBlockSize * Math.ceil(plain.length / BLOCK_SIZE));
  try {
    await writeAt(f, f.cipher.sealBlocks(first, fileId, plain, scratch), cipherOff);
  } finally {
    f.buffers.give(scratch);
  }
}

/** Pads a partial last block with zeros to a full block (keeps the only-the-last-block-is-short rule). */
async function zeroPadLastBlock(f: ContentFile, fileId: Buffer, size: number): Promise<void> {
  const partial = size % BLOCK_SIZE;
  if (partial === 0) return;
  await writeBlocks(f, fileId, size, new Uint8Array(BLOCK_SIZE - partial), size);
}

/**
 * Writes plaintext at `pos`; a write past the end leaves a hole
 * (Documentation/format.md §6.4). Out of space (ENOSPC from the
 * preallocation, before any block is written), the file is put back as it
 * was: a new header or a padded last block is undone, as gocryptfs does.
 * Native twin, for a mount's writes: fp_write in native/fastpath/write.c.
 */
export async function writeContent(f: ContentFile, pos: number, data: Uint8Array): Promise<void> {
  if (data.length === 0) return;
  const cSize = await cipherSize(f);
  const oldSize = cSize <= HEADER_LEN ? 0 : cipherSizeToPlainSize(f.cipher.layout, cSize);
  try {
    const fileId = await fileIdForWrite(f, cSize);
    let size = oldSize;
    if (blockNo(pos) > blockNo(size)) {
      await zeroPadLastBlock(f, fileId, size);
      size = Math.ceil(size / BLOCK_SIZE) * BLOCK_SIZE;
    }
    await writeBlocks(f, fileId, pos, data, size);
  } catch (err) {
    if (hasCode(err, 'ENOSPC')) await undoGrowth(f, cSize, oldSize);
    throw err;
  }
}

/** After a failed write: back to the old cipher size (0, or the old plaintext size re-sealed). */
async function undoGrowth(f: ContentFile, oldCipherSize: number, oldSize: number): Promise<void> {
  try {
    const now = await cipherSize(f);
    if (now === oldCipherSize) return;
    if (oldCipherSize === 0) {
      await ftruncate(f.fd, 0);
      f.state.fileId = null;
    } else if (now > oldCipherSize) {
      if (oldSize % BLOCK_SIZE === 0) await ftruncate(f.fd, oldCipherSize);
      else await truncateContent(f, oldSize); // re-seals the padded last block at its old length
    }
  } catch (err) {
    f.log.warn(`${f.cipherPath}: could not undo a write that ran out of space: ${(err as Error).message}`);
  }
}

/** Sets the plaintext size: grows with holes, shrinks by re-sealing the new last block. */
export async function truncateContent(f: ContentFile, newSize: number): Promise<void> {
  if (newSize < 0 || !Number.isSafeInteger(newSize)) throw fsError('EINVAL', 'ftruncate');
  const cSize = await cipherSize(f);
  const oldSize = cipherSizeToPlainSize(f.cipher.layout, cSize);
  if (newSize === 0) {
    await ftruncate(f.fd, 0);
    f.state.fileId = null;
    return;
  }
  if (newSize === oldSize && cSize === plainSizeToCipherSize(f.cipher.layout, oldSize)) return;
  const l = f.cipher.layout;
  if (newSize > oldSize) {
    if (newSize % BLOCK_SIZE !== 0) {
      // One zero byte at the new end; writeContent pads and leaves holes as needed.
      await writeContent(f, newSize - 1, new Uint8Array(1));
      return;
    }
    const fileId = await fileIdForWrite(f, cSize);
    await zeroPadLastBlock(f, fileId, cSize <= HEADER_LEN ? 0 : oldSize);
    await ftruncate(f.fd, plainSizeToCipherSize(l, newSize));
    return;
  }
  // Shrink.
  if (newSize % BLOCK_SIZE === 0) {
    await ftruncate(f.fd, plainSizeToCipherSize(l, newSize));
    return;
  }
  const lastBlock = blockNo(newSize - 1);
  const lastOff = lastBlock * BLOCK_SIZE;
  const keep = await readContent(f, lastOff, newSize - lastOff);
  const fileId = await readFileId(f);
  await ftruncate(f.fd, cipherOffOfBlock(l, lastBlock));
  await writeAt(f, f.cipher.sealBlock(lastBlock, fileId!, keep), cipherOffOfBlock(l, lastBlock));
}

/** fallocate(2) modes gocryptfs supports: 0 (allocate, grow the size) and KEEP_SIZE. */
export const FALLOC_DEFAULT = 0;
export const FALLOC_FL_KEEP_SIZE = 1;

/**
 * fallocate(2) on the plaintext range [offset, offset+length), as gocryptfs
 * does it (file_allocate_truncate.go): the cipher bytes of those blocks are
 * reserved with FALLOC_FL_KEEP_SIZE (filling holes, or space past the end);
 * with mode 0 a file that ends before offset+length then grows to it, as a
 * truncate would (ext4's rule: fallocate never shrinks). Other modes
 * (punching holes, zeroing ranges) are EOPNOTSUPP.
 */
export async function allocateContent(f: ContentFile, mode: number, offset: number, length: number): Promise<void> {
  if (mode !== FALLOC_DEFAULT && mode !== FALLOC_FL_KEEP_SIZE) throw fsError('EOPNOTSUPP', 'fallocate');
  if (offset < 0 || length <= 0 || !Number.isSafeInteger(offset + length)) throw fsError('EINVAL', 'fallocate');
  const l = f.cipher.layout;
  const { first, last } = blockRange(offset, length);
  const cipherOff = cipherOffOfBlock(l, first);
  const lastLen = offset + length - last * BLOCK_SIZE;
  const cipherLen = cipherOffOfBlock(l, last) - cipherOff + (l.cipherBlockSize - BLOCK_SIZE) + lastLen;
  const r = fallocate(f.fd, FALLOC_FL_KEEP_SIZE, cipherOff, cipherLen);
  if (r === 'unavailable') throw fsError('EOPNOTSUPP', 'fallocate', undefined, 'needs the native addon');
  if (r !== 'ok') throw fsError(r, 'fallocate');
  if (mode === FALLOC_FL_KEEP_SIZE) return;
  if (offset + length > (await plainSize(f))) await truncateContent(f, offset + length);
}
