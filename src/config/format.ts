/**
 * The format settings of one cipher directory, as every lower layer needs
 * them. They come from the config's feature flags, or from command-line
 * flags when the config is bypassed with `-masterkey` (Documentation/format.md §4.3).
 */
import type { CipherName } from '../crypto/aead.js';
import { FLAG, type FeatureFlag } from './feature-flags.js';

export interface FormatOptions {
  /** Content cipher for file blocks, symlink targets and xattr values. */
  cipher: CipherName;
  /** Subkeys derived with HKDF (v1.3+); otherwise legacy key use. */
  hkdf: boolean;
  /** Names stored in clear. */
  plaintextNames: boolean;
  /** Per-directory IVs in gocryptfs.diriv; false = deterministic names. */
  dirIV: boolean;
  /** Unpadded base64 for names, symlink targets, long-name hashes. */
  raw64: boolean;
  /** Hash encrypted names longer than this (255 unless LongNameMax). */
  longNameMax: number;
  /** Long names enabled (the -longnames mount option, on by default). */
  longNames: boolean;
}

export const DEFAULT_LONGNAMEMAX = 255;

/** The content cipher a config's flags select; first match wins (format.md §3.5). */
function cipherFromFlags(has: (f: FeatureFlag) => boolean): CipherName {
  if (has(FLAG.XChaCha20Poly1305)) return 'xchacha';
  if (has(FLAG.AEGIS256X2)) return 'aegis';
  if (has(FLAG.AESSIV)) return 'aes-siv';
  return 'aes-gcm';
}

/** The settings of a config's feature flags. */
export function formatFromFlags(flags: readonly string[], longNameMax: number): FormatOptions {
  const has = (f: FeatureFlag): boolean => flags.includes(f);
  const plaintextNames = has(FLAG.PlaintextNames);
  return {
    cipher: cipherFromFlags(has),
    hkdf: has(FLAG.HKDF),
    plaintextNames,
    dirIV: !plaintextNames && has(FLAG.DirIV),
    raw64: has(FLAG.Raw64),
    longNameMax: longNameMax || DEFAULT_LONGNAMEMAX,
    longNames: !plaintextNames,
  };
}

/**
 * What `-init` writes for the given settings, in gocryptfs's order (format.md
 * §3.5; the aegis branch's configfile.Create sets AEGIS256X2 where
 * XChaCha20Poly1305 or else GCMIV128 would go).
 */
export function flagsFromFormat(f: FormatOptions): FeatureFlag[] {
  const flags: FeatureFlag[] = [];
  if (f.hkdf) flags.push(FLAG.HKDF);
  if (f.cipher === 'xchacha') flags.push(FLAG.XChaCha20Poly1305);
  else if (f.cipher === 'aegis') flags.push(FLAG.AEGIS256X2);
  else flags.push(FLAG.GCMIV128);
  if (f.plaintextNames) {
    flags.push(FLAG.PlaintextNames);
  } else {
    if (f.dirIV) flags.push(FLAG.DirIV);
    if (f.longNameMax !== DEFAULT_LONGNAMEMAX) flags.push(FLAG.LongNameMax);
    flags.push(FLAG.EMENames, FLAG.LongNames);
    if (f.raw64) flags.push(FLAG.Raw64);
  }
  if (f.cipher === 'aes-siv') flags.push(FLAG.AESSIV);
  return flags;
}

/**
 * The name gocryptfs -info prints for the content cipher (cryptocore's
 * AEADTypeEnum.Algo; the aegis branch's is "Aegis256X2").
 */
export function contentEncryptionName(cipher: CipherName): string {
  switch (cipher) {
    case 'aes-gcm':
      return 'AES-GCM-256';
    case 'aes-siv':
      return 'AES-SIV-512';
    case 'xchacha':
      return 'XChaCha20-Poly1305';
    case 'aegis':
      return 'Aegis256X2';
  }
}
