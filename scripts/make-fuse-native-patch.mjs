#!/usr/bin/env node
// For developers changing the fuse-native patch: writes
// patches/fuse-native+VERSION.patch and patches/fuse-native.json from a
// pristine copy of the package and a changed one.
//
//   mkdir /tmp/fn && cd /tmp/fn && npm pack fuse-native@2.2.6 &&
//     mkdir a && tar -xzf fuse-native-2.2.6.tgz -C a --strip-components=1 &&
//     cp -r a b && (cd b && patch -p1 < REPO/patches/fuse-native+2.2.6.patch)
//   ... change b/fuse-native.c, b/index.js ...
//   node scripts/make-fuse-native-patch.mjs /tmp/fn/a /tmp/fn/b
//
// The level goes up by one with every new patch (patches/fuse-native.json
// is its one definition: the install script gives it to the C code and
// index.js, src/fuse/fuse-native.ts checks it). The diff leaves out what
// an install adds (build/, prebuilds/, node_modules/, tscryptfs's headers
// and level files), and dates every file the same, so that the patch
// changes only where the code does.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [pristine, changed] = process.argv.slice(2).map((p) => resolve(p));
if (!pristine || !changed) {
  console.error('usage: node scripts/make-fuse-native-patch.mjs PRISTINE_DIR CHANGED_DIR');
  process.exit(1);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const infoFile = join(root, 'patches', 'fuse-native.json');
const old = JSON.parse(readFileSync(infoFile, 'utf8'));
const EXCLUDE = ['build', 'prebuilds', 'node_modules', 'tscryptfs_*.h', 'tscryptfs-patch.json', '*.tscryptfs-new'];

// diff wants the two trees side by side as a/ and b/.
const work = mkdtempSync(join(tmpdir(), 'tscryptfs-make-patch-'));
let patch;
try {
  cpSync(pristine, join(work, 'a'), { recursive: true });
  cpSync(changed, join(work, 'b'), { recursive: true });
  try {
    patch = execFileSync('diff', ['-ruN', ...EXCLUDE.map((e) => `--exclude=${e}`), 'a', 'b'], { cwd: work, encoding: 'utf8' });
  } catch (err) {
    if (err.status !== 1) throw err; // 1: the trees differ, which is the point
    patch = err.stdout;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
patch = patch.replace(/^(---|\+\+\+) ([ab]\/\S+)\t.*$/gm, '$1 $2\t1985-10-26 08:15:00.000000000 +0000');
const sha = (f) => createHash('sha256').update(readFileSync(f)).digest('hex');
const files = {};
for (const m of patch.matchAll(/^\+\+\+ b\/(\S+)\t/gm)) files[m[1]] = { pristine: sha(join(pristine, m[1])), patched: sha(join(changed, m[1])) };
const info = { ...old, level: old.level + 1, files };
writeFileSync(join(root, 'patches', `fuse-native+${info.version}.patch`), patch);
writeFileSync(infoFile, `${JSON.stringify(info, null, 2)}\n`);
console.log(`patches/fuse-native+${info.version}.patch: ${Object.keys(files).join(', ')}; level ${info.level}`);
