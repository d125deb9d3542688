/**
 * Loader for the optional native AEGIS addon (`native/`, C with AES-NI,
 * built by `scripts/build-native.mjs` at install time).
 *
 * The addon is looked for at `native/build/Release/tscryptfs_aegis.node`
 * relative to the package root, which is found from this module's own URL:
 * four levels up when running compiled from `dist/src/crypto/aegis/`, three
 * when running from `src/crypto/aegis/`. Any failure — file missing (no
 * compiler at install time), load error (ABI mismatch), CPU without AES-NI
 * (the addon checks CPUID and reports itself unavailable) or
 * `TSCRYPTFS_AEGIS=ts|off` (./mode.ts) — leaves the binding null;
 * `aegisNativeStatus()` says why. Whether the TypeScript implementation
 * may stand in is decided in ./backend.ts.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { AEGIS_ENV, aegisMode, nativeAllowed } from './mode.js';

/** The functions `native/crypto/aegis.c` exports. Arguments are checked again in C. */
export interface AegisNativeBinding {
  /** True when this CPU has the instructions the addon uses (AES-NI, SSSE3, SSE4.1). */
  available(): boolean;
  /** Which code path runs, e.g. 'aesni' or 'vaes-avx2'. */
  implementation(): string;
  /** The code paths this CPU supports (tests run the vectors on each). */
  implementations(): string[];
  /** Switches the code path for the whole process (tests and benchmarks only); false if unsupported. */
  useImplementation(name: string): boolean;
  /** out = ct || tag; the tag length (16 or 32) is out.length - msg.length. */
  seal(variant: number, key: Uint8Array, nonce: Uint8Array, msg: Uint8Array, ad: Uint8Array, out: Uint8Array): void;
  /** sealed = ct || tag, tag length = sealed.length - out.length; false (out zeroed) if the tag is wrong. */
  open(variant: number, key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array, ad: Uint8Array, out: Uint8Array): boolean;
  /**
   * Seals ceil(plaintext.length / blockSize) blocks; block k is written to
   * out as nonce_k || ct_k || tag_k(16), back to back (gocryptfs's on-disk layout).
   */
  sealBlocks(
    variant: number,
    key: Uint8Array,
    nonces: Uint8Array,
    plaintext: Uint8Array,
    blockSize: number,
    aads: Uint8Array,
    aadLen: number,
    out: Uint8Array,
  ): void;
  /**
   * Opens back-to-back nonce || ct || tag(16) blocks of `cipherBlockSize`
   * bytes (the last may be shorter). Returns -1 on success, else the index of
   * the first block that failed (out is then zeroed entirely).
   */
  openBlocks(
    variant: number,
    key: Uint8Array,
    sealed: Uint8Array,
    cipherBlockSize: number,
    aads: Uint8Array,
    aadLen: number,
    out: Uint8Array,
  ): number;
  /** The variant's decryption for the batch addon's read path (native/crypto/aegis_export.h), as the current code path has it. */
  decryptHandle(variant: number): object;
}

export interface AegisNativeStatus {
  available: boolean;
  /** Path of the addon that was loaded or looked for. */
  path?: string;
  /** Which code path the addon uses, when available. */
  implementation?: string;
  /** Why the TypeScript implementation is used, when not available. */
  reason?: string;
}

export const ADDON_FILE = 'tscryptfs_aegis.node';

let loaded: { binding: AegisNativeBinding | null; status: AegisNativeStatus } | undefined;

/** Where the addon may be, nearest first. */
export function addonCandidates(): string[] {
  const rel = `native/build/Release/${ADDON_FILE}`;
  return [new URL(`../../../../${rel}`, import.meta.url), new URL(`../../../${rel}`, import.meta.url)].map((u) =>
    fileURLToPath(u),
  );
}

function load(): { binding: AegisNativeBinding | null; status: AegisNativeStatus } {
  const { mode, invalid } = aegisMode();
  if (invalid !== undefined) return { binding: null, status: { available: false, reason: invalid } };
  if (!nativeAllowed(mode)) {
    return { binding: null, status: { available: false, reason: `disabled by ${AEGIS_ENV}=${mode}` } };
  }
  const candidates = addonCandidates();
  const path = candidates.find((p) => existsSync(p));
  if (path === undefined) {
    return { binding: null, status: { available: false, path: candidates[0], reason: 'native addon not built' } };
  }
  try {
    const binding = createRequire(import.meta.url)(path) as AegisNativeBinding;
    if (!binding.available()) {
      const reason = 'CPU lacks AES-NI (or the addon was built for another architecture)';
      return { binding: null, status: { available: false, path, reason } };
    }
    return { binding, status: { available: true, path, implementation: binding.implementation() } };
  } catch (err) {
    return { binding: null, status: { available: false, path, reason: `native addon failed to load: ${(err as Error).message}` } };
  }
}

/** The addon, or null when the TypeScript implementation has to be used. Loaded once. */
export function aegisNativeBinding(): AegisNativeBinding | null {
  loaded ??= load();
  return loaded.binding;
}

/** Whether the native addon is in use, where it is, and if not, why. */
export function aegisNativeStatus(): AegisNativeStatus {
  loaded ??= load();
  return { ...loaded.status };
}
