/**
 * -badname (Documentation/format.md §7.11): an entry whose name does not
 * decrypt is hidden, unless its cipher name matches one of these glob
 * patterns; then it is shown as the longest prefix that does decrypt,
 * followed by the rest of the cipher name and " GOCRYPTFS_BAD_NAME", and
 * can be opened, renamed and removed by that name, as in gocryptfs 2.3.
 *
 * Patterns use Go's filepath.Match syntax, which gocryptfs uses: `*` any
 * run of characters but `/`, `?` one such character, `[a-z]` / `[^a-z]`
 * classes, `\` escapes the next character; anything else matches itself.
 */
import { fsError } from '../util/errors.js';
import type { NameCodec } from './name-codec.js';

export const BADNAME_SUFFIX = ' GOCRYPTFS_BAD_NAME';

/** A compiled pattern; throws EINVAL for a malformed one (as filepath.Match's ErrBadPattern). */
export function compileGlob(pattern: string): RegExp {
  const bad = (): never => {
    throw fsError('EINVAL', undefined, undefined, `-badname: invalid pattern ${JSON.stringify(pattern)} supplied`);
  };
  // What a character must look like in a (unicode) regular expression, outside and inside a class.
  const lit = (c: string): string => c.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  const litIn = (c: string): string => c.replace(/[\\\]\[^-]/g, '\\$&');
  const chars = [...pattern];
  let re = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\') {
      if (++i >= chars.length) bad();
      re += lit(chars[i]!);
    } else if (c === '[') {
      i++;
      let cls = '';
      if (chars[i] === '^') {
        cls += '^';
        i++;
      }
      /** One class character (escapes allowed); Go refuses '-' and ']' here and a class cut short. */
      const one = (): string => {
        let ch = chars[i];
        if (ch === undefined || ch === '-' || ch === ']') bad();
        if (ch === '\\') {
          ch = chars[++i];
          if (ch === undefined) bad();
        }
        i++;
        if (i >= chars.length) bad();
        return litIn(ch!);
      };
      let ranges = 0;
      for (;;) {
        if (chars[i] === ']' && ranges > 0) break;
        const lo = one();
        cls += lo;
        if (chars[i] === '-') {
          i++;
          cls += '-' + one();
        }
        ranges++;
      }
      re += `(?:(?!/)[${cls}])`;
    } else re += lit(c);
  }
  return new RegExp(`^${re}$`, 'u');
}

/** True when `name` matches one of the patterns. */
export function matchesAny(patterns: readonly RegExp[], name: string): boolean {
  return patterns.some((p) => p.test(name));
}

/**
 * How a cipher name that does not decrypt is shown when it matches a
 * pattern: the longest prefix (of at least one AES block's worth of
 * base64) that decrypts, then the rest as it is, then the suffix.
 */
export function badDisplayName(codec: NameCodec, cname: string, iv: Buffer): string {
  const min = codec.opts.raw64 ? 22 : 24; // base64 of 16 bytes
  for (let end = cname.length - 1; end >= min; end--) {
    const plain = codec.decryptName(cname.slice(0, end), iv);
    if (plain !== null) return plain.toString('utf8') + cname.slice(end) + BADNAME_SUFFIX;
  }
  return cname + BADNAME_SUFFIX;
}

/**
 * The names on disk a shown bad name may stand for, most likely first:
 * the cipher name itself (the suffix taken off), or an encrypted prefix
 * followed by the undecrypted rest. The caller picks the one that exists
 * (and refuses when several do, as gocryptfs).
 */
export function badNameCandidates(codec: NameCodec, shown: string, iv: Buffer): string[] {
  const base = shown.slice(0, -BADNAME_SUFFIX.length);
  const out = [base];
  for (let end = base.length; end > 0; end--) {
    let cpart: string;
    try {
      cpart = codec.diskName(codec.encryptName(Buffer.from(base.slice(0, end), 'utf8'), iv));
    } catch {
      continue;
    }
    out.push(cpart + base.slice(end));
  }
  return out;
}
