/**
 * What `gocryptfs -reverse` 2.3 hides for a table of -exclude,
 * -exclude-wildcard and -exclude-from patterns, on one plaintext tree.
 * test/cross/reverse-excludes.test.ts checks every row against the real
 * gocryptfs (a mount per row) and src/reverse/excluder.ts against it;
 * test/unit/excluder.test.ts checks the Excluder against the rows without
 * gocryptfs.
 *
 * `hides` lists the hidden paths whose parent is shown: what a walk of the
 * mount misses from the top (nothing below a hidden directory shows).
 */
import { Excluder } from '../../src/reverse/index.js';

/** The plaintext tree: regular files (one byte each); directories are implied by the paths. */
export const EXCLUDE_TREE: readonly string[] = [
  'a.tmp', 'b.TMP', 'x.tmp.keep', '.hidden.tmp', 'deep/n/c.tmp',
  'dir/f', 'dir/sub/g', 'sub/dir/h', 'dirx', 'anchored', 'sub/anchored',
  'x', 'a/x', 'a/b/x', 'a/c/b', 'a/c/d/b', 'c/a/b', 'ab', 'a/bb',
  '#escaped', '!important', 'sp ace', ' lead', 'trail ',
  'file1', 'file2', 'fileA', 'file!', 'file[1]', 'q?', 'qx', 'a.c', 'abc',
  'foo/x.c', 'z/foo/y.c', 'foo/bar/z.c', 'c++', 'cc',
  'logs/today.log', 'logs/keep.log', 'doc/readme', 'doc/sub/readme',
  'st*r', 'stXr', 'b\\s', 'bs', '+x',
  // Go's "." is any character but a newline; JavaScript's also stops at \r, U+2028 and U+2029.
  'cr\rdir/a.tmp', 'nl\ndir/a.tmp', 'ls\u2028dir/a.tmp',
];

export interface ExcludeCase {
  /** -exclude values (anchored at the root). */
  exclude?: string[];
  /** -exclude-wildcard values. */
  wildcard?: string[];
  /** The lines of an -exclude-from file (joined with "\n"). */
  from?: string[];
  /** What gocryptfs hides: hidden paths whose parent is shown. */
  hides: string[];
}

/** Every path of the tree: the files and the directories above them. */
export function treePaths(files: readonly string[] = EXCLUDE_TREE): string[] {
  const out = new Set<string>();
  for (const f of files) {
    const parts = f.split('/');
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return [...out].sort();
}

/** The top-level entries: what a pattern hiding everything hides. */
const ALL = [...new Set(EXCLUDE_TREE.map((f) => f.split('/')[0]!))].sort();

export const EXCLUDE_CASES: readonly ExcludeCase[] = [
  // Stars: "*" stays within a name, at any depth; case matters.
  { from: ['*.tmp'], hides: ['.hidden.tmp', 'a.tmp', 'cr\rdir/a.tmp', 'deep/n/c.tmp', 'ls\u2028dir/a.tmp'] },
  { from: ['*.TMP'], hides: ['b.TMP'] },
  { from: ['**/*.tmp'], hides: ['.hidden.tmp', 'a.tmp', 'cr\rdir/a.tmp', 'deep/n/c.tmp', 'ls\u2028dir/a.tmp'] },
  { from: ['*'], hides: ALL },
  { from: ['**'], hides: ALL },
  { from: ['/'], hides: ALL.filter((p) => p !== 'nl\ndir') },
  // A trailing slash hides what is below, not the directory itself.
  { from: ['dir/'], hides: ['dir/f', 'dir/sub', 'sub/dir/h'] },
  { from: ['dir'], hides: ['dir', 'sub/dir'] },
  { from: ['dir/sub'], hides: ['dir/sub'] },
  { from: ['sub/dir/'], hides: ['sub/dir/h'] },
  { from: ['a/b/'], hides: ['a/b/x'] },
  // Anchoring: a leading slash, or a slash before "*." (a slash alone is not).
  { from: ['/anchored'], hides: ['anchored'] },
  { from: ['anchored'], hides: ['anchored', 'sub/anchored'] },
  { from: ['foo/*.c'], hides: ['foo/x.c'] },
  { from: ['bar/*.c'], hides: [] },
  { from: ['/*.c'], hides: ['a.c'] },
  { from: ['**/foo/*.c'], hides: ['foo/x.c', 'z/foo/y.c'] },
  { from: ['doc/readme'], hides: ['doc/readme'] },
  { from: ['a/*/b'], hides: ['a/c/b'] },
  // Two stars next to a slash.
  { from: ['**/x'], hides: ['a/b/x', 'a/x', 'x'] },
  { from: ['a/**/b'], hides: ['a/b', 'a/c/b', 'a/c/d/b', 'c/a/b'] },
  { from: ['a/**'], hides: ['a', 'c/a'] },
  { from: ['a/**/'], hides: [] },
  { from: ['**/'], hides: [] },
  { from: ['/**'], hides: [] },
  // Re-includes: the last matching line decides; a hidden directory keeps what is below it hidden.
  { from: ['*.tmp', '!a.tmp'], hides: ['.hidden.tmp', 'deep/n/c.tmp'] },
  { from: ['!a.tmp'], hides: [] },
  { from: ['*.tmp', '!'], hides: ['.hidden.tmp', 'a.tmp', 'cr\rdir/a.tmp', 'deep/n/c.tmp', 'ls\u2028dir/a.tmp'] },
  { from: ['logs/', '!logs/keep.log'], hides: ['logs/today.log'] },
  { from: ['logs', '!logs/keep.log'], hides: ['logs'] },
  // Comments, escapes, spaces, carriage returns.
  { from: ['\\#escaped'], hides: ['#escaped'] },
  { from: ['#escaped'], hides: [] },
  { from: ['\\!important'], hides: ['!important'] },
  { from: ['!!important'], hides: [] },
  { from: ['x   '], hides: ['a/b/x', 'a/x', 'x'] },
  { from: ['   x'], hides: ['a/b/x', 'a/x', 'x'] },
  { from: ['sp ace'], hides: ['sp ace'] },
  { from: ['trail\\ '], hides: [] },
  { from: ['# comment', '', 'x', '\r'], hides: ['a/b/x', 'a/x', 'x'] },
  { from: ['x\r'], hides: ['a/b/x', 'a/x', 'x'] },
  { from: ['st\\*r'], hides: ['st*r'] },
  // "?" and "." are themselves; classes and other regular-expression syntax pass through.
  { from: ['q?'], hides: ['q?'] },
  { from: ['a.c'], hides: ['a.c'] },
  { from: ['file[12]'], hides: ['file1', 'file2'] },
  { from: ['file[!1]'], hides: ['file!', 'file1'] },
  { from: ['file[A-Z]'], hides: ['fileA'] },
  { from: ['+x'], hides: ['a/b/x', 'a/x', 'x'] },
  { from: ['x|ab'], hides: ['a/b/x', 'a/x', 'ab', 'foo/x.c', 'x', 'x.tmp.keep'] },
  { from: ['b\\s'], hides: [] },
  { from: ['c++'], hides: [] },
  { from: ['a\\'], hides: [] },
  { from: ['file['], hides: [] },
  // The flags: -exclude is anchored, -exclude-wildcard is not; all add up.
  { exclude: ['x'], hides: ['x'] },
  { exclude: ['a/b'], hides: ['a/b'] },
  { exclude: ['dir/'], hides: ['dir/f', 'dir/sub'] },
  { exclude: ['x', 'dir/sub'], hides: ['dir/sub', 'x'] },
  { wildcard: ['x'], hides: ['a/b/x', 'a/x', 'x'] },
  { wildcard: ['dir/'], hides: ['dir/f', 'dir/sub', 'sub/dir/h'] },
  { wildcard: ['a/b'], hides: ['a/b', 'c/a/b'] },
  { exclude: ['a'], wildcard: ['*.tmp'], from: ['!a.tmp'], hides: ['.hidden.tmp', 'a', 'deep/n/c.tmp'] },
];

/** The hidden paths whose parent is shown, sorted, given which paths are shown. */
export function topHidden(paths: readonly string[], shown: (path: string) => boolean): string[] {
  const hidden = new Set(paths.filter((p) => !shown(p)));
  return [...hidden].filter((p) => !p.includes('/') || !hidden.has(p.slice(0, p.lastIndexOf('/')))).sort();
}

/** What the Excluder hides of `paths`, as the reverse view shows them: nothing below a hidden directory. */
export function excluderHides(c: ExcludeCase, paths: readonly string[]): string[] {
  const ex = Excluder.fromOptions(c.exclude ?? [], c.wildcard ?? [], c.from ? [c.from.join('\n')] : []);
  const shown = (p: string): boolean => {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) if (ex.matches(parts.slice(0, i).join('/'))) return false;
    return true;
  };
  return topHidden(paths, shown);
}

/** A short description of a case for messages. */
export function describeCase(c: ExcludeCase): string {
  const parts = [...(c.exclude ?? []).map((p) => `-exclude ${JSON.stringify(p)}`), ...(c.wildcard ?? []).map((p) => `-exclude-wildcard ${JSON.stringify(p)}`)];
  if (c.from) parts.push(`-exclude-from ${JSON.stringify(c.from)}`);
  return parts.join(' ');
}
