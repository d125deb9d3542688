/**
 * src/vault/xattr-io.ts over @napi-rs/xattr behaves like fs-xattr did:
 * Buffer values, symlinks followed, Node-style errors with the right code.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, constants as fsConstants, openSync, promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { getAttribute, listAttributes, removeAttribute, setAttribute } from '../../src/util/xattr-io.js';
import { needs } from '../helpers/requirements.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';
import { statListing } from '../../src/util/native-sys.js';
import { atCalls, O_PATH } from '../../src/util/sys-at.js';
import { inoWords, modeWord, putStatWords, sizeWords, STAT_WORDS } from '../../src/util/stat-words.js';
import { constants as osConstants } from 'node:os';

let tmp: string;
let file: string;
before(async () => {
  tmp = makeTempDir();
  file = join(tmp, 'f');
  await fsp.writeFile(file, 'x');
  await fsp.mkdir(join(tmp, 'd'));
  await fsp.symlink('f', join(tmp, 'link'));
  await fsp.symlink('nowhere', join(tmp, 'dangling'));
});
after(() => removeTempDir(tmp));

const err = (code: string, syscall: string) => (e: unknown) => {
  const x = e as { code?: string; syscall?: string; errno?: number; message?: string };
  assert.equal(x.code, code, x.message);
  assert.equal(x.syscall, syscall);
  assert.equal(typeof x.errno, 'number');
  return true;
};

test('set, get, list, remove with binary, empty and string values', async () => {
  const bin = Buffer.from([0, 1, 2, 0xff, 0x80]);
  await setAttribute(file, 'user.bin', bin);
  await setAttribute(file, 'user.empty', new Uint8Array(0));
  await setAttribute(file, 'user.str', 'hello');
  await setAttribute(file, 'user.view', new Uint8Array([9, 8, 7, 6]).subarray(1, 3));
  const got = await getAttribute(file, 'user.bin');
  assert.ok(Buffer.isBuffer(got));
  assert.deepEqual(got, bin);
  assert.deepEqual(await getAttribute(file, 'user.empty'), Buffer.alloc(0));
  assert.equal((await getAttribute(file, 'user.str')).toString(), 'hello');
  assert.deepEqual(await getAttribute(file, 'user.view'), Buffer.from([8, 7]));
  assert.deepEqual((await listAttributes(file)).sort(), ['user.bin', 'user.empty', 'user.str', 'user.view']);
  await setAttribute(file, 'user.bin', Buffer.from('replaced'));
  assert.equal((await getAttribute(file, 'user.bin')).toString(), 'replaced');
  for (const n of ['user.bin', 'user.empty', 'user.str', 'user.view']) await removeAttribute(file, n);
  assert.deepEqual(await listAttributes(file), []);
});

test('directories work, and symlinks are followed (like getxattr(2), as fs-xattr did)', async () => {
  await setAttribute(join(tmp, 'd'), 'user.dir', 'on a dir');
  assert.deepEqual(await listAttributes(join(tmp, 'd')), ['user.dir']);
  await setAttribute(join(tmp, 'link'), 'user.via', 'through the link');
  assert.equal((await getAttribute(file, 'user.via')).toString(), 'through the link');
  assert.deepEqual(await listAttributes(join(tmp, 'link')), ['user.via']);
  await removeAttribute(join(tmp, 'link'), 'user.via');
  assert.deepEqual(await listAttributes(file), []);
});

test('Node-style errors: ENODATA, ENOENT, ENOTDIR, ENOTSUP, E2BIG, EINVAL', async () => {
  await assert.rejects(getAttribute(file, 'user.none'), err('ENODATA', 'getxattr'));
  await assert.rejects(removeAttribute(file, 'user.none'), err('ENODATA', 'removexattr'));
  const missing = join(tmp, 'missing');
  await assert.rejects(getAttribute(missing, 'user.a'), err('ENOENT', 'getxattr'));
  await assert.rejects(setAttribute(missing, 'user.a', 'v'), err('ENOENT', 'setxattr'));
  await assert.rejects(listAttributes(missing), err('ENOENT', 'listxattr'));
  await assert.rejects(removeAttribute(missing, 'user.a'), err('ENOENT', 'removexattr'));
  await assert.rejects(getAttribute(join(tmp, 'dangling'), 'user.a'), err('ENOENT', 'getxattr'));
  await assert.rejects(getAttribute(join(file, 'sub'), 'user.a'), err('ENOTDIR', 'getxattr'));
  await assert.rejects(setAttribute(file, 'bogus.a', 'v'), err('ENOTSUP', 'setxattr'));
  await assert.rejects(setAttribute(file, 'user.big', Buffer.alloc(70_000)), (e: unknown) =>
    ['E2BIG', 'ENOSPC', 'ERANGE'].includes((e as { code: string }).code),
  );
  await assert.rejects(setAttribute(file, 'user.a\0b', 'v'), err('EINVAL', 'setxattr'));
  const e = await getAttribute(missing, 'user.a').catch((x: Error & { path?: string }) => x);
  assert.equal((e as { path?: string }).path, missing);
  assert.match((e as Error).message, /^ENOENT.*getxattr/);
});

/** Names a listing probe holds, and some it does not ("missing", one too long). */
const names = ['plain', 'tagged', 'link', 'dir', 'missing', 'x'.repeat(5000)];

/** A directory of a plain file, one with a user xattr, a symlink to it and a directory. */
async function makeProbe(name: string): Promise<string> {
  const probe = join(tmp, name);
  await fsp.mkdir(probe);
  await fsp.writeFile(join(probe, 'plain'), 'x');
  await fsp.writeFile(join(probe, 'tagged'), 'x');
  await setAttribute(join(probe, 'tagged'), 'user.k', 'v');
  await fsp.symlink('tagged', join(probe, 'link'));
  await fsp.mkdir(join(probe, 'dir'));
  return probe;
}

test('statListing (native sys addon): one call for a listing; lstat words as the JS fallback makes them, xattr list sizes, -errno per entry', needs('native'), async () => {
  const probe = await makeProbe('probe');
  const got = statListing(probe, names);
  assert.ok(got, 'the sys addon answers');
  const sizes = got.xattrSizes;
  // Compared with listxattr's names (a system with security labels lists those too).
  const listBytes = (names: string[]) => names.reduce((n, x) => n + Buffer.byteLength(x) + 1, 0);
  const plainNames = await listAttributes(join(probe, 'plain'));
  assert.equal(sizes[0], listBytes(plainNames), 'the plain file');
  assert.equal(sizes[1], listBytes([...plainNames, 'user.k']), 'the tagged file: one name more');
  assert.ok(sizes[2]! < sizes[1]!, 'the link itself (llistxattr), not its target');
  assert.equal(sizes[4], -osConstants.errno.ENOENT);
  assert.equal(sizes[5], -osConstants.errno.ENAMETOOLONG);
  const expected = new Uint32Array(names.length * STAT_WORDS);
  for (let i = 0; i < 4; i++) putStatWords(expected, i, await fsp.lstat(join(probe, names[i]!), { bigint: true }));
  assert.deepEqual(got.words, expected, 'lstat of each entry (the link itself), zero words where it failed');
  assert.equal(modeWord(got.words, 2) & fsConstants.S_IFMT, fsConstants.S_IFLNK);
  assert.equal(sizeWords(got.words, 0), 1);
  assert.equal(inoWords(got.words, 3), (await fsp.lstat(join(probe, 'dir'), { bigint: true })).ino);
});

test('statListingAt (native *at calls): the same words and xattr list sizes as statListing, from a directory descriptor (listxattrat(2) where the kernel has it)', needs('native'), async () => {
  const probe = await makeProbe('probe-at');
  const byPath = statListing(probe, names);
  const fd = openSync(probe, O_PATH | fsConstants.O_DIRECTORY);
  try {
    const at = atCalls().statListingAt(fd, names);
    assert.ok(byPath && at, 'both addons answer');
    assert.deepEqual([...at.xattrSizes], [...byPath.xattrSizes]);
    assert.ok(at.xattrSizes[1]! > at.xattrSizes[0]!, 'the tagged file lists more names');
    assert.ok(at.xattrSizes[2]! < at.xattrSizes[1]!, 'the link itself, not its target');
    assert.equal(at.xattrSizes[4], -osConstants.errno.ENOENT);
    assert.deepEqual(at.words, byPath.words);
  } finally {
    closeSync(fd);
  }
});

test('the *at() xattr calls take attribute names up to 255 bytes; a longer one is ERANGE, as from the kernel', async () => {
  const dir = openSync(tmp, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
  try {
    const at = atCalls();
    const longest = `user.${'a'.repeat(250)}`;
    await at.setxattrat(dir, 'f', longest, Buffer.from('v'), 0);
    assert.equal((await at.getxattrat(dir, 'f', longest)).toString(), 'v');
    await at.removexattrat(dir, 'f', longest);
    // 256 bytes, in ASCII and with a two-byte character across the limit.
    for (const name of [`user.${'a'.repeat(251)}`, `user.${'a'.repeat(249)}é`]) {
      await assert.rejects(at.setxattrat(dir, 'f', name, Buffer.from('v'), 0), { code: 'ERANGE' }, name);
      await assert.rejects(at.getxattrat(dir, 'f', name), { code: 'ERANGE' }, name);
      await assert.rejects(at.removexattrat(dir, 'f', name), { code: 'ERANGE' }, name);
    }
  } finally {
    closeSync(dir);
  }
});
