/**
 * One ciphertext||tag message through node:crypto's AEAD ciphers
 * (aes-256-gcm, chacha20-poly1305): the calls both OpenSSL backends make.
 */
import { createCipheriv, createDecipheriv, type CipherKey } from 'node:crypto';
import { authError } from './aead.js';
import { TAG_SIZE } from './aead-checks.js';

type NodeAeadAlgorithm = 'aes-256-gcm' | 'chacha20-poly1305';

export function nodeAeadSeal(algo: NodeAeadAlgorithm, key: CipherKey, iv: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Buffer {
  const c = createCipheriv(algo as 'aes-256-gcm', key, iv, { authTagLength: TAG_SIZE });
  c.setAAD(aad, { plaintextLength: plaintext.length });
  const ct = c.update(plaintext);
  c.final(); // stream modes: nothing is held back
  return Buffer.concat([ct, c.getAuthTag()], ct.length + TAG_SIZE);
}

/** Opens ciphertext||tag; throws authError() (plaintext wiped) when the tag does not verify. */
export function nodeAeadOpen(algo: NodeAeadAlgorithm, key: CipherKey, iv: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Buffer {
  const split = sealed.length - TAG_SIZE;
  const d = createDecipheriv(algo as 'aes-256-gcm', key, iv, { authTagLength: TAG_SIZE });
  d.setAAD(aad, { plaintextLength: split });
  d.setAuthTag(sealed.subarray(split));
  const pt = d.update(sealed.subarray(0, split));
  try {
    d.final();
  } catch {
    pt.fill(0);
    throw authError();
  }
  return pt;
}
