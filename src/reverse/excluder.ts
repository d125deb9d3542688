/**
 * -exclude, -exclude-wildcard and -exclude-from (reverse mode): gitignore
 * patterns matched against plaintext paths relative to the root, with the
 * semantics of the library gocryptfs uses (sabhiram/go-gitignore at
 * 54b8a0b): each line becomes one regular expression, later lines win,
 * a leading `!` re-includes. -exclude PATH is the pattern `/PATH` (anchored
 * at the root), -exclude-wildcard takes the pattern as written, and
 * -exclude-from reads one pattern per line.
 */

/** The regular expression for one pattern line, or null for blank lines, comments and invalid patterns. */
export function patternRegExp(input: string): { re: RegExp; negate: boolean } | null {
  let line = input.replace(/\r+$/, '');
  if (line.startsWith('#')) return null;
  line = line.replace(/^ +| +$/g, '');
  if (line === '') return null;
  let negate = false;
  if (line[0] === '!') {
    negate = true;
    line = line.slice(1);
  }
  if (/^(#|!)/.test(line)) line = line.slice(1);
  if (/([^/+])\/.*\*\./.test(line) && line[0] !== '/') line = '/' + line;
  line = line.replace(/\./g, '\\.');
  const magicStar = '#$~';
  if (line.startsWith('/**/')) line = line.slice(1);
  line = line.replace(/\/\*\*\//g, '(/|/.+/)');
  line = line.replace(/\*\*\//g, `(|.${magicStar}/)`);
  line = line.replace(/\/\*\*/g, `(|/.${magicStar})`);
  line = line.replace(/\\\*/g, `\\${magicStar}`);
  line = line.replace(/\*/g, '([^/]*)');
  line = line.split('?').join('\\?');
  line = line.split(magicStar).join('*');
  let expr = line.endsWith('/') ? `${line}(|.*)$` : `${line}(|/.*)$`;
  expr = expr.startsWith('/') ? `^(|/)${expr.slice(1)}` : `^(|.*/)${expr}`;
  try {
    return { re: new RegExp(expr), negate };
  } catch {
    return null; // Go's regexp.Compile fails too: the line is dropped
  }
}

export class Excluder {
  private readonly patterns: { re: RegExp; negate: boolean }[];

  constructor(lines: readonly string[]) {
    this.patterns = lines.map(patternRegExp).filter((p): p is { re: RegExp; negate: boolean } => p !== null);
  }

  /** The patterns of -exclude (anchored), -exclude-wildcard and the lines of the -exclude-from files' contents. */
  static fromOptions(exclude: readonly string[], wildcard: readonly string[], fromFileContents: readonly string[]): Excluder {
    return new Excluder([...exclude.map((p) => '/' + p), ...wildcard, ...fromFileContents.flatMap((c) => c.split('\n'))]);
  }

  /** True when the relative plaintext path (no leading slash; "" = root, never excluded) is hidden. */
  matches(path: string): boolean {
    if (path === '') return false;
    let hit = false;
    for (const p of this.patterns) {
      if (!p.re.test(path)) continue;
      if (!p.negate) hit = true;
      else if (hit) hit = false;
    }
    return hit;
  }
}
