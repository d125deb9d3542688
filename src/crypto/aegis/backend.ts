/**
 * Choosing the AEGIS implementation: 'native' (the C addon, AES-NI,
 * constant-time) or 'ts' (pure TypeScript, table-based AES round), under
 * the policy of TSCRYPTFS_AEGIS (./mode.ts). The default is native when the
 * addon loaded, else TypeScript when the mode allows it, else AEGIS is
 * unavailable and every AEGIS object refuses to be made (code ENOTSUP).
 */
import { invalidArgument } from '../errors.js';
import { AEGIS_ENV, aegisMode, nativeAllowed, tsAllowed } from './mode.js';
import { aegisNativeBinding, aegisNativeStatus, type AegisNativeBinding } from './native.js';

export type AegisBackend = 'native' | 'ts';

export interface AegisAvailability {
  /** True when AEGIS can run here. */
  usable: boolean;
  /** The implementation used by default, when usable. */
  backend?: AegisBackend;
  /** Why AEGIS is unavailable, or why the TypeScript fallback is in use. */
  reason?: string;
}

/** True when the native addon is built, loads, this CPU has AES-NI, and TSCRYPTFS_AEGIS allows it. */
export function aegisNativeAvailable(): boolean {
  return nativeAllowed(aegisMode().mode) && aegisNativeBinding() !== null;
}

/** Whether AEGIS can run at all, with which implementation by default, and if not, why. */
export function aegisAvailability(): AegisAvailability {
  const { mode, invalid } = aegisMode();
  if (invalid !== undefined) return { usable: false, reason: invalid };
  if (mode === 'off') return { usable: false, reason: `AEGIS is disabled by ${AEGIS_ENV}=off` };
  if (aegisNativeAvailable()) return { usable: true, backend: 'native' };
  const nativeWhy = aegisNativeStatus().reason ?? 'unknown reason';
  if (tsAllowed(mode)) return { usable: true, backend: 'ts', reason: `native AEGIS unavailable (${nativeWhy})` };
  return {
    usable: false,
    reason: `the native AEGIS addon is unavailable (${nativeWhy}) and ${AEGIS_ENV}=${mode} disables the TypeScript fallback`,
  };
}

function unsupported(message: string): Error & { code: string } {
  const err = new Error(message) as Error & { code: string };
  err.code = 'ENOTSUP';
  return err;
}

/** The addon, or ENOTSUP naming the reason it is missing or not allowed. */
export function requireNative(): AegisNativeBinding {
  const { mode, invalid } = aegisMode();
  if (invalid !== undefined) throw unsupported(`AEGIS is not available: ${invalid}`);
  if (!nativeAllowed(mode)) throw unsupported(`native AEGIS backend disabled by ${AEGIS_ENV}=${mode}`);
  const b = aegisNativeBinding();
  if (b === null) throw unsupported(`native AEGIS backend unavailable: ${aegisNativeStatus().reason ?? 'unknown reason'}`);
  return b;
}

/**
 * The backend to use for a request: undefined means the default. Throws
 * EINVAL for an unknown name and ENOTSUP when the requested (or any)
 * implementation is not allowed or not there.
 */
export function resolveBackend(backend: AegisBackend | undefined): AegisBackend {
  if (backend === undefined) {
    const a = aegisAvailability();
    if (!a.usable) throw unsupported(`AEGIS is not available: ${a.reason}`);
    return a.backend!;
  }
  if (backend !== 'native' && backend !== 'ts') throw invalidArgument(`unknown AEGIS backend ${String(backend)}`);
  if (backend === 'native') {
    requireNative();
  } else {
    const { mode, invalid } = aegisMode();
    if (invalid !== undefined) throw unsupported(`AEGIS is not available: ${invalid}`);
    if (!tsAllowed(mode)) throw unsupported(`the TypeScript AEGIS implementation is disabled by ${AEGIS_ENV}=${mode}`);
  }
  return backend;
}
