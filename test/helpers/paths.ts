/** Where the repository and its test fixtures are, wherever the compiled test runs from. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
/** test/fixtures (see its README.md): everything the tests read, kept in the repository. */
export const FIXTURES_DIR = join(REPO_ROOT, 'test', 'fixtures');
/** Cipher directories made by gocryptfs 2.3 (scripts/make-fixtures.bash). */
export const VECTORS_DIR = join(FIXTURES_DIR, 'gocryptfs-2.3');
/** Upstream gocryptfs's example filesystems (v0.9 .. v2.2). */
export const EXAMPLES_DIR = join(FIXTURES_DIR, 'gocryptfs-examples');
/** The frozen files behind Documentation/format.md §14 (the worked example). */
export const WORKED_EXAMPLE_DIR = join(FIXTURES_DIR, 'worked-example');
/** The AEGIS draft's test vectors. */
export const AEGIS_VECTORS_DIR = join(FIXTURES_DIR, 'aegis-vectors');
/** The CLI entry point. */
export const BIN = join(REPO_ROOT, 'bin', 'tscryptfs');
