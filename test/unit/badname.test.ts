/**
 * -badname (src/names/badname.ts): glob patterns with Go filepath.Match's
 * rules (the cases of Go's own match tests that gocryptfs's validation
 * depends on), and how a bad name is shown and found again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Eme } from '../../src/crypto/index.js';
import { BADNAME_SUFFIX, badDisplayName, badNameCandidates, compileGlob, NameCodec } from '../../src/names/index.js';

const CASES: [string, string, boolean | 'bad'][] = [
  ['abc', 'abc', true],
  ['*', 'abc', true],
  ['*c', 'abc', true],
  ['a*', 'a', true],
  ['a*', 'abc', true],
  ['a*', 'ab/c', false],
  ['a*/b', 'abc/b', true],
  ['a*b*c*d*e*/f', 'axbxcxdxe/f', true],
  ['ab[c]', 'abc', true],
  ['ab[b-d]', 'abc', true],
  ['ab[e-g]', 'abc', false],
  ['ab[^c]', 'abc', false],
  ['ab[^b-d]', 'abc', false],
  ['ab[^e-g]', 'abc', true],
  ['a\\*b', 'a*b', true],
  ['a\\*b', 'ab', false],
  ['a?b', 'a☺b', true],
  ['a[^a]b', 'a☺b', true],
  ['a???b', 'a☺b', false],
  ['[a-ζ]*', 'α', true],
  ['*[a-ζ]', 'A', false],
  ['a?b', 'a/b', false],
  ['a*b', 'a/b', false],
  ['[\\]a]', ']', true],
  ['[\\-]', '-', true],
  ['[x\\-]', '-', true],
  ['[x\\-]', 'z', false],
  ['[\\-x]', 'x', true],
  ['[]a]', ']', 'bad'],
  ['[-]', '-', 'bad'],
  ['[x-]', 'x', 'bad'],
  ['[-x]', 'x', 'bad'],
  ['\\', 'a', 'bad'],
  ['[a-b-c]', 'a', 'bad'],
  ['[', 'a', 'bad'],
  ['[^', 'a', 'bad'],
  ['[^bc', 'a', 'bad'],
  ['*x', 'xxx', true],
  ['*.sync-conflict*', 'abc.sync-conflict-2026', true],
  ['[a-c]-[x]', 'b-x', true],
  ['a/b', 'a/b', true],
  ['(a|b)+$', '(a|b)+$', true],
];

test('compileGlob follows Go filepath.Match: classes, escapes, "/" never matched by * or ?, malformed patterns refused', () => {
  for (const [pattern, name, want] of CASES) {
    if (want === 'bad') {
      assert.throws(() => compileGlob(pattern), { code: 'EINVAL' }, pattern);
      continue;
    }
    assert.equal(compileGlob(pattern).test(name), want, `${pattern} ~ ${name}`);
  }
});

test('a bad name shows its decryptable prefix, and its candidates lead back to the cipher name', () => {
  const codec = new NameCodec(new Eme(randomBytes(32)), { raw64: true, longNameMax: 255, longNames: true });
  const iv = randomBytes(16);
  const good = codec.encryptName(Buffer.from('report.pdf'), iv);
  // A name sync clients make: the cipher name with something appended.
  const damaged = `${good}.conflict`;
  const shown = badDisplayName(codec, damaged, iv);
  assert.equal(shown, `report.pdf.conflict${BADNAME_SUFFIX}`);
  assert.ok(badNameCandidates(codec, shown, iv).includes(damaged));
  // Nothing decrypts: the cipher name itself, with the suffix.
  assert.equal(badDisplayName(codec, 'AAAA', iv), `AAAA${BADNAME_SUFFIX}`);
  assert.equal(badNameCandidates(codec, `AAAA${BADNAME_SUFFIX}`, iv)[0], 'AAAA');
});
