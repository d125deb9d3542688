/**
 * -version: one line, as gocryptfs prints "gocryptfs 2.3; go-fuse ...;
 * 2023-04-09 go1.19.8 linux/amd64", naming what decides how tscryptfs
 * runs here:
 *
 *   tscryptfs 0.1.0; node v20.20.2; linux/x64; fuse-native 2.2.6-tscryptfs sources 1f2e3d4c5b6a;
 *   libfuse 2.9.9; OpenSSL 3.0.15+quic; AEGIS native vaes-avx2; batched AEAD native
 *
 * (one line on screen). The help texts start with the first three parts
 * only (versionLine), which need nothing loaded.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { aegisAvailability, aegisNativeStatus } from '../crypto/index.js';
import { batchBinding } from '../crypto/native-batch.js';
import { fuseInfo } from '../fuse/index.js';
import type { Output } from './output.js';
import { PROGRAM_NAME } from './output.js';
import { envSwitch } from '../util/switches.js';

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

/** Everything -version reports (also the shape of `-version -json`). */
export interface VersionReport {
  tscryptfs: string;
  node: string;
  platform: string;
  arch: string;
  /** The version of our fuse-native fork (null: not installed). */
  fuseNative: string | null;
  /** The first 12 hex digits of the sha256 of the C sources the loaded binding was built from (null: it did not load). */
  fuseSources: string | null;
  /** The libfuse the binding is linked against (null: not loaded). */
  libfuse: string | null;
  /** Why mounting cannot work, or null. */
  fuseProblem: string | null;
  /** The OpenSSL inside node, which the OpenSSL backend and the batched addon use. */
  openssl: string | null;
  /** Which AEGIS-256X2 implementation runs: 'native' (with its code path), 'ts', or null (none may run). */
  aegis: { implementation: 'native' | 'ts' | null; codePath: string | null; reason: string | null };
  /** Whether the batched AES-GCM / XChaCha20-Poly1305 addon is in use, and if not, why. */
  batchedAead: { native: boolean; reason: string | null };
}

export function versionReport(): VersionReport {
  const fuse = fuseInfo();
  const a = aegisAvailability();
  const batch = batchBinding() !== null;
  return {
    tscryptfs: packageVersion(),
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    fuseNative: fuse.fuseNative,
    fuseSources: fuse.sources,
    libfuse: fuse.libfuse,
    fuseProblem: fuse.problem,
    openssl: process.versions.openssl ?? null,
    aegis: {
      implementation: a.usable ? a.backend! : null,
      codePath: a.usable && a.backend === 'native' ? (aegisNativeStatus().implementation ?? null) : null,
      reason: a.reason ?? null,
    },
    batchedAead: {
      native: batch,
      reason: batch ? null : !envSwitch('TSCRYPTFS_NATIVE_BATCH') ? 'disabled by TSCRYPTFS_NATIVE_BATCH=0' : 'native addon not built or not loadable',
    },
  };
}

/** The report as gocryptfs-style "; "-separated parts on one line. */
export function formatVersion(r: VersionReport): string {
  const fuse =
    r.fuseNative === null
      ? 'fuse-native missing'
      : r.fuseSources === null
        ? `fuse-native ${r.fuseNative} not loadable`
        : `fuse-native ${r.fuseNative} sources ${r.fuseSources}`;
  const aegis = r.aegis.implementation === 'native' ? `AEGIS native ${r.aegis.codePath ?? ''}`.trimEnd() : r.aegis.implementation === 'ts' ? 'AEGIS TypeScript' : 'AEGIS off';
  return [
    `${PROGRAM_NAME} ${r.tscryptfs}`,
    `node ${r.node}`,
    `${r.platform}/${r.arch}`,
    fuse,
    `libfuse ${r.libfuse ?? 'none'}`,
    `OpenSSL ${r.openssl ?? 'none'}`,
    aegis,
    `batched AEAD ${r.batchedAead.native ? 'native' : 'off'}`,
  ].join('; ');
}

export function printVersion(out: Output): void {
  out.print(`${formatVersion(versionReport())}\n`);
}
