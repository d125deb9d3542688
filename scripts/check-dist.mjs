#!/usr/bin/env node
/**
 * The package's `prepack` script: `npm pack` and `npm publish` pack dist/
 * as it is built, so this refuses (exit 1, one line) when dist/ is missing
 * or older than a file under src/, or when the background process would
 * not load its bundle (scripts/bundle-daemon.mjs: missing, or older than a
 * module it holds), instead of building: packing
 * then changes nothing in the tree and needs no dev dependencies.
 * `npm run build` makes dist/.
 */
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
// The rule the background process applies (src/cli/daemon-module.ts): the bundle, unless a module it holds is newer.
const { daemonModuleUrl, DAEMON_BUNDLE } = await import(pathToFileURL(join(root, 'dist', 'src', 'cli', 'daemon-module.js')).href);
if (!daemonModuleUrl().endsWith(`/${DAEMON_BUNDLE}`)) {
  console.error(`tscryptfs: dist/src/cli/${DAEMON_BUNDLE} is missing or older than the modules it holds; run \`npm run build\` before packing`);
  process.exit(1);
}
