/**
 * An open file of the reverse view: either a plaintext file encrypted on
 * the fly with derived IVs, or a virtual file's bytes, or the config
 * passed through.
 *
 * Encrypted reads (gocryptfs fusefrontend_reverse/file.go): bytes 0..17
 * are the header `00 02 || fileID`; block n (at 18 + n·4128) is
 * `nonce_n || SIV || ciphertext` of plaintext block n, with
 * nonce_n = block0IV + n. An empty file stays empty, and a read beyond
 * the data returns nothing (not even the header).
 */
import * as fs from 'node:fs';
import { constants as C, type BigIntStats } from 'node:fs';
import { BLOCK_SIZE, HEADER_LEN, HEADER_VERSION, type ContentCipher } from '../content/index.js';
import { fsError, hasCode } from '../util/errors.js';
import { preadFull } from '../util/fd-io.js';
import { blockIV, type FileIVs } from './pathiv.js';

type Source =
  | { kind: 'bytes'; data: Buffer }
  | { kind: 'fd'; fd: number }
  | { kind: 'encrypt'; fd: number; content: ContentCipher; header: Buffer; ivs: FileIVs };

function openRegular(path: Buffer | string, cpath: string): { fd: number; st: BigIntStats } {
  let fd: number;
  try {
    fd = fs.openSync(path, C.O_RDONLY | C.O_NOFOLLOW);
  } catch (err) {
    throw hasCode(err) ? fsError(err.code, 'open', cpath) : err;
  }
  const st = fs.fstatSync(fd, { bigint: true });
  if (!st.isFile()) {
    fs.closeSync(fd);
    throw fsError('EACCES', 'open', cpath, 'not a regular file');
  }
  return { fd, st };
}

export class ReverseFile {
  private closed = false;

  private constructor(private readonly src: Source) {}

  static fromBytes(data: Buffer): ReverseFile {
    return new ReverseFile({ kind: 'bytes', data });
  }

  /** The config file, read as it is (it is not encrypted any further). */
  static passThrough(path: string, cpath: string): ReverseFile {
    let fd: number;
    try {
      fd = fs.openSync(path, C.O_RDONLY);
    } catch (err) {
      throw hasCode(err) ? fsError(err.code, 'open', cpath) : err;
    }
    return new ReverseFile({ kind: 'fd', fd });
  }

  /** A plaintext file; `ivsFor` picks its file ID and block-0 nonce once it is open. */
  static encrypting(path: Buffer, cpath: string, content: ContentCipher, ivsFor: (st: BigIntStats) => FileIVs): ReverseFile {
    const { fd, st } = openRegular(path, cpath);
    const ivs = ivsFor(st);
    const header = Buffer.alloc(HEADER_LEN);
    header.writeUInt16BE(HEADER_VERSION, 0);
    ivs.fileId.copy(header, 2);
    return new ReverseFile({ kind: 'encrypt', fd, content, header, ivs });
  }

  /** Up to `len` bytes of the view's file from offset `pos`. */
  async read(len: number, pos: number): Promise<Buffer> {
    if (this.closed) throw fsError('EBADF', 'read');
    const s = this.src;
    if (s.kind === 'bytes') return s.data.subarray(Math.min(pos, s.data.length), Math.min(pos + len, s.data.length));
    if (s.kind === 'fd') return preadFull(s.fd, len, pos);
    const parts: Buffer[] = [];
    let off = pos;
    let left = len;
    if (off < HEADER_LEN) {
      const h = s.header.subarray(off, Math.min(HEADER_LEN, off + left));
      parts.push(h);
      off += h.length;
      left -= h.length;
    }
    if (left > 0) {
      const data = await this.encryptRange(s, off, left);
      if (data.length === 0) return Buffer.alloc(0);
      parts.push(data);
    }
    return Buffer.concat(parts);
  }

  /** Cipher bytes [off, off+len) after the header (off ≥ 18). */
  private async encryptRange(s: Extract<Source, { kind: 'encrypt' }>, off: number, len: number): Promise<Buffer> {
    const cbs = s.content.layout.cipherBlockSize;
    const first = Math.floor((off - HEADER_LEN) / cbs);
    const last = Math.floor((off + len - 1 - HEADER_LEN) / cbs);
    const plain = await preadFull(s.fd, (last - first + 1) * BLOCK_SIZE, first * BLOCK_SIZE);
    const blocks: Buffer[] = [];
    for (let k = 0; k * BLOCK_SIZE < plain.length; k++) {
      const n = first + k;
      const nonce = blockIV(s.ivs.block0IV, n);
      const block = plain.subarray(k * BLOCK_SIZE, (k + 1) * BLOCK_SIZE);
      blocks.push(nonce, Buffer.from(s.content.aead.seal(nonce, block, s.content.blockAad(n, s.ivs.fileId))));
    }
    const ct = Buffer.concat(blocks);
    const skip = off - (HEADER_LEN + first * cbs);
    if (ct.length <= skip) return Buffer.alloc(0);
    return ct.subarray(skip, Math.min(ct.length, skip + len));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.src.kind !== 'bytes') fs.closeSync(this.src.fd);
  }
}
