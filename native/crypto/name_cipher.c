/*
 * Names on disk for the native lookup (name_cipher.h). EME is Halevi and
 * Rogaway's ECB-Mix-ECB as github.com/rfjakob/eme implements it, with the
 * little-endian doubling of the EME-32 draft; src/crypto/eme.ts is the
 * same computation in TypeScript, and the unit tests hold the two to the
 * same bytes (test/unit/native-names.test.ts).
 */
#include "name_cipher.h"
#include <openssl/crypto.h>
#include <string.h>

#define LONGNAME_PREFIX "gocryptfs.longname."

/* out = 2·in in GF(2^128), little-endian (rfjakob/eme multByTwo); out may be in. */
static void dbl(uint8_t *out, const uint8_t *in)
{
    const uint8_t carry = in[15] >> 7;
    for (int j = 15; j > 0; j--) out[j] = (uint8_t)(in[j] << 1 | in[j - 1] >> 7);
    out[0] = (uint8_t)(in[0] << 1) ^ (carry ? 135 : 0);
}

static int aes_blocks(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    int n = 0;
    return EVP_EncryptUpdate(ctx, out, &n, in, (int)len) == 1 && (size_t)n == len;
}

EVP_CIPHER_CTX *name_ctx_new(const struct name_key *k)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) return NULL;
    if (EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), NULL, k->key, NULL) != 1 || EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int name_key_init(struct name_key *k, const uint8_t *key, size_t long_name_max, int raw64)
{
    memcpy(k->key, key, 32);
    k->long_name_max = long_name_max;
    k->raw64 = raw64;
    EVP_CIPHER_CTX *ctx = name_ctx_new(k);
    if (!ctx) return 0;
    uint8_t l[16] = {0};
    const int ok = aes_blocks(ctx, l, l, 16);
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) return 0;
    for (int j = 0; j < NAME_MAX_BLOCKS; j++) {
        dbl(l, l);
        memcpy(k->l[j], l, 16);
    }
    OPENSSL_cleanse(l, sizeof l);
    return 1;
}

/* EME encryption of `n` blocks (1..NAME_MAX_BLOCKS) under tweak `t`, from p to c (src/crypto/eme.ts). */
static int eme_encrypt(EVP_CIPHER_CTX *ctx, const struct name_key *k, const uint8_t *t, const uint8_t *p, size_t n, uint8_t *c)
{
    uint8_t ppp[NAME_MAX_BLOCKS * 16], mp[16], mc[16], m[16], ccc0[16];
    const size_t len = n * 16;
    for (size_t i = 0; i < len; i++) ppp[i] = p[i] ^ k->l[i / 16][i % 16];
    if (!aes_blocks(ctx, ppp, ppp, len)) return 0;
    memcpy(mp, t, 16);
    for (size_t o = 0; o < len; o += 16)
        for (int i = 0; i < 16; i++) mp[i] ^= ppp[o + i];
    if (!aes_blocks(ctx, mc, mp, 16)) return 0;
    for (int i = 0; i < 16; i++) {
        m[i] = mp[i] ^ mc[i];
        ccc0[i] = mc[i] ^ t[i];
    }
    for (size_t o = 16; o < len; o += 16) {
        dbl(m, m);
        for (int i = 0; i < 16; i++) {
            ppp[o + i] ^= m[i];
            ccc0[i] ^= ppp[o + i];
        }
    }
    memcpy(ppp, ccc0, 16);
    if (!aes_blocks(ctx, c, ppp, len)) return 0;
    for (size_t i = 0; i < len; i++) c[i] ^= k->l[i / 16][i % 16];
    return 1;
}

/* base64url of `len` bytes, padded with '=' unless raw; NUL-terminated; returns its length. */
static size_t b64url(const uint8_t *in, size_t len, int raw, char *out)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        const uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = abc[v >> 18];
        out[o++] = abc[v >> 12 & 63];
        out[o++] = abc[v >> 6 & 63];
        out[o++] = abc[v & 63];
    }
    if (i < len) {
        const uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);
        out[o++] = abc[v >> 18];
        out[o++] = abc[v >> 12 & 63];
        if (i + 1 < len) out[o++] = abc[v >> 6 & 63];
        else if (!raw) out[o++] = '=';
        if (!raw) out[o++] = '=';
    }
    out[o] = 0;
    return o;
}

int name_encrypt(EVP_CIPHER_CTX *ctx, const struct name_key *k, const uint8_t *iv, const uint8_t *name, size_t len, char *out, int *is_long)
{
    if (len == 0 || len > NAME_MAX_BLOCKS * 16 - 1) return 0;
    uint8_t p[NAME_MAX_BLOCKS * 16], c[NAME_MAX_BLOCKS * 16];
    const size_t pad = 16 - len % 16, n = (len + pad) / 16;
    memcpy(p, name, len);
    memset(p + len, (int)pad, pad);
    if (!eme_encrypt(ctx, k, iv, p, n, c)) return 0;
    const size_t clen = b64url(c, n * 16, k->raw64, out);
    *is_long = clen > k->long_name_max;
    if (!*is_long) return 1;
    uint8_t h[32];
    unsigned int hlen = 0;
    if (EVP_Digest(out, clen, h, &hlen, EVP_sha256(), NULL) != 1 || hlen != 32) return 0;
    memcpy(out, LONGNAME_PREFIX, sizeof LONGNAME_PREFIX - 1);
    b64url(h, 32, k->raw64, out + sizeof LONGNAME_PREFIX - 1);
    return 1;
}
