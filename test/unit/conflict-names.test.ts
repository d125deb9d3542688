/**
 * Sync conflict copies (src/names/conflicts.ts, src/names/conflict-dir.ts):
 * each tool's suffix is recognised on short names, hashed long names,
 * gocryptfs.diriv and .name files; shown names keep the extension, stay
 * within NAME_MAX and carry the marker; and the resolver proves every copy
 * of random real names (and no random junk), renamed dirivs and renamed
 * .name files.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FormatOptions } from '../../src/config/format.js';
import { resolveDirConflicts, type DirConflicts } from '../../src/names/conflict-dir.js';
import { CONFLICT_MARKER, conflictShownName, conflictSuffixes, mayBeConflictName } from '../../src/names/conflicts.js';
import { DIRIV_NAME } from '../../src/names/diriv.js';
import { hashLongName, LONGNAME_PREFIX, LONGNAME_SUFFIX } from '../../src/names/longnames.js';
import type { NameCodec } from '../../src/names/name-codec.js';
import { AT_FDCWD, atCalls } from '../../src/util/sys-at.js';
import { deriveCiphers } from '../../src/vault/keys.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const FORMAT: FormatOptions = { cipher: 'aes-gcm', hkdf: true, plaintextNames: false, dirIV: true, raw64: true, longNameMax: 255, longNames: true };
const at = atCalls();
let tmp = '';
let codec: NameCodec;
before(async () => {
  tmp = makeTempDir();
  const names = (await deriveCiphers(randomBytes(32), FORMAT)).names;
  assert.ok(names !== null);
  codec = names;
});
after(() => removeTempDir(tmp));

/** A seeded generator (mulberry32), so a failure can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = Number(process.env.CONFLICT_TEST_SEED ?? Math.floor(Math.random() * 2 ** 32));
const rand = prng(SEED);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const randBytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));

/** One tool's suffix as it appears on disk, and what conflictSuffixes should say about it. */
interface Tool {
  suffix: string;
  tool: string;
  label: string;
  /** False where a base64url name may also end like this (OneDrive, ownCloud's old form): the right canonical need not come first. */
  unambiguous: boolean;
}

const TOOLS: readonly Tool[] = [
  { suffix: '.sync-conflict-20261205-081500-ABCDEFG', tool: 'Syncthing', label: 'Syncthing 2026-12-05 08.15', unambiguous: true },
  { suffix: ' (conflicted copy 2026-12-05 081500)', tool: 'Nextcloud', label: 'Nextcloud 2026-12-05 08.15', unambiguous: true },
  { suffix: ' (conflicted copy 2026-12-05)', tool: 'Dropbox', label: 'Dropbox 2026-12-05', unambiguous: true },
  { suffix: " (Bob's conflicted copy 2026-12-05)", tool: 'Dropbox', label: 'Dropbox 2026-12-05', unambiguous: true },
  { suffix: ' (conflicted copy 2026-12-05 (1))', tool: 'Dropbox', label: 'Dropbox 2026-12-05 1', unambiguous: true },
  { suffix: ' (Case Conflict)', tool: 'Dropbox', label: 'Dropbox case', unambiguous: true },
  { suffix: ' (Case Conflict 2)', tool: 'Dropbox', label: 'Dropbox case 2', unambiguous: true },
  { suffix: ' (SFConflict a@b.c 2026-12-05-08-15-00)', tool: 'Seafile', label: 'Seafile 2026-12-05 08.15', unambiguous: true },
  { suffix: '.Conflict', tool: 'Resilio', label: 'Resilio', unambiguous: true },
  { suffix: '_conflict-20261205-081500', tool: 'ownCloud', label: 'ownCloud 2026-12-05 08.15', unambiguous: false },
  { suffix: ' (1)', tool: 'copy', label: 'copy 1', unambiguous: true },
  { suffix: ' (12)', tool: 'copy', label: 'copy 12', unambiguous: true },
  { suffix: '-DESKTOP-AB12CDE', tool: 'OneDrive', label: 'OneDrive DESKTOP-AB12CDE', unambiguous: false },
];

/** A real long-name hash with both '-' and '_' in it (the characters OneDrive's and ownCloud's suffixes use). */
const HASHED = (() => {
  for (let i = 0; ; i++) {
    const h = hashLongName(`n${i}`, true);
    if (h.slice(LONGNAME_PREFIX.length).includes('-') && h.includes('_')) return h;
  }
})();
const HASH = HASHED.slice(LONGNAME_PREFIX.length);
/** A short encrypted name with '-' and '_' in it. */
const SHORT = 'kT3-u_9QzLx0aB-4cD5eFg';

/** [what the test calls it, the copy's name on disk, the canonical it must lead to]. */
function placements(t: Tool): [string, string, string][] {
  return [
    ['short', SHORT + t.suffix, SHORT],
    ['long, at end', HASHED + t.suffix, HASHED],
    ['long, before .HASH', `${LONGNAME_PREFIX.slice(0, -1)}${t.suffix}.${HASH}`, HASHED],
    ['diriv, at end', DIRIV_NAME + t.suffix, DIRIV_NAME],
    ['diriv, before .diriv', `gocryptfs${t.suffix}.diriv`, DIRIV_NAME],
    ['.name, at end', HASHED + LONGNAME_SUFFIX + t.suffix, HASHED + LONGNAME_SUFFIX],
    ['.name, before .name', HASHED + t.suffix + LONGNAME_SUFFIX, HASHED + LONGNAME_SUFFIX],
  ];
}

test("conflictSuffixes finds each tool's canonical name, with tool and label, at the end and before the last extension", () => {
  for (const t of TOOLS) {
    for (const [where, disk, canonical] of placements(t)) {
      const got = conflictSuffixes(disk);
      const i = got.findIndex((s) => s.canonical === canonical && s.tool === t.tool && s.label === t.label);
      const what = `${t.tool} ${where}: ${JSON.stringify(disk)} -> ${JSON.stringify(got)}`;
      assert.ok(i >= 0, what);
      if (t.unambiguous) assert.equal(i, 0, what);
    }
  }
});

test('conflictSuffixes finds nothing in names no tool made, and never a canonical that is empty', () => {
  for (const n of ['kT3u9QzLx0aB4cD5eFgHiA', DIRIV_NAME, 'gocryptfs.conf', ' (1)', '(1)', '.Conflict', 'x(1)', 'x (conflicted)', 'x (12345)']) {
    assert.deepEqual(conflictSuffixes(n), [], n);
  }
  for (const t of TOOLS) for (const s of conflictSuffixes(t.suffix)) assert.ok(s.canonical.length > 0, `${t.suffix} -> ${JSON.stringify(s)}`);
  // OneDrive: every '-' may start the host name, the longest canonical first.
  assert.deepEqual(
    conflictSuffixes('abc-def-HOST').map((s) => [s.canonical, s.label]),
    [
      ['abc-def', 'OneDrive HOST'],
      ['abc', 'OneDrive def-HOST'],
    ],
  );
});

test('conflictShownName puts the label before the extension, keeps dotfiles whole, counts collisions and marks the name', () => {
  const L = 'Syncthing 2026-12-05 08.15';
  const taken = new Set<string>();
  assert.equal(conflictShownName('report.odt', L, taken), 'report (conflict Syncthing 2026-12-05 08.15).odt');
  assert.equal(conflictShownName('archive.tar.gz', L, taken), 'archive.tar (conflict Syncthing 2026-12-05 08.15).gz');
  assert.equal(conflictShownName('README', L, taken), 'README (conflict Syncthing 2026-12-05 08.15)');
  assert.equal(conflictShownName('.bashrc', L, taken), '.bashrc (conflict Syncthing 2026-12-05 08.15)');
  assert.equal(conflictShownName('trailing.', L, taken), 'trailing. (conflict Syncthing 2026-12-05 08.15)');
  // Collisions: with what is taken, and with what this call itself added.
  assert.equal(conflictShownName('report.odt', L, taken), 'report (conflict Syncthing 2026-12-05 08.15 2).odt');
  assert.equal(conflictShownName('report.odt', L, taken), 'report (conflict Syncthing 2026-12-05 08.15 3).odt');
  const busy = new Set(['a (conflict copy 1)', 'a (conflict copy 1 2)']);
  assert.equal(conflictShownName('a', 'copy 1', busy), 'a (conflict copy 1 3)');
  assert.ok(busy.has('a (conflict copy 1 3)'));
  for (const s of taken) {
    assert.ok(s.includes(CONFLICT_MARKER) && mayBeConflictName(s), s);
  }
  assert.equal(mayBeConflictName('report.odt'), false);
  assert.equal(mayBeConflictName('x (conflicted copy 2026-12-05)'), false);
});

test('conflictShownName keeps long multi-byte names within 255 bytes, cutting whole characters only', () => {
  const L = 'Seafile 2026-12-05 08.15';
  const names = ['é'.repeat(125) + '.txt', '中'.repeat(84) + '.md', '😀'.repeat(63) + '.c', 'x' + '😀'.repeat(63), 'a'.repeat(255), '𝄞'.repeat(60) + '.tar.gz'];
  for (const plain of names) {
    assert.ok(Buffer.byteLength(plain) <= 255, plain);
    const taken = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const shown = conflictShownName(plain, L, taken);
      const bytes = Buffer.from(shown, 'utf8');
      assert.ok(bytes.length <= 255, `${bytes.length} bytes: ${shown}`);
      assert.equal(bytes.toString('utf8'), shown, `no broken character: ${shown}`);
      assert.ok(mayBeConflictName(shown), shown);
      const dot = plain.lastIndexOf('.');
      if (dot > 0) assert.ok(shown.endsWith(`)${plain.slice(dot)}`), shown);
      assert.ok(plain.startsWith(shown.slice(0, shown.indexOf(CONFLICT_MARKER))), shown);
    }
    assert.equal(taken.size, 12);
  }
});

test('conflictShownName stays within 255 bytes when the extension is long', () => {
  // A short stem and a long extension: shortening the stem alone cannot make room.
  const plain = 'a.' + 'x'.repeat(250);
  const shown = conflictShownName(plain, 'Syncthing 2026-12-05 08.15', new Set());
  assert.ok(Buffer.byteLength(shown) <= 255, `${Buffer.byteLength(shown)} bytes: ${shown}`);
  assert.ok(mayBeConflictName(shown), shown);
});

// ---- the resolver on random names -------------------------------------------------------------

const ASCII = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-()~#+,;=@[]{}';
const WIDE = ['é', 'ß', 'ü', 'Ж', 'ω', 'ñ', '中', '文', '日', 'ア', '€', '😀', '🎉', '𝄞'];

/** A valid plaintext name of minBytes..maxBytes UTF-8 bytes; half of them ASCII only. */
function randomName(minBytes: number, maxBytes: number): string {
  const target = minBytes + Math.floor(rand() * (maxBytes - minBytes + 1));
  const wide = rand() < 0.5;
  let s = '';
  let n = 0;
  while (n < target) {
    let c = wide && rand() < 0.4 ? pick(WIDE) : ASCII[Math.floor(rand() * ASCII.length)]!;
    if (n + Buffer.byteLength(c) > maxBytes) c = 'a';
    s += c;
    n += Buffer.byteLength(c);
  }
  return s === '.' || s === '..' ? s + 'x' : s;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
function junkName(): string {
  const len = 10 + Math.floor(rand() * 91);
  let s = '';
  for (let i = 0; i < len; i++) s += B64URL[Math.floor(rand() * B64URL.length)]!;
  // Every other one gets a '-' for sure (OneDrive's suffix starts with one).
  if (rand() < 0.5) {
    const at = 1 + Math.floor(rand() * (len - 2));
    s = s.slice(0, at) + '-' + s.slice(at + 1);
  }
  return s;
}

interface Expected {
  plain: string;
  canonical: string;
  tool: string;
  label: string;
}

/** Shown names of the random names' copies that came out over 255 bytes (checked on their own, below). */
const overlong: string[] = [];

/** Runs the resolver on one directory and checks every copy is proven as a copy of its name, and every junk name stays unexplained. */
async function resolveAndCheck(dir: string, iv: Buffer, copies: Map<string, Expected>, junk: string[], present: Set<string>, shown: Set<string>): Promise<DirConflicts> {
  const dirfd = await at.openDir(AT_FDCWD, dir);
  let r: DirConflicts;
  try {
    const leftovers = [...copies.keys(), ...junk];
    for (const n of leftovers) present.add(n);
    r = await resolveDirConflicts({ at, dirfd, codec, iv, raw64: true, leftovers, present, shown });
  } finally {
    await at.close(dirfd);
  }
  const seed = `(seed ${SEED})`;
  assert.deepEqual(r.restored, [], seed);
  assert.deepEqual(r.files, [], seed);
  assert.deepEqual(new Set(r.unexplained), new Set(junk), `junk names unexplained, and nothing else ${seed}`);
  assert.equal(r.conflicts.length, copies.size, seed);
  const shownNames = new Set<string>();
  for (const c of r.conflicts) {
    const want = copies.get(c.diskName);
    assert.ok(want !== undefined, `${c.diskName} ${seed}`);
    const what = `${JSON.stringify(c.diskName)} of ${JSON.stringify(want.plain)} ${seed}`;
    assert.equal(c.kind, 'copy', what);
    assert.equal(c.plain, want.plain, what);
    assert.equal(c.canonical, want.canonical, what);
    assert.equal(c.tool, want.tool, what);
    assert.equal(c.label, want.label, what);
    assert.equal(c.ivCopy, undefined, what);
    assert.ok(mayBeConflictName(c.shown), what);
    if (Buffer.byteLength(c.shown) > 255) overlong.push(`${c.plain} -> ${c.shown}`);
    assert.ok(!shown.has(c.shown) && !shownNames.has(c.shown), `shown name ${JSON.stringify(c.shown)} is unique: ${what}`);
    shownNames.add(c.shown);
  }
  return r;
}

test('the resolver proves every conflict copy of 10,000 random short names and leaves random junk unexplained', async () => {
  const BATCH = 1000;
  for (let b = 0; b < 10; b++) {
    const iv = randBytes(16);
    const copies = new Map<string, Expected>();
    const shown = new Set<string>();
    const present = new Set<string>();
    for (let i = 0; i < BATCH; i++) {
      const plain = randomName(1, 175);
      if (shown.has(plain)) continue;
      shown.add(plain);
      const cname = codec.encryptName(Buffer.from(plain, 'utf8'), iv);
      assert.equal(codec.needsHash(cname), false, plain);
      present.add(cname);
      for (const t of TOOLS) copies.set(cname + t.suffix, { plain, canonical: cname, tool: t.tool, label: t.label });
    }
    const junk = Array.from({ length: 200 }, junkName).filter((j) => !present.has(j));
    await resolveAndCheck(tmp, iv, copies, junk, present, shown);
  }
});

test('the resolver proves every conflict copy of 1,000 random long names, with the suffix at the end and before .HASH', async () => {
  const BATCH = 100;
  for (let b = 0; b < 10; b++) {
    const dir = join(tmp, `long${b}`);
    mkdirSync(dir);
    const iv = randBytes(16);
    const copies = new Map<string, Expected>();
    const shown = new Set<string>();
    const present = new Set<string>();
    for (let i = 0; i < BATCH; i++) {
      const plain = randomName(176, 255);
      if (shown.has(plain)) continue;
      shown.add(plain);
      const cname = codec.encryptName(Buffer.from(plain, 'utf8'), iv);
      assert.ok(codec.needsHash(cname), plain);
      const hashed = codec.diskName(cname);
      writeFileSync(join(dir, hashed + LONGNAME_SUFFIX), cname, { encoding: 'latin1', mode: 0o444 });
      present.add(hashed);
      present.add(hashed + LONGNAME_SUFFIX);
      const hash = hashed.slice(LONGNAME_PREFIX.length);
      for (const t of TOOLS) {
        copies.set(hashed + t.suffix, { plain, canonical: hashed, tool: t.tool, label: t.label });
        copies.set(`${LONGNAME_PREFIX.slice(0, -1)}${t.suffix}.${hash}`, { plain, canonical: hashed, tool: t.tool, label: t.label });
      }
    }
    const junk = Array.from({ length: 50 }, junkName).filter((j) => !present.has(j));
    await resolveAndCheck(dir, iv, copies, junk, present, shown);
  }
});

test('the shown names of the random names\' copies stay within 255 bytes', () => {
  assert.deepEqual(overlong.slice(0, 3), [], `${overlong.length} over 255 bytes (seed ${SEED})`);
});

// ---- renamed gocryptfs.diriv and .name files ---------------------------------------------------

test('names encrypted under a renamed gocryptfs.diriv are shown as conflicts of kind iv', async () => {
  const dir = join(tmp, 'diriv');
  mkdirSync(dir);
  const ivA = randBytes(16);
  const ivB = randBytes(16);
  const copyName = `${DIRIV_NAME}.sync-conflict-20261205-081500-ABCDEFG`;
  writeFileSync(join(dir, DIRIV_NAME), ivA, { mode: 0o444 });
  writeFileSync(join(dir, copyName), ivB, { mode: 0o444 });
  // A copy with the directory's own IV (a harmless duplicate), and one of the wrong length: neither is a second IV.
  writeFileSync(join(dir, `${DIRIV_NAME} (1)`), ivA, { mode: 0o444 });
  writeFileSync(join(dir, `gocryptfs (2).diriv`), ivB.subarray(0, 15), { mode: 0o444 });

  const mine = ['notes.txt', 'shared'];
  const theirs = ['notes.txt', 'photo.jpg', 'Ж中😀 теория.md', 'L'.repeat(200) + '.log'];
  const present = new Set<string>([DIRIV_NAME, copyName, `${DIRIV_NAME} (1)`, 'gocryptfs (2).diriv']);
  for (const p of mine) present.add(codec.diskName(codec.encryptName(Buffer.from(p), ivA)));
  const under = new Map<string, string>();
  for (const p of theirs) {
    const cname = codec.encryptName(Buffer.from(p), ivB);
    const disk = codec.diskName(cname);
    if (disk !== cname) {
      writeFileSync(join(dir, disk + LONGNAME_SUFFIX), cname, { encoding: 'latin1', mode: 0o444 });
      present.add(disk + LONGNAME_SUFFIX);
    }
    present.add(disk);
    under.set(disk, p);
  }
  const leftovers = [copyName, `${DIRIV_NAME} (1)`, 'gocryptfs (2).diriv', ...under.keys()];
  const dirfd = await at.openDir(AT_FDCWD, dir);
  let r: DirConflicts;
  try {
    r = await resolveDirConflicts({ at, dirfd, codec, iv: ivA, raw64: true, leftovers, present, shown: new Set(mine) });
  } finally {
    await at.close(dirfd);
  }
  assert.deepEqual(r.restored, []);
  assert.deepEqual(r.files, [
    { diskName: `${DIRIV_NAME} (1)`, canonical: DIRIV_NAME, tool: 'copy', label: 'copy 1', kind: 'diriv', used: 0 },
    { diskName: copyName, canonical: DIRIV_NAME, tool: 'Syncthing', label: 'Syncthing 2026-12-05 08.15', kind: 'diriv', used: theirs.length },
  ]);
  assert.equal(r.conflicts.length, theirs.length);
  for (const c of r.conflicts) {
    const plain = under.get(c.diskName);
    assert.equal(c.plain, plain, c.diskName);
    assert.equal(c.kind, 'iv');
    assert.equal(c.ivCopy, copyName);
    assert.equal(c.tool, 'Syncthing');
    assert.equal(c.label, 'Syncthing 2026-12-05 08.15');
    assert.equal(c.canonical, codec.diskName(codec.encryptName(Buffer.from(plain!), ivA)));
  }
  // notes.txt exists in both versions: its copy does not take the ordinary name.
  const notes = r.conflicts.find((c) => c.plain === 'notes.txt')!;
  assert.equal(notes.shown, 'notes (conflict Syncthing 2026-12-05 08.15).txt');
  // A copy that holds no IV stays hidden, as before.
  assert.ok(r.unexplained.includes('gocryptfs (2).diriv'));
  assert.ok(!r.files.some((f) => f.diskName === 'gocryptfs (2).diriv'));
});

/** A long entry in its own directory; its .name file is written under `nameFile`. */
function longEntry(sub: string, plain: string, nameFile: (hashed: string) => string): { dir: string; iv: Buffer; hashed: string; cname: string } {
  const dir = join(tmp, sub);
  mkdirSync(dir);
  const iv = randBytes(16);
  const cname = codec.encryptName(Buffer.from(plain), iv);
  const hashed = codec.diskName(cname);
  assert.notEqual(hashed, cname);
  writeFileSync(join(dir, nameFile(hashed)), cname, { encoding: 'latin1', mode: 0o444 });
  return { dir, iv, hashed, cname };
}

async function resolveIn(dir: string, iv: Buffer, leftovers: string[], present: string[], shown: string[] = []): Promise<DirConflicts> {
  const dirfd = await at.openDir(AT_FDCWD, dir);
  try {
    return await resolveDirConflicts({ at, dirfd, codec, iv, raw64: true, leftovers, present: new Set(present), shown: new Set(shown) });
  } finally {
    await at.close(dirfd);
  }
}

test('a long entry whose .name file was renamed is restored under its plaintext name', async () => {
  const cases: [string, (h: string) => string, string, string][] = [
    ['copy', (h) => `${h}${LONGNAME_SUFFIX} (1)`, 'copy', 'copy 1'],
    ['syncthing-inside', (h) => `${h}.sync-conflict-20261205-081500-ABCDEFG${LONGNAME_SUFFIX}`, 'Syncthing', 'Syncthing 2026-12-05 08.15'],
    ['syncthing-end', (h) => `${h}${LONGNAME_SUFFIX}.sync-conflict-20261205-081500-ABCDEFG`, 'Syncthing', 'Syncthing 2026-12-05 08.15'],
    ['dropbox-inside', (h) => `${h} (conflicted copy 2026-12-05)${LONGNAME_SUFFIX}`, 'Dropbox', 'Dropbox 2026-12-05'],
  ];
  for (const [sub, nameFile, tool, label] of cases) {
    const plain = `${sub} ` + 'ü'.repeat(100) + '.pdf';
    const { dir, iv, hashed } = longEntry(`name-${sub}`, plain, nameFile);
    const renamed = nameFile(hashed);
    const r = await resolveIn(dir, iv, [hashed, renamed], [hashed, renamed]);
    assert.deepEqual(r.restored, [{ name: plain, diskName: hashed }], sub);
    assert.deepEqual(r.files, [{ diskName: renamed, canonical: hashed + LONGNAME_SUFFIX, tool, label, kind: 'name-file', used: 1 }], sub);
    assert.deepEqual(r.conflicts, [], sub);
    assert.deepEqual(r.unexplained, [], sub);
  }
});

test("a conflict copy of a long entry is proven through the entry's renamed .name file", async () => {
  const plain = 'Q'.repeat(190) + '.bin';
  const { dir, iv, hashed } = longEntry('name-and-copy', plain, (h) => `${h}${LONGNAME_SUFFIX} (1)`);
  const renamed = `${hashed}${LONGNAME_SUFFIX} (1)`;
  const copy = `${hashed} (conflicted copy 2026-12-05 081500)`;
  const r = await resolveIn(dir, iv, [hashed, renamed, copy], [hashed, renamed, copy]);
  assert.deepEqual(r.restored, [{ name: plain, diskName: hashed }]);
  assert.equal(r.conflicts.length, 1);
  const c = r.conflicts[0]!;
  assert.deepEqual(
    { diskName: c.diskName, plain: c.plain, canonical: c.canonical, kind: c.kind, tool: c.tool, label: c.label },
    { diskName: copy, plain, canonical: hashed, kind: 'copy', tool: 'Nextcloud', label: 'Nextcloud 2026-12-05 08.15' },
  );
  assert.equal(c.shown, conflictShownName(plain, 'Nextcloud 2026-12-05 08.15', new Set([plain])));
  assert.equal(r.files.length, 1);
  assert.equal(r.files[0]!.kind, 'name-file');
  assert.equal(r.files[0]!.used, 2);
  assert.deepEqual(r.unexplained, []);
});

test('in the root, renamed copies of gocryptfs.conf are kept apart as files of kind conf; elsewhere they explain nothing', async () => {
  const dir = join(tmp, 'conf');
  mkdirSync(dir);
  const names = ['gocryptfs.sync-conflict-20261205-081500-ABCDEFG.conf', 'gocryptfs.conf (1)'];
  for (const n of names) writeFileSync(join(dir, n), '{}');
  const dirfd = await at.openDir(AT_FDCWD, dir);
  try {
    const iv = randBytes(16);
    const root = await resolveDirConflicts({ at, dirfd, codec, iv, raw64: true, leftovers: names, present: new Set(names), shown: new Set(), isRoot: true });
    assert.deepEqual(root.files.map((f) => [f.diskName, f.kind, f.canonical]).sort(), names.map((n) => [n, 'conf', 'gocryptfs.conf']).sort());
    assert.deepEqual(root.unexplained, []);
    const sub = await resolveDirConflicts({ at, dirfd, codec, iv, raw64: true, leftovers: names, present: new Set(names), shown: new Set() });
    assert.deepEqual(sub.files, []);
    assert.deepEqual([...sub.unexplained].sort(), [...names].sort());
  } finally {
    await at.close(dirfd);
  }
});

test('a renamed .name file that hashes to no entry explains nothing', async () => {
  const { dir, iv, hashed } = longEntry('name-stray', 'S'.repeat(200), (h) => `${h}${LONGNAME_SUFFIX} (1)`);
  // The renamed .name file belongs to `hashed`, which is not in the directory; `other` has no .name file at all.
  const other = hashLongName('not-this-one', true);
  const r = await resolveIn(dir, iv, [other, `${hashed}${LONGNAME_SUFFIX} (1)`], [other, `${hashed}${LONGNAME_SUFFIX} (1)`]);
  assert.deepEqual(r.restored, []);
  assert.deepEqual(r.conflicts, []);
  assert.equal(r.files.length, 1); // still recognised as a copy of hashed's .name file, and kept hidden
  assert.equal(r.files[0]!.used, 0);
  assert.deepEqual(r.unexplained, [other]);
});

test("doubtful names: one a renamed diriv's IV decrypts becomes its conflict, one it does not stays shown; without such a diriv none is read", async () => {
  const dir = join(tmp, 'doubtful');
  mkdirSync(dir);
  const ivA = randBytes(16);
  const ivB = randBytes(16);
  const copyName = `${DIRIV_NAME}.sync-conflict-20261205-081500-ABCDEFG`;
  writeFileSync(join(dir, copyName), ivB, { mode: 0o444 });
  // Under A's IV, a name whose bytes are not text (a Latin-1 name) and one of B's names: both are doubtful.
  const latin1 = codec.encryptName(Buffer.from('caf\xe9.txt', 'latin1'), ivA);
  const theirs = codec.encryptName(Buffer.from('theirs.txt'), ivB);
  const present = [copyName, latin1, theirs];
  const r = await resolveIn(dir, ivA, [copyName], present);
  assert.deepEqual(r.conflicts, []);
  const dirfd = await at.openDir(AT_FDCWD, dir);
  try {
    const withB = await resolveDirConflicts({ at, dirfd, codec, iv: ivA, raw64: true, leftovers: [copyName], present: new Set(present), shown: new Set(), doubtful: [latin1, theirs] });
    assert.deepEqual(withB.conflicts.map((c) => [c.diskName, c.plain, c.kind, c.shown]), [[theirs, 'theirs.txt', 'iv', 'theirs (conflict Syncthing 2026-12-05 08.15).txt']]);
    assert.equal(withB.files[0]!.used, 1);
    const without = await resolveDirConflicts({ at, dirfd, codec, iv: ivA, raw64: true, leftovers: ['zzzz (1)'], present: new Set(present), shown: new Set(), doubtful: [latin1, theirs] });
    assert.deepEqual(without.conflicts, []);
  } finally {
    await at.close(dirfd);
  }
});
