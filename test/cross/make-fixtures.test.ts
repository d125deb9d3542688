/**
 * scripts/make-fixtures.bash makes again what test/fixtures/gocryptfs-2.3
 * holds: the same plaintext, and cipher directories of the same shape (new
 * keys, IVs and nonces), so anybody can regenerate the fixtures and the
 * tests still hold. Three of the nine are remade here (one made through
 * -passwd -masterkey, one with long names at 62, the reverse one).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from '../helpers/mount.js';
import { REPO_ROOT, VECTORS_DIR } from '../helpers/paths.js';
import { needs } from '../helpers/requirements.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const T = { timeout: 180_000, ...needs('mount', 'gocryptfs', 'python3') };
const REMADE = ['raw64-false', 'longnamemax62', 'reverse'];

let tmp = '';
before(() => {
  tmp = makeTempDir('tscryptfs-make-fixtures-');
});
after(() => removeTempDir(tmp));

interface Entry {
  path: string;
  type: string;
  mode: string;
  size: number;
  sha256?: string;
  target?: string;
  xattrs?: Record<string, { hex: string }>;
}
const json = <X>(...p: string[]): X => JSON.parse(readFileSync(join(...p), 'utf8')) as X;
/** What a cipher entry shows that does not depend on keys and IVs (the sizes of names, files, targets and xattr values). */
const shape = (e: Entry): string =>
  [e.type, e.mode, e.size, e.path.length, e.target?.length ?? '-', Object.values(e.xattrs ?? {}).map((x) => x.hex.length).sort().join('/')].join(' ');

test('make-fixtures.bash remakes fixtures equivalent to the committed ones', T, async () => {
  const out = join(tmp, 'out');
  const r = await run('bash', [join(REPO_ROOT, 'scripts', 'make-fixtures.bash'), '-o', out, ...REMADE], { timeoutMs: 170_000 });
  assert.equal(r.code, 0, `make-fixtures.bash failed:\n${r.stdout}${r.stderr}`);
  for (const fx of REMADE) {
    const [old, now] = [join(VECTORS_DIR, fx), join(out, fx)];
    // The reverse fixture's plaintext holds its config, new in every run.
    const plain = (dir: string): Entry[] => json<Entry[]>(dir, 'plain_manifest.json').map((e) => (e.path === '.gocryptfs.reverse.conf' ? { ...e, sha256: '(new)' } : e));
    assert.deepEqual(plain(now), plain(old), `${fx}: the same plaintext`);
    const cipherShapes = (dir: string): string[] => json<Entry[]>(dir, 'cipher_manifest.json').map(shape).sort();
    assert.deepEqual(cipherShapes(now), cipherShapes(old), `${fx}: cipher entries of the same types, modes and sizes`);
    const pathShapes = (dir: string): string[] => json<{ plain: string; cipher: string; type: string }[]>(dir, 'paths.json').map((p) => `${p.plain} ${p.type} ${p.cipher.length}`).sort();
    assert.deepEqual(pathShapes(now), pathShapes(old), `${fx}: every plaintext path, and cipher paths of the same lengths`);
    const commands = (dir: string): string => readFileSync(join(dir, 'command.txt'), 'utf8').split('\n').slice(1).join('\n');
    assert.equal(commands(now), commands(old), `${fx}: the same commands`);
    if (fx !== 'reverse') assert.equal(readFileSync(join(now, 'info.txt'), 'utf8'), readFileSync(join(old, 'info.txt'), 'utf8'), `${fx}: gocryptfs -info`);
    assert.match(readFileSync(join(now, 'masterkey.txt'), 'utf8'), /^[0-9a-f]{64}\n$/);
  }
});
