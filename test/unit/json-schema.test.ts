/**
 * The tests' JSON Schema validator (test/helpers/json-schema.ts) finds
 * what it must: a validator that accepts everything would make the
 * CLI's schema tests pass for any output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validate, type Schema } from '../helpers/json-schema.js';

const SCHEMA: Schema = {
  type: 'object',
  required: ['kind', 'block', 'items'],
  additionalProperties: false,
  properties: {
    kind: { type: 'string', enum: ['a', 'b'] },
    block: { type: ['integer', 'null'], minimum: 0 },
    ratio: { type: 'number' },
    items: { type: 'array', items: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
    free: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

test('a valid document has no errors', () => {
  assert.deepEqual(validate(SCHEMA, { kind: 'a', block: 3, ratio: 2, items: [{ n: 1, extra: true }], free: { x: 'y' } }), []);
  assert.deepEqual(validate(SCHEMA, { kind: 'b', block: null, ratio: 0.5, items: [] }), []);
});

test('each keyword finds its violation, with where', () => {
  const cases: Array<[unknown, string]> = [
    [[], '/: is array, expected object'],
    [{ kind: 'a', items: [] }, '/: "block" is missing'],
    [{ kind: 'c', block: 0, items: [] }, '/kind: "c" is not one of ["a","b"]'],
    [{ kind: 'a', block: 1.5, items: [] }, '/block: is number, expected integer or null'],
    [{ kind: 'a', block: -1, items: [] }, '/block: -1 is less than 0'],
    [{ kind: 'a', block: 0, items: [{}] }, '/items/0: "n" is missing'],
    [{ kind: 'a', block: 0, items: [{ n: '1' }] }, '/items/0/n: is string, expected integer'],
    [{ kind: 'a', block: 0, items: [], other: 1 }, '/: "other" is not allowed'],
    [{ kind: 'a', block: 0, items: [], free: { x: 1 } }, '/free/x: is integer, expected string'],
  ];
  for (const [doc, error] of cases) assert.deepEqual(validate(SCHEMA, doc), [error], JSON.stringify(doc));
});

test('a schema keyword outside the subset is refused, not ignored', () => {
  assert.throws(() => validate({ type: 'string', pattern: '^a' } as Schema, 'a'), /uses "pattern", which this validator does not implement/);
  assert.throws(() => validate({ properties: { x: { oneOf: [] } } } as unknown as Schema, {}), /at \/properties\/x uses "oneOf"/);
  assert.throws(() => validate({ type: 'float' }, 1), /unknown type "float"/);
});
