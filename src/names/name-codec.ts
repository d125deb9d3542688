/**
 * Encrypting and decrypting single name components and xattr names
 * (Documentation/format.md §7.3–§7.6, §8.2): PKCS#7 pad, EME with the directory IV as
 * tweak, URL-safe base64. Pure: no I/O (the IVs come from the caller).
 */
import type { Eme } from '../crypto/index.js';
import { b64Decode, b64Encode } from './b64.js';
import { hashLongName } from './longnames.js';
import { pad16, unpad16 } from './pad16.js';
import { invalidNameCode } from './valid-name.js';

/** The fixed EME tweak of xattr names: ASCII "xattr_name_iv_xx". */
export const XATTR_NAME_IV = Buffer.from('xattr_name_iv_xx', 'ascii');
export const XATTR_PREFIX = 'user.gocryptfs.';
/** ACL names are stored as they are (gocryptfs ≥ 2.0). */
export const XATTR_PASSTHROUGH: readonly string[] = ['system.posix_acl_access', 'system.posix_acl_default'];

/** EME handles at most 128 blocks. */
const EME_MAX = 2048;

export interface NameCodecOptions {
  raw64: boolean;
  longNameMax: number;
  longNames: boolean;
}

export class NameCodec {
  constructor(
    private readonly eme: Eme,
    readonly opts: NameCodecOptions,
  ) {}

  /** The encrypted (not yet hashed) form of a valid plaintext name. */
  encryptName(plain: Uint8Array, iv: Uint8Array): string {
    return b64Encode(this.eme.encrypt(iv, pad16(plain)), this.opts.raw64);
  }

  /**
   * The plaintext of an encrypted name, or null when it does not decrypt to
   * a valid name (such entries are hidden, never used as a path). Native
   * twin, for a mount's listings: name_decrypt in native/crypto/name_cipher.c.
   */
  decryptName(cname: string, iv: Uint8Array): Buffer | null {
    const ct = b64Decode(cname, this.opts.raw64);
    if (ct === null || ct.length === 0 || ct.length % 16 !== 0 || ct.length > EME_MAX) return null;
    const plain = unpad16(this.eme.decrypt(iv, ct));
    if (plain === null || invalidNameCode(plain) !== null) return null;
    return plain;
  }

  /** True when an encrypted name must be stored under its hash. */
  needsHash(cname: string): boolean {
    return this.opts.longNames && cname.length > this.opts.longNameMax;
  }

  /** The name stored on disk for an encrypted name: itself, or its long-name hash. */
  diskName(cname: string): string {
    return this.needsHash(cname) ? hashLongName(cname, this.opts.raw64) : cname;
  }

  /** Stored as "user.gocryptfs." + encryptName: native/fastpath/lookup.c (xattr_name_storable) mirrors its length. */
  encryptXattrName(name: string): string {
    if (XATTR_PASSTHROUGH.includes(name)) return name;
    return XATTR_PREFIX + this.encryptName(Buffer.from(name, 'utf8'), XATTR_NAME_IV);
  }

  /** Null for names that are not ours or do not decrypt (and for encrypted ACL names). */
  decryptXattrName(stored: string): string | null {
    if (XATTR_PASSTHROUGH.includes(stored)) return stored;
    if (!stored.startsWith(XATTR_PREFIX)) return null;
    const ct = b64Decode(stored.slice(XATTR_PREFIX.length), this.opts.raw64);
    if (ct === null || ct.length === 0 || ct.length % 16 !== 0 || ct.length > EME_MAX) return null;
    const plain = unpad16(this.eme.decrypt(XATTR_NAME_IV, ct));
    if (plain === null || plain.length === 0 || plain.includes(0)) return null;
    const name = plain.toString('utf8');
    return XATTR_PASSTHROUGH.includes(name) ? null : name;
  }
}
