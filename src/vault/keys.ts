/**
 * From the master key to the objects that do the work (Documentation/format.md §4.5, §4.6):
 * the EME name cipher and the content AEAD, with HKDF subkeys or, for
 * pre-v1.3 filesystems, the legacy key use. With `backend` 'node' an AEGIS
 * filesystem uses the native addon when available (else TypeScript); with
 * 'noble' the TypeScript AEGIS. When no AEGIS implementation may run
 * (TSCRYPTFS_AEGIS) deriving an AEGIS filesystem's ciphers fails with ENOTSUP.
 */
import { createHash } from 'node:crypto';
import type { BackendName } from '../crypto/aead.js';
import { createAead } from '../crypto/create-aead.js';
import { Eme } from '../crypto/eme.js';
import { hkdfSha256, HKDF_INFO } from '../crypto/hkdf.js';
import type { FormatOptions } from '../config/format.js';
import { ContentCipher } from '../content/index.js';
import { NameCodec } from '../names/index.js';
import { fsError } from '../util/errors.js';

export interface VaultCiphers {
  content: ContentCipher;
  /** Null in plaintext-names mode for file names; xattr names always use `xattrNames`. */
  names: NameCodec | null;
  xattrNames: NameCodec;
}

/** A content cipher and its key, for a mount's native read path (native/fastpath/read.c). */
export interface NativeContentKey {
  cipher: 'aes-gcm' | 'xchacha' | 'aegis';
  key: Uint8Array;
}

/**
 * The content key for the native read path, freshly derived (the caller
 * wipes it once handed over): AES-256-GCM with 16-byte nonces,
 * XChaCha20-Poly1305 or AEGIS-256X2, on the OpenSSL backend only; null
 * otherwise. (Whether AEGIS can be read natively is the reader's to say: it
 * needs the AEGIS addon.)
 */
export function nativeContentKey(masterKey: Uint8Array, f: FormatOptions, backend: BackendName = 'node'): NativeContentKey | null {
  if (backend !== 'node' || f.cipher === 'aes-siv') return null;
  const key = contentKey(masterKey, f);
  return { cipher: f.cipher, key: key === masterKey ? Uint8Array.from(key) : key };
}

function contentKey(masterKey: Uint8Array, f: FormatOptions): Uint8Array {
  switch (f.cipher) {
    case 'aes-gcm':
      return f.hkdf ? hkdfSha256(masterKey, HKDF_INFO.gcm, 32) : masterKey;
    case 'aes-siv':
      return f.hkdf ? hkdfSha256(masterKey, HKDF_INFO.siv, 64) : createHash('sha512').update(masterKey).digest();
    case 'xchacha':
      if (!f.hkdf) throw fsError('EINVAL', undefined, undefined, 'XChaCha20-Poly1305 requires HKDF');
      return hkdfSha256(masterKey, HKDF_INFO.xchacha, 32);
    case 'aegis':
      // The aegis branch reuses the AES-GCM info string (format.md §4.5, §5.6).
      if (!f.hkdf) throw fsError('EINVAL', undefined, undefined, 'AEGIS-256X2 requires HKDF');
      return hkdfSha256(masterKey, HKDF_INFO.gcm, 32);
  }
}

/** The name key and settings for a mount's native lookup (native/fastpath/lookup.c). */
export interface NativeNameKey {
  key: Uint8Array;
  longNameMax: number;
  raw64: boolean;
}

/**
 * The EME key for the native lookup, freshly derived (the caller wipes it
 * once handed over); null unless names are encrypted with per-directory
 * IVs and long names on, on the OpenSSL backend, which is what the native
 * lookup implements.
 */
export function nativeNameKey(masterKey: Uint8Array, f: FormatOptions, backend: BackendName = 'node'): NativeNameKey | null {
  if (backend !== 'node' || f.plaintextNames || !f.dirIV || !f.longNames) return null;
  const key = f.hkdf ? hkdfSha256(masterKey, HKDF_INFO.eme, 32) : Uint8Array.from(masterKey);
  return { key, longNameMax: f.longNameMax, raw64: f.raw64 };
}

export async function deriveCiphers(masterKey: Uint8Array, f: FormatOptions, backend: BackendName = 'node'): Promise<VaultCiphers> {
  const emeKey = f.hkdf ? hkdfSha256(masterKey, HKDF_INFO.eme, 32) : masterKey;
  const cKey = contentKey(masterKey, f);
  let eme: Eme;
  let content: ContentCipher;
  try {
    eme = new Eme(emeKey, backend);
    content = new ContentCipher(await createAead(f.cipher, cKey, { backend }));
  } finally {
    // The cipher objects keep their own copies (KeyObjects or private arrays); wipe the subkeys we derived.
    if (emeKey !== masterKey) emeKey.fill(0);
    if (cKey !== masterKey) cKey.fill(0);
  }
  const codecOpts = { raw64: f.raw64, longNameMax: f.longNameMax, longNames: f.longNames };
  const xattrNames = new NameCodec(eme, codecOpts);
  return { content, names: f.plaintextNames ? null : xattrNames, xattrNames };
}
