/**
 * The fixtures' symlinks are git symlinks (encrypted targets, upstream's
 * plaintext symlinks), and every way the tests copy a fixture keeps their
 * targets byte for byte: a copy that rewrote a relative target into an
 * absolute path would turn every encrypted symlink into "not valid base64".
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join, relative } from 'node:path';
import { copyFixture, FORWARD_VECTORS, materializeExample, materializeReversePlain, materializeVector, readManifest } from '../helpers/fixtures.js';
import { EXAMPLES_DIR, VECTORS_DIR, WORKED_EXAMPLE_DIR } from '../helpers/paths.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

let tmp = '';
before(() => {
  tmp = makeTempDir('tscryptfs-fixture-copies-');
});
after(() => removeTempDir(tmp));

/** Every symlink below `root`: relative path -> target. */
async function symlinks(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isSymbolicLink()) out.set(relative(root, p), await fsp.readlink(p));
      else if (e.isDirectory()) await walk(p);
    }
  };
  await walk(root);
  return out;
}

async function assertSameLinks(src: string, copy: string, expectedCount: number): Promise<void> {
  const want = await symlinks(src);
  assert.equal(want.size, expectedCount, `${src}: ${want.size} symlinks in the checkout, expected ${expectedCount} (was the repository checked out with core.symlinks=false?)`);
  assert.deepEqual(await symlinks(copy), want, `${copy}: the same readlink targets as ${src}`);
}

test('gocryptfs 2.3 fixtures: a materialized cipher directory has the fixture\'s symlink targets', async () => {
  for (const fx of FORWARD_VECTORS) {
    const dest = join(tmp, fx);
    await materializeVector(fx, dest);
    const count = readManifest(fx, 'cipher').filter((e) => e.type === 'symlink').length;
    assert.equal(count, 3, `${fx}: the three symlinks of the plaintext tree`);
    await assertSameLinks(join(VECTORS_DIR, fx, 'cipher'), dest, count);
  }
});

test('reverse fixture: the plaintext copy and the recorded view keep their symlinks', async () => {
  const plain = join(tmp, 'reverse-plain');
  await materializeReversePlain(plain);
  await assertSameLinks(join(VECTORS_DIR, 'reverse', 'plain'), plain, 2);
  const view = join(tmp, 'reverse-view');
  await copyFixture(join(VECTORS_DIR, 'reverse', 'cipher_view'), view);
  await assertSameLinks(join(VECTORS_DIR, 'reverse', 'cipher_view'), view, 2);
});

test('upstream example filesystems and the worked example keep their symlinks', async () => {
  for (const ex of ['v0.9', 'v1.1-aessiv', 'v1.3', 'v2.2-xchacha', 'v2.2-deterministic-names', 'v2.2-xchacha-deterministic-names']) {
    const dest = join(tmp, ex);
    await materializeExample(ex, dest);
    await assertSameLinks(join(EXAMPLES_DIR, ex), dest, 2);
  }
  const content = join(tmp, 'content');
  await copyFixture(join(EXAMPLES_DIR, 'content'), content);
  await assertSameLinks(join(EXAMPLES_DIR, 'content'), content, 2);
  assert.equal(await fsp.readlink(join(content, 'rel')), 'status.txt');
  const worked = join(tmp, 'worked');
  await copyFixture(join(WORKED_EXAMPLE_DIR, 'cipher'), worked);
  await assertSameLinks(join(WORKED_EXAMPLE_DIR, 'cipher'), worked, 1);
});
