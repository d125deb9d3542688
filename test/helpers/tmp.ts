/** Temporary directories that tests always remove. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, chmodSync, readdirSync, lstatSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Makes everything below `dir` writable, so removal works even without root. */
function makeWritable(dir: string): void {
  try {
    chmodSync(dir, 0o700);
    for (const n of readdirSync(dir)) {
      const p = join(dir, n);
      if (lstatSync(p).isDirectory()) makeWritable(p);
    }
  } catch {
    // best effort; rmSync reports what it cannot remove
  }
}

export function makeTempDir(prefix = 'tscryptfs-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeTempDir(dir: string): void {
  makeWritable(dir);
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch (err) {
    // A tree deeper than PATH_MAX (test/mount/deep-paths): rm works relative to each directory.
    if ((err as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw err;
    const r = spawnSync('rm', ['-rf', '--one-file-system', dir], { stdio: 'ignore' });
    if (r.status !== 0 || existsSync(dir)) throw err;
  }
}
