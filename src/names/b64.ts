/**
 * URL-safe base64 as gocryptfs uses it for names, symlink targets and
 * long-name hashes: unpadded with Raw64, padded without (Documentation/format.md
 * §7.5). Decoding is strict (as gocryptfs ≥ 2.5): exactly one valid
 * encoding per byte string, so two cipher names never decrypt to one name.
 */
const RAW = /^[A-Za-z0-9_-]*$/;
const PADDED = /^[A-Za-z0-9_-]*={0,2}$/;

export function b64Encode(data: Uint8Array, raw: boolean): string {
  const s = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64url');
  if (raw) return s;
  return s + '='.repeat((4 - (s.length % 4)) % 4);
}

/** Decodes, or returns null when `s` is not the canonical encoding of anything. */
export function b64Decode(s: string, raw: boolean): Buffer | null {
  if (raw ? !RAW.test(s) : !PADDED.test(s) || s.length % 4 !== 0) return null;
  const buf = Buffer.from(s, 'base64url');
  return b64Encode(buf, raw) === s ? buf : null;
}
