/**
 * Which AEGIS implementations tscryptfs may use, from the environment
 * variable TSCRYPTFS_AEGIS:
 *
 *   auto    (default, also when unset or empty) the native addon when it
 *           loads, else the pure-TypeScript implementation;
 *   native  the native addon only: without it AEGIS is unavailable (for
 *           machines where the table-based TypeScript AES round is not
 *           acceptable, see ./aes-round.ts);
 *   ts      the TypeScript implementation only (the addon is not loaded);
 *   off     no AEGIS at all.
 *
 * Any other value makes AEGIS unavailable (a typo must not silently pick
 * an implementation). When AEGIS is unavailable, tscryptfs refuses AEGIS
 * cipher directories and `-init -aegis` with exit code 32.
 */

import type { SwitchName } from '../../util/switches.js';

export type AegisMode = 'auto' | 'native' | 'ts' | 'off';

export const AEGIS_ENV: SwitchName = 'TSCRYPTFS_AEGIS';

const MODES: readonly string[] = ['auto', 'native', 'ts', 'off'];

/** The mode, or an `invalid` explanation for an unknown value. */
export function aegisMode(): { mode: AegisMode; invalid?: string } {
  const raw = (process.env[AEGIS_ENV] ?? '').trim().toLowerCase();
  if (raw === '') return { mode: 'auto' };
  if (MODES.includes(raw)) return { mode: raw as AegisMode };
  return { mode: 'off', invalid: `${AEGIS_ENV}=${process.env[AEGIS_ENV]} is not one of auto, native, ts, off` };
}

/** True when the mode lets the native addon be loaded. */
export function nativeAllowed(mode: AegisMode): boolean {
  return mode === 'auto' || mode === 'native';
}

/** True when the mode lets the TypeScript implementation run. */
export function tsAllowed(mode: AegisMode): boolean {
  return mode === 'auto' || mode === 'ts';
}
