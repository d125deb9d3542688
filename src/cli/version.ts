/**
 * -version: one line "tscryptfs <version>; node <version>; <os>/<arch>",
 * the counterpart of gocryptfs's "gocryptfs 2.3; go-fuse ...; <date> go1.19 linux/amd64".
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Output } from './output.js';
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

export function printVersion(out: Output): void {
  out.print(`${versionLine()}\n`);
}
