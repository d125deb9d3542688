/**
 * The reverse view (src/reverse, no FUSE) of gocryptfs 2.3's reverse
 * fixture (Documentation/format.md §9) is byte for byte the view gocryptfs showed: the
 * same encrypted names, sizes, symlink targets and file bytes (derived
 * file IDs and nonces), the virtual gocryptfs.diriv, .name and
 * gocryptfs.conf files.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { confFormat, readConfFile } from '../../src/config/index.js';
import { ReverseView, REVERSE_CONF_NAME } from '../../src/index.js';
import { fixtureCipherPath, fixtureMasterKey, materializeReversePlain, readManifest } from '../helpers/fixtures.js';
import { VECTORS_DIR } from '../helpers/paths.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const FIXTURE = 'reverse';
let tmp = '';
let plain = '';
let view: ReverseView;

before(async () => {
  tmp = makeTempDir('tscryptfs-reverse-view-');
  plain = join(tmp, 'plain');
  await materializeReversePlain(plain);
  view = await ReverseView.open(plain, { password: 'test' });
});
after(() => removeTempDir(tmp));

test('every entry of the fixture view: name, type, size, target, bytes', async () => {
  const expected = readManifest(FIXTURE, 'cipher');
  const seen: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of await view.readdir(dir)) {
      const p = dir === '' ? name : `${dir}/${name}`;
      seen.push(p);
      const e = expected.find((x) => x.path === p);
      assert.ok(e, `unexpected entry ${p}`);
      const st = await view.stat(p);
      if (e.type === 'dir') {
        assert.ok(st.isDirectory(), p);
        await walk(p);
        continue;
      }
      assert.equal(Number(st.size), e.size, `size of ${p}`);
      if (e.type === 'symlink') {
        assert.ok(st.isSymbolicLink(), p);
        assert.equal(await view.readlink(p), e.target, `target of ${p}`);
        continue;
      }
      assert.ok(st.isFile(), p);
      const f = await view.open(p);
      const whole = await f.read(1 << 20, 0);
      // Odd offsets and lengths give the same bytes as one big read.
      const pieces = [await f.read(5, 0), await f.read(30, 5), await f.read(4200, 35), await f.read(1 << 20, 4235)];
      await f.close();
      assert.equal(whole.length, e.size, `bytes of ${p}`);
      if (e.size > 0) assert.deepEqual(Buffer.concat(pieces), whole, `pieced reads of ${p}`);
      const cipherFile = await fsp.readFile(join(VECTORS_DIR, FIXTURE, 'cipher_view', p));
      assert.deepEqual(whole, cipherFile, `content of ${p}`);
    }
  };
  await walk('');
  assert.deepEqual(seen.sort(), expected.map((e) => e.path).sort());
});

test('lookups: virtual files, bad names, path translation', async () => {
  await assert.rejects(view.stat('AAAAAAAAAAAAAAAAAAAAAA'), { code: 'ENOENT' });
  await assert.rejects(view.stat('not-base64!'), { code: 'ENOENT' });
  await assert.rejects(view.stat('gocryptfs.longname.AAAA.name'), { code: 'ENOENT' });
  await assert.rejects(view.open('gocryptfs.conf', 1), { code: 'EROFS' });
  const diriv = await view.stat('gocryptfs.diriv');
  assert.equal(diriv.mode & 0o7777n, 0o444n);
  assert.equal(diriv.size, 16n);
  const nested = fixtureCipherPath(FIXTURE, 'dir1/dir2/nested.txt');
  assert.equal(view.encryptPath('dir1/dir2/nested.txt'), nested);
  assert.equal(view.decryptPath(nested), 'dir1/dir2/nested.txt');
  const long = `longfile_${'x'.repeat(221)}`;
  assert.match(fixtureCipherPath(FIXTURE, long), /^gocryptfs\.longname\./);
  assert.equal(view.decryptPath(fixtureCipherPath(FIXTURE, long)), long);
});

test('long names: entries made or removed after a listing are found or gone at once', async () => {
  const before = await view.readdir('');
  const name = `new_${'n'.repeat(200)}`;
  const cpath = view.encryptPath(name);
  assert.match(cpath, /^gocryptfs\.longname\./);
  assert.equal(before.includes(cpath), false);
  await fsp.writeFile(join(plain, name), 'fresh');
  assert.equal((await view.stat(cpath)).size, 18n + 5n + 32n);
  assert.equal((await view.stat(`${cpath}.name`)).size, 278n, '204 bytes pad to 208, 278 base64 characters');
  assert.ok((await view.readdir('')).includes(cpath));
  await fsp.rm(join(plain, name));
  await assert.rejects(view.stat(cpath), { code: 'ENOENT' });
  await assert.rejects(view.stat(`${cpath}.name`), { code: 'ENOENT' });
  assert.deepEqual((await view.readdir('')).sort(), before.sort());
});

test('the library API: open with the password or the master key, readFile, config errors', async () => {
  const confPath = join(plain, REVERSE_CONF_NAME);
  const byKey = await ReverseView.fromKey(plain, Buffer.from(fixtureMasterKey(FIXTURE), 'hex'), { format: confFormat(await readConfFile(confPath)), configPath: confPath, configCustom: false });
  const p = fixtureCipherPath(FIXTURE, 'status.txt');
  assert.deepEqual(await byKey.readFile(p), await view.readFile(p));
  assert.deepEqual(await view.readFile(p), await fsp.readFile(join(VECTORS_DIR, FIXTURE, 'cipher_view', p)));
  assert.deepEqual(await view.readFile('gocryptfs.conf'), await fsp.readFile(confPath));
  await assert.rejects(ReverseView.open(plain, { password: 'wrong' }), { code: 'EPASSWORD' });
  await assert.rejects(ReverseView.open(tmp, { password: 'test' }), { code: 'ECONFIGMISSING' });
  const custom = await ReverseView.open(plain, { password: 'test', configPath: confPath });
  assert.equal((await custom.readdir('')).includes('gocryptfs.conf'), false, 'a config given by path is not shown');
});
