/**
 * The fuse-native build tscryptfs loads (src/fuse/fuse-native.ts): the
 * patch level of patches/fuse-native.json, on the libfuse whose internals
 * the patch depends on (2.9, Documentation/fuse-native.md). On another
 * libfuse this fails with the message a user would see.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { libfuseMismatch, loadFuse, patchInfo } from '../../src/fuse/fuse-native.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { needs } from '../helpers/requirements.js';

test('patches/fuse-native.json names the package, the level and libfuse 2.9', () => {
  const info = patchInfo();
  assert.equal(info.package, 'fuse-native');
  assert.equal(info.version, '2.2.6');
  assert.equal(info.libfuse, 29);
  assert.ok(Number.isInteger(info.level) && info.level > 0);
});

test('another libfuse is refused, naming both versions and where the dependency is documented', () => {
  assert.equal(libfuseMismatch(29, 29), null);
  assert.equal(
    libfuseMismatch(31, 29),
    'libfuse 3.1 is loaded; the fuse-native patch depends on the internals of libfuse 2.9 (Documentation/fuse-native.md)',
  );
  assert.match(libfuseMismatch(28, 29)!, /^libfuse 2\.8 is loaded; .* libfuse 2\.9 /);
});

test('the loaded binding is at our patch level and runs on libfuse 2.9', needs('mount'), () => {
  const info = patchInfo();
  const Fuse = loadFuse();
  const found = Fuse.libfuseVersion();
  assert.equal(libfuseMismatch(found, info.libfuse), null, `this machine's libfuse: ${libfuseMismatch(found, info.libfuse)}`);
  const pkg = join(REPO_ROOT, 'node_modules', 'fuse-native');
  const binding = createRequire(join(pkg, 'index.js'))('./build/Release/fuse.node') as { fuse_native_patched?: number };
  assert.equal(binding.fuse_native_patched, info.level, 'the compiled binding carries the level');
  assert.deepEqual(JSON.parse(readFileSync(join(pkg, 'tscryptfs-patch.json'), 'utf8')), { level: info.level });
});
