/**
 * The background process's bundle (scripts/bundle-daemon.mjs): the build
 * makes it, the daemon takes it only while no module it holds is newer
 * (src/cli/daemon-module.ts), and it imports no package at its start, as
 * the modules it bundles do not (start-modules.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DAEMON_BUNDLE, DAEMON_BUNDLE_INPUTS, daemonModuleUrl } from '../../src/cli/daemon-module.js';
import { ROOT, tempDir, cleanup } from './helpers.js';

const CLI = join(ROOT, 'dist', 'src', 'cli');

test('the build bundles the background process, and the daemon loads the bundle', () => {
  assert.equal(daemonModuleUrl(), pathToFileURL(join(CLI, DAEMON_BUNDLE)).href, 'npm run build leaves no bundled module newer than the bundle');
});

test('the bundle imports node: modules only at its start; packages load on first use', () => {
  const text = readFileSync(join(CLI, DAEMON_BUNDLE), 'utf8');
  const imports = [...text.matchAll(/^import\b[^'"]*?from\s*["']([^"']+)["']/gm)].map((m) => m[1]!);
  assert.ok(imports.includes('node:child_process'), `the scan sees the imports: ${imports.join(', ')}`);
  assert.deepEqual(imports.filter((s) => !s.startsWith('node:')), []);
  assert.doesNotMatch(text, /^import\s*["'][^"']+["']/m, 'no import for side effects only');
});

test('a module newer than the bundle, a missing list or module, or no bundle leave the daemon on daemon.js', async () => {
  const dir = await tempDir('tscryptfs-bundle-');
  try {
    const plain = join(dir, 'daemon.js');
    const other = join(dir, 'serve.js');
    const bundle = join(dir, DAEMON_BUNDLE);
    const list = join(dir, DAEMON_BUNDLE_INPUTS);
    const onPlain = (why: string): void => assert.equal(daemonModuleUrl(dir), pathToFileURL(plain).href, why);
    const onBundle = (why: string): void => assert.equal(daemonModuleUrl(dir), pathToFileURL(bundle).href, why);
    writeFileSync(plain, '');
    writeFileSync(other, '');
    onPlain('no bundle');
    writeFileSync(bundle, '');
    onPlain('no list');
    writeFileSync(list, JSON.stringify({ inputs: ['daemon.js', 'serve.js'] }));
    for (const f of [plain, other, bundle]) utimesSync(f, 1000, 1000);
    onBundle('all written at once (an install)');
    utimesSync(other, 1001.5, 1001.5);
    onBundle('a module written 1.5 s after the bundle (an install in another order)');
    utimesSync(other, 1010, 1010);
    onPlain('a module 10 s newer (tsc after the bundler, or tsc --watch)');
    utimesSync(other, 1000, 1000);
    utimesSync(plain, 1010, 1010);
    onPlain('daemon.js itself newer');
    utimesSync(plain, 1000, 1000);
    writeFileSync(list, JSON.stringify({ inputs: ['daemon.js', 'serve.js', 'gone.js'] }));
    onPlain('a bundled module gone');
    writeFileSync(list, JSON.stringify({ inputs: ['serve.js'] }));
    onPlain('a list without daemon.js');
    writeFileSync(list, '{');
    onPlain('a broken list');
  } finally {
    await cleanup(dir);
  }
});
