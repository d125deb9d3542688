/** What Vault.init and Vault.open accept. */
import type { BackendName, CipherName } from '../crypto/aead.js';
import type { Logger } from '../util/logger.js';

/** A password as text (UTF-8) or raw bytes. */
export type Password = string | Uint8Array;

export interface VaultCommonOptions {
  /** Crypto implementation: 'node' (OpenSSL, default) or 'noble' (pure TypeScript). */
  backend?: BackendName;
  /** Where warnings about bad blocks and names go (default: stderr). */
  logger?: Logger;
  /** Refuse every change (EROFS). */
  readOnly?: boolean;
  /** Do not reserve space before writing blocks (gocryptfs -noprealloc; see prealloc.ts). */
  noPrealloc?: boolean;
  /**
   * Another program (a second mount, another machine) changes the cipher
   * directory at the same time (gocryptfs -sharedstorage): no directory is
   * remembered between calls, each call walks its path again, so a directory
   * removed or made again elsewhere is never reached through its old
   * descriptor or IV. Without it they are kept for a second.
   */
  sharedStorage?: boolean;
  /**
   * Glob patterns (gocryptfs -badname): entries whose names do not decrypt
   * but match one are listed, as the part that decrypts plus the rest and
   * " GOCRYPTFS_BAD_NAME", instead of being hidden.
   */
  badname?: readonly string[];
  /**
   * Hide sync conflict copies (names a sync tool renamed, and names under a
   * renamed gocryptfs.diriv) as gocryptfs does, instead of listing each
   * under a readable name of its own (Documentation/format.md §7.12).
   */
  noConflicts?: boolean;
}

/** The format settings chosen at -init (or given with -masterkey). */
export interface VaultFormatOptions {
  /** Content cipher (default 'aes-gcm'; `-aessiv`, `-xchacha`). */
  cipher?: CipherName;
  plaintextNames?: boolean;
  /** No per-directory IVs (`-deterministic-names`). */
  deterministicNames?: boolean;
  /** Hash encrypted names longer than this, 62..255 (default 255). */
  longNameMax?: number;
  /** Unpadded base64 (default true; `-raw64=false`). */
  raw64?: boolean;
  /** HKDF subkeys (default true; `-hkdf=false` makes a legacy filesystem). */
  hkdf?: boolean;
  /**
   * Hash names longer than LongNameMax into gocryptfs.longname.* files
   * (default true; false only for filesystems of gocryptfs v0.8 and older,
   * where such names are ENAMETOOLONG).
   */
  longNames?: boolean;
}

export interface VaultInitOptions extends VaultCommonOptions, VaultFormatOptions {
  password: Password;
  /** log2 of scrypt's N, 10..28 (default 16). */
  scryptLogN?: number;
  /** Config file path (default CIPHERDIR/gocryptfs.conf). */
  configPath?: string;
  /** The config's Creator field. */
  creator?: string;
}

export interface VaultPasswordOpenOptions extends VaultCommonOptions {
  password: Password;
  configPath?: string;
}

/**
 * Opening with the master key bypasses gocryptfs.conf entirely; the format
 * then comes from these options, as from gocryptfs's command-line flags.
 */
export interface VaultMasterKeyOpenOptions extends VaultCommonOptions, VaultFormatOptions {
  /** 32 bytes, or 64 hex digits (dashes allowed). */
  masterkey: Uint8Array | string;
}

export type VaultOpenOptions = VaultPasswordOpenOptions | VaultMasterKeyOpenOptions;

export function passwordBytes(p: Password): Uint8Array {
  return typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
}
