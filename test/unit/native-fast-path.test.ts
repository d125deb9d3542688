/**
 * The fast path's addon (native/fastpath/addon.c, src/fuse/fast-path-addon.ts)
 * outside a mount: its arguments, what it takes once, the fence slots.
 * What it answers inside a mount is test/mount/native-*.test.ts's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { FAST_AEGIS, FAST_GCM, fastPathBinding } from '../../src/fuse/fast-path-addon.js';
import { aegisNativeBinding } from '../../src/crypto/aegis/native.js';
import { AEGIS_VARIANTS } from '../../src/crypto/aegis/variants.js';
import { needs } from '../helpers/requirements.js';

const T = needs('native');

test('the fast path addon is built here', T, () => {
  assert.notEqual(fastPathBinding(), null, 'native/build/Release/tscryptfs_fastpath.node');
});

test('the fast path takes AEGIS only with the AEGIS addon\'s AEGIS-256X2 function', { ...T, skip: T.skip || (aegisNativeBinding() ? false : 'the AEGIS addon is not in use here') }, () => {
  const batch = fastPathBinding()!;
  const aegis = aegisNativeBinding()!;
  const key = randomBytes(32);
  assert.throws(() => batch.create(FAST_AEGIS, key, 16), /bad argument/, 'no function given');
  assert.throws(() => batch.create(FAST_AEGIS, key, 16, aegis.decryptHandle(AEGIS_VARIANTS.aegis256.nativeId)), /bad argument/, 'AEGIS-256, not 256X2');
  assert.throws(() => batch.create(FAST_AEGIS, key, 16, {}), /bad argument/, 'not an external');
  const [fastPath, fences] = batch.create(FAST_AEGIS, key, 16, aegis.decryptHandle(AEGIS_VARIANTS.aegis256x2.nativeId));
  assert.equal(typeof fastPath, 'object');
  assert.equal(fences.byteLength, 16 * 4 * 4, 'four int32 per slot: started, finished, owner, spare');
  assert.deepEqual(batch.stats(fastPath), new Array(25).fill(0));
});

test('useCipherRoot takes the cipher directory\'s descriptor once', T, () => {
  const batch = fastPathBinding()!;
  const [fastPath] = batch.create(FAST_GCM, randomBytes(32), 16);
  assert.throws(() => batch.useCipherRoot(fastPath, -1, true), /bad argument/, 'no descriptor');
  const fd = openSync(tmpdir(), 'r');
  try {
    assert.throws(() => batch.useCipherRoot(fastPath, fd, 1 as unknown as boolean), /bad argument/, 'unlinks not a boolean');
    batch.useCipherRoot(fastPath, fd, true);
    assert.throws(() => batch.useCipherRoot(fastPath, fd, true), /bad argument/, 'a second time');
  } finally {
    closeSync(fd);
  }
  assert.deepEqual(batch.stats(fastPath).slice(5), new Array(20).fill(0), 'unlinks, lookups, opens, rmdirs, xattrs of entries without any, creates, fstats, fsyncs, listings and renames answered and passed on');
});

test('answerRmdirs takes two booleans; takeRemovedDirs has nothing until the hook removed a directory', T, () => {
  const batch = fastPathBinding()!;
  const [fastPath] = batch.create(FAST_GCM, randomBytes(32), 16);
  // @ts-expect-error: dirIVs left out on purpose
  assert.throws(() => batch.answerRmdirs(fastPath, true), /bad argument/, 'no dirIVs');
  assert.throws(() => batch.answerRmdirs(fastPath, 1 as unknown as boolean, true), /bad argument/, 'on not a boolean');
  assert.throws(() => batch.answerRmdirs({}, true, true), /bad argument/, 'not a fastPath');
  assert.throws(() => batch.takeRemovedDirs({}), /bad argument/, 'not a fastPath');
  batch.answerRmdirs(fastPath, true, true); // without useCipherRoot's unlinks it stays off
  assert.equal(batch.takeRemovedDirs(fastPath), undefined);
});

test('claimSlot gives one fence slot per file (device, inode), counted, and -1 when all are taken', T, () => {
  const batch = fastPathBinding()!;
  const [fastPath] = batch.create(FAST_GCM, randomBytes(32), 4);
  // @ts-expect-error: the high half left out on purpose
  assert.throws(() => batch.claimSlot(fastPath, 1, 2), /bad argument/, 'no high half');
  assert.throws(() => batch.claimSlot(fastPath, 1, 2 ** 32, 0), /bad argument/, 'a low half over 32 bits');
  const a = batch.claimSlot(fastPath, 7, 100, 0);
  assert.equal(batch.claimSlot(fastPath, 7, 100, 0), a, 'the same file: the same slot');
  const b = batch.claimSlot(fastPath, 7, 100, 1);
  const c = batch.claimSlot(fastPath, 8, 100, 0);
  const d = batch.claimSlot(fastPath, 7, 101, 0);
  assert.deepEqual(new Set([a, b, c, d]).size, 4, 'the high half of the inode and the device count');
  assert.ok([a, b, c, d].every((s) => s >= 0 && s < 4));
  assert.equal(batch.claimSlot(fastPath, 9, 1, 0), -1, 'four slots, four files');
  batch.releaseSlot(fastPath, 7, 100, 0);
  assert.equal(batch.claimSlot(fastPath, 9, 1, 0), -1, 'file a is still counted once');
  batch.releaseSlot(fastPath, 7, 100, 0);
  assert.equal(batch.claimSlot(fastPath, 9, 1, 0), a, 'its slot is free again');
  batch.releaseSlot(fastPath, 5, 5, 5); // not held: nothing happens
  assert.deepEqual(batch.adopt(fastPath, 0x80000000), [-1, 0], 'no native handle to adopt');
  assert.deepEqual(batch.adopt(fastPath, 3), [-1, 0], 'a JS handle number');
  assert.deepEqual(batch.opensOn(fastPath, 7, 101, 0), []);
  batch.answerOpens(fastPath, true); // no cipher root yet: opens still go to JS
  assert.throws(() => batch.answerOpens(fastPath, 1 as unknown as boolean), /bad argument/);
});

test('useNames takes the name key once, after useCipherRoot', T, () => {
  const batch = fastPathBinding()!;
  const [fastPath] = batch.create(FAST_GCM, randomBytes(32), 16);
  assert.throws(() => batch.useNames(fastPath, randomBytes(32), 255, true), /bad argument/, 'before useCipherRoot');
  const fd = openSync(tmpdir(), 'r');
  try {
    batch.useCipherRoot(fastPath, fd, false);
  } finally {
    closeSync(fd);
  }
  assert.throws(() => batch.useNames(fastPath, randomBytes(16), 255, true), /bad argument/, 'a 16-byte key');
  assert.throws(() => batch.useNames(fastPath, randomBytes(32), 61, true), /bad argument/, 'LongNameMax below 62');
  batch.useNames(fastPath, randomBytes(32), 255, true);
  assert.throws(() => batch.useNames(fastPath, randomBytes(32), 255, true), /bad argument/, 'a second time');
  batch.holdPath(fastPath, '/a', true);
  batch.holdPath(fastPath, '/a', false);
  assert.throws(() => batch.holdPath(fastPath, '', true), /bad argument/, 'an empty path');
});
