/**
 * AEGIS for tscryptfs (Documentation/format.md §5.6: gocryptfs's unmerged `aegis` branch
 * seals content blocks with AEGIS-256X2, 32-byte key, 32-byte nonce, 16-byte
 * tag, stored as nonce || ct || tag).
 *
 * Two implementations give identical bytes:
 *  - 'native': the C addon in `native/` (AES-NI, CPUID-checked, built at
 *    install time when a compiler is there), constant-time;
 *  - 'ts': pure TypeScript (./aegis-ts.ts) — ⚠ its AES round is
 *    TABLE-BASED and therefore not constant-time against cache-timing
 *    attackers (see ./aes-round.ts).
 * The default is 'native' when the addon loaded, else 'ts'; the
 * environment variable TSCRYPTFS_AEGIS (./mode.ts) can restrict either.
 *
 * Algorithm revision: draft-irtf-cfrg-aegis-aead as of its test vectors in
 * test/fixtures/aegis-vectors (context ctx[i] = Byte(i) || Byte(D-1) added
 * to V[3]/V[5] (256X) or V[3]/V[7] (128X) before every init update; lane
 * tags combined with XOR), which is what libaegis in go-libaegis v0.2.11
 * (gocryptfs's dependency) implements.
 *
 * Files: mode.ts (policy), native.ts (addon loader), backend.ts (choice),
 * aes-round.ts + aegis-ts.ts (TypeScript engine), functions.ts (the draft's
 * Encrypt/Decrypt), aegis-aead.ts (the AEADs), variants.ts, out-pool.ts.
 */
export { aesRound } from './aes-round.js';
export { AEGIS_VARIANTS, type AegisVariant, type AegisVariantInfo } from './variants.js';
export { aegisNativeStatus, type AegisNativeStatus } from './native.js';
export { AEGIS_ENV, aegisMode, type AegisMode } from './mode.js';
export { aegisAvailability, aegisNativeAvailable, type AegisAvailability, type AegisBackend } from './backend.js';
export type { AegisTagLength } from './aegis-ts.js';
export { aegisEncrypt, aegisDecrypt, type AegisCiphertext } from './functions.js';
export { Aegis256X2Aead, Aegis128X2Aead, createAegisAead, type AegisAead } from './aegis-aead.js';
