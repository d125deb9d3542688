/**
 * The Vault's backing I/O (src/vault/backing, src/util/sys-at.ts) on both
 * implementations of the *at() calls (native and /proc paths): owners of
 * new entries, setgid directories, device nodes, fallocate, paths deeper
 * than the cipher side's PATH_MAX allows as full paths, and symlinks
 * planted in the cipher directory, which are never followed.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp, readdirSync, lstatSync, readFileSync, constants as C } from 'node:fs';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { silentLogger } from '../../src/util/logger.js';
import { statsFromWords } from '../../src/util/stat-words.js';
import { internalAccess } from '../../src/vault/internal-access.js';
import { needs } from '../helpers/requirements.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

const ROOT = needs('root');
const NATIVE = needs('native');
const USER = { uid: 65534, gid: 65534 };
/** The /proc fallback (TSCRYPTFS_AT_CALLS=proc, backing-proc.test.ts) makes no FIFOs or device nodes. */
const PROC = process.env.TSCRYPTFS_AT_CALLS === 'proc';

/** sha256 over every path, type, mode, owner and content below `dir` (without following symlinks). */
function treeHash(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string): void => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      const st = lstatSync(p);
      h.update(`${p} ${st.mode} ${st.uid} ${st.gid} ${st.size}\n`);
      if (st.isFile()) h.update(readFileSync(p));
      else if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return h.digest('hex');
}

describe('the backing layer', () => {
  let tmp = '';
  let v: Vault;
  before(async () => {
    tmp = makeTempDir('tscryptfs-backing-');
    await fsp.mkdir(join(tmp, 'cipher'));
    v = await Vault.init(join(tmp, 'cipher'), { password: 'pw', scryptLogN: 10, logger: silentLogger });
  });
  after(async () => {
    await v?.close();
    removeTempDir(tmp);
  });

  test(`runs on the ${PROC ? 'proc' : 'native'} *at() calls`, NATIVE, () => {
    assert.equal(v.backingCalls, PROC ? 'proc' : 'native');
  });

  test('an owner given to a creation owns the new file, directory, symlink and FIFO (as root)', { ...ROOT, ...NATIVE }, async () => {
    // The creation runs with the owner's permissions: it needs a directory it may write to
    // (the /proc fallback creates as root and hands the entry over, without that check).
    if (!PROC) await assert.rejects(v.writeFile('/f', 'x', { owner: USER }), { code: 'EACCES' });
    await v.chmod('/', 0o777);
    await v.writeFile('/f', 'x', { owner: USER });
    await v.mkdir('/d', 0o755, USER);
    await v.symlink('f', '/l', USER);
    if (!PROC) await v.mknod('/p', C.S_IFIFO | 0o644, 0, USER);
    for (const p of PROC ? ['/f', '/d', '/l'] : ['/f', '/d', '/l', '/p']) {
      const st = await v.stat(p);
      assert.deepEqual([st.uid, st.gid], [USER.uid, USER.gid], p);
    }
    assert.equal((await v.stat('/f')).mode & 0o7777, 0o666 & ~process.umask(), 'the mode as asked, less the umask');
  });

  test('a setgid directory passes its group on: to files, and with the setgid bit to directories', { ...ROOT, ...NATIVE }, async () => {
    await v.mkdir('/shared', 0o2777);
    await v.chown('/shared', 0, 4321);
    await v.chmod('/shared', 0o2777);
    await v.writeFile('/shared/f', 'x', { owner: USER });
    await v.mkdir('/shared/sub', 0o755, USER);
    const f = await v.stat('/shared/f');
    assert.deepEqual([f.uid, f.gid], [USER.uid, 4321]);
    const sub = await v.stat('/shared/sub');
    assert.deepEqual([sub.uid, sub.gid], [USER.uid, 4321]);
    assert.ok(sub.mode & 0o2000, 'a new directory keeps the setgid bit');
  });

  test('block and character devices are made as nodes (mknodat), with their device numbers', { ...ROOT, ...NATIVE }, async () => {
    const dev = (1 << 8) | 2;
    if (PROC) {
      await assert.rejects(v.mknod('/b', C.S_IFBLK | 0o600, dev), { code: 'EOPNOTSUPP' });
      return;
    }
    await v.mknod('/b', C.S_IFBLK | 0o600, dev);
    await v.mknod('/c', C.S_IFCHR | 0o600, (1 << 8) | 3);
    const b = await v.stat('/b');
    assert.ok(b.isBlockDevice());
    assert.equal(b.rdev, dev);
    assert.ok((await v.stat('/c')).isCharacterDevice());
    await assert.rejects(v.mknod('/b', C.S_IFBLK | 0o600, dev), { code: 'EEXIST' });
  });

  test('fallocate: mode 0 grows with zeros, KEEP_SIZE only reserves, other modes are EOPNOTSUPP', NATIVE, async () => {
    const h = await v.open('/fa', 'w+');
    try {
      await h.write(Buffer.from('head'), 0);
      await h.fallocate(0, 0, 100_000);
      assert.equal(await h.size(), 100_000);
      const back = await h.read(100_000, 0);
      assert.equal(back.subarray(0, 4).toString(), 'head');
      assert.ok(back.subarray(4).every((b) => b === 0));
      await h.fallocate(0, 0, 10);
      assert.equal(await h.size(), 100_000, 'never shrinks');
      const before = (await fsp.stat(await v.cipherPath('/fa'))).blocks;
      await h.fallocate(1, 100_000, 1 << 20);
      assert.equal(await h.size(), 100_000, 'KEEP_SIZE keeps the size');
      assert.ok((await fsp.stat(await v.cipherPath('/fa'))).blocks > before, 'the space is reserved on the cipher file');
      await assert.rejects(h.fallocate(3, 0, 4096), { code: 'EOPNOTSUPP' }); // PUNCH_HOLE | KEEP_SIZE
    } finally {
      await h.close();
    }
  });

  test("a handle's stat words say what its stat says, the plaintext size included", async () => {
    const h = await v.open('/worded', 'w+');
    try {
      for (const size of [0, 1, 4096, 4097, 10_000]) {
        await h.truncate(size);
        const st = await h.stat({ bigint: true });
        const w = statsFromWords(await h.statWords(), 0, true);
        assert.equal(w.size, BigInt(size));
        for (const k of ['size', 'mode', 'uid', 'gid', 'ino', 'dev', 'nlink', 'blocks', 'atimeNs', 'mtimeNs', 'ctimeNs'] as const) {
          assert.equal(w[k], k === 'dev' ? BigInt.asUintN(32, st.dev) : st[k], `${k} at size ${size}`);
        }
      }
    } finally {
      await h.close();
    }
  });

  test('a handle changes mode, owner and exact times of its file, also after the file was unlinked', ROOT, async () => {
    const h = await v.open('/handled', 'w+');
    try {
      await v.unlink('/handled');
      await h.chmod(0o4640);
      assert.equal((await h.stat({ bigint: true })).mode & 0o7777n, 0o4640n);
      await h.chown(65534, 65533);
      await h.utimens([1_500_000_000, 123_456_789], [1_600_000_000, 987_654_321]);
      let st = await h.stat({ bigint: true });
      assert.equal(st.mode & 0o7777n, 0o640n, 'chown drops S_ISUID, as the kernel does for anybody');
      assert.deepEqual([st.uid, st.gid, st.nlink], [65534n, 65533n, 0n]);
      // The /proc fallback goes through node's utimes (seconds as a double: microseconds exact).
      const ns = (t: bigint): bigint => (PROC ? t / 1000n : t);
      assert.equal(ns(st.atimeNs), ns(1_500_000_000_123_456_789n));
      assert.equal(ns(st.mtimeNs), ns(1_600_000_000_987_654_321n));
      await h.chown(-1, 65534);
      await h.utimens(null, 'now');
      st = await h.stat({ bigint: true });
      assert.deepEqual([st.uid, st.gid], [65534n, 65534n], '-1 keeps the uid');
      assert.equal(ns(st.atimeNs), ns(1_500_000_000_123_456_789n), 'null keeps the atime');
      assert.ok(st.mtimeNs > 1_700_000_000_000_000_000n, "'now' is now");
    } finally {
      await h.close();
    }
    const ro = await Vault.open(join(tmp, 'cipher'), { password: 'pw', readOnly: true, logger: silentLogger });
    try {
      await v.writeFile('/ro', 'x');
      const r = await ro.open('/ro', 'r');
      try {
        await assert.rejects(r.chmod(0o600), { code: 'EROFS' });
        await assert.rejects(r.utimens('now', 'now'), { code: 'EROFS' });
      } finally {
        await r.close();
      }
    } finally {
      await ro.close();
      await v.unlink('/ro');
    }
  });

  test('an attribute name stored in more than 255 bytes: set and remove ERANGE, get ENODATA; one that fits works', async () => {
    await v.writeFile('/xa', 'x');
    const fits = `user.${'a'.repeat(150)}`; // stored as user.gocryptfs. + 235 bytes of base64
    const long = `user.${'a'.repeat(180)}`; // 271 bytes stored
    await v.setxattr('/xa', fits, Buffer.from('v'));
    assert.equal((await v.getxattr('/xa', fits)).toString(), 'v');
    await v.removexattr('/xa', fits);
    await assert.rejects(v.setxattr('/xa', long, Buffer.from('v')), { code: 'ERANGE' });
    await assert.rejects(v.getxattr('/xa', long), { code: 'ENODATA' });
    await assert.rejects(v.removexattr('/xa', long), { code: 'ERANGE' });
    assert.deepEqual(await v.listxattr('/xa'), []);
  });

  test('a path of 31 components of 127 bytes (plaintext near PATH_MAX, cipher side far past it) works end to end', async () => {
    const comp = (i: number): string => `${String(i).padStart(3, '0')}${'d'.repeat(124)}`;
    let dir = '';
    for (let i = 0; i < 30; i++) {
      dir += `/${comp(i)}`;
      await v.mkdir(dir);
    }
    const file = `${dir}/${'f'.repeat(127)}`;
    assert.ok(file.length > 3900 && file.length < 4096, `plaintext path of ${file.length} bytes`);
    assert.ok((await v.cipherPath(file)).length > 4096, 'the cipher path is longer than PATH_MAX');
    await v.writeFile(file, 'deep');
    assert.equal((await v.readFile(file)).toString(), 'deep');
    await v.chmod(file, 0o600);
    assert.equal((await v.stat(file)).mode & 0o777, 0o600);
    await v.rename(file, `${dir}/moved`);
    assert.deepEqual(await v.readdir(dir), ['moved']);
    await v.unlink(`${dir}/moved`);
    for (let i = 29; i >= 0; i--) {
      await v.rmdir(dir);
      dir = dir.slice(0, dir.lastIndexOf('/'));
    }
    assert.equal((await v.readdir('/')).some((n) => n.startsWith('000')), false);
  });

  test('a directory swapped for a symlink to outside: ENOTDIR, nothing outside changes', async () => {
    const outside = join(tmp, 'victim');
    await fsp.mkdir(outside);
    await fsp.writeFile(join(outside, 'keep'), 'precious');
    const hash = treeHash(outside);
    await v.mkdir('/race');
    await v.writeFile('/race/t', 'x');
    const backing = await v.cipherPath('/race');
    await fsp.rename(backing, `${backing}.away`);
    await fsp.symlink(outside, backing);
    // Every operation that would reach below /race: created, written, chmodded, owned, renamed, timed, removed.
    await new Promise((r) => setTimeout(r, 1100)); // the Vault's cached directory expires
    const attempts = [
      () => v.writeFile('/race/new', 'leak'),
      () => v.mkdir('/race/d'),
      () => v.symlink('x', '/race/l'),
      () => v.chmod('/race/t', 0o777),
      () => v.chown('/race/t', 1, 1),
      () => v.truncate('/race/t', 0),
      () => v.utimes('/race/t', 0, 0),
      () => v.rename('/race/t', '/race/u'),
      () => v.unlink('/race/t'),
      () => v.readdir('/race'),
      () => v.setxattr('/race/t', 'user.x', Buffer.from('y')),
    ];
    for (const a of attempts) await assert.rejects(a(), (e: { code?: string }) => ['ENOTDIR', 'ENOENT', 'EIO'].includes(e.code ?? ''), String(a));
    assert.equal(treeHash(outside), hash, 'the directory outside the cipher directory is untouched');
    await fsp.unlink(backing);
    await fsp.rename(`${backing}.away`, backing);
  });

  test('a directory removed behind the vault and made again: new names in it fail until forgetCipherDirs, then work', async () => {
    // What a mount's native rmdir does (native/fastpath/remove.c): the vault
    // keeps the removed directory's descriptor, by plaintext path, for a
    // second, and learns of the removal through forgetCipherDirs.
    await v.mkdir('/gone', 0o755);
    await v.mkdir('/gone/d', 0o755);
    await v.writeFile('/gone/d/f', 'f'); // the vault now keeps /gone/d
    const cipher = await v.cipherPath('/gone/d');
    const rel = cipher.slice(join(tmp, 'cipher').length + 1);
    await v.unlink('/gone/d/f');
    await fsp.rm(cipher, { recursive: true }); // behind the vault's back
    await v.mkdir('/gone/d', 0o755);
    await assert.rejects(v.writeFile('/gone/d/g', 'g'), { code: 'ENOENT' }, 'still the removed directory');
    internalAccess(v).forgetCipherDirs(rel);
    await v.writeFile('/gone/d/g', 'g');
    assert.deepEqual(await v.readdir('/gone/d'), ['g']);
    await fsp.rm(join(await v.cipherPath('/gone/d'), '..'), { recursive: true });
    await v.mkdir('/gone', 0o755);
    await assert.rejects(v.mkdir('/gone/d', 0o755), { code: 'ENOENT' }, 'still the removed parent');
    internalAccess(v).forgetCipherDirs(); // every directory
    await v.mkdir('/gone/d', 0o755);
    assert.deepEqual(await v.readdir('/gone'), ['d']);
  });

  test('forgetCaches (a quiet mount): the vault lets go of the directories it keeps and finds them, and the names, again', async () => {
    await v.mkdir('/quiet', 0o755);
    await v.mkdir('/quiet/d', 0o755);
    for (const n of ['a', 'b', 'é'.repeat(100)]) await v.writeFile(`/quiet/d/${n}`, n);
    const listed = (await v.readdir('/quiet/d')).sort(); // the names are decrypted and remembered
    const cipher = await v.cipherPath('/quiet/d');
    await fsp.rm(cipher, { recursive: true }); // behind the vault's back, while it keeps /quiet/d
    await v.mkdir('/quiet/d', 0o755);
    await assert.rejects(v.writeFile('/quiet/d/c', 'c'), { code: 'ENOENT' }, 'still the removed directory');
    internalAccess(v).forgetCaches();
    await v.writeFile('/quiet/d/c', 'c');
    assert.deepEqual(await v.readdir('/quiet/d'), ['c']);
    for (const n of listed) await v.writeFile(`/quiet/d/${n}`, n);
    internalAccess(v).forgetCaches();
    assert.deepEqual((await v.readdir('/quiet/d')).sort(), [...listed, 'c'].sort());
  });

  test('a file swapped for a symlink to outside: never opened through it', async () => {
    const outside = join(tmp, 'victim-file');
    await fsp.writeFile(outside, 'precious');
    await v.writeFile('/swapped', 'mine');
    const backing = await v.cipherPath('/swapped');
    await fsp.rm(backing);
    await fsp.symlink(outside, backing);
    await assert.rejects(v.open('/swapped', 'r+'), (e: { code?: string }) => ['ELOOP', 'EINVAL', 'EIO'].includes(e.code ?? ''));
    await assert.rejects(v.truncate('/swapped', 0));
    await assert.rejects(v.chmod('/swapped', 0o777));
    if (process.getuid?.() === 0) await v.chown('/swapped', 1, 1); // the link itself (lchown), never its target
    assert.equal(readFileSync(outside, 'utf8'), 'precious');
    assert.equal(lstatSync(outside).mode & 0o777, 0o644 & ~process.umask() & 0o777);
    assert.equal(lstatSync(outside).uid, process.getuid?.());
  });
});
