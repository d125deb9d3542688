/**
 * The crypto layer of tscryptfs: key derivation, the gocryptfs content
 * AEADs (AES-GCM, AES-SIV, XChaCha20-Poly1305 each with a node:crypto and a
 * @noble/ciphers backend; AEGIS-256X2 with a native addon and a TypeScript
 * implementation), EME for names, and the RFC building blocks they are made of.
 */
export { arithmeticInJs, authError, type Aead, type BackendName, type CipherName, type ImplementationName } from './aead.js';
export { createAead, AEGIS_KEY_SIZE, AEGIS_NONCE_SIZE, type CreateAeadOptions } from './create-aead.js';
export {
  Aegis256X2Aead,
  Aegis128X2Aead,
  createAegisAead,
  aegisAvailability,
  aegisNativeAvailable,
  aegisNativeStatus,
  aegisMode,
  AEGIS_ENV,
  type AegisAead,
  type AegisAvailability,
  type AegisBackend,
  type AegisMode,
  type AegisNativeStatus,
  type AegisVariant,
} from './aegis/index.js';
export { hkdfSha256, hkdfSha256Salted, HKDF_INFO } from './hkdf.js';
export { Eme, EME_KEY_SIZE, EME_TWEAK_SIZE, EME_MAX_BLOCKS } from './eme.js';
export { NodeAesGcm, NobleAesGcm, createAesGcm, AES_GCM_KEY_SIZE, AES_GCM_NONCE_SIZES } from './aes-gcm.js';
export { AesSivAead, AES_SIV_KEY_SIZE, AES_SIV_NONCE_SIZE } from './aes-siv.js';
export {
  NodeXChaCha20Poly1305,
  NobleXChaCha20Poly1305,
  createXChaCha20Poly1305,
  XCHACHA_KEY_SIZE,
  XCHACHA_NONCE_SIZE,
} from './xchacha.js';
export { hchacha20 } from './hchacha20.js';
export { Cmac, cmac, cmacPaddedLength } from './cmac.js';
export { S2v, s2v, S2V_MAX_INPUTS } from './s2v.js';
export { Siv, sivSeal, sivOpen, SIV_KEY_LENGTHS } from './siv.js';
export { AES_BLOCK, type AesBlockCipher } from './aes-block.js';
export { createAesBlockCipher } from './aes-block-factory.js';
export { dblBigEndian, dblLittleEndian } from './gf128.js';
export { constantTimeEqual } from './constant-time.js';
export { randomBytes, randomNonces } from './random.js';
export { invalidArgument, type InvalidArgumentError } from './errors.js';
export { measureSealThroughput, type SpeedOptions } from './speed.js';
