/**
 * The man pages (Documentation/tscryptfs.1.md and tscryptfs-xray.1.md, made
 * into roff by scripts/make-man.mjs): the committed .1 files are what the
 * sources give; every flag of the flag table has an entry in the page and a
 * line in -hh, and neither names a flag the table lacks; man(1) renders the
 * page without a warning and shows every flag of -hh; package.json installs
 * both pages.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FLAGS, type FlagSpec } from '../../src/cli/flags/flag-table.js';
import { XRAY_FLAGS } from '../../src/cli/xray/xray-main.js';
import { lines, ROOT, tscryptfs } from './helpers.js';

const DOCS = join(ROOT, 'Documentation');
const XRAY_BIN = join(ROOT, 'bin', 'tscryptfs-xray');

/** Every spelling of the table's flags, with one dash. */
function spellings(table: readonly FlagSpec[]): string[] {
  return table.flatMap((f) => [f.name, ...(f.aliases ?? [])]).map((n) => `-${n}`).sort();
}

/** The flags named in the "### " terms of the page's ACTIONS and OPTIONS sections. */
function manFlags(page: string): string[] {
  const md = readFileSync(join(DOCS, `${page}.1.md`), 'utf8');
  const out = new Set<string>();
  let section = '';
  for (const l of lines(md)) {
    if (l.startsWith('# ')) section = l.slice(2);
    if ((section === 'ACTIONS' || section === 'OPTIONS') && l.startsWith('### ')) {
      for (const m of l.slice(4).matchAll(/(?:^|[\s,])(-[\w-]+)/g)) out.add(m[1]!);
    }
  }
  return [...out].sort();
}

/** The flags a help text lists: the terms of its option lines ("  -idle, -i DURATION   ..."). */
function helpFlags(help: string): string[] {
  const out = new Set<string>();
  for (const l of lines(help)) {
    const term = /^ {2}(-\S.*?)(?: {2,}|\t|$)/.exec(l);
    if (!term) continue;
    for (const m of term[1]!.matchAll(/(?:^|[\s,])(-[\w-]+)/g)) out.add(m[1]!);
  }
  return [...out].sort();
}

/** `man -l PAGE` as a user's terminal-less run shows it; fails on any warning. */
function renderMan(page: string): string {
  const r = spawnSync('man', ['--warnings', '-l', join(DOCS, `${page}.1`)], { encoding: 'utf8', env: { ...process.env, MANWIDTH: '80', MAN_KEEP_FORMATTING: '' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'man or groff warned');
  return r.stdout;
}

/** Whether the rendered page shows `flag` as a word of its own. */
function shows(text: string, flag: string): boolean {
  return new RegExp(`(^|[\\s,(])${flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([\\s,=.)]|$)`, 'm').test(text);
}

test('the committed .1 pages are what scripts/make-man.mjs makes from the .md sources', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'make-man.mjs'), '--check'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});

test('make-man: roff escapes, and syntax outside the subset is refused', async () => {
  const { renderMan: render } = (await import(pathToFileURL(join(ROOT, 'scripts', 'make-man.mjs')).href)) as { renderMan: (md: string, version: string) => string };
  const page = render('% x(1) | T\n# NAME\nx - a\n.dot `-f` a\\b\n### -a-b *N*\nText.\n', '9');
  assert.equal(
    page,
    '.\\" x(1), made by scripts/make-man.mjs from Documentation/x.1.md: edit that file, not this one.\n' +
      '.TH "X" "1" "" "x 9" "T"\n.nh\n.ad l\n.SH "NAME"\n.PP\nx \\- a\n\\&.dot \\fB\\-f\\fR a\\eb\n.TP\n\\fB\\-a\\-b\\fR \\fIN\\fR\nText.\n',
  );
  assert.throws(() => render('% x(1) | T\n# Name\n', '9'), /line 2: section headings are upper case/);
  assert.throws(() => render('% x(1) | T\n[a](b)\n', '9'), /line 2: links are not supported/);
  assert.throws(() => render('% x(1) | T\n\u00e9\n', '9'), /line 2: only printable ASCII/);
});

describe('tscryptfs(1)', () => {
  test('every flag of the flag table has an entry, and every entry is a flag of the table', () => {
    assert.deepEqual(manFlags('tscryptfs'), spellings(FLAGS));
  });

  test('-hh lists every flag of the table, and only those', async () => {
    const r = await tscryptfs(['-hh']);
    assert.equal(r.code, 0);
    assert.deepEqual(helpFlags(r.stdout), spellings(FLAGS));
  });

  test('man -l renders it without warnings and shows every flag of -hh', { ...needsMan() }, async () => {
    const text = renderMan('tscryptfs');
    assert.match(text, /^TSCRYPTFS\(1\) +User Commands +TSCRYPTFS\(1\)$/m);
    const missing = helpFlags((await tscryptfs(['-hh'])).stdout).filter((f) => !shows(text, f));
    assert.deepEqual(missing, []);
    for (const section of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'MACHINE-READABLE OUTPUT', 'EXIT STATUS', 'ENVIRONMENT', 'FILES', 'EXAMPLES', 'SEE ALSO']) {
      assert.match(text, new RegExp(`^${section}$`, 'm'), section);
    }
  });

  test('every exit code of src/cli/exit-codes.ts that the CLI uses is listed', async () => {
    const md = readFileSync(join(DOCS, 'tscryptfs.1.md'), 'utf8');
    const exitSection = md.slice(md.indexOf('# EXIT STATUS'), md.indexOf('# ENVIRONMENT'));
    const listed = [...exitSection.matchAll(/^### (\d+)$/gm)].map((m) => Number(m[1]));
    const { EXIT } = await import('../../src/cli/exit-codes.js');
    // SigInt (15) and FIDO2Error (31) are gocryptfs codes tscryptfs never exits with.
    const used = Object.values(EXIT).filter((c) => c !== EXIT.SigInt && c !== EXIT.FIDO2Error);
    assert.deepEqual(listed, [...used, 2].sort((a, b) => a - b));
  });
});

describe('tscryptfs-xray(1)', () => {
  test('every flag of its table has an entry, and every entry is a flag of the table', () => {
    assert.deepEqual(manFlags('tscryptfs-xray'), spellings(XRAY_FLAGS));
  });

  test('its usage (-h) lists every flag of the table, and only those', () => {
    const r = spawnSync(process.execPath, [XRAY_BIN, '-h'], { encoding: 'utf8' });
    assert.equal(r.status, 0);
    assert.deepEqual(helpFlags(r.stderr), spellings(XRAY_FLAGS));
  });

  test('man -l renders it without warnings and shows every flag of its usage', { ...needsMan() }, () => {
    const text = renderMan('tscryptfs-xray');
    assert.deepEqual(spellings(XRAY_FLAGS).filter((f) => !shows(text, f)), []);
  });
});

test('package.json installs both pages (npm links its "man" entries into PREFIX/share/man)', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { man: string[]; files: string[] };
  assert.deepEqual(pkg.man, ['./Documentation/tscryptfs.1', './Documentation/tscryptfs-xray.1']);
  for (const page of pkg.man) assert.ok(pkg.files.includes(page.slice(2)), `${page} is in "files"`);
});

/** man(1) from man-db (setup.bash installs it). */
function needsMan(): { skip?: string } {
  return spawnSync('man', ['--version']).status === 0 ? {} : { skip: 'man is not installed (Debian package man-db)' };
}
