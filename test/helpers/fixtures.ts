/**
 * The gocryptfs-made fixtures, restored to what gocryptfs wrote. git keeps
 * no symlinks, xattrs or modes in ../shared, so a fixture is copied to a
 * temporary directory and its cipher_manifest.json (symlink targets, modes,
 * raw cipher-side xattrs) is applied to the copy.
 */
import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as xattr from '../../src/vault/xattr-io.js';
import { EXAMPLES_DIR, VECTORS_DIR } from './paths.js';

export interface ManifestEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  mode: string;
  size: number;
  sha256?: string;
  target?: string;
  xattrs?: Record<string, { hex: string; text?: string }>;
}

export const FORWARD_VECTORS = ['aesgcm', 'aessiv', 'xchacha', 'plaintextnames', 'deterministic-names', 'longnamemax62'] as const;

export function readManifest(fixture: string, which: 'plain' | 'cipher'): ManifestEntry[] {
  return JSON.parse(readFileSync(join(VECTORS_DIR, fixture, `${which}_manifest.json`), 'utf8')) as ManifestEntry[];
}

export function fixtureMasterKey(fixture: string): string {
  return readFileSync(join(VECTORS_DIR, fixture, 'masterkey.txt'), 'utf8').trim();
}

/** Copies fixtures/vectors/<fixture>/cipher to `dest` and restores symlinks, modes and xattrs. */
export async function materializeVector(fixture: string, dest: string): Promise<void> {
  await fsp.cp(join(VECTORS_DIR, fixture, 'cipher'), dest, { recursive: true });
  const entries = readManifest(fixture, 'cipher');
  // Directories last and deepest first, so restoring a read-only mode does not block the rest.
  const ordered = [...entries].sort((a, b) => Number(a.type === 'dir') - Number(b.type === 'dir') || b.path.length - a.path.length);
  for (const e of ordered) {
    const p = join(dest, e.path);
    if (e.type === 'symlink') {
      await fsp.rm(p, { force: true });
      await fsp.symlink(e.target!, p);
      continue;
    }
    for (const [name, v] of Object.entries(e.xattrs ?? {})) {
      await xattr.setAttribute(p, name, Buffer.from(v.hex, 'hex'));
    }
    await fsp.chmod(p, parseInt(e.mode.replace(/^0o/, ''), 8));
  }
  await fsp.chmod(dest, 0o755);
}

/**
 * Copies an upstream example filesystem. Its symlinks arrive as regular
 * files holding the encrypted target; those are the only cipher files that
 * are pure base64 text (content files start with the binary header 00 02).
 */
export async function materializeExample(example: string, dest: string): Promise<void> {
  await fsp.cp(join(EXAMPLES_DIR, example), dest, { recursive: true });
  await fsp.chmod(dest, 0o755);
  for (const n of await fsp.readdir(dest)) {
    const p = join(dest, n);
    const st = await fsp.lstat(p);
    if (!st.isFile() || n.startsWith('gocryptfs.')) {
      if (n.startsWith('gocryptfs.longname.') && !n.endsWith('.name')) {
        // hashed content: may be a symlink too
      } else {
        continue;
      }
    }
    const text = await fsp.readFile(p, 'latin1');
    if (/^[A-Za-z0-9_=-]+$/.test(text)) {
      await fsp.rm(p);
      await fsp.symlink(text, p);
    }
  }
}
