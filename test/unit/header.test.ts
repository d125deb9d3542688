/**
 * newHeader (src/content/header.ts): version 2 and a file ID cut from the
 * nonce pool, a copy that later draws do not touch, never all zero, and
 * never handed out twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newHeader, parseHeader, FILE_ID_LEN } from '../../src/content/header.js';
import { randomNonces } from '../../src/crypto/random.js';

test('newHeader gives version 2 and distinct file IDs that stay as they were handed out', () => {
  const first = newHeader();
  const kept = Buffer.from(first.fileId);
  const ids = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const { header, fileId } = newHeader();
    assert.equal(fileId.length, FILE_ID_LEN);
    assert.deepEqual(parseHeader(header), fileId);
    ids.add(fileId.toString('hex'));
  }
  for (let i = 0; i < 5; i++) randomNonces(16 * 1024); // the pool spent and replaced
  assert.equal(ids.size, 10_000, 'a file ID was handed out twice');
  assert.deepEqual(first.fileId, kept, 'a later draw changed a file ID already handed out');
  assert.deepEqual(parseHeader(first.header), kept);
});
