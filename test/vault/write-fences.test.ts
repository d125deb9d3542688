/**
 * Write fences (src/vault/write-fences.ts): every change a Vault makes to an
 * open file's cipher bytes (write, ftruncate, truncate by path, O_TRUNC) is
 * bracketed by its file's two counters, reads are not; JS holds the file's
 * owner word while it reads or changes blocks and waits while a native
 * writer has it; slots are shared by the handles of one file, reused after
 * its last close, and run out gracefully.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Vault } from '../../src/index.js';
import { WriteFences } from '../../src/vault/write-fences.js';
import { FileState } from '../../src/vault/file-state.js';
import { internalAccess } from '../../src/vault/internal-access.js';
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
  const buf = new ArrayBuffer(8 * 16);
  const counters = new Int32Array(buf);
  internalAccess(v).useWriteFences(buf);
  const h = await v.open('/f', 'w+');
  const other = await v.open('/f', 'r');
  const s = h.fenceIn(buf);
  assert.ok(s >= 0);
  assert.equal(other.fenceIn(buf), s, 'two handles of one file share its slot');
  assert.equal(h.fenceIn(new ArrayBuffer(64)), -1, 'no slot in another reader\'s counters');
  const at = (): [number, number] => [counters[4 * s]!, counters[4 * s + 1]!];
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
  const buf = new ArrayBuffer(16);
  const counters = new Int32Array(buf);
  internalAccess(v).useWriteFences(buf);
  const a = await v.open('/a', 'w+');
  const b = await v.open('/b', 'w+');
  assert.equal(a.fenceIn(buf), 0);
  assert.equal(b.fenceIn(buf), -1, 'one slot only');
  await b.write(Buffer.from('still works'), 0);
  assert.equal((await b.read(100, 0)).toString(), 'still works');
  await Promise.all([a.close(), b.close()]);
  await v.close();
  const st = new FileState(new WriteFences(buf), { dev: 1, ino: 1n });
  await assert.rejects(st.exclusive(() => Promise.reject(new Error('disk on fire'))), /disk on fire/);
  assert.equal(counters[0], counters[1], 'started and finished agree after a failure');
});

test('WriteFences: slots are handed out in order, given back, and -1 when all are taken', () => {
  const f = new WriteFences(new ArrayBuffer(3 * 16));
  assert.deepEqual([f.claim(), f.claim(), f.claim(), f.claim()], [0, 1, 2, -1]);
  f.release(1);
  f.release(-1);
  assert.deepEqual([f.claim(), f.claim()], [1, -1]);
});

test('WriteFences with a native reader\'s slots: claims and releases go to it, by file', () => {
  const calls: string[] = [];
  const f = new WriteFences(new ArrayBuffer(3 * 16), {
    claim: ({ dev, ino }) => (calls.push(`claim ${dev}:${ino}`), dev === 9 ? -1 : 2),
    release: ({ dev, ino }) => void calls.push(`release ${dev}:${ino}`),
  });
  assert.equal(f.claim({ dev: 1, ino: 5n }), 2);
  assert.equal(f.claim({ dev: 9, ino: 5n }), -1, 'none free');
  assert.equal(f.claim(), -1, 'no file named: no slot, never one of its own that could collide');
  f.release(2, { dev: 1, ino: 5n });
  f.release(-1, { dev: 9, ino: 5n }); // never claimed: nothing to give back
  assert.deepEqual(calls, ['claim 1:5', 'claim 9:5', 'release 1:5']);
});

test('JS holds the owner word while it reads or changes an open file, and gives it back', async () => {
  const v = await newVault('c');
  const buf = new ArrayBuffer(4 * 16);
  const counters = new Int32Array(buf);
  internalAccess(v).useWriteFences(buf);
  const h = await v.open('/f', 'w+');
  const owner = 4 * h.fenceIn(buf) + 2;
  await h.write(Buffer.alloc(5000, 7), 0);
  assert.equal(counters[owner], 0, 'free after a write');
  const reads = await Promise.all([h.read(10, 0), h.read(10, 4090), h.size()]);
  assert.deepEqual(reads[0], Buffer.alloc(10, 7));
  assert.equal(reads[2], 5000);
  assert.equal(counters[owner], 0, 'free after reads that ran together');
  await assert.rejects(h.read(10, -1));
  assert.equal(counters[owner], 0, 'free after a failed read');
  await h.close();
  await v.close();
});

test('JS waits while a native writer holds the owner word', async () => {
  const shared = new SharedArrayBuffer(16);
  const counters = new Int32Array(shared);
  const f = new WriteFences(shared);
  const slot = f.claim();
  counters[4 * slot + 2] = -1; // a native writer has the file
  // Another thread plays the native writer: it lets go after 50 ms.
  const w = new Worker('const { workerData: b } = require("node:worker_threads"); setTimeout(() => Atomics.store(new Int32Array(b), 2, 0), 50);', { eval: true, workerData: shared });
  const t0 = Date.now();
  f.hold(slot);
  const waited = Date.now() - t0;
  await w.terminate();
  assert.ok(waited >= 40, `hold returned after ${waited} ms, before the writer let go`);
  assert.equal(counters[4 * slot + 2], 1, 'then JS has it');
  f.unhold(slot);
  assert.equal(counters[4 * slot + 2], 0);
});
