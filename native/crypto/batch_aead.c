/*
 * Batched AES-256-GCM and XChaCha20-Poly1305 for file content
 * (Documentation/format.md §5.3, §5.5): many 4 KiB blocks per call, each
 * nonce || ciphertext || tag(16), through the OpenSSL
 * that node itself exports (node links it statically and exports the EVP
 * symbols; the headers ship in <nodedir>/include/node/openssl). One cipher
 * context is reused for every block of a call, which is what per-block
 * createCipheriv() in JavaScript cannot do. The bytes are exactly those of
 * node:crypto and @noble/ciphers (tests compare them).
 */
#include <node_api.h>
#include "aead_block.h"
#include "shared_job.h"
#include "scrypt_smix.h"
#include "napi_args.h"
#include <string.h>

#define TAG AEAD_TAG
#define GCM AEAD_GCM
#define XCHACHA AEAD_XCHACHA

static int get_cipher(napi_env env, napi_value v, int *c)
{
    size_t x;
    if (!get_size(env, v, &x) || x > XCHACHA) return 0;
    *c = (int)x;
    return 1;
}

/* One call's blocks, sealed in chunks of SEAL_CHUNK by the caller and any thread that assists (shared_job.h). */
#define SEAL_CHUNK 4
struct seal_job {
    int c;
    const uint8_t *key, *nonces, *pt, *aads;
    size_t ptlen, bs, aadlen, ns, nb;
    uint8_t *out;
};

static void drop_ctx(void *ctx) { EVP_CIPHER_CTX_free(ctx); }

static int seal_chunk(void *arg, size_t i, void **scratch)
{
    const struct seal_job *j = arg;
    const size_t first = i * SEAL_CHUNK, end = first + SEAL_CHUNK < j->nb ? first + SEAL_CHUNK : j->nb;
    if (!*scratch && !(*scratch = aead_new_ctx(j->c, 1))) return 0;
    for (size_t k = first; k < end; k++) {
        /* every block before the last is full, so block k starts at k whole sealed blocks */
        const size_t off = k * j->bs, len = j->ptlen - off < j->bs ? j->ptlen - off : j->bs, o = k * (j->ns + j->bs + TAG);
        memcpy(j->out + o, j->nonces + k * j->ns, j->ns);
        if (!aead_one(*scratch, j->c, 1, k == first, j->key, j->nonces + k * j->ns, j->aads + k * j->aadlen, j->aadlen,
                      j->pt + off, len, j->out + o + j->ns, j->out + o + j->ns + len))
            return 0;
    }
    return 1;
}

/* sealBlocks(cipher, key, nonces, plaintext, blockSize, aads, aadLen, out); cipher 0 = GCM, 1 = XChaCha */
static napi_value js_seal_blocks(napi_env env, napi_callback_info info)
{
    size_t argc = 8, keylen, nlen, ptlen, bs, aadslen, aadlen, outlen, nb, ns;
    napi_value argv[8];
    uint8_t *key, *nonces, *pt, *aads, *out;
    int c;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 8 || !get_cipher(env, argv[0], &c) ||
        !get_bytes(env, argv[1], &key, &keylen) || !get_bytes(env, argv[2], &nonces, &nlen) || !get_bytes(env, argv[3], &pt, &ptlen) ||
        !get_size(env, argv[4], &bs) || !get_bytes(env, argv[5], &aads, &aadslen) || !get_size(env, argv[6], &aadlen) ||
        !get_bytes(env, argv[7], &out, &outlen))
        return throw_inval(env, "sealBlocks(cipher, key, nonces, plaintext, blockSize, aads, aadLen, out): bad argument");
    if (keylen != 32 || bs == 0 || bs > (1u << 30)) return throw_inval(env, "sealBlocks: key must be 32 bytes, blockSize > 0");
    ns = aead_nonce_len(c);
    nb = ptlen / bs + (ptlen % bs != 0);
    if (nlen != nb * ns || aadslen != nb * aadlen || outlen != ptlen + nb * (ns + TAG))
        return throw_inval(env, "sealBlocks: nonces, aads or out have the wrong length");
    const struct seal_job j = {c, key, nonces, pt, aads, ptlen, bs, aadlen, ns, nb, out};
    if (!shared_job_run(seal_chunk, drop_ctx, (void *)&j, (nb + SEAL_CHUNK - 1) / SEAL_CHUNK))
        return throw_inval(env, "sealBlocks: OpenSSL failed");
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
    ns = aead_nonce_len(c);
    if (keylen != 32 || cbs <= ns + TAG || cbs > (1u << 30)) return throw_inval(env, "openBlocks: bad key or cipher block size");
    nb = slen / cbs + (slen % cbs != 0);
    last = nb ? slen - (nb - 1) * cbs : 0;
    if ((nb && last <= ns + TAG) || aadslen != nb * aadlen || slen != outlen + nb * (ns + TAG))
        return throw_inval(env, "openBlocks: sealed, aads or out have the wrong length");
    EVP_CIPHER_CTX *ctx = aead_new_ctx(c, 0);
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
        napi_set_named_property(env, exports, "openBlocks", f) != napi_ok ||
        !shared_job_register(env, exports) || !scrypt_smix_register(env, exports))
        return NULL;
    return exports;
}
