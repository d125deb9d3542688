/**
 * scripts/patch-fuse-native.mjs is all or nothing (issue 17): on a scratch
 * copy of the installed fuse-native package, turned back into the pristine
 * 2.2.6 files by reversing our patch, the install patches every file or
 * none. Upstream drift (a changed line under the context of one middle hunk)
 * and a patch whose middle hunk no longer fits both fail with one line on
 * stderr and exit status 1, and leave every file as it was.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

interface PatchInfo {
  version: string;
  level: number;
  files: Record<string, { pristine: string; patched: string }>;
}

const INFO = JSON.parse(readFileSync(join(REPO_ROOT, 'patches', 'fuse-native.json'), 'utf8')) as PatchInfo;
const PATCH = join(REPO_ROOT, 'patches', `fuse-native+${INFO.version}.patch`);
const INSTALLED = join(REPO_ROOT, 'node_modules', 'fuse-native');
const COMPANIONS = ['tscryptfs_patch.h', 'tscryptfs-patch.json', 'tscryptfs_hooks.h', 'tscryptfs_stat_words.h'];

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

let tmp = '';
let pristine = '';
before(() => {
  tmp = makeTempDir('tscryptfs-patch-install-');
  // The installed package is the patched one: reverse the patch on a copy.
  pristine = join(tmp, 'pristine');
  cpSync(INSTALLED, pristine, { recursive: true });
  for (const c of COMPANIONS) rmSync(join(pristine, c), { force: true });
  const r = spawnSync('patch', ['-R', '-p1', '--batch', '--no-backup-if-mismatch', '-d', pristine, '-i', PATCH], { encoding: 'utf8' });
  assert.equal(r.status, 0, `reversing the patch: ${r.stdout}${r.stderr}`);
});
after(() => removeTempDir(tmp));

/** A fresh copy of the pristine package. */
function scratchPackage(name: string): string {
  const dir = join(tmp, name);
  cpSync(pristine, dir, { recursive: true });
  return dir;
}

/** The hunks of one file of the patch: [old start line, lines of the hunk body]. */
function hunksOf(patch: string, file: string): { oldStart: number; body: string[]; at: number }[] {
  const lines = patch.split('\n');
  const hunks: { oldStart: number; body: string[]; at: number }[] = [];
  let inFile = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith('+++ ')) inFile = l.startsWith(`+++ b/${file}\t`);
    const m = /^@@ -(\d+)/.exec(l);
    if (inFile && m) hunks.push({ oldStart: Number(m[1]), body: [], at: i + 1 });
    else if (inFile && hunks.length > 0 && /^[ +\-]/.test(l) && !l.startsWith('--- ')) hunks.at(-1)!.body.push(l);
  }
  return hunks;
}

function runInstall(pkgDir: string, script = join(REPO_ROOT, 'scripts', 'patch-fuse-native.mjs')) {
  return spawnSync(process.execPath, [script], { env: { ...process.env, TSCRYPTFS_FUSE_NATIVE_DIR: pkgDir }, encoding: 'utf8', timeout: 240_000 });
}

function hashes(pkgDir: string): Record<string, string> {
  return Object.fromEntries(Object.keys(INFO.files).map((f) => [f, sha256(join(pkgDir, f))]));
}

const want = (which: 'pristine' | 'patched'): Record<string, string> =>
  Object.fromEntries(Object.entries(INFO.files).map(([f, h]) => [f, h[which]]));

/** Nothing of the patch is in `pkgDir`: its files are the pristine ones, no companion or temporary file was left. */
function assertUntouched(pkgDir: string): void {
  assert.deepEqual(hashes(pkgDir), want('pristine'), 'every file is still the pristine one');
  for (const c of COMPANIONS) assert.ok(!existsSync(join(pkgDir, c)), `${c} not written`);
  assert.deepEqual(readdirSync(pkgDir).filter((n) => n.includes('tscryptfs-new')), [], 'no temporary files');
}

function assertOneLineFailure(r: ReturnType<typeof runInstall>, reason: RegExp): void {
  assert.equal(r.status, 1, `exit status (stdout: ${r.stdout}, stderr: ${r.stderr})`);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line on stderr: ${r.stderr}`);
  assert.match(lines[0]!, /^tscryptfs: fuse-native: /);
  assert.match(lines[0]!, reason);
}

test('the scratch copy is the pristine package the patch was made for', () => {
  assert.deepEqual(hashes(pristine), want('pristine'));
});

test('install patches a pristine copy completely, writes the level, and a second install changes nothing', { timeout: 300_000 }, () => {
  const pkg = scratchPackage('ok');
  const r = runInstall(pkg);
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, new RegExp(`patched \\(level ${INFO.level}\\)`));
  assert.deepEqual(hashes(pkg), want('patched'));
  assert.deepEqual(JSON.parse(readFileSync(join(pkg, 'tscryptfs-patch.json'), 'utf8')), { level: INFO.level });
  assert.match(readFileSync(join(pkg, 'tscryptfs_patch.h'), 'utf8'), new RegExp(`#define TSCRYPTFS_PATCH_LEVEL ${INFO.level}\\n`));
  assert.equal(readFileSync(join(pkg, 'tscryptfs_stat_words.h'), 'utf8'), readFileSync(join(REPO_ROOT, 'native', 'src', 'stat_words.h'), 'utf8'));
  assert.equal(readFileSync(join(pkg, 'tscryptfs_hooks.h'), 'utf8'), readFileSync(join(REPO_ROOT, 'native', 'src', 'fuse_hooks.h'), 'utf8'));
  assert.ok(!existsSync(join(pkg, 'prebuilds')), 'the unpatched prebuilt binaries are gone');
  const again = runInstall(pkg);
  assert.equal(again.status, 0, `${again.stdout}${again.stderr}`);
  assert.doesNotMatch(again.stdout, /patched \(level/);
  assert.deepEqual(hashes(pkg), want('patched'));
});

test('upstream drift under a middle hunk: install fails with one line and patches nothing', { timeout: 120_000 }, () => {
  const hunks = hunksOf(readFileSync(PATCH, 'utf8'), 'fuse-native.c');
  assert.ok(hunks.length >= 3, `fuse-native.c has ${hunks.length} hunks`);
  const middle = hunks[Math.floor(hunks.length / 2)]!;
  // A context line inside the hunk (not one of the outer ones fuzz may skip), changed in the package's file.
  const ctx = middle.body.findIndex((l, i) => i >= 3 && l.startsWith(' ') && l.trim().length > 0);
  assert.ok(ctx >= 0, 'the middle hunk has an inner context line');
  const oldLine = middle.oldStart + middle.body.slice(0, ctx).filter((l) => !l.startsWith('+')).length;
  const pkg = scratchPackage('drift');
  const file = join(pkg, 'fuse-native.c');
  const lines = readFileSync(file, 'utf8').split('\n');
  assert.equal(lines[oldLine - 1], middle.body[ctx]!.slice(1), 'located the context line in the package');
  lines[oldLine - 1] += ' /* upstream changed this */';
  writeFileSync(file, lines.join('\n'));
  const before = hashes(pkg);
  const r = runInstall(pkg);
  assertOneLineFailure(r, /fuse-native\.c is neither the fuse-native 2\.2\.6 package's nor the patched one/);
  assert.deepEqual(hashes(pkg), before, 'no file changed');
  for (const c of COMPANIONS) assert.ok(!existsSync(join(pkg, c)), `${c} not written`);
});

test('a patch whose middle hunk no longer fits: patch(1) refuses it in the scratch copy, the package stays pristine', { timeout: 120_000 }, () => {
  // A copy of the install script and its inputs, with one middle hunk of fuse-native.c broken in the patch.
  const root = join(tmp, 'repo');
  for (const p of ['scripts/patch-fuse-native.mjs', 'patches', 'native/src/fuse_hooks.h', 'native/src/stat_words.h']) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    cpSync(join(REPO_ROOT, p), join(root, p), { recursive: true });
  }
  const patchLines = readFileSync(PATCH, 'utf8').split('\n');
  const hunks = hunksOf(patchLines.join('\n'), 'fuse-native.c');
  const middle = hunks[Math.floor(hunks.length / 2)]!;
  // Every line the hunk expects to find (context and removed lines) drifts.
  for (let i = middle.at; i < middle.at + middle.body.length; i++) {
    const l = patchLines[i]!;
    if ((l.startsWith(' ') || l.startsWith('-')) && l.trim().length > 1) patchLines[i] = `${l} /* drift */`;
  }
  writeFileSync(join(root, 'patches', `fuse-native+${INFO.version}.patch`), patchLines.join('\n'));
  const pkg = scratchPackage('bad-hunk');
  const r = runInstall(pkg, join(root, 'scripts', 'patch-fuse-native.mjs'));
  assertOneLineFailure(r, /the patch does not apply to fuse-native 2\.2\.6: .*FAILED/);
  assertUntouched(pkg);
});

test('a partly patched package (index.js patched, fuse-native.c not) is refused, not completed', { timeout: 120_000 }, () => {
  const pkg = scratchPackage('partly');
  const patched = join(tmp, 'ok');
  if (!existsSync(join(patched, 'index.js'))) return assert.fail('the complete install test runs first');
  cpSync(join(patched, 'index.js'), join(pkg, 'index.js'));
  const r = runInstall(pkg);
  assertOneLineFailure(r, /partly patched; remove node_modules\/fuse-native and run npm ci/);
  assert.equal(sha256(join(pkg, 'index.js')), INFO.files['index.js']!.patched);
  assert.equal(sha256(join(pkg, 'fuse-native.c')), INFO.files['fuse-native.c']!.pristine);
});

test('another fuse-native version is refused with the versions named', { timeout: 120_000 }, () => {
  const pkg = scratchPackage('version');
  const pj = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  pj.version = '2.2.7';
  writeFileSync(join(pkg, 'package.json'), JSON.stringify(pj));
  assertOneLineFailure(runInstall(pkg), /version 2\.2\.7 is installed, the patch is for 2\.2\.6/);
  assertUntouched(pkg);
});
