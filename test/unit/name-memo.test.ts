/** src/names/name-memo.ts: keyed by IV and name, bounded. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NameMemo } from '../../src/names/name-memo.js';

test('NameMemo keeps names apart by directory IV and remembers undecryptable ones as null', () => {
  const m = new NameMemo();
  const a = NameMemo.ivKey(Buffer.alloc(16, 1));
  const b = NameMemo.ivKey(new Uint8Array(Buffer.alloc(32, 2).buffer, 16, 16));
  assert.equal(a.length, 16);
  m.set(a, 'X', 'plain-a');
  m.set(b, 'X', null);
  assert.equal(m.get(a, 'X'), 'plain-a');
  assert.equal(m.get(b, 'X'), null);
  assert.equal(m.get(a, 'Y'), undefined);
});

test('NameMemo empties itself when full', () => {
  const m = new NameMemo(10);
  const k = NameMemo.ivKey(Buffer.alloc(16));
  for (let i = 0; i < 25; i++) {
    m.set(k, `n${i}`, `p${i}`);
    assert.ok(m.size <= 10);
  }
  assert.equal(m.get(k, 'n24'), 'p24');
});
