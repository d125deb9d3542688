/**
 * The draft's low-level `Encrypt(msg, ad, key, nonce)` / `Decrypt(...)` for
 * every AEGIS variant, with 16- or 32-byte tags, on either implementation.
 * tscryptfs itself uses the AEAD objects in ./aegis-aead.ts; these serve
 * the test vectors and cross-checks.
 */
import { authError } from '../aead.js';
import { requireBytes, requireNonce } from '../aead-checks.js';
import { invalidArgument, requireLength } from '../errors.js';
import { AegisEngine, type AegisTagLength } from './aegis-ts.js';
import { requireNative, resolveBackend, type AegisBackend } from './backend.js';
import { AEGIS_VARIANTS, type AegisVariant, type AegisVariantInfo } from './variants.js';

export interface AegisCiphertext {
  ciphertext: Uint8Array;
  tag: Uint8Array;
}

export function variantInfo(variant: AegisVariant): AegisVariantInfo {
  const v = AEGIS_VARIANTS[variant];
  if (v === undefined) throw invalidArgument(`unknown AEGIS variant ${String(variant)}`);
  return v;
}

function requireTagLength(tagLen: number): AegisTagLength {
  if (tagLen !== 16 && tagLen !== 32) throw invalidArgument(`AEGIS tag length must be 16 or 32, not ${tagLen}`);
  return tagLen;
}

/** One engine per variant (calls are synchronous, so sharing is safe). */
const engines = new Map<AegisVariant, AegisEngine>();
function engineFor(v: AegisVariantInfo): AegisEngine {
  let e = engines.get(v.name);
  if (e === undefined) {
    e = new AegisEngine(v.family, v.lanes);
    engines.set(v.name, e);
  }
  return e;
}

/** Low-level AEGIS encryption (any variant, 16- or 32-byte tag). */
export function aegisEncrypt(
  variant: AegisVariant,
  key: Uint8Array,
  nonce: Uint8Array,
  msg: Uint8Array,
  ad: Uint8Array,
  tagLen: number = 16,
  backend?: AegisBackend,
): AegisCiphertext {
  const v = variantInfo(variant);
  requireLength(key, v.keySize, `${v.title} key`);
  requireNonce(nonce, v.nonceSize, v.title);
  requireBytes(msg, 'message');
  requireBytes(ad, 'associated data');
  const t = requireTagLength(tagLen);
  const out = new Uint8Array(msg.length + t);
  if (resolveBackend(backend) === 'native') requireNative().seal(v.nativeId, key, nonce, msg, ad, out);
  else engineFor(v).encryptInto(key, nonce, msg, ad, t, out, 0);
  return { ciphertext: out.subarray(0, msg.length), tag: out.subarray(msg.length) };
}

/** Low-level AEGIS decryption; throws EAUTH when the tag does not verify. */
export function aegisDecrypt(
  variant: AegisVariant,
  key: Uint8Array,
  nonce: Uint8Array,
  ciphertext: Uint8Array,
  tag: Uint8Array,
  ad: Uint8Array,
  backend?: AegisBackend,
): Uint8Array {
  const v = variantInfo(variant);
  requireLength(key, v.keySize, `${v.title} key`);
  requireNonce(nonce, v.nonceSize, v.title);
  requireBytes(ciphertext, 'ciphertext');
  requireBytes(ad, 'associated data');
  requireLength(tag, [16, 32], `${v.title} tag`);
  const out = new Uint8Array(ciphertext.length);
  let ok: boolean;
  if (resolveBackend(backend) === 'native') {
    const sealed = new Uint8Array(ciphertext.length + tag.length);
    sealed.set(ciphertext);
    sealed.set(tag, ciphertext.length);
    ok = requireNative().open(v.nativeId, key, nonce, sealed, ad, out);
  } else {
    ok = engineFor(v).decryptInto(key, nonce, ciphertext, tag, ad, out, 0);
  }
  if (!ok) throw authError(`${v.title}: message authentication failed`);
  return out;
}
