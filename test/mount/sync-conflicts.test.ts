/**
 * Sync conflicts through a mount (Documentation/format.md §7.12): copies a
 * sync tool renamed with its suffix are listed under readable names, read
 * back with their own bytes, and resolved by rename (an ordinary encrypted
 * name results) and by unlink, every tool's; long names too, including a renamed .name
 * file. Two mounts of copies of one cipher directory each make the same
 * directory and are merged as a sync tool merges them (one gocryptfs.diriv
 * renamed): every file of both sides is listed and readable. -noconflicts
 * and gocryptfs show neither; -fsck reports them as conflicts and exits 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EXTPASS, initCipherdir, runImpl, withMount } from '../helpers/mount.js';
import { cipherEntries, cipherPathOf, MOUNT_IMPL, useMountTmp } from '../helpers/mount-suite.js';
import { gocryptfsFsck } from '../helpers/gocryptfs.js';
import { needs } from '../helpers/requirements.js';

const dir = useMountTmp('sync-conflicts');
const T = { timeout: 120_000, ...needs('mount', 'gocryptfs'), ...(MOUNT_IMPL !== 'tscryptfs' ? { skip: 'conflict copies are shown by tscryptfs only' } : {}) };

/** Each tool's suffix on a short encrypted name, and the name the mount shows for a copy of report.odt. */
const SHORT: [tool: string, suffix: string, shown: string][] = [
  ['Syncthing', '.sync-conflict-20261205-081500-ABCDEFG', 'report (conflict Syncthing 2026-12-05 08.15).odt'],
  ['Dropbox', " (Ann's conflicted copy 2026-12-05)", 'report (conflict Dropbox 2026-12-05).odt'],
  ['Dropbox case', ' (Case Conflict)', 'report (conflict Dropbox case).odt'],
  ['Nextcloud', ' (conflicted copy 2026-12-05 081500)', 'report (conflict Nextcloud 2026-12-05 08.15).odt'],
  ['Seafile', ' (SFConflict ann@example.com 2026-12-05-08-15-00)', 'report (conflict Seafile 2026-12-05 08.15).odt'],
  ['Google Drive', ' (1)', 'report (conflict copy 1).odt'],
  ['Resilio', '.Conflict', 'report (conflict Resilio).odt'],
  ['ownCloud', '_conflict-20261205-081500', 'report (conflict ownCloud 2026-12-05 08.15).odt'],
  ['OneDrive', '-DESKTOP-AB12CDE', 'report (conflict OneDrive DESKTOP-AB12CDE).odt'],
];

const LONG = 'L'.repeat(180) + '.txt';
const LONG_B = 'B'.repeat(180) + '.txt';
const longShown = (label: string): string => `${'L'.repeat(180)} (conflict ${label}).txt`;

/** Renames cipher file `from` to `to` on disk, as a sync tool renames the copy it keeps. */
async function renameOnDisk(from: string, to: string): Promise<void> {
  await fsp.rename(from, to);
}

async function fsckJson(cipherdir: string): Promise<{ code: number | null; doc: { findings: { kind: string; path: string; item: string | null; conflictOf: string | null }[]; summary: { corruptFiles: number; conflicts: number } } }> {
  const r = await runImpl('tscryptfs', ['-fsck', '-json', '-q', ...EXTPASS, cipherdir]);
  return { code: r.code, doc: JSON.parse(r.stdout) };
}

test("every tool's conflict copy is listed, read, renamed to a clean name and deleted; long names and a renamed .name file too", T, async () => {
  const cipherdir = join(dir.tmp, 'tools');
  const mnt = join(dir.tmp, 'mnt-tools');
  await initCipherdir('tscryptfs', cipherdir);
  await withMount('tscryptfs', cipherdir, mnt, {}, async (m) => {
    await fsp.writeFile(join(m, 'report.odt'), 'the canonical version');
    for (const [tool] of SHORT) await fsp.writeFile(join(m, `src-${tool}`), `the ${tool} version`);
    await fsp.mkdir(join(m, 'long'));
    await fsp.writeFile(join(m, 'long', LONG), 'long canonical');
    for (const v of ['st', 'db', 'gd']) await fsp.writeFile(join(m, 'long', `src-${v}`), `long ${v}`);
    await fsp.writeFile(join(m, 'long', LONG_B), 'B keeps its name');
  });
  const canonical = await cipherPathOf(cipherdir, '/report.odt');
  for (const [tool, suffix] of SHORT) await renameOnDisk(await cipherPathOf(cipherdir, `/src-${tool}`), canonical + suffix);
  const longPath = await cipherPathOf(cipherdir, `/long/${LONG}`);
  const hash = basename(longPath).slice('gocryptfs.longname.'.length);
  const longDir = dirname(longPath);
  // Syncthing and Dropbox put their suffix before the extension (".HASH" here); Google Drive's " (1)" goes after it here.
  await renameOnDisk(await cipherPathOf(cipherdir, '/long/src-st'), join(longDir, `gocryptfs.longname.sync-conflict-20261205-081500-ABCDEFG.${hash}`));
  await renameOnDisk(await cipherPathOf(cipherdir, '/long/src-db'), join(longDir, `gocryptfs.longname (conflicted copy 2026-12-05).${hash}`));
  await renameOnDisk(await cipherPathOf(cipherdir, '/long/src-gd'), join(longDir, `gocryptfs.longname.${hash} (1)`));
  const bPath = await cipherPathOf(cipherdir, `/long/${LONG_B}`);
  await renameOnDisk(bPath + '.name', bPath + '.sync-conflict-20261205-081500-ABCDEFG.name');

  // gocryptfs hides every copy, and keeps the rest readable.
  await withMount('gocryptfs', cipherdir, join(dir.tmp, 'mnt-go'), {}, async (m) => {
    assert.deepEqual((await fsp.readdir(m)).sort(), ['long', 'report.odt']);
    assert.deepEqual(await fsp.readdir(join(m, 'long')), [LONG]);
  });

  await withMount('tscryptfs', cipherdir, mnt, { flags: ['-noconflicts'] }, async (m) => {
    assert.deepEqual((await fsp.readdir(m)).sort(), ['long', 'report.odt'], '-noconflicts: as gocryptfs shows it');
    assert.deepEqual(await fsp.readdir(join(m, 'long')), [LONG]);
  });

  const fsck = await fsckJson(cipherdir);
  assert.equal(fsck.code, 0, JSON.stringify(fsck.doc));
  assert.equal(fsck.doc.summary.corruptFiles, 0);
  assert.equal(fsck.doc.summary.conflicts, SHORT.length + 4, 'each copy, and the renamed .name file');
  assert.ok(fsck.doc.findings.every((f) => f.kind === 'conflict'));
  assert.deepEqual(
    fsck.doc.findings.filter((f) => f.conflictOf === 'report.odt').map((f) => f.path).sort(),
    SHORT.map(([, , shown]) => shown).sort(),
  );

  await withMount('tscryptfs', cipherdir, mnt, {}, async (m) => {
    assert.deepEqual((await fsp.readdir(m)).sort(), ['long', 'report.odt', ...SHORT.map(([, , shown]) => shown)].sort());
    assert.equal(await fsp.readFile(join(m, 'report.odt'), 'utf8'), 'the canonical version');
    for (const [tool, , shown] of SHORT) {
      assert.equal(await fsp.readFile(join(m, shown), 'utf8'), `the ${tool} version`, shown);
      assert.equal((await fsp.stat(join(m, shown))).size, `the ${tool} version`.length);
    }
    const longNames = [LONG, LONG_B, longShown('Syncthing 2026-12-05 08.15'), longShown('Dropbox 2026-12-05'), longShown('copy 1')];
    assert.deepEqual((await fsp.readdir(join(m, 'long'))).sort(), longNames.sort());
    assert.equal(await fsp.readFile(join(m, 'long', longShown('Syncthing 2026-12-05 08.15')), 'utf8'), 'long st');
    assert.equal(await fsp.readFile(join(m, 'long', longShown('Dropbox 2026-12-05')), 'utf8'), 'long db');
    assert.equal(await fsp.readFile(join(m, 'long', longShown('copy 1')), 'utf8'), 'long gd');
    assert.equal(await fsp.readFile(join(m, 'long', LONG_B), 'utf8'), 'B keeps its name');

    // Resolving: keep one version under a clean name, delete another, overwrite one in place.
    await fsp.rename(join(m, SHORT[0]![2]), join(m, 'report-syncthing.odt'));
    await fsp.unlink(join(m, SHORT[1]![2]));
    await fsp.writeFile(join(m, SHORT[2]![2]), 'edited in place');
    assert.equal(await fsp.readFile(join(m, SHORT[2]![2]), 'utf8'), 'edited in place');
    // Every other tool's copy resolved too, by rename and by delete in turn.
    for (let i = 2; i < SHORT.length; i++) {
      if (i % 2 === 0) await fsp.rename(join(m, SHORT[i]![2]), join(m, `kept-${i}.odt`));
      else await fsp.unlink(join(m, SHORT[i]![2]));
    }
    assert.deepEqual((await fsp.readdir(m)).sort(), ['kept-2.odt', 'kept-4.odt', 'kept-6.odt', 'kept-8.odt', 'long', 'report-syncthing.odt', 'report.odt']);
    await fsp.rename(join(m, 'long', longShown('copy 1')), join(m, 'long', 'kept.txt'));
    await fsp.unlink(join(m, 'long', longShown('Dropbox 2026-12-05')));
    // The canonical version replaced by a copy: rename over it.
    await fsp.rename(join(m, 'long', longShown('Syncthing 2026-12-05 08.15')), join(m, 'long', LONG));
    assert.equal(await fsp.readFile(join(m, 'long', LONG), 'utf8'), 'long st');
    assert.deepEqual((await fsp.readdir(join(m, 'long'))).sort(), [LONG, LONG_B, 'kept.txt'].sort());
  });

  // What was resolved is ordinary: gocryptfs sees it; the canonical .name file of LONG was left alone.
  assert.ok((await fsp.readdir(longDir)).includes(`gocryptfs.longname.${hash}.name`));
  await withMount('gocryptfs', cipherdir, join(dir.tmp, 'mnt-go'), {}, async (m) => {
    assert.equal(await fsp.readFile(join(m, 'report-syncthing.odt'), 'utf8'), 'the Syncthing version');
    assert.equal(await fsp.readFile(join(m, 'kept-2.odt'), 'utf8'), 'edited in place');
    for (const i of [4, 6, 8]) assert.equal(await fsp.readFile(join(m, `kept-${i}.odt`), 'utf8'), `the ${SHORT[i]![0]} version`);
    assert.deepEqual((await fsp.readdir(m)).sort(), ['kept-2.odt', 'kept-4.odt', 'kept-6.odt', 'kept-8.odt', 'long', 'report-syncthing.odt', 'report.odt']);
    assert.equal(await fsp.readFile(join(m, 'long', 'kept.txt'), 'utf8'), 'long gd');
    assert.equal(await fsp.readFile(join(m, 'long', LONG), 'utf8'), 'long st');
  });
});

test('two mounts of copies each make the same directory; merged with one gocryptfs.diriv renamed, every file of both is listed and readable', T, async () => {
  const base = join(dir.tmp, 'base');
  await initCipherdir('tscryptfs', base);
  const sides = { A: join(dir.tmp, 'side-a'), B: join(dir.tmp, 'side-b') };
  for (const c of Object.values(sides)) await fsp.cp(base, c, { recursive: true });
  for (const [side, c] of Object.entries(sides)) {
    await withMount('tscryptfs', c, join(dir.tmp, `mnt-${side}`), {}, async (m) => {
      await fsp.mkdir(join(m, 'proj'));
      await fsp.writeFile(join(m, 'proj', `only-${side}.txt`), `${side} alone`);
      await fsp.writeFile(join(m, 'proj', 'both.txt'), `${side}'s both`);
      await fsp.mkdir(join(m, 'proj', 'sub'));
      await fsp.writeFile(join(m, 'proj', 'sub', 'deep.txt'), `${side}'s deep`);
    });
  }
  for (const c of Object.values(sides)) {
    const r = await gocryptfsFsck(c);
    assert.equal(r.code, 0, `gocryptfs -fsck of an unmerged side: ${r.stdout}${r.stderr}`);
  }
  // The merge, as Syncthing does it: B's entries move into A's directory, B's diriv is kept renamed.
  const projA = dirname(await cipherPathOf(sides.A, '/proj/both.txt'));
  const projB = dirname(await cipherPathOf(sides.B, '/proj/both.txt'));
  assert.equal(basename(projA), basename(projB), 'one name for proj on both sides (same root IV)');
  for (const n of await cipherEntries(projB)) await fsp.cp(join(projB, n), join(projA, n), { recursive: true, errorOnExist: true, force: false });
  await fsp.copyFile(join(projB, 'gocryptfs.diriv'), join(projA, 'gocryptfs.sync-conflict-20261205-081500-BBBBBBB.diriv'));
  const merged = sides.A;

  const label = 'Syncthing 2026-12-05 08.15';
  await withMount('tscryptfs', merged, join(dir.tmp, 'mnt-merged'), {}, async (m) => {
    const p = join(m, 'proj');
    assert.deepEqual(
      (await fsp.readdir(p)).sort(),
      ['both.txt', 'only-A.txt', 'sub', `both (conflict ${label}).txt`, `only-B (conflict ${label}).txt`, `sub (conflict ${label})`].sort(),
    );
    assert.equal(await fsp.readFile(join(p, 'both.txt'), 'utf8'), "A's both");
    assert.equal(await fsp.readFile(join(p, 'only-A.txt'), 'utf8'), 'A alone');
    assert.equal(await fsp.readFile(join(p, `both (conflict ${label}).txt`), 'utf8'), "B's both");
    assert.equal(await fsp.readFile(join(p, `only-B (conflict ${label}).txt`), 'utf8'), 'B alone');
    assert.equal(await fsp.readFile(join(p, 'sub', 'deep.txt'), 'utf8'), "A's deep");
    assert.equal(await fsp.readFile(join(p, `sub (conflict ${label})`, 'deep.txt'), 'utf8'), "B's deep");
    // Moved to a clean name, B's file is named under proj's own IV.
    await fsp.rename(join(p, `only-B (conflict ${label}).txt`), join(p, 'only-B.txt'));
    assert.equal(await fsp.readFile(join(p, 'only-B.txt'), 'utf8'), 'B alone');
  });

  const fsck = await fsckJson(merged);
  assert.equal(fsck.code, 0, JSON.stringify(fsck.doc));
  const iv = fsck.doc.findings.filter((f) => f.kind === 'iv-conflict');
  assert.deepEqual(
    iv.map((f) => f.path).sort(),
    ['proj/gocryptfs.sync-conflict-20261205-081500-BBBBBBB.diriv', `proj/both (conflict ${label}).txt`, `proj/sub (conflict ${label})`].sort(),
  );
  await withMount('gocryptfs', merged, join(dir.tmp, 'mnt-go-merged'), {}, async (m) => {
    assert.equal(await fsp.readFile(join(m, 'proj', 'only-B.txt'), 'utf8'), 'B alone', 'the renamed entry is an ordinary name for gocryptfs');
    // gocryptfs decrypts every name under proj's own IV: one of B's that passes the padding check by chance (about one in 255) shows as bytes that are not text.
    const listed = (await fsp.readdir(join(m, 'proj'))).filter((n) => !n.includes('\uFFFD'));
    assert.deepEqual(listed.sort(), ['both.txt', 'only-A.txt', 'only-B.txt', 'sub']);
  });
});

test('-fsck in text: one line per conflict copy, the summary clean, exit 0', T, async () => {
  const cipherdir = join(dir.tmp, 'text');
  await initCipherdir('tscryptfs', cipherdir);
  await withMount('tscryptfs', cipherdir, join(dir.tmp, 'mnt-text'), {}, async (m) => {
    await fsp.writeFile(join(m, 'a.txt'), 'a');
    await fsp.writeFile(join(m, 'b.txt'), 'b');
  });
  await renameOnDisk(await cipherPathOf(cipherdir, '/b.txt'), (await cipherPathOf(cipherdir, '/a.txt')) + ' (1)');
  const r = await runImpl('tscryptfs', ['-fsck', ...EXTPASS, cipherdir]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^fsck: sync conflict "a \(conflict copy 1\)\.txt": a conflict copy of a\.txt \(copy 1\) \(cipher file .* \(1\)\)$/m);
  assert.match(r.stdout, /fsck summary: no problems found\n$/);
});
