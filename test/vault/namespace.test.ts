/**
 * Directory operations through the Vault: names, long names, renames,
 * links, symlinks, modes, times and xattrs, for each name mode.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { Vault, type VaultInitOptions } from '../../src/index.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { silentLogger } from '../../src/util/logger.js';
import { needs } from '../helpers/requirements.js';

const MODES: Record<string, Partial<VaultInitOptions>> = {
  default: {},
  plaintextnames: { plaintextNames: true },
  'deterministic-names': { deterministicNames: true },
  longnamemax62: { longNameMax: 62 },
};

const LONG = 'L'.repeat(200);
const LONG2 = 'M'.repeat(255);

/** All cipher entries below dir, relative, sorted. */
async function cipherTree(dir: string): Promise<string[]> {
  return ((await fsp.readdir(dir, { recursive: true })) as string[]).sort();
}

for (const [mode, opts] of Object.entries(MODES)) {
  describe(`namespace (${mode})`, () => {
    let tmp: string;
    let v: Vault;
    before(async () => {
      tmp = makeTempDir();
      v = await Vault.init(tmp, { password: 'pw', scryptLogN: 10, logger: silentLogger, ...opts });
    });
    after(async () => {
      await v.close();
      removeTempDir(tmp);
    });

    test('mkdir, readdir, rmdir and ENOTEMPTY', async () => {
      await v.mkdir('/a', 0o750);
      await v.mkdir('/a/b');
      await v.writeFile('/a/b/f', 'x');
      assert.deepEqual((await v.readdir('/')).filter((n) => n === 'a'), ['a']);
      assert.deepEqual(await v.readdir('/a'), ['b']);
      assert.equal((await v.stat('/a')).mode & 0o777, 0o750);
      await assert.rejects(v.rmdir('/a'), { code: 'ENOTEMPTY' });
      await assert.rejects(v.mkdir('/a'), { code: 'EEXIST' });
      await assert.rejects(v.mkdir('/nope/x'), { code: 'ENOENT' });
      await v.unlink('/a/b/f');
      await v.rmdir('/a/b');
      await v.rmdir('/a');
      await assert.rejects(v.stat('/a'), { code: 'ENOENT' });
    });

    test('a directory made without owner write still gets its diriv', async () => {
      await v.mkdir('/ro', 0o555);
      assert.equal((await v.stat('/ro')).mode & 0o777, 0o555);
      assert.deepEqual(await v.readdir('/ro'), []);
      await v.chmod('/ro', 0o755);
      await v.writeFile('/ro/x', 'y');
      assert.deepEqual(await v.readdir('/ro'), ['x']);
    });

    test('long names: create, list, rename both ways, unlink leave no .name behind', async () => {
      const before = await cipherTree(tmp);
      await v.writeFile(`/${LONG}`, 'long');
      await v.mkdir(`/${LONG2}`);
      await v.writeFile(`/${LONG2}/inside`, 'in');
      assert.ok((await v.readdir('/')).includes(LONG));
      assert.equal((await v.readFile(`/${LONG}`)).toString(), 'long');
      await v.rename(`/${LONG}`, '/short');
      await v.rename('/short', `/${LONG2}/${LONG}`);
      assert.equal((await v.readFile(`/${LONG2}/${LONG}`)).toString(), 'long');
      await v.rename(`/${LONG2}`, `/${LONG}`);
      assert.deepEqual((await v.readdir(`/${LONG}`)).sort(), ['inside', LONG].sort());
      await v.unlink(`/${LONG}/${LONG}`);
      await v.unlink(`/${LONG}/inside`);
      await v.rmdir(`/${LONG}`);
      assert.deepEqual(await cipherTree(tmp), before);
    });

    test('rename replaces files and empty directories, refuses non-empty ones', async () => {
      await v.writeFile('/r1', 'one');
      await v.writeFile('/r2', 'two');
      await v.rename('/r1', '/r2');
      assert.equal((await v.readFile('/r2')).toString(), 'one');
      await assert.rejects(v.stat('/r1'), { code: 'ENOENT' });
      await v.mkdir('/d1');
      await v.writeFile('/d1/f', 'f');
      await v.mkdir('/d2');
      await v.rename('/d1', '/d2');
      assert.equal((await v.readFile('/d2/f')).toString(), 'f');
      await v.mkdir('/d3');
      await assert.rejects(v.rename('/d3', '/d2'), { code: 'ENOTEMPTY' });
      await v.rename('/r2', '/d2/r2');
      assert.deepEqual((await v.readdir('/d2')).sort(), ['f', 'r2']);
    });

    test('symlinks keep their target, stat shows its length', async () => {
      await v.symlink('../some/where', '/sl');
      await v.symlink('/abs/target', `/${LONG}`);
      assert.equal(await v.readlink('/sl'), '../some/where');
      assert.equal(await v.readlink(`/${LONG}`), '/abs/target');
      const st = await v.stat('/sl');
      assert.ok(st.isSymbolicLink());
      assert.equal(st.size, '../some/where'.length);
      await v.unlink(`/${LONG}`);
    });

    test('hard links share content', async () => {
      await v.writeFile('/h1', 'shared');
      await v.link('/h1', `/${LONG}`);
      assert.equal((await v.readFile(`/${LONG}`)).toString(), 'shared');
      const h = await v.open(`/${LONG}`, 'r+');
      await h.write(Buffer.from('S'), 0);
      await h.close();
      assert.equal((await v.readFile('/h1')).toString(), 'Shared');
      assert.equal((await v.stat('/h1')).nlink, 2);
      await v.unlink(`/${LONG}`);
    });

    test('chmod, chown, utimes pass through', needs('root'), async () => {
      await v.writeFile('/m', 'x', { mode: 0o600 });
      assert.equal((await v.stat('/m')).mode & 0o777, 0o600);
      await v.chmod('/m', 0o640);
      assert.equal((await v.stat('/m')).mode & 0o777, 0o640);
      await v.chown('/m', 1234, 5678);
      assert.equal((await v.stat('/m')).uid, 1234);
      await v.utimes('/m', 1000, 2000);
      const st = await v.stat('/m');
      assert.equal(st.atimeMs, 1000_000);
      assert.equal(st.mtimeMs, 2000_000);
    });

    test('xattrs: set, get, list, create/replace modes, remove', async () => {
      await v.writeFile('/x', 'x');
      await v.setxattr('/x', 'user.a', Buffer.from('1'));
      await v.setxattr('/x', 'user.empty', Buffer.alloc(0));
      assert.deepEqual((await v.listxattr('/x')).sort(), ['user.a', 'user.empty']);
      assert.equal((await v.getxattr('/x', 'user.a')).toString(), '1');
      assert.equal((await v.getxattr('/x', 'user.empty')).length, 0);
      await assert.rejects(v.setxattr('/x', 'user.a', Buffer.from('2'), 'create'), { code: 'EEXIST' });
      await assert.rejects(v.setxattr('/x', 'user.b', Buffer.from('2'), 'replace'), { code: 'ENODATA' });
      await v.setxattr('/x', 'user.a', Buffer.from('2'), 'replace');
      assert.equal((await v.getxattr('/x', 'user.a')).toString(), '2');
      await v.removexattr('/x', 'user.a');
      await assert.rejects(v.getxattr('/x', 'user.a'), { code: 'ENODATA' });
      await v.mkdir('/xd');
      await v.setxattr('/xd', 'user.dir', Buffer.from('on a dir'));
      assert.equal((await v.getxattr('/xd', 'user.dir')).toString(), 'on a dir');
    });

    test('errors name the plaintext path, never the cipher path', async () => {
      const err = (await v.readFile('/missing/file').catch((e: unknown) => e)) as Error & { code: string; path: string };
      assert.equal(err.code, 'ENOENT');
      assert.equal(err.path, '/missing/file');
      assert.ok(!err.message.includes(tmp), err.message);
    });

    test('bad names are refused', async () => {
      await assert.rejects(v.writeFile('/' + 'n'.repeat(256), 'x'), { code: 'ENAMETOOLONG' });
      await assert.rejects(v.rmdir('/'), { code: 'EBUSY' });
    });
  });
}

test('plaintextnames: root gocryptfs.conf is reserved and hidden; gocryptfs.diriv is an ordinary name', async () => {
  const tmp = makeTempDir();
  try {
    const v = await Vault.init(tmp, { password: 'pw', scryptLogN: 10, plaintextNames: true });
    await assert.rejects(v.writeFile('/gocryptfs.conf', 'x'), { code: 'EPERM' });
    await v.writeFile('/gocryptfs.diriv', 'ordinary');
    await v.mkdir('/sub');
    await v.writeFile('/sub/gocryptfs.conf', 'fine below the root');
    assert.deepEqual((await v.readdir('/')).sort(), ['gocryptfs.diriv', 'sub']);
    await v.close();
  } finally {
    removeTempDir(tmp);
  }
});

test('readOnly vaults refuse changes with EROFS', async () => {
  const tmp = makeTempDir();
  try {
    const w = await Vault.init(tmp, { password: 'pw', scryptLogN: 10 });
    await w.writeFile('/f', 'x');
    await w.close();
    const v = await Vault.open(tmp, { password: 'pw', readOnly: true });
    await assert.rejects(v.writeFile('/g', 'x'), { code: 'EROFS' });
    await assert.rejects(v.open('/f', 'r+'), { code: 'EROFS' });
    await assert.rejects(v.mkdir('/d'), { code: 'EROFS' });
    await assert.rejects(v.unlink('/f'), { code: 'EROFS' });
    assert.equal((await v.readFile('/f')).toString(), 'x');
    await v.close();
    await assert.rejects(v.readFile('/f'), { code: 'EBADF' });
  } finally {
    removeTempDir(tmp);
  }
});

test('init refuses a non-empty or missing directory; open refuses a wrong password', async () => {
  const tmp = makeTempDir();
  try {
    await fsp.writeFile(`${tmp}/x`, 'x');
    await assert.rejects(Vault.init(tmp, { password: 'pw', scryptLogN: 10 }), { code: 'ENOTEMPTY' });
    await assert.rejects(Vault.init(`${tmp}/missing`, { password: 'pw', scryptLogN: 10 }), { code: 'ENOENT' });
    await fsp.rm(`${tmp}/x`);
    await (await Vault.init(tmp, { password: 'pw', scryptLogN: 10 })).close();
    await assert.rejects(Vault.open(tmp, { password: 'wrong' }), { code: 'EPASSWORD' });
    assert.equal((await fsp.stat(`${tmp}/gocryptfs.conf`)).mode & 0o777, 0o400);
    assert.equal((await fsp.stat(`${tmp}/gocryptfs.diriv`)).mode & 0o777, 0o444);
  } finally {
    removeTempDir(tmp);
  }
});
