/**
 * The package's version and the first three parts of -version's line
 * ("tscryptfs 0.1.0; node v20.20.2; linux/x64"), for the help texts and
 * -init's Creator field: nothing but package.json is read, so printing
 * help loads none of the crypto, FUSE or native modules.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROGRAM_NAME } from './output.js';

let cachedVersion: string | undefined;

/**
 * The "version" of our package.json, found by walking up from this module
 * (works from src/cli and from dist/src/cli).
 */
export function packageVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === PROGRAM_NAME && typeof pkg.version === 'string') {
        cachedVersion = pkg.version;
        return cachedVersion;
      }
    } catch {
      // no (readable) package.json here; keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  cachedVersion = 'unknown';
  return cachedVersion;
}

/** Go's GOOS/GOARCH spelling is not needed; Node's platform/arch are shown as they are. */
export function versionLine(): string {
  return `${PROGRAM_NAME} ${packageVersion()}; node ${process.version}; ${process.platform}/${process.arch}`;
}
