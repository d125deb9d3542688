/**
 * -exclude, -exclude-wildcard and -exclude-from (reverse mode): which
 * plaintext paths the reverse view hides.
 *
 * The pattern language is gocryptfs's, which looks like gitignore's but is
 * not git's: gocryptfs turns every line into a Go regular expression (with
 * the library sabhiram/go-gitignore). These are its rules, as the table in
 * test/helpers/exclude-table.ts records them against gocryptfs 2.3 itself:
 *
 * - A line loses its trailing carriage returns; if it then starts with
 *   "#" it is a comment. Spaces at both ends are dropped (a backslash does
 *   not keep them). An empty line says nothing.
 * - A leading "!" makes the line a re-include; after that, one more
 *   leading "!" or "#" is dropped ("!!x" re-includes "x"; "\#x" and "\!x"
 *   are the literal names, the backslash escaping the character).
 * - "*" is any run of characters other than "/"; "\*" is a star; "." and
 *   "?" are themselves ("?" is not a wildcard). Two stars count only next
 *   to a slash, in this order over the whole line: slash, two stars, slash
 *   is one slash or a slash, something and a slash ("a/ST/b" hides "a/b"
 *   and "a/x/y/b", with ST for the two stars); two stars and a slash are
 *   nothing or anything ending in a slash; a slash and two stars are
 *   nothing or a slash and anything. Any other two stars are two single
 *   stars.
 * - Every other character goes into the regular expression as it stands,
 *   as gocryptfs lets it: "[12]" is a class ("[!1]" is one of "!" and "1",
 *   not a negation), "+" repeats, "|" separates alternatives, "\s" is white
 *   space; a line that is no valid expression ("c++", "file[") says nothing.
 * - A line starting with "/" is anchored at the root; so is one where a
 *   slash that follows a character other than "/" or "+" is followed, later,
 *   by "*." ("foo/*.c" is anchored, "a/b" and "a/ST/b" are not: unlike
 *   git, they match at any depth). A leading slash, two stars and a slash
 *   anchor nothing ("/ST/x" is "ST/x").
 * - A line matches a path that it describes whole and everything below it
 *   ("dir" hides "dir" and "x/dir/f"). A line ending in a slash matches
 *   only what is below ("dir/" hides "dir/f" but not "dir"); a slash that
 *   belongs to a two-star form does not count as that end.
 * - Where a rule above says "any character" or "anything", a newline is
 *   not included (Go's "."); a star's run may hold one.
 *
 * The last line that matches a path decides: the path is hidden unless that
 * line is a re-include. The root is never hidden; below a hidden directory
 * nothing can be reached. -exclude PATH is the line "/PATH", -exclude-wildcard
 * takes its pattern as a line, -exclude-from reads lines from a file.
 *
 * (One artefact of go-gitignore is not copied: it also turns a literal
 * "#$~" in a pattern into "*".)
 */

/** Go's ".": any character but a newline. */
const ANY = '[^\\n]';

/** The two-star forms, in the order they are recognised, and what each stands for. */
const DOUBLE_STARS: ReadonlyArray<readonly [form: string, expr: string]> = [
  ['/**/', `(?:/|/${ANY}+/)`],
  ['**/', `(?:|${ANY}*/)`],
  ['/**', `(?:|/${ANY}*)`],
];

/** A slash after a character other than "/" or "+", with "*." somewhere after it: the line is anchored. */
const ANCHORING_SLASH = /[^/+]\/.*\*\./;

interface ExcludeLine {
  pattern: RegExp;
  reinclude: boolean;
}

/** Single characters: stars, the escaped star, and the two that stand for themselves. */
function simpleExpr(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && text[i + 1] === '*') {
      out += '\\*';
      i++;
    } else if (c === '*') {
      out += '(?:[^/]*)';
    } else if (c === '.' || c === '?') {
      out += `\\${c}`;
    } else {
      out += c;
    }
  }
  return out;
}

/** The regular expression text of a pattern body: each two-star form splits the text before the weaker ones look at it. */
function bodyExpr(text: string, form = 0): string {
  if (form === DOUBLE_STARS.length) return simpleExpr(text);
  const [sep, expr] = DOUBLE_STARS[form]!;
  return text
    .split(sep)
    .map((part) => bodyExpr(part, form + 1))
    .join(expr);
}

/** What one pattern line says, or null for comments, empty lines and lines that are no valid expression. */
export function parseExcludeLine(line: string): ExcludeLine | null {
  const text = line.replace(/\r+$/, '');
  if (text.startsWith('#')) return null;
  let body = text.replace(/^ +| +$/g, '');
  if (body === '') return null;
  const reinclude = body.startsWith('!');
  if (reinclude) body = body.slice(1);
  if (body.startsWith('!') || body.startsWith('#')) body = body.slice(1);
  if (!body.startsWith('/') && ANCHORING_SLASH.test(body)) body = `/${body}`;
  if (body.startsWith('/**/')) body = body.slice(1);
  let expr = bodyExpr(body);
  // A slash the two-star forms left at either end decides how the line sits in a path.
  const belowOnly = expr.endsWith('/');
  const anchored = expr.startsWith('/');
  if (anchored) expr = expr.slice(1);
  const before = anchored ? '(?:|/)' : `(?:|${ANY}*/)`;
  const after = belowOnly ? `(?:|${ANY}*)` : `(?:|/${ANY}*)`;
  try {
    return { pattern: new RegExp(`^${before}${expr}${after}$`), reinclude };
  } catch {
    return null;
  }
}

export class Excluder {
  private readonly lines: readonly ExcludeLine[];

  constructor(lines: readonly string[]) {
    this.lines = lines.map(parseExcludeLine).filter((l): l is ExcludeLine => l !== null);
  }

  /** The lines of -exclude (anchored), -exclude-wildcard and the -exclude-from files' contents. */
  static fromOptions(exclude: readonly string[], wildcard: readonly string[], fromFileContents: readonly string[]): Excluder {
    return new Excluder([...exclude.map((p) => `/${p}`), ...wildcard, ...fromFileContents.flatMap((c) => c.split('\n'))]);
  }

  /** True when the relative plaintext path (no leading slash; "" = the root, never hidden) is hidden. */
  matches(path: string): boolean {
    if (path === '') return false;
    for (let i = this.lines.length - 1; i >= 0; i--) {
      const l = this.lines[i]!;
      if (l.pattern.test(path)) return !l.reinclude;
    }
    return false;
  }
}
