/*
 * One 4 KiB content block of AES-256-GCM (16-byte IV) or
 * XChaCha20-Poly1305 through the OpenSSL that node exports
 * (Documentation/format.md §5.3, §5.5). Shared by the batch calls
 * (batch_aead.c) and a mount's native read path (reader.c).
 */
#ifndef TSCRYPTFS_AEAD_BLOCK_H
#define TSCRYPTFS_AEAD_BLOCK_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#define AEAD_TAG 16

/* The two ciphers: AES-256-GCM with 16-byte IVs, or XChaCha20-Poly1305. */
enum { AEAD_GCM = 0, AEAD_XCHACHA = 1 };

/* Nonce bytes in front of each sealed block: 16 for GCM, 24 for XChaCha. */
size_t aead_nonce_len(int c);

/* A context for `c`, encrypting (enc 1) or decrypting (enc 0); NULL on failure. */
EVP_CIPHER_CTX *aead_new_ctx(int c, int enc);

/*
 * One message; returns 1 on success (for open: the tag verified). GCM takes
 * the 16-byte nonce as IV; XChaCha20-Poly1305 derives the subkey with
 * HChaCha20 and uses 00000000 || nonce[16:24] as the IETF nonce. For GCM,
 * `rekey` 0 keeps the key schedule already in `ctx`.
 */
int aead_one(EVP_CIPHER_CTX *ctx, int c, int enc, int rekey, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad,
             size_t aadlen, const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag);

#endif
