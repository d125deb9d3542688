/** PKCS#7 padding to a multiple of 16 bytes, as gocryptfs pads names (Documentation/format.md §7.3, §7.6). */
export function pad16(data: Uint8Array): Buffer {
  const p = 16 - (data.length % 16);
  const out = Buffer.alloc(data.length + p, p);
  out.set(data, 0);
  return out;
}

/** Removes the padding, or returns null if it is malformed. */
export function unpad16(data: Uint8Array): Buffer | null {
  if (data.length === 0 || data.length % 16 !== 0) return null;
  const p = data[data.length - 1]!;
  if (p < 1 || p > 16 || p >= data.length) return null;
  for (let i = data.length - p; i < data.length; i++) if (data[i] !== p) return null;
  return Buffer.from(data.subarray(0, data.length - p));
}
