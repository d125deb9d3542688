/**
 * The 18-byte file header: version 2 (big-endian u16) and a random,
 * non-zero 16-byte file ID that binds every block to its file
 * (Documentation/format.md §6.1).
 */
import { randomNonces } from '../crypto/random.js';
import { HEADER_LEN } from './layout.js';

export const HEADER_VERSION = 2;
export const FILE_ID_LEN = 16;

export class HeaderError extends Error {
  readonly code = 'EBADHEADER';
}

/**
 * A new header with a fresh random file ID, cut from the nonce pool (a
 * draw of its own costs 3 us, one from the pool 0.2; native/fastpath/
 * write.c does the same for the files it creates).
 */
export function newHeader(): { header: Buffer; fileId: Buffer } {
  const header = Buffer.alloc(HEADER_LEN);
  header.writeUInt16BE(HEADER_VERSION, 0);
  let fileId: Buffer;
  do fileId = Buffer.from(randomNonces(FILE_ID_LEN));
  while (fileId.every((b) => b === 0));
  fileId.copy(header, 2);
  return { header, fileId };
}

/** The file ID of a header; throws HeaderError if the header is unusable. */
export function parseHeader(buf: Uint8Array): Buffer {
  if (buf.length < HEADER_LEN) throw new HeaderError(`header is ${buf.length} bytes, need ${HEADER_LEN}`);
  const version = (buf[0]! << 8) | buf[1]!;
  if (version !== HEADER_VERSION) throw new HeaderError(`header version ${version}, expected ${HEADER_VERSION}`);
  const id = Buffer.from(buf.subarray(2, HEADER_LEN));
  if (id.every((b) => b === 0)) throw new HeaderError('file ID is all zero');
  return id;
}
