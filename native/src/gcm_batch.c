/*
 * Batched AES-256-GCM for file content (FORMAT.md §4.4): many 4 KiB blocks
 * per call, each nonce(16) || ciphertext || tag(16), through the OpenSSL
 * that node itself exports (node links it statically and exports the EVP
 * symbols; the headers ship in <nodedir>/include/node/openssl). One cipher
 * context is reused for every block of a call, which is what per-block
 * createCipheriv() in JavaScript cannot do. The bytes are exactly those of
 * node:crypto and @noble/ciphers (tests compare them).
 */
#include <node_api.h>
#include <openssl/evp.h>
#include <string.h>

#define TAG 16
#define NONCE 16

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

/* One GCM message with a 16-byte IV; returns 1 on success (for open: the tag verified). */
static int gcm_one(EVP_CIPHER_CTX *ctx, int enc, const uint8_t *key, const uint8_t *iv, const uint8_t *aad, size_t aadlen,
                   const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag)
{
    int n = 0, fin = 0;
    if (EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc) != 1) return 0;
    if (aadlen && EVP_CipherUpdate(ctx, NULL, &n, aad, (int)aadlen) != 1) return 0;
    if (len && EVP_CipherUpdate(ctx, out, &n, in, (int)len) != 1) return 0;
    if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG, tag) != 1) return 0;
    if (EVP_CipherFinal_ex(ctx, out + n, &fin) != 1) return 0;
    if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG, tag) != 1) return 0;
    return 1;
}

static EVP_CIPHER_CTX *new_ctx(int enc)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx) return NULL;
    if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL, enc) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE, NULL) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* sealBlocks(key, nonces, plaintext, blockSize, aads, aadLen, out) */
static napi_value js_seal_blocks(napi_env env, napi_callback_info info)
{
    size_t argc = 7, keylen, nlen, ptlen, bs, aadslen, aadlen, outlen, nb, k, o;
    napi_value argv[7];
    uint8_t *key, *nonces, *pt, *aads, *out;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 7 || !get_bytes(env, argv[0], &key, &keylen) ||
        !get_bytes(env, argv[1], &nonces, &nlen) || !get_bytes(env, argv[2], &pt, &ptlen) || !get_size(env, argv[3], &bs) ||
        !get_bytes(env, argv[4], &aads, &aadslen) || !get_size(env, argv[5], &aadlen) || !get_bytes(env, argv[6], &out, &outlen))
        return throw_inval(env, "sealBlocks(key, nonces, plaintext, blockSize, aads, aadLen, out): bad argument");
    if (keylen != 32 || bs == 0 || bs > (1u << 30)) return throw_inval(env, "sealBlocks: key must be 32 bytes, blockSize > 0");
    nb = ptlen / bs + (ptlen % bs != 0);
    if (nlen != nb * NONCE || aadslen != nb * aadlen || outlen != ptlen + nb * (NONCE + TAG))
        return throw_inval(env, "sealBlocks: nonces, aads or out have the wrong length");
    EVP_CIPHER_CTX *ctx = new_ctx(1);
    if (!ctx) return throw_inval(env, "sealBlocks: OpenSSL context setup failed");
    for (k = 0, o = 0; k < nb; k++) {
        const size_t off = k * bs, len = ptlen - off < bs ? ptlen - off : bs;
        memcpy(out + o, nonces + k * NONCE, NONCE);
        if (!gcm_one(ctx, 1, key, nonces + k * NONCE, aads + k * aadlen, aadlen, pt + off, len, out + o + NONCE,
                     out + o + NONCE + len)) {
            EVP_CIPHER_CTX_free(ctx);
            return throw_inval(env, "sealBlocks: OpenSSL failed");
        }
        o += NONCE + len + TAG;
    }
    EVP_CIPHER_CTX_free(ctx);
    return NULL;
}

/* openBlocks(key, sealed, cipherBlockSize, aads, aadLen, out) -> -1, or the index of the first bad block (out zeroed) */
static napi_value js_open_blocks(napi_env env, napi_callback_info info)
{
    size_t argc = 6, keylen, slen, cbs, aadslen, aadlen, outlen, nb, k, last;
    napi_value argv[6], r;
    uint8_t *key, *sealed, *aads, *out;
    int64_t bad = -1;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 6 || !get_bytes(env, argv[0], &key, &keylen) ||
        !get_bytes(env, argv[1], &sealed, &slen) || !get_size(env, argv[2], &cbs) || !get_bytes(env, argv[3], &aads, &aadslen) ||
        !get_size(env, argv[4], &aadlen) || !get_bytes(env, argv[5], &out, &outlen))
        return throw_inval(env, "openBlocks(key, sealed, cipherBlockSize, aads, aadLen, out): bad argument");
    if (keylen != 32 || cbs <= NONCE + TAG || cbs > (1u << 30)) return throw_inval(env, "openBlocks: bad key or cipher block size");
    nb = slen / cbs + (slen % cbs != 0);
    last = nb ? slen - (nb - 1) * cbs : 0;
    if ((nb && last <= NONCE + TAG) || aadslen != nb * aadlen || slen != outlen + nb * (NONCE + TAG))
        return throw_inval(env, "openBlocks: sealed, aads or out have the wrong length");
    EVP_CIPHER_CTX *ctx = new_ctx(0);
    if (!ctx) return throw_inval(env, "openBlocks: OpenSSL context setup failed");
    for (k = 0; k < nb; k++) {
        const uint8_t *blk = sealed + k * cbs;
        const size_t len = (k + 1 < nb ? cbs : last) - NONCE - TAG;
        uint8_t tag[TAG];
        memcpy(tag, blk + NONCE + len, TAG);
        if (!gcm_one(ctx, 0, key, blk, aads + k * aadlen, aadlen, blk + NONCE, len, out + k * (cbs - NONCE - TAG), tag)) {
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
