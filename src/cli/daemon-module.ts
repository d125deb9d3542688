/**
 * Which file the background process loads its modules from:
 * daemon.bundle.js (scripts/bundle-daemon.mjs: daemon.js and all it
 * imports in one file) when no file it bundles is newer, else daemon.js
 * itself. A build by tsc alone, or tsc --watch, rewrites modules and
 * leaves the bundle older than them, which then is not used.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const DAEMON_BUNDLE = 'daemon.bundle.js';
/** The bundler's list of the files in the bundle, relative to it. */
export const DAEMON_BUNDLE_INPUTS = 'daemon.bundle.json';
/**
 * How much newer than the bundle a file it holds may be. An install
 * writes the package's files within a moment of each other, in any
 * order; tsc compiles for seconds (7 s here) before it writes anything.
 */
const SLACK_MS = 2000;

/** The URL to import for the background process, from the directory `dir` (this module's by default). */
export function daemonModuleUrl(dir: string = fileURLToPath(new URL('./', import.meta.url))): string {
  const bundle = join(dir, DAEMON_BUNDLE);
  try {
    const bundledAt = statSync(bundle).mtimeMs;
    const { inputs } = JSON.parse(readFileSync(join(dir, DAEMON_BUNDLE_INPUTS), 'utf8')) as { inputs: string[] };
    if (inputs.includes('daemon.js') && inputs.every((f) => statSync(join(dir, f)).mtimeMs <= bundledAt + SLACK_MS)) return pathToFileURL(bundle).href;
  } catch {
    /* no bundle, no list, or a file of it gone: the modules themselves */
  }
  return pathToFileURL(join(dir, 'daemon.js')).href;
}
