/** src/vault/backing/dir-cache.ts: bounded, expiring, exact about what forgetTree drops, and never closing a descriptor in use. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fstatSync, readdirSync } from 'node:fs';
import { DirCache } from '../../src/vault/backing/dir-cache.js';
import { AT_FDCWD, atCalls } from '../../src/util/sys-at.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const IV = Buffer.alloc(16);
const at = atCalls();
const name = (n: string) => ({ cname: n, diskName: n, long: false });
let tmp = '';
before(() => {
  tmp = makeTempDir();
});
after(() => removeTempDir(tmp));

/** A fresh O_PATH descriptor of the temp dir. */
const fd = (): Promise<number> => at.openDir(AT_FDCWD, tmp);
const isOpen = (n: number): boolean => {
  try {
    fstatSync(n);
    return true;
  } catch {
    return false;
  }
};
/** Descriptors this process has open. */
const openFds = (): number => readdirSync('/proc/self/fd').length;
/** Lets a close that was queued on release happen. */
const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

test('DirCache keeps at most maxDirs directories and maxNames entries in all, and closes what it drops', async () => {
  const c = new DirCache(at, 60_000, 8, 100);
  const baseline = openFds();
  for (let d = 0; d < 50; d++) {
    const slot = c.set(`/d${d}`, `/c/D${d}`, await fd(), IV);
    for (let n = 0; n < 30; n++) c.remember(slot, `n${n}`, name(`N${n}`));
    const { dirs, names } = c.size;
    assert.ok(dirs <= 8, `dirs ${dirs}`);
    assert.ok(names <= 100, `names ${names}`);
  }
  await settle();
  assert.equal(openFds() - baseline, c.size.dirs, 'only the kept slots hold descriptors');
  c.clear();
  await settle();
  assert.equal(openFds(), baseline);
});

test('DirCache.forgetTree drops a cipher directory and everything below it, nothing else', async () => {
  const c = new DirCache(at);
  for (const [plain, cipher] of [['/a', '/c/A'], ['/a/b', '/c/A/B'], ['/ab', '/c/AB'], ['/x', '/c/X']] as const) {
    c.remember(c.set(plain, cipher, await fd(), IV), 'f', name('F'));
  }
  c.forgetTree('/c/A');
  assert.equal(c.get('/a'), undefined);
  assert.equal(c.get('/a/b'), undefined);
  assert.ok(c.get('/ab'), 'a sibling whose name starts the same stays');
  assert.ok(c.get('/x'));
  assert.deepEqual(c.size, { dirs: 2, names: 2 });
  c.clear();
});

test('DirCache slots expire', async () => {
  const c = new DirCache(at, 20);
  c.set('/a', '/c/A', await fd(), IV);
  assert.ok(c.get('/a'));
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(c.get('/a'), undefined);
});

test('DirCache drops the expired slots of other directories, and closes them, when a new one comes after a lifetime', async () => {
  const c = new DirCache(at, 20);
  const baseline = openFds();
  for (let d = 0; d < 5; d++) c.remember(c.set(`/old${d}`, `/c/O${d}`, await fd(), IV), 'f', name('F'));
  assert.deepEqual(c.size, { dirs: 5, names: 5 });
  await new Promise((r) => setTimeout(r, 40));
  c.set('/new', '/c/N', await fd(), IV);
  assert.deepEqual(c.size, { dirs: 1, names: 0 }, 'only the new slot is left');
  await settle();
  assert.equal(openFds() - baseline, 1, 'the expired slots closed their descriptors');
  c.clear();
});

test('a slot dropped while an operation holds it is closed when that operation releases it, not before', async () => {
  const c = new DirCache(at);
  const slot = c.set('/a', '/c/A', await fd(), IV).acquire();
  c.forgetTree('/c/A');
  await settle();
  assert.ok(isOpen(slot.fd), 'still open for the operation holding it');
  slot.release();
  await settle();
  assert.ok(!isOpen(slot.fd), 'closed once released');
});
