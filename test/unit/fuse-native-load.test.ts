/**
 * The FUSE binding tscryptfs loads (src/fuse/fuse-native.ts): our fork in
 * native/fuse-native, installed as `fuse-native`, whose binary carries the
 * sha256 of the sources it was built from and refuses to load when they
 * are not the sources beside it; on the libfuse whose internals it depends
 * on (2.9, Documentation/fuse-native.md). On another libfuse this fails
 * with the message a user would see.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { libfuseMismatch, LIBFUSE_WANTED, loadFuse } from '../../src/fuse/fuse-native.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { needs } from '../helpers/requirements.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const FORK = join(REPO_ROOT, 'native', 'fuse-native');
const require = createRequire(join(FORK, 'index.js'));
const { sourceHash, SOURCES } = require('./source-hash.js') as { sourceHash: () => string; SOURCES: string[] };

test('fuse-native resolves to the fork in native/fuse-native', () => {
  const resolved = realpathSync(createRequire(join(REPO_ROOT, 'package.json')).resolve('fuse-native/package.json'));
  assert.equal(resolved, join(realpathSync(FORK), 'package.json'));
  const pkg = JSON.parse(readFileSync(resolved, 'utf8')) as { version: string; license: string };
  assert.equal(pkg.version, '2.2.6-tscryptfs');
  assert.equal(pkg.license, 'MIT');
  assert.deepEqual(SOURCES.filter((f) => f.endsWith('.c')), ['fuse-native.c'], 'the one C file is hashed');
});

test('another libfuse is refused, naming both versions and where the dependency is documented', () => {
  assert.equal(LIBFUSE_WANTED, 29);
  assert.equal(libfuseMismatch(29), null);
  assert.equal(libfuseMismatch(31), "libfuse 3.1 is loaded; tscryptfs's fuse-native depends on the internals of libfuse 2.9 (Documentation/fuse-native.md)");
  assert.match(libfuseMismatch(28)!, /^libfuse 2\.8 is loaded; .* libfuse 2\.9 /);
});

test('the loaded binding was built from the sources beside it and runs on libfuse 2.9', needs('mount'), () => {
  const Fuse = loadFuse();
  const found = Fuse.libfuseVersion();
  assert.equal(libfuseMismatch(found), null, `this machine's libfuse: ${libfuseMismatch(found)}`);
  const binding = require('./build/Release/fuse.node') as { fork_source_sha256?: string };
  assert.equal(binding.fork_source_sha256, sourceHash(), 'the binary carries the sha256 of the sources');
});

test('a binary built from other sources is refused, with one line saying how to rebuild', needs('mount'), () => {
  const tmp = makeTempDir('tscryptfs-fork-');
  try {
    const copy = join(tmp, 'fuse-native');
    cpSync(FORK, copy, { recursive: true, dereference: true });
    writeFileSync(join(copy, 'fuse-native.c'), `${readFileSync(join(copy, 'fuse-native.c'), 'utf8')}\n/* changed after the build */\n`);
    // Its own dependencies resolve from the repository's node_modules.
    const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(copy)})`], { encoding: 'utf8', env: { ...process.env, NODE_PATH: join(REPO_ROOT, 'node_modules') } });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /fuse-native: .*fuse\.node was built from other sources than .* holds; rebuild it: npm rebuild \(in a clone\), npm rebuild -g tscryptfs \(installed\)/);
  } finally {
    removeTempDir(tmp);
  }
});
