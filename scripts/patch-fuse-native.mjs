#!/usr/bin/env node
// postinstall: patch fuse-native (patches/fuse-native+VERSION.patch, what it
// changes: Documentation/fuse-native.md) and build its addon from source,
// offline and idempotently.
//
// All or nothing. The installed package must be exactly the one the patch
// was made for (sha256 of every file it changes, patches/fuse-native.json),
// or exactly its patched result (an earlier install): anything else, or a
// hunk that does not apply, fails the install with one line saying why, and
// leaves the package as it was. The patch is applied to copies in a
// temporary directory first (a dry run, then for real, then the results
// checked against their expected hashes) and only then moved into place.
//
// The build is different: without a compiler the install still succeeds
// (the library and the offline CLI work without FUSE, and mounting then
// says exactly why it cannot), as for tscryptfs's own addons.
//
// Besides the patched files, the package gets tscryptfs's own headers and
// its patch level: tscryptfs_patch.h and tscryptfs-patch.json (the level of
// patches/fuse-native.json, its one definition), tscryptfs_hooks.h
// (native/src/fuse_hooks.h) and tscryptfs_stat_words.h
// (native/src/stat_words.h).
//
// Environment: TSCRYPTFS_FUSE_NATIVE_DIR patches that directory instead of
// the installed package (for the install test).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const info = JSON.parse(readFileSync(join(root, 'patches', 'fuse-native.json'), 'utf8'));
const patchFile = join(root, 'patches', `fuse-native+${info.version}.patch`);
const log = (m) => console.log(`tscryptfs: fuse-native: ${m}`);

/** A failure of the patch itself: npm ci must fail, with this one line. */
class PatchError extends Error {}

const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');

function packageDir() {
  if (process.env.TSCRYPTFS_FUSE_NATIVE_DIR) return resolve(process.env.TSCRYPTFS_FUSE_NATIVE_DIR);
  try {
    return dirname(createRequire(join(root, 'package.json')).resolve(`${info.package}/package.json`));
  } catch {
    return null;
  }
}

/** 'pristine', 'patched', or throws: what the files the patch changes are now. */
function stateOf(pkgDir) {
  const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
  if (version !== info.version) throw new PatchError(`version ${version} is installed, the patch is for ${info.version}`);
  const states = Object.entries(info.files).map(([name, want]) => {
    const got = existsSync(join(pkgDir, name)) ? sha256(join(pkgDir, name)) : 'missing';
    if (got === want.pristine) return 'pristine';
    if (got === want.patched) return 'patched';
    throw new PatchError(`${name} is neither the ${info.package} ${info.version} package's nor the patched one (sha256 ${got.slice(0, 16)}...); remove node_modules/${info.package} and run npm ci`);
  });
  if (states.every((s) => s === states[0])) return states[0];
  throw new PatchError(`${info.package} is partly patched; remove node_modules/${info.package} and run npm ci`);
}

/** Patches copies of the package's files in a temporary directory and moves them into place only when all are right. */
function applyPatch(pkgDir) {
  const work = mkdtempSync(join(tmpdir(), 'tscryptfs-fuse-native-'));
  try {
    for (const name of Object.keys(info.files)) {
      mkdirSync(dirname(join(work, name)), { recursive: true });
      copyFileSync(join(pkgDir, name), join(work, name));
    }
    const patch = (dryRun) => {
      const args = ['-p1', '--batch', '--forward', '--no-backup-if-mismatch', '--reject-file=-', '-d', work, '-i', patchFile];
      try {
        execFileSync('patch', dryRun ? ['--dry-run', ...args] : args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        if (err.code === 'ENOENT') throw new PatchError('patch(1) is not installed (Debian package patch)');
        const out = `${err.stdout ?? ''}${err.stderr ?? ''}`;
        const failed = out.split('\n').find((l) => /FAILED|malformed|can't find file|No such file/.test(l));
        throw new PatchError(`the patch does not apply to ${info.package} ${info.version}: ${(failed ?? err.message).trim()}`);
      }
    };
    patch(true);
    patch(false);
    for (const [name, want] of Object.entries(info.files)) {
      if (sha256(join(work, name)) !== want.patched) throw new PatchError(`patching ${name} gave other bytes than the patch was made with`);
    }
    // Every file is right: move them into place (a rename each, within one directory).
    for (const name of Object.keys(info.files)) {
      const next = join(pkgDir, `${name}.tscryptfs-new`);
      copyFileSync(join(work, name), next);
      renameSync(next, join(pkgDir, name));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** tscryptfs's headers and patch level, which the patched sources include and index.js reads. */
function writeCompanions(pkgDir) {
  writeFileSync(join(pkgDir, 'tscryptfs_patch.h'), `/* Written by tscryptfs's scripts/patch-fuse-native.mjs from patches/fuse-native.json. */\n#define TSCRYPTFS_PATCH_LEVEL ${info.level}\n`);
  writeFileSync(join(pkgDir, 'tscryptfs-patch.json'), `${JSON.stringify({ level: info.level })}\n`);
  copyFileSync(join(root, 'native', 'src', 'fuse_hooks.h'), join(pkgDir, 'tscryptfs_hooks.h'));
  copyFileSync(join(root, 'native', 'src', 'stat_words.h'), join(pkgDir, 'tscryptfs_stat_words.h'));
}

/** Builds the addon with npm's own node-gyp against the installed Node headers; false when it cannot. */
function build(pkgDir) {
  const binary = join(pkgDir, 'build', 'Release', 'fuse.node');
  const loadsPatched = () => {
    try {
      execFileSync(process.execPath, ['-e', `process.exit(require(${JSON.stringify(binary)}).fuse_native_patched === ${info.level} ? 0 : 1)`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (loadsPatched()) {
    log('patched binary already built');
    return;
  }
  // npm hands its bundled node-gyp to lifecycle scripts; otherwise look next to npm.
  let nodeGyp = process.env.npm_config_node_gyp;
  if (!nodeGyp || !existsSync(nodeGyp)) {
    nodeGyp = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  }
  // Use the headers installed with node; never download them.
  const prefix = resolve(dirname(process.execPath), '..');
  const args = [nodeGyp, 'rebuild'];
  if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);
  try {
    execFileSync(process.execPath, args, { cwd: pkgDir, stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    log(`not built (${err.message.split('\n')[0]}); mounting will be unavailable, the library and offline CLI still work`);
    return;
  }
  if (!loadsPatched()) {
    log('the rebuilt binary does not load or is not the patched one; mounting will be unavailable');
    return;
  }
  log(`built ${binary}`);
}

function main() {
  const pkgDir = packageDir();
  if (pkgDir === null) {
    log('not installed, nothing to patch');
    return;
  }
  if (stateOf(pkgDir) === 'pristine') {
    applyPatch(pkgDir);
    log(`patched (level ${info.level})`);
  }
  writeCompanions(pkgDir);
  // Never fall back to the unpatched prebuilt binaries.
  rmSync(join(pkgDir, 'prebuilds'), { recursive: true, force: true });
  build(pkgDir);
}

try {
  main();
} catch (err) {
  if (!(err instanceof PatchError)) throw err;
  console.error(`tscryptfs: fuse-native: ${err.message}`);
  process.exit(1);
}
