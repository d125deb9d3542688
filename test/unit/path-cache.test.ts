/** src/vault/path-cache.ts: bounded, expiring, and exact about what forgetTree drops. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PathCache } from '../../src/vault/path-cache.js';
import type { CipherEntry } from '../../src/vault/path-mapper.js';

const IV = Buffer.alloc(16);
const entry = (dir: string, name: string): CipherEntry => ({ dir, cname: name, diskName: name, long: false, path: `${dir}/${name}` });

test('PathCache keeps at most maxDirs directories and maxNames entries in all', () => {
  const c = new PathCache(60_000, 8, 100);
  for (let d = 0; d < 50; d++) {
    const slot = c.set(`/d${d}`, `/c/D${d}`, IV);
    for (let n = 0; n < 30; n++) c.remember(slot, `n${n}`, entry(`/c/D${d}`, `N${n}`));
    const { dirs, names } = c.size;
    assert.ok(dirs <= 8, `dirs ${dirs}`);
    assert.ok(names <= 100, `names ${names}`);
  }
});

test('PathCache.forgetTree drops a cipher directory and everything below it, nothing else', () => {
  const c = new PathCache();
  for (const [plain, cipher] of [['', '/c'], ['/a', '/c/A'], ['/a/b', '/c/A/B'], ['/ab', '/c/AB'], ['/x', '/c/X']] as const) {
    c.remember(c.set(plain, cipher, IV), 'f', entry(cipher, 'F'));
  }
  c.forgetTree('/c/A');
  assert.equal(c.get('/a'), undefined);
  assert.equal(c.get('/a/b'), undefined);
  assert.ok(c.get('/ab'), 'a sibling whose name starts the same stays');
  assert.ok(c.get('/x'));
  assert.ok(c.get(''));
  assert.deepEqual(c.size, { dirs: 3, names: 3 });
});

test('PathCache slots expire', async () => {
  const c = new PathCache(20);
  c.set('/a', '/c/A', IV);
  assert.ok(c.get('/a'));
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(c.get('/a'), undefined);
});
