#!/usr/bin/env node
/**
 * Builds the optional native addons with node-gyp: AEGIS (native/ →
 * native/build/Release/tscryptfs_aegis.node) and batched AES-256-GCM /
 * XChaCha20-Poly1305 through node's own OpenSSL (tscryptfs_batch.node,
 * src/crypto/native-batch.ts), the mount's native fast path
 * (tscryptfs_fastpath.node, src/fuse/native-fast-path.ts), and fallocate(2) for preallocating cipher
 * blocks (tscryptfs_sys.node, src/util/native-sys.ts); then the FUSE binding,
 * our fork of fuse-native (native/fuse-native, where npm put it: a link in
 * a clone, a bundled copy in an installed package) into its own
 * build/Release/fuse.node. Meant as the package's `install` script; it
 * NEVER fails the install: without a compiler, Python, make or Node headers
 * it prints one line per part and exits 0. tscryptfs then uses its
 * TypeScript AEGIS and per-block node:crypto instead (the same bytes), and
 * without the binding mounting says why it cannot (the library and the
 * offline CLI still work).
 *
 * node-gyp: npm puts its own bundled copy in `npm_config_node_gyp` for every
 * lifecycle script, so no dependency is needed under `npm install`/`npm ci`.
 * Run by hand (`node scripts/build-native.mjs`) it also looks for a local
 * node-gyp, npm's bundled one next to this node, and `node-gyp` on PATH.
 *
 * Headers: when this node's own installation has include/node/node_api.h
 * (distribution packages and the official tarballs do), it is passed as
 * --nodedir, so nothing is downloaded. An explicit npm `nodedir` setting wins.
 *
 * Environment: TSCRYPTFS_SKIP_NATIVE=1 skips tscryptfs's own addons (not
 * the FUSE binding).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nativeDir = join(root, 'native');
const addon = join(nativeDir, 'build', 'Release', 'tscryptfs_aegis.node');
const PREFIX = 'tscryptfs:';

const say = (message) => console.log(`${PREFIX} ${message}`);

function findNodeGyp() {
  const env = process.env.npm_config_node_gyp;
  if (env && existsSync(env)) return [process.execPath, env];
  try {
    return [process.execPath, createRequire(join(root, 'package.json')).resolve('node-gyp/bin/node-gyp.js')];
  } catch {
    /* not installed locally */
  }
  const bundled = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(bundled)) return [process.execPath, bundled];
  const onPath = spawnSync('node-gyp', ['--version'], { stdio: 'ignore' });
  if (onPath.status === 0) return ['node-gyp'];
  return null;
}

/** Runs `node-gyp rebuild` in `dir`; null when it worked, else why not (with the compiler's error lines printed). */
function gypRebuild(gyp, dir, product) {
  const args = [...gyp.slice(1), 'rebuild', '--directory', dir];
  const prefix = resolve(dirname(process.execPath), '..');
  if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h'))) {
    args.push(`--nodedir=${prefix}`);
  }
  const res = spawnSync(gyp[0], args, {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 5 * 60 * 1000,
  });
  if (res.status === 0 && existsSync(product)) return null;
  const tail = `${res.stdout ?? ''}${res.stderr ?? ''}`
    .split('\n')
    .filter((l) => /error|not found|No such file|missing/i.test(l))
    .slice(-5)
    .map((l) => `${PREFIX}   ${l}`)
    .join('\n');
  if (tail) console.log(tail);
  return res.error ? res.error.message : `node-gyp exited with ${res.status ?? res.signal}`;
}

/** tscryptfs's own addons: one line saying what was built. */
function buildAddons(gyp) {
  if (process.env.TSCRYPTFS_SKIP_NATIVE === '1') return 'TSCRYPTFS_SKIP_NATIVE=1, native AEGIS not built, using TypeScript';
  if (!existsSync(join(nativeDir, 'binding.gyp'))) return 'native/binding.gyp missing, native AEGIS not built, using TypeScript';
  if (gyp === null) return 'node-gyp not found, native AEGIS not built, using TypeScript';
  const failed = gypRebuild(gyp, nativeDir, addon);
  if (failed) return `native AEGIS not built (${failed}), using TypeScript`;
  // Load it once in a child process so a broken build is reported here, not at first use.
  const check = spawnSync(
    process.execPath,
    ['-e', `const b = require(${JSON.stringify(addon)}); console.log(b.available() ? b.implementation() : 'unavailable: CPU lacks AES-NI');`],
    { encoding: 'utf8' },
  );
  if (check.status !== 0) return `native AEGIS built but does not load, using TypeScript: ${(check.stderr || '').split('\n')[0]}`;
  const loads = (name) => spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(nativeDir, 'build', 'Release', name))})`]).status === 0;
  return (
    `native AEGIS built (${check.stdout.trim()}); batched AES-GCM/XChaCha ${loads('tscryptfs_batch.node') ? 'built' : 'not usable, using node:crypto per block'}; ` +
    `mount fast path ${loads('tscryptfs_fastpath.node') ? 'built' : 'not usable, every request goes to JavaScript'}; ` +
    `fallocate ${loads('tscryptfs_sys.node') ? 'built' : 'not usable, writes are not preallocated'}`
  );
}

/** The FUSE binding: one line saying whether mounting will work. */
function buildBinding(gyp) {
  let dir;
  try {
    dir = dirname(createRequire(join(root, 'package.json')).resolve('fuse-native/package.json'));
  } catch {
    return 'fuse-native is not installed: mounting is unavailable';
  }
  if (gyp === null) return 'node-gyp not found, the FUSE binding is not built: mounting is unavailable';
  const failed = gypRebuild(gyp, dir, join(dir, 'build', 'Release', 'fuse.node'));
  if (failed) return `the FUSE binding is not built (${failed}): mounting is unavailable`;
  // index.js checks the binary against its sources when it loads.
  const check = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(dir)})`], { encoding: 'utf8' });
  if (check.status !== 0) return `the FUSE binding is built but does not load: ${(check.stderr || '').split('\n').find((l) => /Error/.test(l)) ?? ''}`;
  return `FUSE binding built (${join(dir, 'build', 'Release', 'fuse.node')})`;
}

for (const build of [buildAddons, buildBinding]) {
  try {
    say(build(findNodeGyp()));
  } catch (err) {
    say(`${build === buildAddons ? 'native AEGIS' : 'the FUSE binding'} not built (${err instanceof Error ? err.message : String(err)})`);
  }
}
