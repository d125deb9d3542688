/**
 * gocryptfs feature flags (Documentation/format.md §3.3, §3.4) and the validation rules that
 * gocryptfs 2.3 applies when it loads a config. A flag we do not know means
 * the directory was made by a newer program: refusing it is what keeps us
 * from damaging it.
 */
import { configError } from '../util/errors.js';

export const FLAG = {
  HKDF: 'HKDF',
  GCMIV128: 'GCMIV128',
  XChaCha20Poly1305: 'XChaCha20Poly1305',
  AESSIV: 'AESSIV',
  /** AEGIS-256X2 content encryption: gocryptfs's unmerged `aegis` branch (format.md §5.6). */
  AEGIS256X2: 'AEGIS256X2',
  PlaintextNames: 'PlaintextNames',
  DirIV: 'DirIV',
  LongNameMax: 'LongNameMax',
  EMENames: 'EMENames',
  LongNames: 'LongNames',
  Raw64: 'Raw64',
  FIDO2: 'FIDO2',
} as const;

export type FeatureFlag = (typeof FLAG)[keyof typeof FLAG];

/**
 * Every flag gocryptfs 2.3 knows plus the aegis branch's AEGIS256X2, in the
 * order `-init` writes them (AEGIS256X2 takes GCMIV128's place, like
 * XChaCha20Poly1305; AESSIV comes last).
 */
export const KNOWN_FLAGS: readonly FeatureFlag[] = [
  FLAG.HKDF,
  FLAG.GCMIV128,
  FLAG.XChaCha20Poly1305,
  FLAG.AEGIS256X2,
  FLAG.AESSIV,
  FLAG.PlaintextNames,
  FLAG.DirIV,
  FLAG.LongNameMax,
  FLAG.EMENames,
  FLAG.LongNames,
  FLAG.Raw64,
  FLAG.FIDO2,
];

/** Flags that cannot be combined with PlaintextNames (format.md §3.4, item 5). */
const PLAINTEXTNAMES_CONFLICTS: readonly FeatureFlag[] = [
  FLAG.EMENames,
  FLAG.DirIV,
  FLAG.LongNames,
  FLAG.Raw64,
  FLAG.LongNameMax,
];

export function isKnownFlag(flag: string): flag is FeatureFlag {
  return (KNOWN_FLAGS as readonly string[]).includes(flag);
}

/**
 * Applies gocryptfs's load-time checks (format.md §3.4, items 3–6), with
 * the aegis branch's rules for AEGIS256X2 (no GCMIV128, no
 * XChaCha20Poly1305; like the branch, HKDF is not checked here — deriving
 * the AEGIS key refuses a filesystem without it).
 * Throws ECONFIGINVALID with a one-line reason.
 */
export function validateFlags(flags: readonly string[], longNameMax: number): void {
  for (const f of flags) {
    if (!isKnownFlag(f)) {
      throw configError('ECONFIGINVALID', `unsupported feature flag "${f}" (made by a newer program?)`);
    }
  }
  const has = (f: FeatureFlag): boolean => flags.includes(f);
  if (has(FLAG.XChaCha20Poly1305) && has(FLAG.AESSIV)) {
    throw configError('ECONFIGINVALID', 'XChaCha20Poly1305 and AESSIV cannot be combined');
  }
  if (has(FLAG.AESSIV) && !has(FLAG.GCMIV128)) {
    throw configError('ECONFIGINVALID', 'AESSIV requires GCMIV128');
  }
  if (has(FLAG.XChaCha20Poly1305)) {
    if (!has(FLAG.HKDF)) throw configError('ECONFIGINVALID', 'XChaCha20Poly1305 requires HKDF');
    if (has(FLAG.GCMIV128)) throw configError('ECONFIGINVALID', 'XChaCha20Poly1305 conflicts with GCMIV128');
  }
  if (has(FLAG.AEGIS256X2)) {
    if (has(FLAG.GCMIV128)) throw configError('ECONFIGINVALID', 'AEGIS conflicts with GCMIV128 feature flag');
    if (has(FLAG.XChaCha20Poly1305)) throw configError('ECONFIGINVALID', 'AEGIS conflicts with XChaCha20Poly1305 feature flag');
  }
  if (!has(FLAG.XChaCha20Poly1305) && !has(FLAG.AEGIS256X2) && !has(FLAG.GCMIV128)) {
    throw configError(
      'ECONFIGINVALID',
      'GCMIV128 is missing: this filesystem uses 96-bit nonces (gocryptfs v0.6 or older) and is no longer supported',
    );
  }
  if (has(FLAG.PlaintextNames)) {
    for (const f of PLAINTEXTNAMES_CONFLICTS) {
      if (has(f)) throw configError('ECONFIGINVALID', `PlaintextNames conflicts with ${f}`);
    }
  }
  if (has(FLAG.LongNameMax) !== (longNameMax !== 0)) {
    throw configError('ECONFIGINVALID', 'the LongNameMax flag and the LongNameMax field must be set together');
  }
  if (longNameMax !== 0 && (longNameMax < 62 || longNameMax > 254)) {
    throw configError('ECONFIGINVALID', `LongNameMax ${longNameMax} is out of range 62..254`);
  }
}
