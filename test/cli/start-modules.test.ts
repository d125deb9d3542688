/**
 * What a start loads: the command line and the serving modules import
 * neither @noble/ciphers (the backend a user picks, loaded on first use by
 * src/crypto/noble.ts) nor @napi-rs/xattr (loaded on first use by
 * src/util/xattr-io.ts) nor commander (which lays out the help only, loaded
 * by -h and -hh), nor the modules of -reverse and -ctlsock (loaded
 * by serve.ts when a mount uses them); a command that reads a config loads
 * no cipher but AES-GCM; a forward mount's background process loads no
 * config code and only the content cipher of the vault it opens. Each costs
 * every start time it does not need. A
 * child process imports the module with a resolve hook that records every
 * URL the static and dynamic imports resolve to.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, tempDir, cleanup } from './helpers.js';

const HOOK = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.RESOLVED_LOG, r.url + '\\n');
  return r;
}`;

/** Every URL resolved while `entry` (a dist module) is imported and `then` runs. */
async function resolvedBy(entry: string, then = ''): Promise<string[]> {
  const dir = await tempDir('tscryptfs-modules-');
  try {
    const log = join(dir, 'resolved.txt');
    const script = [
      `import { register } from 'node:module';`,
      `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));`,
      `const m = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', entry)).href)});`,
      then,
    ].join('\n');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, RESOLVED_LOG: log }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    await cleanup(dir);
  }
}

const LAZY = ['/node_modules/@noble/ciphers/', '/node_modules/@napi-rs/xattr', '/node_modules/commander/'];
/** What the command line and a forward mount leave for -reverse and -ctlsock (the command line knows the reverse config's name, reverse/conf-name.js). */
const SERVING_LAZY = ['/dist/src/reverse/', '/dist/src/ctlsock/'];
const ALLOWED = ['/dist/src/reverse/conf-name.js'];

for (const [entry, lazyToo] of [['cli/main.js', SERVING_LAZY], ['cli/mount.js', SERVING_LAZY], ['cli/serve.js', SERVING_LAZY], ['index.js', []]] as const) {
  test(`importing ${entry} loads none of ${[...LAZY, ...lazyToo].join(', ')}`, async () => {
    const urls = await resolvedBy(entry);
    assert.ok(urls.some((u) => u.includes('/dist/src/vault/') || u.includes('/dist/src/cli/')), `the hook saw the imports: ${urls.length} URLs`);
    for (const lazy of [...LAZY, ...lazyToo]) {
      assert.deepEqual(urls.filter((u) => u.includes(lazy) && !ALLOWED.some((a) => u.endsWith(a))), [], `${entry} imports ${lazy}`);
    }
  });
}

/**
 * What a forward mount's background process leaves out: it gets its key and
 * format from the command, so no config code; it runs one content cipher,
 * loaded when its vault opens; and neither -speed nor the reverse operations.
 */
const DAEMON_LAZY = [
  '/dist/src/config/index.js',
  '/dist/src/config/scrypt.js',
  '/dist/src/config/master-key.js',
  '/dist/src/crypto/index.js',
  '/dist/src/crypto/speed.js',
  '/dist/src/crypto/aes-gcm.js',
  '/dist/src/crypto/siv.js',
  '/dist/src/crypto/xchacha.js',
  '/dist/src/crypto/aegis/aegis-aead.js',
  '/dist/src/fuse/reverse-operations.js',
];

test('the serving modules load no config code, no cipher before a vault opens, and then only its own', async () => {
  const dir = await tempDir('tscryptfs-serving-');
  try {
    const open = `
      const v = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist', 'src', 'vault', 'index.js')).href)});
      const vault = await v.Vault.fromKey(${JSON.stringify(dir)}, new Uint8Array(32), v.formatFromInitOptions({ plaintextNames: true }), null);
      await vault.close();`;
    const urls = await resolvedBy('cli/serve.js', open);
    assert.ok(urls.some((u) => u.endsWith('/dist/src/crypto/aes-gcm.js')), 'the vault loaded AES-GCM when it opened');
    assert.deepEqual(urls.filter((u) => DAEMON_LAZY.some((l) => u.endsWith(l) && !l.endsWith('/aes-gcm.js'))), []);
  } finally {
    await cleanup(dir);
  }
});

test('importing cli/serve.js loads no cipher implementation', async () => {
  const urls = await resolvedBy('cli/serve.js');
  assert.deepEqual(urls.filter((u) => DAEMON_LAZY.some((l) => u.endsWith(l))), []);
});

/** The content and name ciphers: a command that reads a config unlocks it with AES-GCM and HKDF alone. */
const CIPHERS = ['/dist/src/crypto/create-aead.js', '/dist/src/crypto/eme.js', '/dist/src/crypto/siv.js', '/dist/src/crypto/xchacha.js', '/dist/src/crypto/aegis/aegis-aead.js'];

for (const entry of ['config/index.js', 'cli/load-config.js', 'cli/info.js']) {
  test(`importing ${entry} loads no cipher but AES-GCM`, async () => {
    const urls = await resolvedBy(entry);
    assert.ok(urls.some((u) => u.includes('/dist/src/crypto/aes-gcm.js')), `the hook saw the imports: ${urls.length} URLs`);
    assert.deepEqual(urls.filter((u) => CIPHERS.some((c) => u.endsWith(c))), [], `${entry} imports them`);
  });
}

test('the noble backend, loaded when first asked for, seals AES-GCM and XChaCha20-Poly1305 as the node backend does', async () => {
  const check = `
    const key = new Uint8Array(32).fill(7), nonce = new Uint8Array(16).fill(1), aad = new Uint8Array(8), data = new Uint8Array(100).fill(3);
    const a = m.createAesGcm(key, 'noble').seal(nonce, data, aad), b = m.createAesGcm(key, 'node').seal(nonce, data, aad);
    if (Buffer.compare(a, b) !== 0) throw new Error('AES-GCM: noble and node differ');
    const k = new Uint8Array(32).fill(9), n = new Uint8Array(24).fill(2);
    const c = m.createXChaCha20Poly1305(k, 'noble').seal(n, data, aad), d = m.createXChaCha20Poly1305(k, 'node').seal(n, data, aad);
    if (Buffer.compare(c, d) !== 0) throw new Error('XChaCha20-Poly1305: noble and node differ');`;
  await resolvedBy('crypto/index.js', check);
});
