/**
 * The exclude table (test/helpers/exclude-table.ts) against the real
 * gocryptfs 2.3: one plaintext tree with a -plaintextnames reverse config,
 * so that a reverse mount shows the plaintext names; for every row,
 * `gocryptfs -reverse` is mounted with the row's -exclude, -exclude-wildcard
 * and -exclude-from, and what a walk of the mount misses must be the row's
 * `hides`, what the Excluder hides, and what our ReverseView (the library
 * behind `tscryptfs -reverse`) leaves out of its listings.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { initCipherdir, PASSWORD, withMount } from '../helpers/mount.js';
import { useMountTmp } from '../helpers/mount-suite.js';
import { describeCase, EXCLUDE_CASES, EXCLUDE_TREE, excluderHides, topHidden, treePaths, type ExcludeCase } from '../helpers/exclude-table.js';
import { Excluder, REVERSE_CONF_NAME, ReverseView } from '../../src/reverse/index.js';
import { needs } from '../helpers/requirements.js';

const T = { timeout: 600_000, ...needs('mount', 'gocryptfs') };
const dir = useMountTmp('reverse-excludes');
let tmp = '';
before(() => {
  tmp = dir.tmp;
});

/** Every path below `root` (relative), walking with readdir as a user of the mount would. */
async function walk(root: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(join(root, rel), { withFileTypes: true })) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    out.push(p);
    if (e.isDirectory()) out.push(...(await walk(root, p)));
  }
  return out;
}

/** The same walk through a ReverseView (encrypted paths are plaintext paths with -plaintextnames). */
async function walkView(view: ReverseView, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const name of await view.readdir(rel)) {
    const p = rel === '' ? name : `${rel}/${name}`;
    out.push(p);
    if ((await view.stat(p)).isDirectory()) out.push(...(await walkView(view, p)));
  }
  return out;
}

function flagsOf(c: ExcludeCase, fromFile: string): string[] {
  return [
    '-reverse',
    ...(c.exclude ?? []).flatMap((p) => ['-exclude', p]),
    ...(c.wildcard ?? []).flatMap((p) => ['-exclude-wildcard', p]),
    ...(c.from ? ['-exclude-from', fromFile] : []),
  ];
}

test(`the exclude table: gocryptfs -reverse, the Excluder and ReverseView hide the same paths in all ${EXCLUDE_CASES.length} rows`, T, async () => {
  const plain = join(tmp, 'plain');
  for (const f of EXCLUDE_TREE) {
    await fsp.mkdir(join(plain, f, '..'), { recursive: true });
    await fsp.writeFile(join(plain, f), 'x');
  }
  await initCipherdir('gocryptfs', plain, ['-reverse', '-plaintextnames']);
  const paths = treePaths();
  assert.deepEqual((await walk(plain)).filter((p) => p !== REVERSE_CONF_NAME).sort(), paths, 'the tree as made');
  const fromFile = join(tmp, 'patterns');
  const mnt = join(tmp, 'mnt');
  const wrong: string[] = [];
  for (const c of EXCLUDE_CASES) {
    await fsp.writeFile(fromFile, (c.from ?? []).join('\n'));
    const seen = new Set(await withMount('gocryptfs', plain, mnt, { flags: flagsOf(c, fromFile) }, (m) => walk(m)));
    const theirs = topHidden(paths, (p) => seen.has(p));
    const what = describeCase(c);
    if (JSON.stringify(theirs) !== JSON.stringify([...c.hides].sort())) wrong.push(`${what}: gocryptfs hides ${JSON.stringify(theirs)}, the table says ${JSON.stringify(c.hides)}`);
    const ours = excluderHides(c, paths);
    if (JSON.stringify(ours) !== JSON.stringify(theirs)) wrong.push(`${what}: the Excluder hides ${JSON.stringify(ours)}, gocryptfs ${JSON.stringify(theirs)}`);
    const excluder = Excluder.fromOptions(c.exclude ?? [], c.wildcard ?? [], c.from ? [c.from.join('\n')] : []);
    const view = await ReverseView.open(plain, { password: PASSWORD, excluder });
    const listed = new Set(await walkView(view));
    const viewHides = topHidden(paths, (p) => listed.has(p));
    if (JSON.stringify(viewHides) !== JSON.stringify(theirs)) wrong.push(`${what}: ReverseView hides ${JSON.stringify(viewHides)}, gocryptfs ${JSON.stringify(theirs)}`);
  }
  assert.deepEqual(wrong, []);
});
