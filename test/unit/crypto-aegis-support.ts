/**
 * Shared by the crypto-aegis*.test.ts files: which AEGIS backends to test and
 * when a missing native addon is a skip and when it is a failure.
 *
 * The native tests may be skipped (visibly, with the reason) only outside CI.
 * Under CI (CI set and not "false"/"0") on an x86-64 Linux machine whose CPU
 * has AES-NI, the addon must be there: the tests run and fail if it is not.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { aegisNativeAvailable, aegisNativeStatus, type AegisBackend } from '../../src/crypto/aegis/index.js';
import { AEGIS_VECTORS_DIR } from '../helpers/paths.js';

export const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
export const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');

export function underCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/** x86-64 Linux with the `aes` CPU flag: the native addon can and must work here. */
export function cpuHasAesNi(): boolean {
  if (process.arch !== 'x64' || process.platform !== 'linux') return false;
  try {
    return /^flags\s*:.*\baes\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
}

/** True when a missing addon must fail the run rather than skip. */
export function nativeRequired(): boolean {
  return underCi() && cpuHasAesNi();
}

/** Options for a native test: run it when the addon is there or required, else skip with the reason. */
export function nativeTestOptions(): { skip?: string } {
  if (aegisNativeAvailable() || nativeRequired()) return {};
  return { skip: `native addon not built/usable (${aegisNativeStatus().reason ?? 'unknown'}); set CI=true to make this a failure` };
}

export const BACKENDS: AegisBackend[] = ['ts', 'native'];

export function backendOptions(backend: AegisBackend): { skip?: string } {
  return backend === 'native' ? nativeTestOptions() : {};
}

export interface VectorEntry {
  name: string;
  key?: string;
  nonce?: string;
  ad?: string;
  msg?: string;
  ct?: string;
  tag128?: string;
  tag256?: string;
  error?: string;
  [k: string]: string | undefined;
}

export function readVectors(file: string): VectorEntry[] {
  return JSON.parse(readFileSync(join(AEGIS_VECTORS_DIR, file), 'utf8')) as VectorEntry[];
}
