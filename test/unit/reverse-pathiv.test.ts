/**
 * Reverse mode's derived values (Documentation/format.md §9.2), its inode numbering, and the gitignore pattern
 * matching of -exclude (go-gitignore's rules), with fixed vectors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockIV, Excluder, fileIVs, InoMap, pathIV } from '../../src/reverse/index.js';

test('pathiv: the root DirIV is a8f7bac4… (format.md §9.2)', () => {
  assert.equal(pathIV('', 'DIRIV').toString('hex'), 'a8f7bac432ddc1cb3dc74e684d6ae48b');
});

test('pathiv: SHA-256(path || NUL || purpose), first 16 bytes', () => {
  const ivs = fileIVs('jo-tIu5nrEew5ciVgnjkWg/x');
  assert.equal(ivs.fileId.length, 16);
  assert.notDeepEqual(ivs.fileId, ivs.block0IV);
  assert.deepEqual(pathIV('a', 'FILEID'), fileIVs('a').fileId);
  assert.notDeepEqual(pathIV('a', 'FILEID'), pathIV('b', 'FILEID'));
});

test('blockIV adds the block number to the low 8 bytes, big-endian, mod 2^64', () => {
  const b0 = Buffer.from('00112233445566770000000000000001', 'hex');
  assert.equal(blockIV(b0, 0).toString('hex'), '00112233445566770000000000000001');
  assert.equal(blockIV(b0, 255).toString('hex'), '00112233445566770000000000000100');
  const top = Buffer.from('0011223344556677ffffffffffffffff', 'hex');
  assert.equal(blockIV(top, 2).toString('hex'), '00112233445566770000000000000001');
  assert.equal(b0.toString('hex'), '00112233445566770000000000000001', 'block 0 nonce unchanged');
});

test('exclude patterns: -exclude is anchored at the root, -exclude-wildcard matches anywhere', () => {
  const ex = Excluder.fromOptions(['dir/secret.txt', 'top'], ['*.log', 'cache/'], ['# comment', '', 'tmp*', '!tmpkeep']);
  const hidden = ['dir/secret.txt', 'top', 'top/below', 'a.log', 'x/y/b.log', 'cache/f', 'x/cache/f', 'tmp', 'tmpfile', 'd/tmp2'];
  // "cache/" cannot see that cache is a directory: go-gitignore hides only what is below it.
  const shown = ['secret.txt', 'x/dir/secret.txt', 'x/top', 'log', 'a.log.txt', 'cache', 'cachex', 'tmpkeep', 'dir', 'dir/other'];
  for (const p of hidden) assert.equal(ex.matches(p), true, p);
  for (const p of shown) assert.equal(ex.matches(p), false, p);
  assert.equal(ex.matches(''), false, 'the root is never excluded');
});

test('InoMap: the root device keeps its inode numbers; other devices, virtual files and huge numbers get their own', () => {
  const m = new InoMap(100n);
  assert.equal(m.translate(100n, 0n, 12345n), 12345n);
  const other = m.translate(200n, 0n, 12345n);
  assert.equal(other, (1n << 48n) | 12345n);
  assert.equal(m.translate(100n, 1n, 12345n), (2n << 48n) | 12345n, 'a virtual file of the same inode');
  assert.equal(m.translate(200n, 0n, 12345n), other, 'stable');
  const huge = m.translate(100n, 0n, 1n << 50n);
  assert.equal(huge, 1n << 63n);
  assert.equal(m.translate(100n, 0n, 1n << 50n), huge);
  assert.equal(m.translate(100n, 0n, (1n << 50n) + 1n), (1n << 63n) | 1n);
});
