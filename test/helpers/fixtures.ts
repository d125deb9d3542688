/**
 * The gocryptfs-made fixtures of test/fixtures, restored to what gocryptfs
 * wrote. git keeps symlinks but no xattrs and no modes other than the x bit,
 * so a fixture is copied to a temporary directory and its
 * cipher_manifest.json (modes, raw cipher-side xattrs) is applied to the copy.
 */
import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as xattr from '../../src/util/xattr-io.js';
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

export const FORWARD_VECTORS = ['aesgcm', 'aessiv', 'xchacha', 'plaintextnames', 'deterministic-names', 'longnamemax62', 'hkdf-false', 'raw64-false'] as const;

export function readManifest(fixture: string, which: 'plain' | 'cipher'): ManifestEntry[] {
  return JSON.parse(readFileSync(join(VECTORS_DIR, fixture, `${which}_manifest.json`), 'utf8')) as ManifestEntry[];
}

/** Where gocryptfs stored a plaintext path of a fixture (its control socket's answer, paths.json). */
export function fixtureCipherPath(fixture: string, plain: string): string {
  const paths = JSON.parse(readFileSync(join(VECTORS_DIR, fixture, 'paths.json'), 'utf8')) as { plain: string; cipher: string }[];
  const e = paths.find((p) => p.plain === plain);
  if (!e) throw new Error(`${fixture}/paths.json has no ${plain}`);
  return e.cipher;
}

export function fixtureMasterKey(fixture: string): string {
  return readFileSync(join(VECTORS_DIR, fixture, 'masterkey.txt'), 'utf8').trim();
}

/** Copies a fixture folder; symlinks are copied as they are (fs.cp would make relative targets absolute). */
export async function copyFixture(src: string, dest: string): Promise<void> {
  await fsp.cp(src, dest, { recursive: true, verbatimSymlinks: true });
}

/** Copies gocryptfs-2.3/<fixture>/cipher to `dest` and restores the modes and xattrs git does not keep. */
export async function materializeVector(fixture: string, dest: string): Promise<void> {
  await copyFixture(join(VECTORS_DIR, fixture, 'cipher'), dest);
  const entries = readManifest(fixture, 'cipher');
  // Directories last and deepest first, so restoring a read-only mode does not block the rest.
  const ordered = [...entries].sort((a, b) => Number(a.type === 'dir') - Number(b.type === 'dir') || b.path.length - a.path.length);
  for (const e of ordered) {
    if (e.type === 'symlink') continue;
    const p = join(dest, e.path);
    for (const [name, v] of Object.entries(e.xattrs ?? {})) {
      await xattr.setAttribute(p, name, Buffer.from(v.hex, 'hex'));
    }
    await fsp.chmod(p, parseInt(e.mode.replace(/^0o/, ''), 8));
  }
  await fsp.chmod(dest, 0o755);
}

/** Copies the reverse fixture's plaintext (gocryptfs-2.3/reverse/plain) and restores its modes. */
export async function materializeReversePlain(dest: string): Promise<void> {
  await copyFixture(join(VECTORS_DIR, 'reverse', 'plain'), dest);
  const entries = readManifest('reverse', 'plain').filter((e) => e.type !== 'symlink');
  for (const e of entries.sort((a, b) => b.path.length - a.path.length)) {
    await fsp.chmod(join(dest, e.path), parseInt(e.mode.replace(/^0o/, ''), 8));
  }
  await fsp.chmod(dest, 0o755);
}

/** Copies an upstream example filesystem (writable, as upstream's test mounts them read-write). */
export async function materializeExample(example: string, dest: string): Promise<void> {
  await copyFixture(join(EXAMPLES_DIR, example), dest);
  await fsp.chmod(dest, 0o755);
}
