/**
 * The library's public surface: `src/index.ts` exports exactly the names
 * README.md lists, and no exported class hands out key material, neither
 * by a member named for it nor in what a method without arguments returns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../../src/index.js';
import { Vault } from '../../src/index.js';
import { internalAccess } from '../../src/vault/internal-access.js';
import { REPO_ROOT } from '../helpers/paths.js';
import { makeTempDir, removeTempDir } from '../helpers/tmp.js';

/** Every name `src/index.ts` exports, values and types. */
function exportedNames(): string[] {
  const src = readFileSync(join(REPO_ROOT, 'src', 'index.ts'), 'utf8');
  const names: string[] = [];
  for (const m of src.matchAll(/^export (?:type )?\{([^}]*)\}/gm)) {
    for (const part of m[1]!.split(',')) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).pop()!;
      if (name !== '') names.push(name);
    }
  }
  return names.sort();
}

/** The names of README.md's paragraph that lists them. */
function readmeNames(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf("`import ... from 'tscryptfs'` gives exactly these names");
  assert.ok(start >= 0, 'README.md lists the exports');
  const paragraph = readme.slice(start, readme.indexOf('\n\n', start));
  return [...paragraph.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)].map((m) => m[1]!).sort();
}

test('src/index.ts exports exactly the names README.md lists', () => {
  assert.deepEqual(exportedNames(), readmeNames());
  for (const name of Object.keys(api)) assert.ok(readmeNames().includes(name), `${name} is exported at run time and listed`);
});

const CLASSES = (Object.entries(api) as [string, unknown][]).filter((e): e is [string, { prototype: object }] => typeof e[1] === 'function' && /^class\b/.test(String(e[1])));

test('no member of an exported class is named for key material or descriptors', () => {
  assert.ok(CLASSES.length >= 5, CLASSES.map((c) => c[0]).join(' '));
  // fromKey opens a vault with a master key given to it: it takes one and returns none.
  const allowed = new Set(['fromKey']);
  for (const [name, cls] of CLASSES) {
    const members = [...Object.getOwnPropertyNames(cls.prototype), ...Object.getOwnPropertyNames(cls)];
    const bad = members.filter((m) => /key|secret|passw|fd$|descriptor/i.test(m) && !allowed.has(m));
    assert.deepEqual(bad, [], name);
  }
});

test('no method of a Vault that takes no arguments returns the master key, whole or inside what it returns', async () => {
  const dir = makeTempDir('tscryptfs-api-');
  try {
    const v = await Vault.init(dir, { password: 'pw', scryptLogN: 10 });
    await v.writeFile('/f', 'x');
    const key = Buffer.from(internalAccess(v).masterKey());
    const holdsKey = (value: unknown, depth = 0): boolean => {
      if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).includes(key);
      if (depth > 3 || value === null || typeof value !== 'object') return false;
      return Object.values(value).some((v) => holdsKey(v, depth + 1));
    };
    const proto = Vault.prototype as unknown as Record<string, unknown>;
    let called = 0;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, name)!;
      if (name === 'constructor' || name === 'close') continue;
      let result: unknown;
      try {
        if (d.get) result = d.get.call(v);
        else if (typeof d.value === 'function' && d.value.length === 0) result = await (d.value as () => unknown).call(v);
        else continue;
      } catch {
        continue; // a method that needs its arguments after all
      }
      called++;
      assert.equal(holdsKey(result), false, `Vault.${name} returns the master key`);
    }
    assert.ok(called >= 3, `${called} members called`);
    await v.close();
  } finally {
    removeTempDir(dir);
  }
});
