/**
 * The package as a user imports it: `import { Vault } from 'tscryptfs'`
 * (or `require`) resolves through package.json's "exports" to the built
 * entry point, and gives what the README's Library section uses.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

test("import 'tscryptfs' gives Vault, VaultFile, ReverseView, ReverseFile and Excluder", async () => {
  const pkg = (await import('tscryptfs')) as Record<string, unknown>;
  for (const name of ['Vault', 'VaultFile', 'ReverseView', 'ReverseFile', 'Excluder', 'formatFromInitOptions']) {
    assert.equal(typeof pkg[name], 'function', name);
  }
  assert.equal(pkg.REVERSE_CONF_NAME, '.gocryptfs.reverse.conf');
  const { Vault } = pkg as { Vault: { open: unknown; init: unknown } };
  assert.equal(typeof Vault.open, 'function');
  assert.equal(typeof Vault.init, 'function');
});

test("require('tscryptfs') gives the same names as import (Node 20.19 and later load the ES module)", async () => {
  const { createRequire } = await import('node:module');
  const required = createRequire(import.meta.url)('tscryptfs') as Record<string, unknown>;
  const imported = (await import('tscryptfs')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(required).sort(), Object.keys(imported).sort());
  assert.equal(required.Vault, imported.Vault, 'the same module, not a copy');
});
