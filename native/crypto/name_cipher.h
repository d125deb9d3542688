/*
 * File names on disk, as src/names/name-codec.ts makes them
 * (Documentation/format.md §7.4-§7.8): PKCS#7 padding to 16 bytes, EME
 * with AES-256 under the directory's IV, unpadded base64url, and for a
 * result longer than the long-name limit, gocryptfs.longname. and the
 * base64url of its SHA-256; and back, for the native listing.
 */
#ifndef TSCRYPTFS_NAME_CIPHER_H
#define TSCRYPTFS_NAME_CIPHER_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#define NAME_IV_LEN 16
/* A plaintext name of up to 255 bytes pads to at most 16 blocks. */
#define NAME_MAX_BLOCKS 16
/* The longest name on disk this makes: 16 blocks in base64url. */
#define NAME_DISK_MAX 344 /* 256 bytes: 342 characters unpadded, 344 padded */

struct name_key {
    uint8_t key[32];
    /* L_j = 2^(j+1) · AES(0^16), j = 0..NAME_MAX_BLOCKS-1 (rfjakob/eme's table). */
    uint8_t l[NAME_MAX_BLOCKS][16];
    size_t long_name_max; /* names on disk longer than this are hashed */
    int raw64;            /* unpadded base64url (Raw64); padded with '=' otherwise */
};

/* Fills `k` from the 32-byte EME key; 0 when OpenSSL fails. */
int name_key_init(struct name_key *k, const uint8_t *key, size_t long_name_max, int raw64);

/*
 * The name on disk of plaintext `name` (`len` bytes, 1..255) in a directory
 * whose IV is `iv`: written NUL-terminated to `out` (NAME_DISK_MAX + 1
 * bytes), with *is_long set when it is a long name's hash. `ctx` is an
 * AES-256-ECB encryption context under the key, without padding, owned by
 * the calling thread. Returns 0 when OpenSSL fails.
 */
int name_encrypt(EVP_CIPHER_CTX *ctx, const struct name_key *k, const uint8_t *iv, const uint8_t *name, size_t len, char *out, int *is_long);

/* A fresh AES-256-ECB encryption context for `k`, or NULL. */
EVP_CIPHER_CTX *name_ctx_new(const struct name_key *k);
/* A fresh AES-256-ECB decryption context for `k` (for name_decrypt), or NULL. */
EVP_CIPHER_CTX *name_dec_ctx_new(const struct name_key *k);

/*
 * The plaintext of name on disk `cname` (`clen` bytes, not hashed) in a
 * directory whose IV is `iv`, as src/names/name-codec.ts's decryptName
 * gives it: written to `out` (255 bytes) with its length in *len. Returns
 * 0 when it is no valid name (strict base64url, EME, PKCS#7 padding, no
 * NUL, '/', "." or ".."), or longer than NAME_MAX_BLOCKS blocks (a name
 * of more than 255 bytes, which decryptName refuses too). `dec` is a
 * context from name_dec_ctx_new, owned by the calling thread.
 */
int name_decrypt(EVP_CIPHER_CTX *dec, const struct name_key *k, const uint8_t *iv, const char *cname, size_t clen, uint8_t *out, size_t *len);

/* gocryptfs.longname. and the base64url of SHA-256(cname) (src/names/longnames.ts's hashLongName), NUL-terminated in `out`; 0 when OpenSSL fails. */
int name_long_hash(const char *cname, size_t len, int raw64, char *out);

#endif
