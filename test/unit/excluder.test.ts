/**
 * The Excluder against the exclude table (test/helpers/exclude-table.ts):
 * for every row, the paths it hides are the ones gocryptfs -reverse 2.3
 * hides (test/cross/reverse-excludes.test.ts checks the rows against the
 * real gocryptfs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Excluder } from '../../src/reverse/index.js';
import { describeCase, EXCLUDE_CASES, excluderHides, treePaths } from '../helpers/exclude-table.js';

test(`Excluder: each of the ${EXCLUDE_CASES.length} rows of the exclude table hides what gocryptfs hides`, () => {
  const paths = treePaths();
  const wrong: string[] = [];
  for (const c of EXCLUDE_CASES) {
    const ours = excluderHides(c, paths);
    const want = [...c.hides].sort();
    if (JSON.stringify(ours) !== JSON.stringify(want)) wrong.push(`${describeCase(c)}: hides ${JSON.stringify(ours)}, gocryptfs ${JSON.stringify(want)}`);
  }
  assert.deepEqual(wrong, []);
});

test('Excluder: the root is never hidden, whatever the patterns', () => {
  assert.equal(new Excluder(['*', '/', '**']).matches(''), false);
});
