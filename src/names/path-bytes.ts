/**
 * Relative plaintext paths as bytes: a decrypted name need not be UTF-8,
 * so paths built from names stay Buffers until something must show them.
 */

const SLASH = Buffer.from('/');

/** `dir/name`, or `name` alone when `dir` is empty (the root). */
export function joinPathBytes(dir: Buffer, name: Buffer): Buffer {
  return dir.length === 0 ? Buffer.from(name) : Buffer.concat([dir, SLASH, name]);
}
