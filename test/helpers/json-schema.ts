/**
 * A JSON Schema validator for the small part of the standard our schemas
 * (Documentation/schemas/*.schema.json) use: type, properties, required,
 * items, enum, additionalProperties, minimum, and the annotations $schema,
 * $id, title and description. A schema with any other keyword is refused
 * rather than half-checked, so a schema can never promise more than the
 * tests verify. (Written here instead of adding a validator package: this
 * is all the tests need, and it runs offline with no new dependency.)
 */

export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  additionalProperties?: boolean | Schema;
  minimum?: number;
};

const KEYWORDS = new Set(['type', 'properties', 'required', 'items', 'enum', 'additionalProperties', 'minimum', '$schema', '$id', 'title', 'description']);
const TYPES = new Set(['null', 'boolean', 'object', 'array', 'number', 'integer', 'string']);

/** JSON Schema's type of a parsed JSON value ("integer" also counts as "number"). */
function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function checkSchema(schema: Schema, at: string): void {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error(`schema at ${at || '/'} is not an object`);
  for (const k of Object.keys(schema)) {
    if (!KEYWORDS.has(k)) throw new Error(`schema at ${at || '/'} uses "${k}", which this validator does not implement`);
  }
  for (const t of [schema.type ?? []].flat()) {
    if (!TYPES.has(t)) throw new Error(`schema at ${at || '/'}: unknown type "${t}"`);
  }
  for (const [name, sub] of Object.entries(schema.properties ?? {})) checkSchema(sub, `${at}/properties/${name}`);
  if (schema.items) checkSchema(schema.items, `${at}/items`);
  if (typeof schema.additionalProperties === 'object') checkSchema(schema.additionalProperties, `${at}/additionalProperties`);
}

function validateAt(schema: Schema, value: unknown, at: string, errors: string[]): void {
  const where = at || '/';
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const allowed = [schema.type].flat();
    if (!allowed.includes(actual) && !(actual === 'integer' && allowed.includes('number'))) {
      errors.push(`${where}: is ${actual}, expected ${allowed.join(' or ')}`);
      return;
    }
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push(`${where}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  }
  if (schema.minimum !== undefined && typeof value === 'number' && value < schema.minimum) {
    errors.push(`${where}: ${value} is less than ${schema.minimum}`);
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    for (const name of schema.required ?? []) {
      if (!(name in obj)) errors.push(`${where}: "${name}" is missing`);
    }
    for (const [name, v] of Object.entries(obj)) {
      const sub = schema.properties?.[name];
      if (sub) validateAt(sub, v, `${at}/${name}`, errors);
      else if (schema.additionalProperties === false) errors.push(`${where}: "${name}" is not allowed`);
      else if (typeof schema.additionalProperties === 'object') validateAt(schema.additionalProperties, v, `${at}/${name}`, errors);
    }
  }
  if (actual === 'array' && schema.items) {
    (value as unknown[]).forEach((v, i) => validateAt(schema.items!, v, `${at}/${i}`, errors));
  }
}

/** Every way `value` breaks `schema` (JSON-pointer-like locations); [] when it is valid. Throws for a schema outside the subset. */
export function validate(schema: Schema, value: unknown): string[] {
  checkSchema(schema, '');
  const errors: string[] = [];
  validateAt(schema, value, '', errors);
  return errors;
}
