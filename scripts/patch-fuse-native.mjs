#!/usr/bin/env node
// postinstall: patch fuse-native 2.2.6 (patches/fuse-native+2.2.6.patch) and
// rebuild its addon from source, offline and idempotently. The patch fixes
// utimens, fgetattr, create flags, 64-bit inodes, external-unmount
// notification and the 15 s timeout (see Documentation/fuse-native.md).
//
// A failure never fails `npm install`: the library and the offline CLI work
// without FUSE, and `tscryptfs CIPHERDIR MOUNTPOINT` then says exactly why
// it cannot mount.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const VERSION = '2.2.6';
/** The patch's level: fuse_native_patched in the binding and index.js. */
const LEVEL = 23;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const patchFile = join(root, 'patches', `fuse-native+${VERSION}.patch`);
const log = (m) => console.log(`tscryptfs: fuse-native: ${m}`);

function main() {
  let pkgDir;
  try {
    pkgDir = dirname(createRequire(join(root, 'package.json')).resolve('fuse-native/package.json'));
  } catch {
    log('not installed, nothing to patch');
    return;
  }
  const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
  if (version !== VERSION) throw new Error(`version ${version} installed, the patch is for ${VERSION}`);
  const run = (cmd, args) => execFileSync(cmd, args, { cwd: pkgDir, stdio: ['ignore', 'inherit', 'inherit'] });

  const indexJs = () => readFileSync(join(pkgDir, 'index.js'), 'utf8');
  const isPatched = () => indexJs().includes(`fuse_native_patched !== ${LEVEL})`);
  if (!isPatched() && indexJs().includes('fuse_native_patched')) {
    throw new Error(`an older tscryptfs patch is applied; remove node_modules/fuse-native and run npm ci again`);
  }
  if (!isPatched()) run('patch', ['-p1', '--forward', '--batch', '--no-backup-if-mismatch', '-i', patchFile]);
  if (!isPatched()) throw new Error('patching failed');
  // Never fall back to the unpatched prebuilt binaries.
  rmSync(join(pkgDir, 'prebuilds'), { recursive: true, force: true });

  const binary = join(pkgDir, 'build', 'Release', 'fuse.node');
  const loadsPatched = () => {
    try {
      execFileSync(process.execPath, ['-e', `process.exit(require(${JSON.stringify(binary)}).fuse_native_patched === ${LEVEL} ? 0 : 1)`], { stdio: 'ignore' });
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
  run(process.execPath, args);
  if (!loadsPatched()) throw new Error('the rebuilt binary does not load or is not the patched one');
  log(`built ${binary}`);
}

try {
  main();
} catch (err) {
  log(`not usable (${err.message}); mounting will be unavailable, the library and offline CLI still work`);
}
