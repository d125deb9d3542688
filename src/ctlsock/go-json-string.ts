/**
 * A JSON string literal exactly as Go's encoding/json writes one with
 * HTML escaping on (json.Marshal; encodeState.stringBytes in Go 1.19, the
 * Go that builds Debian's gocryptfs 2.3). The input is bytes, not a JS
 * string, because a decrypted name need not be UTF-8, and Go tells an
 * invalid byte (written as the six characters `\ufffd`) from a real
 * U+FFFD (written as its three UTF-8 bytes); a JS string has lost that.
 *
 * - printable ASCII goes as is, except `"` and `\` (backslash-escaped) and
 *   `<`, `>`, `&` (`\u003c`, ...); DEL goes as is;
 * - `\n`, `\r`, `\t` get their short escapes, every other control byte
 *   `\u00XX` (Go before 1.22 has no `\b` or `\f`);
 * - a byte that does not start a valid UTF-8 sequence (overlong forms,
 *   surrogates and code points above U+10FFFF included) is `\ufffd`;
 * - U+2028 and U+2029 are escaped, every other valid sequence goes as is.
 */

const HEX = '0123456789abcdef';

/** Length of the valid UTF-8 sequence starting at `i` (as Go's utf8.DecodeRune accepts it), or 0. */
function validSequenceLength(b: Uint8Array, i: number): number {
  const c0 = b[i]!;
  const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c0 >= 0xc2 && c0 <= 0xdf) return cont(1) ? 2 : 0;
  if (c0 >= 0xe0 && c0 <= 0xef) {
    // E0 needs A0..BF (no overlong forms), ED needs 80..9F (no surrogates).
    const lo = c0 === 0xe0 ? 0xa0 : 0x80;
    const hi = c0 === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c0 >= 0xf0 && c0 <= 0xf4) {
    // F0 needs 90..BF (no overlong forms), F4 needs 80..8F (nothing above U+10FFFF).
    const lo = c0 === 0xf0 ? 0x90 : 0x80;
    const hi = c0 === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** `bytes` as a quoted JSON string literal, byte for byte what Go 1.19's json.Marshal gives. */
export function goJsonString(bytes: Uint8Array): string {
  const out: string[] = ['"'];
  let start = 0;
  const flush = (end: number): void => {
    if (end > start) out.push(Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8'));
  };
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      if (b >= 0x20 && b !== 0x22 && b !== 0x5c && b !== 0x3c && b !== 0x3e && b !== 0x26) {
        i++;
        continue;
      }
      flush(i);
      if (b === 0x22 || b === 0x5c) out.push('\\' + String.fromCharCode(b));
      else if (b === 0x0a) out.push('\\n');
      else if (b === 0x0d) out.push('\\r');
      else if (b === 0x09) out.push('\\t');
      else out.push('\\u00' + HEX[b >> 4]! + HEX[b & 0xf]!);
      start = ++i;
      continue;
    }
    const n = validSequenceLength(bytes, i);
    if (n === 0) {
      flush(i);
      out.push('\\ufffd');
      start = ++i;
      continue;
    }
    // U+2028 is E2 80 A8, U+2029 is E2 80 A9.
    if (n === 3 && b === 0xe2 && bytes[i + 1] === 0x80 && (bytes[i + 2] === 0xa8 || bytes[i + 2] === 0xa9)) {
      flush(i);
      out.push(bytes[i + 2] === 0xa8 ? '\\u2028' : '\\u2029');
      start = i += 3;
      continue;
    }
    i += n;
  }
  flush(i);
  out.push('"');
  return out.join('');
}
