/**
 * Exit code 32 ("Aegis", gocryptfs's aegis branch): AEGIS was asked for —
 * `-init -aegis`, or mounting an AEGIS256X2 filesystem — but this
 * tscryptfs cannot run it: the native addon is missing and the TypeScript
 * fallback is disabled, or TSCRYPTFS_AEGIS=off (src/crypto/aegis/mode.ts).
 * With the default TSCRYPTFS_AEGIS=auto, AEGIS always works.
 */
import type { CipherName } from '../crypto/index.js';
// The module itself, not the crypto barrel, which would load every cipher
// into commands that only read a config.
import { aegisAvailability } from '../crypto/aegis/backend.js';
import { CliError, EXIT } from './exit-codes.js';

/** Throws CliError(32) with a one-line reason when `cipher` is AEGIS and AEGIS cannot run here. */
export function requireAegisIfUsed(cipher: CipherName): void {
  if (cipher !== 'aegis') return;
  const a = aegisAvailability();
  if (!a.usable) throw new CliError(EXIT.Aegis, `AEGIS-256X2 is not available: ${a.reason}`);
}
