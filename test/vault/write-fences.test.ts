/**
 * Write fences (src/vault/write-fences.ts): every change a Vault makes to an
 * open file's cipher bytes (write, ftruncate, truncate by path, O_TRUNC) is
 * bracketed by its file's two counters, reads are not; slots are shared by
 * the handles of one file, reused after its last close, and run out
 * gracefully.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Vault } from '../../src/index.js';
import { WriteFences } from '../../src/vault/write-fences.js';
import { FileState } from '../../src/vault/file-state.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

let tmp = '';

async function newVault(name: string): Promise<Vault> {
  const dir = join(tmp, name);
  await mkdir(dir);
  return Vault.init(dir, { password: 'pw', scryptLogN: 10 });
}
before(() => {
  tmp = makeTempDir('tscryptfs-fences-');
});
after(() => removeTempDir(tmp));

test('each change to an open file moves its started and finished counters once; reads do not', async () => {
  const v = await newVault('a');
  const buf = new ArrayBuffer(8 * 8);
  const counters = new Int32Array(buf);
  v.useWriteFences(buf);
  const h = await v.open('/f', 'w+');
  const other = await v.open('/f', 'r');
  const s = h.fenceIn(buf);
  assert.ok(s >= 0);
  assert.equal(other.fenceIn(buf), s, 'two handles of one file share its slot');
  assert.equal(h.fenceIn(new ArrayBuffer(64)), -1, 'no slot in another reader\'s counters');
  const at = (): [number, number] => [counters[2 * s]!, counters[2 * s + 1]!];
  assert.deepEqual(at(), [1, 1], "open('w+') truncates, fenced");
  await h.write(Buffer.alloc(10_000, 1), 0);
  assert.deepEqual(at(), [2, 2]);
  await other.read(100, 0);
  assert.deepEqual(at(), [2, 2], 'a read is not fenced');
  await h.truncate(5000);
  await v.truncate('/f', 10);
  assert.deepEqual(at(), [4, 4]);
  const t = await v.open('/f', 'w');
  assert.deepEqual(at(), [5, 5], 'O_TRUNC is fenced');
  await Promise.all([h.close(), other.close(), t.close()]);
  const again = await v.open('/g', 'w');
  assert.equal(again.fenceIn(buf), s, 'the slot of a closed file is reused');
  await again.close();
  await v.close();
});

test('a failed write still finishes its fence; out of slots a file gets none and works as before', async () => {
  const v = await newVault('b');
  const buf = new ArrayBuffer(8);
  const counters = new Int32Array(buf);
  v.useWriteFences(buf);
  const a = await v.open('/a', 'w+');
  const b = await v.open('/b', 'w+');
  assert.equal(a.fenceIn(buf), 0);
  assert.equal(b.fenceIn(buf), -1, 'one slot only');
  await b.write(Buffer.from('still works'), 0);
  assert.equal((await b.read(100, 0)).toString(), 'still works');
  await Promise.all([a.close(), b.close()]);
  await v.close();
  const st = new FileState(new WriteFences(buf));
  await assert.rejects(st.exclusive(() => Promise.reject(new Error('disk on fire'))), /disk on fire/);
  assert.equal(counters[0], counters[1], 'started and finished agree after a failure');
});

test('WriteFences: slots are handed out in order, given back, and -1 when all are taken', () => {
  const f = new WriteFences(new ArrayBuffer(3 * 8));
  assert.deepEqual([f.claim(), f.claim(), f.claim(), f.claim()], [0, 1, 2, -1]);
  f.release(1);
  f.release(-1);
  assert.deepEqual([f.claim(), f.claim()], [1, -1]);
});
