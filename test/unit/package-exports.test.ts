/**
 * The package as a user imports it: `import { Vault } from 'tscryptfs'`
 * resolves through package.json's "exports" to the built entry point, and
 * gives what the README's Library section uses.
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
