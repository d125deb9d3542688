/*
 * Names on disk for the native lookup and listing (name_cipher.h). EME is Halevi and
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

/* AES-256-ECB of `len` bytes in the context's direction (encryption or decryption). */
static int aes_blocks(EVP_CIPHER_CTX *ctx, uint8_t *out, const uint8_t *in, size_t len)
{
    int n = 0;
    return EVP_CipherUpdate(ctx, out, &n, in, (int)len) == 1 && (size_t)n == len;
}

/* An AES-256-ECB context under k's key without padding: encrypting when `enc`, else decrypting. */
static EVP_CIPHER_CTX *ecb_ctx_new(const struct name_key *k, int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) return NULL;
    if (EVP_CipherInit_ex(ctx, EVP_aes_256_ecb(), NULL, k->key, NULL, enc) != 1 || EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

EVP_CIPHER_CTX *name_ctx_new(const struct name_key *k) { return ecb_ctx_new(k, 1); }

EVP_CIPHER_CTX *name_dec_ctx_new(const struct name_key *k) { return ecb_ctx_new(k, 0); }

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

/*
 * One EME pass over `n` blocks (1..NAME_MAX_BLOCKS) under tweak `t`, from
 * p to c (src/crypto/eme.ts): encryption with an encrypting context, its
 * inverse with a decrypting one (the L table stays AES-encryption-based,
 * as in rfjakob/eme's Transform).
 */
static int eme_transform(EVP_CIPHER_CTX *ctx, const struct name_key *k, const uint8_t *t, const uint8_t *p, size_t n, uint8_t *c)
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
    if (!eme_transform(ctx, k, iv, p, n, c)) return 0;
    const size_t clen = b64url(c, n * 16, k->raw64, out);
    *is_long = clen > k->long_name_max;
    if (!*is_long) return 1;
    char full[NAME_DISK_MAX + 1];
    memcpy(full, out, clen + 1);
    return name_long_hash(full, clen, k->raw64, out);
}

int name_long_hash(const char *cname, size_t len, int raw64, char *out)
{
    uint8_t h[32];
    unsigned int hlen = 0;
    if (EVP_Digest(cname, len, h, &hlen, EVP_sha256(), NULL) != 1 || hlen != 32) return 0;
    memcpy(out, LONGNAME_PREFIX, sizeof LONGNAME_PREFIX - 1);
    b64url(h, 32, raw64, out + sizeof LONGNAME_PREFIX - 1);
    return 1;
}

/* The value of base64url character `c`, or -1. */
static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

/*
 * Decodes base64url strictly (src/names/b64.ts's b64Decode): the canonical
 * encoding only, padded with '=' unless raw, so that two names on disk
 * never decode to the same bytes. Returns the byte count, or -1.
 */
static long b64url_decode(const char *s, size_t len, int raw, uint8_t *out, size_t cap)
{
    size_t pad = 0;
    if (!raw) {
        if (len % 4 != 0) return -1;
        while (pad < 2 && pad < len && s[len - 1 - pad] == '=') pad++;
        len -= pad;
    }
    if (len % 4 == 1) return -1;
    if (!raw && pad != (4 - len % 4) % 4) return -1;
    const size_t n = len / 4 * 3 + (len % 4 == 0 ? 0 : len % 4 - 1);
    if (n > cap) return -1;
    size_t o = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        const int v = b64val(s[i]);
        if (v < 0) return -1;
        acc = acc << 6 | (uint32_t)v;
        if (i % 4 == 3) {
            out[o++] = (uint8_t)(acc >> 16);
            out[o++] = (uint8_t)(acc >> 8);
            out[o++] = (uint8_t)acc;
            acc = 0;
        }
    }
    /* A tail of 2 or 3 characters; its unused low bits must be zero (canonical). */
    if (len % 4 == 2) {
        if (acc & 0xf) return -1;
        out[o++] = (uint8_t)(acc >> 4);
    } else if (len % 4 == 3) {
        if (acc & 0x3) return -1;
        out[o++] = (uint8_t)(acc >> 10);
        out[o++] = (uint8_t)(acc >> 2);
    }
    return (long)o;
}

int name_decrypt(EVP_CIPHER_CTX *dec, const struct name_key *k, const uint8_t *iv, const char *cname, size_t clen, uint8_t *out, size_t *len)
{
    uint8_t c[NAME_MAX_BLOCKS * 16], p[NAME_MAX_BLOCKS * 16];
    const long n = b64url_decode(cname, clen, k->raw64, c, sizeof c);
    if (n <= 0 || n % 16 != 0) return 0;
    if (!eme_transform(dec, k, iv, c, (size_t)n / 16, p)) return 0;
    /* PKCS#7 (src/names/pad16.ts): 1..16 bytes of its own value, at least one byte of name before them */
    const uint8_t pad = p[n - 1];
    if (pad < 1 || pad > 16 || pad >= n) return 0;
    for (long i = n - pad; i < n; i++)
        if (p[i] != pad) return 0;
    const size_t m = (size_t)(n - pad);
    /* a valid name (src/names/valid-name.ts): not "." or "..", no NUL or '/'; at most 255 bytes, as 16 blocks allow */
    if ((m == 1 && p[0] == '.') || (m == 2 && p[0] == '.' && p[1] == '.')) return 0;
    for (size_t i = 0; i < m; i++)
        if (p[i] == 0 || p[i] == '/') return 0;
    memcpy(out, p, m);
    *len = m;
    OPENSSL_cleanse(p, sizeof p);
    return 1;
}
