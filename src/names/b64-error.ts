/**
 * Where Go's base64 decoder (the one gocryptfs uses for names) reports
 * "illegal base64 data at input byte N", for tools that must answer with
 * gocryptfs's words (the control socket). Follows encoding/base64's
 * decodeQuantum: CR and LF are skipped, an illegal character is reported at
 * its index, a final group of one character at that character, a padded
 * group cut short at its start.
 */
const ALPHABET = /^[A-Za-z0-9_-]$/;

/** The offset Go would report, or null when Go decodes `s` without complaint. */
export function b64ErrorOffset(s: string, raw: boolean): number | null {
  let si = 0;
  while (si < s.length) {
    let j = 0;
    for (; j < 4; j++) {
      if (si === s.length) {
        if (j === 0) return null;
        if (j === 1 || !raw) return si - j;
        break;
      }
      const c = s[si++]!;
      if (ALPHABET.test(c)) continue;
      if (c === '\n' || c === '\r') {
        j--;
        continue;
      }
      if (raw || c !== '=') return si - 1;
      // Padding: only in the third or fourth position, "==" or "=" to the end.
      if (j < 2) return si - 1;
      if (j === 2) {
        while (si < s.length && (s[si] === '\n' || s[si] === '\r')) si++;
        if (si === s.length) return s.length;
        if (s[si] !== '=') return si - 1;
        si++;
      }
      while (si < s.length && (s[si] === '\n' || s[si] === '\r')) si++;
      return si < s.length ? si : null;
    }
  }
  return null;
}
