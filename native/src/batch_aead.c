/*
 * Batched AES-256-GCM and XChaCha20-Poly1305 for file content (FORMAT.md
 * §4.4, §4.6): many 4 KiB blocks per call, each nonce || ciphertext ||
 * tag(16), through the OpenSSL
 * that node itself exports (node links it statically and exports the EVP
 * symbols; the headers ship in <nodedir>/include/node/openssl). One cipher
 * context is reused for every block of a call, which is what per-block
 * createCipheriv() in JavaScript cannot do. The bytes are exactly those of
 * node:crypto and @noble/ciphers (tests compare them).
 */
#include <node_api.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>

#define TAG 16
#define NONCE 16
#define XNONCE 24

/* The two ciphers: AES-256-GCM with 16-byte IVs, or XChaCha20-Poly1305. */
enum { GCM = 0, XCHACHA = 1 };
static size_t nonce_len(int c) { return c == GCM ? NONCE : XNONCE; }

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

static napi_value throw_inval(napi_env env, const char *msg)
{
    napi_throw_error(env, "EINVAL", msg);
    return NULL;
}

static int get_bytes(napi_env env, napi_value v, uint8_t **p, size_t *len)
{
    bool is;
    if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
    napi_typedarray_type t;
    napi_value ab;
    size_t off;
    void *data;
    if (napi_get_typedarray_info(env, v, &t, len, &data, &ab, &off) != napi_ok || t != napi_uint8_array) return 0;
    *p = (uint8_t *)data;
    return 1;
}

static int get_size(napi_env env, napi_value v, size_t *out)
{
    int64_t x;
    if (napi_get_value_int64(env, v, &x) != napi_ok || x < 0) return 0;
    *out = (size_t)x;
    return 1;
}

/*
 * One message; returns 1 on success (for open: the tag verified). GCM takes
 * the 16-byte nonce as IV; XChaCha20-Poly1305 derives the subkey with
 * HChaCha20 and uses 00000000 || nonce[16:24] as the IETF nonce. For GCM,
 * `rekey` 0 keeps the key schedule already in `ctx` (the first block of a
 * run sets it; expanding it again per block cost a quarter of the time).
 */
static int aead_one(EVP_CIPHER_CTX *ctx, int c, int enc, int rekey, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad,
                    size_t aadlen, const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag)
{
    int n = 0, fin = 0, ok;
    uint8_t sub[32], iv12[12];
    if (c == GCM) {
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
    if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, TAG, tag) != 1) return 0;
    if (EVP_CipherFinal_ex(ctx, out + n, &fin) != 1) return 0;
    if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, TAG, tag) != 1) return 0;
    return 1;
}

static EVP_CIPHER_CTX *new_ctx(int c, int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) return NULL;
    if (EVP_CipherInit_ex(ctx, c == GCM ? EVP_aes_256_gcm() : EVP_chacha20_poly1305(), NULL, NULL, NULL, enc) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, c == GCM ? NONCE : 12, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

static int get_cipher(napi_env env, napi_value v, int *c)
{
    size_t x;
    if (!get_size(env, v, &x) || x > XCHACHA) return 0;
    *c = (int)x;
    return 1;
}

/* sealBlocks(cipher, key, nonces, plaintext, blockSize, aads, aadLen, out); cipher 0 = GCM, 1 = XChaCha */
static napi_value js_seal_blocks(napi_env env, napi_callback_info info)
{
    size_t argc = 8, keylen, nlen, ptlen, bs, aadslen, aadlen, outlen, nb, k, o, ns;
    napi_value argv[8];
    uint8_t *key, *nonces, *pt, *aads, *out;
    int c;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 8 || !get_cipher(env, argv[0], &c) ||
        !get_bytes(env, argv[1], &key, &keylen) || !get_bytes(env, argv[2], &nonces, &nlen) || !get_bytes(env, argv[3], &pt, &ptlen) ||
        !get_size(env, argv[4], &bs) || !get_bytes(env, argv[5], &aads, &aadslen) || !get_size(env, argv[6], &aadlen) ||
        !get_bytes(env, argv[7], &out, &outlen))
        return throw_inval(env, "sealBlocks(cipher, key, nonces, plaintext, blockSize, aads, aadLen, out): bad argument");
    if (keylen != 32 || bs == 0 || bs > (1u << 30)) return throw_inval(env, "sealBlocks: key must be 32 bytes, blockSize > 0");
    ns = nonce_len(c);
    nb = ptlen / bs + (ptlen % bs != 0);
    if (nlen != nb * ns || aadslen != nb * aadlen || outlen != ptlen + nb * (ns + TAG))
        return throw_inval(env, "sealBlocks: nonces, aads or out have the wrong length");
    EVP_CIPHER_CTX *ctx = new_ctx(c, 1);
    if (!ctx) return throw_inval(env, "sealBlocks: OpenSSL context setup failed");
    for (k = 0, o = 0; k < nb; k++) {
        const size_t off = k * bs, len = ptlen - off < bs ? ptlen - off : bs;
        memcpy(out + o, nonces + k * ns, ns);
        if (!aead_one(ctx, c, 1, k == 0, key, nonces + k * ns, aads + k * aadlen, aadlen, pt + off, len, out + o + ns, out + o + ns + len)) {
            EVP_CIPHER_CTX_free(ctx);
            return throw_inval(env, "sealBlocks: OpenSSL failed");
        }
        o += ns + len + TAG;
    }
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
}

/* openBlocks(cipher, key, sealed, cipherBlockSize, aads, aadLen, out) -> -1, or the first bad block (out zeroed) */
static napi_value js_open_blocks(napi_env env, napi_callback_info info)
{
    size_t argc = 7, keylen, slen, cbs, aadslen, aadlen, outlen, nb, k, last, ns;
    napi_value argv[7], r;
    uint8_t *key, *sealed, *aads, *out;
    int64_t bad = -1;
    int c;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 7 || !get_cipher(env, argv[0], &c) ||
        !get_bytes(env, argv[1], &key, &keylen) || !get_bytes(env, argv[2], &sealed, &slen) || !get_size(env, argv[3], &cbs) ||
        !get_bytes(env, argv[4], &aads, &aadslen) || !get_size(env, argv[5], &aadlen) || !get_bytes(env, argv[6], &out, &outlen))
        return throw_inval(env, "openBlocks(cipher, key, sealed, cipherBlockSize, aads, aadLen, out): bad argument");
    ns = nonce_len(c);
    if (keylen != 32 || cbs <= ns + TAG || cbs > (1u << 30)) return throw_inval(env, "openBlocks: bad key or cipher block size");
    nb = slen / cbs + (slen % cbs != 0);
    last = nb ? slen - (nb - 1) * cbs : 0;
    if ((nb && last <= ns + TAG) || aadslen != nb * aadlen || slen != outlen + nb * (ns + TAG))
        return throw_inval(env, "openBlocks: sealed, aads or out have the wrong length");
    EVP_CIPHER_CTX *ctx = new_ctx(c, 0);
    if (!ctx) return throw_inval(env, "openBlocks: OpenSSL context setup failed");
    for (k = 0; k < nb; k++) {
        const uint8_t *blk = sealed + k * cbs;
        const size_t len = (k + 1 < nb ? cbs : last) - ns - TAG;
        uint8_t tag[TAG];
        memcpy(tag, blk + ns + len, TAG);
        if (!aead_one(ctx, c, 0, k == 0, key, blk, aads + k * aadlen, aadlen, blk + ns, len, out + k * (cbs - ns - TAG), tag)) {
            bad = (int64_t)k;
            memset(out, 0, outlen);
            break;
        }
    }
    EVP_CIPHER_CTX_free(ctx);
    if (napi_create_int64(env, bad, &r) != napi_ok) return NULL;
    return r;
}

NAPI_MODULE_INIT()
{
    napi_value f;
    if (napi_create_function(env, "sealBlocks", NAPI_AUTO_LENGTH, js_seal_blocks, NULL, &f) != napi_ok ||
        napi_set_named_property(env, exports, "sealBlocks", f) != napi_ok ||
        napi_create_function(env, "openBlocks", NAPI_AUTO_LENGTH, js_open_blocks, NULL, &f) != napi_ok ||
        napi_set_named_property(env, exports, "openBlocks", f) != napi_ok)
        return NULL;
    return exports;
}
