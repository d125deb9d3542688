/**
 * Offset and size arithmetic between plaintext and ciphertext files
 * (Documentation/format.md §6.2, §6.5). Pure functions of the per-block overhead.
 */
export const HEADER_LEN = 18;
export const BLOCK_SIZE = 4096;

/** Block geometry of one content cipher. */
export interface Layout {
  /** Bytes added to each block: nonce + tag (32, 32 or 40). */
  readonly overhead: number;
  /** A full cipher block: BLOCK_SIZE + overhead. */
  readonly cipherBlockSize: number;
}

export function layout(nonceSize: number, tagSize: number): Layout {
  const overhead = nonceSize + tagSize;
  return { overhead, cipherBlockSize: BLOCK_SIZE + overhead };
}

export function blockNo(plainOff: number): number {
  return Math.floor(plainOff / BLOCK_SIZE);
}

/** Where cipher block n starts in the cipher file. */
export function cipherOffOfBlock(l: Layout, n: number): number {
  return HEADER_LEN + n * l.cipherBlockSize;
}

export function plainSizeToCipherSize(l: Layout, plainSize: number): number {
  if (plainSize === 0) return 0;
  return HEADER_LEN + plainSize + Math.ceil(plainSize / BLOCK_SIZE) * l.overhead;
}

/**
 * The plaintext size shown for a cipher file of `cipherSize` bytes.
 * Header-only and shorter files are empty; a last block too short to
 * hold one byte counts as one byte, as gocryptfs does (its read then fails).
 */
export function cipherSizeToPlainSize(l: Layout, cipherSize: number): number {
  if (cipherSize <= HEADER_LEN) return 0;
  let c = cipherSize;
  const r = (c - HEADER_LEN) % l.cipherBlockSize;
  if (r > 0 && r <= l.overhead) c = c - r + l.overhead + 1;
  const blocks = Math.floor((c - 1 - HEADER_LEN) / l.cipherBlockSize) + 1;
  return Math.max(0, c - HEADER_LEN - blocks * l.overhead);
}

/** The blocks a plaintext range [off, off+len) touches (len > 0). */
export function blockRange(off: number, len: number): { first: number; last: number } {
  return { first: blockNo(off), last: blockNo(off + len - 1) };
}
