#!/usr/bin/env node
// Builds the man pages Documentation/NAME.1 from Documentation/NAME.1.md.
//
//   node scripts/make-man.mjs           write every page
//   node scripts/make-man.mjs --check   exit 1 (naming the page) if a committed page differs
//
// The .1 files are committed, so installing never needs this script. The
// markdown is a small subset, checked strictly (anything else is an error
// rather than a page that renders wrong):
//
//   % NAME(1) | Manual title      first line: the page's name, section and manual
//   # HEADING                     a section (.SH)
//   ## Heading                    a subsection (.SS)
//   ### term                      a tagged paragraph (.TP): the term, then its text
//                                 below; in a term, words starting with "-" are bold
//   text lines                    a paragraph (blank lines separate paragraphs)
//   - item                        a bullet item (continuation lines indented by 2)
//   ```  ...  ```                 a verbatim block
//   `code` **bold** *italic*      inline, in text and terms
//
// Text is ASCII only. Every "-" becomes "\-" (a real minus, so a flag copied
// from the rendered page works and no line breaks inside a flag name).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const docs = join(root, 'Documentation');

/** Escapes text for roff: backslashes and minus signs. */
function escape(text) {
  return text.replace(/\\/g, '\\e').replace(/-/g, '\\-');
}

/** Inline markup of a line of text: `code` and **bold** bold, *italic* italic. */
function inline(text) {
  let out = '';
  const re = /`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*/g;
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out += escape(text.slice(last, m.index));
    if (m[1] !== undefined) out += `\\fB${escape(m[1])}\\fR`;
    else if (m[2] !== undefined) out += `\\fB${escape(m[2])}\\fR`;
    else out += `\\fI${escape(m[3])}\\fR`;
    last = re.lastIndex;
  }
  return out + escape(text.slice(last));
}

/** A term: flags in bold, the rest as inline markup. */
function term(text) {
  return text
    .split(/(\s+|,)/)
    .map((w) => (/^-[-\w]*$/.test(w) ? `\\fB${escape(w)}\\fR` : inline(w)))
    .join('');
}

/** A line of output text that roff must not read as a request. */
function safe(line) {
  return /^[.']/.test(line) ? `\\&${line}` : line;
}

/**
 * The roff page for the markdown `md`; `version` goes into the footer.
 * Throws with the line number for anything outside the subset.
 */
export function renderMan(md, version) {
  const lines = md.split('\n');
  const head = /^% ([a-z][a-z0-9-]*)\((\d)\) \| (.+)$/.exec(lines[0] ?? '');
  if (!head) throw new Error('line 1: expected "% name(section) | Manual title"');
  const [, name, section, manual] = head;
  const out = [
    `.\\" ${name}(${section}), made by scripts/make-man.mjs from Documentation/${name}.${section}.md: edit that file, not this one.`,
    `.TH "${name.toUpperCase()}" "${section}" "" "${name} ${version}" "${manual}"`,
    '.nh',
    '.ad l',
  ];
  // Where a paragraph goes: 'top' (.PP), 'tag' (right after a .TP term: no macro), 'item' (.IP, inside a .TP).
  let place = 'top';
  let para = [];
  const flush = () => {
    if (para.length === 0) return;
    if (place === 'top') out.push('.PP');
    else if (place === 'item') out.push('.IP');
    out.push(...para.map((l) => safe(inline(l))));
    if (place === 'tag') place = 'item';
    para = [];
  };
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const where = `line ${i + 1}`;
    if (/[^\x20-\x7e]/.test(line)) throw new Error(`${where}: only printable ASCII is allowed`);
    if (line.startsWith('```')) {
      flush();
      const end = lines.indexOf('```', i + 1);
      if (end < 0) throw new Error(`${where}: unterminated code block`);
      if (place === 'tag') throw new Error(`${where}: a code block cannot be the first thing under a term`);
      out.push('.IP', '.nf', '\\f[C]', ...lines.slice(i + 1, end).map((l) => safe(escape(l))), '\\f[R]', '.fi');
      i = end;
      continue;
    }
    const heading = /^(#{1,3}) (.+)$/.exec(line);
    if (heading) {
      flush();
      const [, level, text] = heading;
      if (level === '#') {
        if (text !== text.toUpperCase()) throw new Error(`${where}: section headings are upper case`);
        out.push(`.SH "${escape(text)}"`);
        place = 'top';
      } else if (level === '##') {
        out.push(`.SS "${escape(text)}"`);
        place = 'top';
      } else {
        out.push('.TP', safe(term(text)));
        place = 'tag';
      }
      continue;
    }
    if (line.startsWith('#')) throw new Error(`${where}: unsupported heading`);
    if (line.startsWith('- ')) {
      flush();
      if (place !== 'top') throw new Error(`${where}: bullet lists only outside a term's text`);
      const item = [line.slice(2)];
      while (i + 1 < lines.length && lines[i + 1].startsWith('  ') && lines[i + 1].trim() !== '') item.push(lines[++i].trim());
      out.push('.IP \\(bu 2', ...item.map((l) => safe(inline(l))));
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (/^\s/.test(line)) throw new Error(`${where}: indented text outside a list (use a code block)`);
    if (/\[[^\]]*\]\(/.test(line)) throw new Error(`${where}: links are not supported`);
    para.push(line);
  }
  flush();
  return `${out.join('\n')}\n`;
}

function main() {
  const check = process.argv.includes('--check');
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  let stale = 0;
  for (const file of readdirSync(docs).filter((f) => /^[a-z][a-z0-9-]*\.\d\.md$/.test(f)).sort()) {
    const target = join(docs, file.slice(0, -3));
    let page;
    try {
      page = renderMan(readFileSync(join(docs, file), 'utf8'), version);
    } catch (err) {
      console.error(`make-man: Documentation/${file}: ${err.message}`);
      process.exit(2);
    }
    let current = null;
    try {
      current = readFileSync(target, 'utf8');
    } catch {
      // not made yet
    }
    if (current === page) continue;
    if (check) {
      console.error(`make-man: Documentation/${file.slice(0, -3)} is not what Documentation/${file} gives; run node scripts/make-man.mjs`);
      stale++;
    } else {
      writeFileSync(target, page);
      console.log(`make-man: wrote Documentation/${file.slice(0, -3)}`);
    }
  }
  if (stale > 0) process.exit(1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
