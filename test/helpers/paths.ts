/** Where the repository and the shared fixtures are, wherever the compiled test runs from. */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'tsconfig.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root (package.json)');
    dir = up;
  }
}

export const REPO_ROOT = findRepoRoot();
/** ../shared beside the repository (read-only); TSCRYPTFS_SHARED overrides it. */
export const SHARED_DIR = process.env.TSCRYPTFS_SHARED ?? resolve(REPO_ROOT, '..', 'shared');
if (!existsSync(join(SHARED_DIR, 'fixtures'))) {
  throw new Error(`test fixtures not found: ${SHARED_DIR}/fixtures (set TSCRYPTFS_SHARED to the shared folder)`);
}
export const FIXTURES_DIR = join(SHARED_DIR, 'fixtures');
export const VECTORS_DIR = join(FIXTURES_DIR, 'vectors');
export const EXAMPLES_DIR = join(FIXTURES_DIR, 'gocryptfs-examples');
/** The CLI entry point. */
export const BIN = join(REPO_ROOT, 'bin', 'tscryptfs');
