#!/usr/bin/env node
/**
 * The package's `prepack` script: `npm pack` and `npm publish` pack dist/
 * as it is built, so this refuses (exit 1, one line) when dist/ is missing
 * or older than a file under src/, instead of building: packing
 * then changes nothing in the tree and needs no dev dependencies.
 * `npm run build` makes dist/.
 */
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'src', 'index.js');

/** The newest modification time of the files below `dir` (0 for none). */
function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

let builtAt;
try {
  builtAt = statSync(built).mtimeMs;
} catch {
  console.error('tscryptfs: dist/ is not built; run `npm run build` before packing');
  process.exit(1);
}
if (newest(join(root, 'src')) > builtAt) {
  console.error('tscryptfs: src/ changed after dist/ was built; run `npm run build` before packing');
  process.exit(1);
}
