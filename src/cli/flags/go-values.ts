/**
 * Flag values in Go's syntax, as gocryptfs's flag library reads them:
 * booleans (strconv.ParseBool), integers (strconv.ParseInt with base 0),
 * durations (time.ParseDuration) and pflag's comma-separated lists. Each
 * parser returns undefined for text it does not accept; the caller words
 * the error.
 */

/** Go's strconv.ParseBool. */
export function parseGoBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false;
  return undefined;
}

/** pflag's StringSlice: one value split like one CSV record (undefined for an unterminated quote). */
export function splitCsv(value: string): string[] | undefined {
  if (value === '') return [];
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  let atFieldStart = true;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (quoted) {
      if (c === '"') {
        if (value[i + 1] === '"') {
          cur += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c === '"' && atFieldStart) {
      quoted = true;
      atFieldStart = false;
    } else if (c === ',') {
      out.push(cur);
      cur = '';
      atFieldStart = true;
    } else {
      cur += c;
      atFieldStart = false;
    }
  }
  if (quoted) return undefined; // an unterminated quote
  out.push(cur);
  return out;
}

/** Go's strconv.ParseInt(s, 0, bits): decimal, 0x hex, 0o/0 octal, 0b binary, optional sign. */
export function parseGoInt(s: string): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]*|[1-9][0-9_]*)$/.exec(s);
  if (!m) return undefined;
  let digits = m[2]!.replace(/_/g, '');
  let radix = 10;
  if (/^0[xX]/.test(digits)) {
    radix = 16;
    digits = digits.slice(2);
  } else if (/^0[bB]/.test(digits)) {
    radix = 2;
    digits = digits.slice(2);
  } else if (/^0[oO]/.test(digits)) {
    radix = 8;
    digits = digits.slice(2);
  } else if (digits.length > 1 && digits.startsWith('0')) {
    radix = 8;
    digits = digits.slice(1);
  }
  if (digits === '') return m[2] === '0' ? 0 : undefined;
  const n = parseInt(digits, radix);
  if (!Number.isSafeInteger(n)) return undefined;
  return m[1] === '-' ? -n : n;
}

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.ParseDuration, in milliseconds. */
export function parseGoDuration(s: string): number | undefined {
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return undefined;
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const m = re.exec(rest);
    if (!m) return undefined;
    total += parseFloat(m[1]!) * DURATION_UNITS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

