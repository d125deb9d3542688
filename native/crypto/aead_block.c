/* See aead_block.h. */
#include "aead_block.h"
#include <openssl/crypto.h>
#include <string.h>

size_t aead_nonce_len(int c) { return c == AEAD_GCM ? 16 : 24; }

#define ROTL(a, b) (((a) << (b)) | ((a) >> (32 - (b))))
#define QR(a, b, c, d) (a += b, d ^= a, d = ROTL(d, 16), c += d, b ^= c, b = ROTL(b, 12), \
                        a += b, d ^= a, d = ROTL(d, 8), c += d, b ^= c, b = ROTL(b, 7))

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void st32(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24); }

/* HChaCha20 (draft-irtf-cfrg-xchacha §2.2): the subkey for nonce[0:16]. */
static void hchacha20(uint8_t out[32], const uint8_t key[32], const uint8_t n16[16])
{
    uint32_t x[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    int i;
    for (i = 0; i < 8; i++) x[4 + i] = le32(key + 4 * i);
    for (i = 0; i < 4; i++) x[12 + i] = le32(n16 + 4 * i);
    for (i = 0; i < 10; i++) {
        QR(x[0], x[4], x[8], x[12]); QR(x[1], x[5], x[9], x[13]); QR(x[2], x[6], x[10], x[14]); QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]); QR(x[1], x[6], x[11], x[12]); QR(x[2], x[7], x[8], x[13]); QR(x[3], x[4], x[9], x[14]);
    }
    for (i = 0; i < 4; i++) { st32(out + 4 * i, x[i]); st32(out + 16 + 4 * i, x[12 + i]); }
    for (i = 0; i < 16; i++) x[i] = 0;
}

int aead_one(EVP_CIPHER_CTX *ctx, int c, int enc, int rekey, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad,
             size_t aadlen, const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag)
{
    int n = 0, fin = 0, ok;
    uint8_t sub[32], iv12[12];
    if (c == AEAD_GCM) {
        ok = EVP_CipherInit_ex(ctx, NULL, NULL, rekey ? key : NULL, nonce, enc) == 1;
    } else {
        hchacha20(sub, key, nonce);
        memset(iv12, 0, 4);
        memcpy(iv12 + 4, nonce + 16, 8);
        ok = EVP_CipherInit_ex(ctx, NULL, NULL, sub, iv12, enc) == 1;
        OPENSSL_cleanse(sub, sizeof sub);
    }
    if (!ok) return 0;
    if (aadlen && EVP_CipherUpdate(ctx, NULL, &n, aad, (int)aadlen) != 1) return 0;
    if (len && EVP_CipherUpdate(ctx, out, &n, in, (int)len) != 1) return 0;
    if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, AEAD_TAG, tag) != 1) return 0;
    if (EVP_CipherFinal_ex(ctx, out + n, &fin) != 1) return 0;
    if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, AEAD_TAG, tag) != 1) return 0;
    return 1;
}

EVP_CIPHER_CTX *aead_new_ctx(int c, int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) return NULL;
    if (EVP_CipherInit_ex(ctx, c == AEAD_GCM ? EVP_aes_256_gcm() : EVP_chacha20_poly1305(), NULL, NULL, NULL, enc) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, c == AEAD_GCM ? 16 : 12, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

