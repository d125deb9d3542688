/**
 * -version: one line, as gocryptfs prints "gocryptfs 2.3; go-fuse ...;
 * 2023-04-09 go1.19.8 linux/amd64", naming what decides how tscryptfs
 * runs here:
 *
 *   tscryptfs 0.1.0; node v20.20.2; linux/x64; fuse-native 2.2.6-tscryptfs sources 1f2e3d4c5b6a;
 *   libfuse 2.9.9; OpenSSL 3.0.15+quic; AEGIS native vaes-avx2; batched AEAD native
 *
 * (one line on screen). The help texts start with the first three parts
 * only (versionLine in version-line.ts, which loads nothing).
 */
import { packageVersion } from './version-line.js';
import { aegisAvailability } from '../crypto/aegis/backend.js';
import { aegisNativeStatus } from '../crypto/aegis/native.js';
import { batchBinding } from '../crypto/native-batch.js';
import { fuseInfo } from '../fuse/fuse-info.js';
import type { Output } from './output.js';
import { PROGRAM_NAME } from './output.js';
import { envSwitch } from '../util/switches.js';

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
