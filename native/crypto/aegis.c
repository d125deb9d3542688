/*
 * tscryptfs native AEGIS: AEGIS-128L/128X2/128X4 and AEGIS-256/256X2/256X4
 * (draft-irtf-cfrg-aegis-aead) with x86 AES instructions, as a Node-API addon.
 *
 * Two code paths, chosen at load time with CPUID:
 *   "vaes-avx2": two AES blocks per 256-bit register (VAES + AVX2), used
 *                for the X2/X4 variants when the CPU and OS support it;
 *   "aesni":     one AES block per 128-bit register (AES-NI).
 * Without AES-NI (or on a non-x86 build) available() is false and the
 * TypeScript implementation is used instead. The AES instructions run in
 * constant time; the tag comparison is branch-free.
 *
 * The compiler flags need no -maes: the functions using AES instructions
 * carry target attributes, so the file builds for baseline x86-64 and only
 * runs those functions after the CPUID check.
 *
 * JS interface (src/crypto/aegis/native.ts checks arguments first; they are
 * checked here again so that no call can read or write out of bounds):
 *   available() -> bool          implementation() -> string
 *   useImplementation(name) -> bool   (tests: force "aesni")
 *   seal(variant, key, nonce, msg, ad, out)          out = ct || tag
 *   open(variant, key, nonce, sealed, ad, out) -> bool
 *   sealBlocks(variant, key, nonces, pt, blockSize, aads, aadLen, out)
 *   openBlocks(variant, key, sealed, cipherBlockSize, aads, aadLen, out) -> int
 *   decryptHandle(variant) -> external    for the batch addon's read and write paths
 *                                         (aegis_export.h)
 */
#ifndef NAPI_VERSION
#define NAPI_VERSION 8
#endif
#include <node_api.h>
#include "aegis_export.h"
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/* memset that the compiler may not drop: the barrier makes the zeroed bytes "used". */
static void secure_zero(void *p, size_t n)
{
    memset(p, 0, n);
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/*
 * Wipes the n bytes of stack just below the caller's frame, where an AEGIS
 * core called from the same frame kept its spilled vectors: this
 * function's buffer lies where the core's frame was, its end nearest the
 * caller. Every caller of the cores calls it once after its blocks, with
 * TSCRYPTFS_AEGIS_WIPE_BYTES (aegis_export.h); gcc's -fstack-usage puts the
 * largest core (VAES AEGIS-128X4 decrypt) at 2272 bytes.
 */
static __attribute__((noinline, unused)) void scrub_stack(size_t n)
{
    unsigned char buf[TSCRYPTFS_AEGIS_WIPE_BYTES];
    if (n > sizeof buf) n = sizeof buf;
    secure_zero(buf + sizeof buf - n, n);
}

enum variant { V_128L, V_128X2, V_128X4, V_256, V_256X2, V_256X4, V_COUNT };

static const struct {
    size_t keylen;
    size_t noncelen;
} VARIANT_INFO[V_COUNT] = {{16, 16}, {16, 16}, {16, 16}, {32, 32}, {32, 32}, {32, 32}};

typedef tscryptfs_aegis_enc_fn enc_fn;
typedef tscryptfs_aegis_dec_fn dec_fn;

static enc_fn g_enc[V_COUNT];
static dec_fn g_dec[V_COUNT];
static const char *g_impl = "none";
static int g_have_aesni = 0;
static int g_have_vaes = 0;

#if defined(__x86_64__) || defined(__i386__)
#define AEGIS_X86 1
#include <cpuid.h>
#include <immintrin.h>

/* ---- AES-NI, one lane per __m128i ---- */
#define VEC __m128i
#define VW 1
#define TARGET __attribute__((target("aes,sse2")))
#define FN(name) aesni_##name
#define VXOR(a, b) _mm_xor_si128((a), (b))
#define VAND(a, b) _mm_and_si128((a), (b))
#define VENC(x, rk) _mm_aesenc_si128((x), (rk))
#define VLOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define VSTORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define VBCAST(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define VCTX(first, d) _mm_set_epi32(0, 0, 0, (int)((first) | (((d) - 1) << 8)))
#define VLEN(a, m) _mm_set_epi64x((long long)(m), (long long)(a))
#define VFOLD(p, v) VSTORE((p), (v))
#include "aegis_impl.h"
AEGIS_INSTANCE(a128l, 128, 1)
AEGIS_INSTANCE(a128x2, 128, 2)
AEGIS_INSTANCE(a128x4, 128, 4)
AEGIS_INSTANCE(a256, 256, 1)
AEGIS_INSTANCE(a256x2, 256, 2)
AEGIS_INSTANCE(a256x4, 256, 4)
#undef VEC
#undef VW
#undef TARGET
#undef FN
#undef VXOR
#undef VAND
#undef VENC
#undef VLOAD
#undef VSTORE
#undef VBCAST
#undef VCTX
#undef VLEN
#undef VFOLD

/* ---- VAES + AVX2, two lanes per __m256i (X2 and X4 only) ---- */
#define VEC __m256i
#define VW 2
#define TARGET __attribute__((target("aes,avx2,vaes")))
#define FN(name) vaes_##name
#define VXOR(a, b) _mm256_xor_si256((a), (b))
#define VAND(a, b) _mm256_and_si256((a), (b))
#define VENC(x, rk) _mm256_aesenc_epi128((x), (rk))
#define VLOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define VSTORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define VBCAST(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define VCTX(first, d)                                                                                                \
    _mm256_set_epi32(0, 0, 0, (int)(((first) + 1) | (((d) - 1) << 8)), 0, 0, 0, (int)((first) | (((d) - 1) << 8)))
#define VLEN(a, m) _mm256_set_epi64x((long long)(m), (long long)(a), (long long)(m), (long long)(a))
#define VFOLD(p, v) _mm_storeu_si128((__m128i *)(void *)(p), _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256((v), 1)))
#include "aegis_impl.h"
AEGIS_INSTANCE(a128x2, 128, 2)
AEGIS_INSTANCE(a128x4, 128, 4)
AEGIS_INSTANCE(a256x2, 256, 2)
AEGIS_INSTANCE(a256x4, 256, 4)

static void detect_cpu(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    g_have_aesni = (c & (1u << 25)) != 0; /* AES; SSE2 is baseline on x86-64 */
#if defined(__i386__)
    g_have_aesni = g_have_aesni && (d & (1u << 26)) != 0; /* SSE2 */
#endif
    {
        const int osxsave = (c & (1u << 27)) != 0;
        const int avx = (c & (1u << 28)) != 0;
        unsigned int xcr0 = 0;
        if (osxsave && avx) {
            unsigned int eax, edx;
            __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
            xcr0 = eax;
        }
        if (g_have_aesni && (xcr0 & 6u) == 6u && __get_cpuid_max(0, NULL) >= 7) {
            __cpuid_count(7, 0, a, b, c, d);
            g_have_vaes = (b & (1u << 5)) != 0 /* AVX2 */ && (c & (1u << 9)) != 0 /* VAES */;
        }
    }
}

#define USE(v, impl, name) (g_enc[v] = impl##_##name##_enc, g_dec[v] = impl##_##name##_dec)

static int select_impl(const char *name)
{
    if (!g_have_aesni) return 0;
    if (strcmp(name, "aesni") == 0) {
        USE(V_128L, aesni, a128l);
        USE(V_128X2, aesni, a128x2);
        USE(V_128X4, aesni, a128x4);
        USE(V_256, aesni, a256);
        USE(V_256X2, aesni, a256x2);
        USE(V_256X4, aesni, a256x4);
        g_impl = "aesni";
        return 1;
    }
    if (strcmp(name, "vaes-avx2") == 0 && g_have_vaes) {
        select_impl("aesni"); /* AEGIS-128L and AEGIS-256 have one lane: AES-NI */
        USE(V_128X2, vaes, a128x2);
        USE(V_128X4, vaes, a128x4);
        USE(V_256X2, vaes, a256x2);
        USE(V_256X4, vaes, a256x4);
        g_impl = "vaes-avx2";
        return 1;
    }
    return 0;
}
#else
static void detect_cpu(void) {}
static int select_impl(const char *name)
{
    (void)name;
    return 0;
}
#endif

/* ---------------- Node-API glue ---------------- */

#define CHECK_NAPI(call)                                                                                              \
    do {                                                                                                              \
        if ((call) != napi_ok) {                                                                                      \
            napi_throw_error(env, "EINVAL", "tscryptfs_aegis: Node-API call failed");                                 \
            return NULL;                                                                                              \
        }                                                                                                             \
    } while (0)

static napi_value throw_inval(napi_env env, const char *msg)
{
    napi_throw_range_error(env, "EINVAL", msg);
    return NULL;
}

/* A Uint8Array (Buffer included) argument: data pointer and length. */
static int get_bytes(napi_env env, napi_value v, uint8_t **data, size_t *len)
{
    napi_typedarray_type type;
    void *p = NULL;
    /* napi_invalid_arg for anything but a typed array */
    if (napi_get_typedarray_info(env, v, &type, len, &p, NULL, NULL) != napi_ok) return 0;
    if (type != napi_uint8_array) return 0;
    *data = (uint8_t *)p;
    return 1;
}

static int get_size(napi_env env, napi_value v, size_t *out)
{
    double d;
    if (napi_get_value_double(env, v, &d) != napi_ok) return 0;
    if (!(d >= 0 && d <= 9007199254740991.0) || d != (double)(uint64_t)d) return 0;
    *out = (size_t)d;
    return 1;
}

/* r = a * b + c, or 0 on overflow. */
static int mul_add(size_t a, size_t b, size_t c, size_t *r)
{
    size_t p;
    if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, r)) return 0;
    return 1;
}

static int get_variant(napi_env env, napi_value v, int *out)
{
    int32_t n;
    if (napi_get_value_int32(env, v, &n) != napi_ok || n < 0 || n >= V_COUNT) return 0;
    *out = n;
    return 1;
}

static napi_value make_bool(napi_env env, int b)
{
    napi_value r;
    napi_get_boolean(env, b ? true : false, &r);
    return r;
}

static int require_impl(napi_env env)
{
    if (g_enc[0] == NULL) {
        napi_throw_error(env, "ENOTSUP", "tscryptfs_aegis: this CPU lacks AES-NI");
        return 0;
    }
    return 1;
}

static napi_value js_available(napi_env env, napi_callback_info info)
{
    (void)info;
    return make_bool(env, g_enc[0] != NULL);
}

static napi_value js_implementation(napi_env env, napi_callback_info info)
{
    napi_value r;
    (void)info;
    CHECK_NAPI(napi_create_string_utf8(env, g_impl, NAPI_AUTO_LENGTH, &r));
    return r;
}

static napi_value js_implementations(napi_env env, napi_callback_info info)
{
    napi_value arr, s;
    uint32_t n = 0;
    (void)info;
    CHECK_NAPI(napi_create_array(env, &arr));
    if (g_have_aesni) {
        CHECK_NAPI(napi_create_string_utf8(env, "aesni", NAPI_AUTO_LENGTH, &s));
        CHECK_NAPI(napi_set_element(env, arr, n++, s));
    }
    if (g_have_aesni && g_have_vaes) {
        CHECK_NAPI(napi_create_string_utf8(env, "vaes-avx2", NAPI_AUTO_LENGTH, &s));
        CHECK_NAPI(napi_set_element(env, arr, n++, s));
    }
    return arr;
}

static napi_value js_use_implementation(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    char name[32];
    size_t len = 0;
    CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1 || napi_get_value_string_utf8(env, argv[0], name, sizeof name, &len) != napi_ok)
        return throw_inval(env, "useImplementation(name)");
    return make_bool(env, select_impl(name));
}

/* seal(variant, key, nonce, msg, ad, out) */
static napi_value js_seal(napi_env env, napi_callback_info info)
{
    size_t argc = 6;
    napi_value argv[6];
    int v;
    uint8_t *key, *nonce, *msg, *ad, *out;
    size_t keylen, noncelen, mlen, adlen, outlen, taglen;
    CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 6 || !get_variant(env, argv[0], &v) || !get_bytes(env, argv[1], &key, &keylen) ||
        !get_bytes(env, argv[2], &nonce, &noncelen) || !get_bytes(env, argv[3], &msg, &mlen) ||
        !get_bytes(env, argv[4], &ad, &adlen) || !get_bytes(env, argv[5], &out, &outlen))
        return throw_inval(env, "seal(variant, key, nonce, msg, ad, out): bad argument");
    if (keylen != VARIANT_INFO[v].keylen || noncelen != VARIANT_INFO[v].noncelen)
        return throw_inval(env, "seal: wrong key or nonce length");
    if (outlen < mlen || ((taglen = outlen - mlen) != 16 && taglen != 32))
        return throw_inval(env, "seal: out must be msg.length + 16 or + 32 bytes");
    if (!require_impl(env)) return NULL;
    g_enc[v](out, out + mlen, taglen, msg, mlen, ad, adlen, nonce, key);
    scrub_stack(TSCRYPTFS_AEGIS_WIPE_BYTES);
    return NULL;
}

/* open(variant, key, nonce, sealed, ad, out) -> bool */
static napi_value js_open(napi_env env, napi_callback_info info)
{
    size_t argc = 6;
    napi_value argv[6];
    int v;
    uint8_t *key, *nonce, *sealed, *ad, *out;
    size_t keylen, noncelen, slen, adlen, outlen, taglen;
    CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 6 || !get_variant(env, argv[0], &v) || !get_bytes(env, argv[1], &key, &keylen) ||
        !get_bytes(env, argv[2], &nonce, &noncelen) || !get_bytes(env, argv[3], &sealed, &slen) ||
        !get_bytes(env, argv[4], &ad, &adlen) || !get_bytes(env, argv[5], &out, &outlen))
        return throw_inval(env, "open(variant, key, nonce, sealed, ad, out): bad argument");
    if (keylen != VARIANT_INFO[v].keylen || noncelen != VARIANT_INFO[v].noncelen)
        return throw_inval(env, "open: wrong key or nonce length");
    if (slen < outlen || ((taglen = slen - outlen) != 16 && taglen != 32))
        return throw_inval(env, "open: sealed must be out.length + 16 or + 32 bytes");
    if (!require_impl(env)) return NULL;
    const int ok = g_dec[v](out, sealed, outlen, sealed + outlen, taglen, ad, adlen, nonce, key) == 0;
    scrub_stack(TSCRYPTFS_AEGIS_WIPE_BYTES);
    return make_bool(env, ok);
}

/* sealBlocks(variant, key, nonces, pt, blockSize, aads, aadLen, out) */
static napi_value js_seal_blocks(napi_env env, napi_callback_info info)
{
    size_t argc = 8;
    napi_value argv[8];
    int v;
    uint8_t *key, *nonces, *pt, *aads, *out;
    size_t keylen, nlen, ptlen, bs, aadslen, aadlen, outlen, nb, ns, k, o;
    CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 8 || !get_variant(env, argv[0], &v) || !get_bytes(env, argv[1], &key, &keylen) ||
        !get_bytes(env, argv[2], &nonces, &nlen) || !get_bytes(env, argv[3], &pt, &ptlen) ||
        !get_size(env, argv[4], &bs) || !get_bytes(env, argv[5], &aads, &aadslen) || !get_size(env, argv[6], &aadlen) ||
        !get_bytes(env, argv[7], &out, &outlen))
        return throw_inval(env, "sealBlocks(variant, key, nonces, pt, blockSize, aads, aadLen, out): bad argument");
    ns = VARIANT_INFO[v].noncelen;
    if (keylen != VARIANT_INFO[v].keylen || bs == 0) return throw_inval(env, "sealBlocks: wrong key length or block size");
    nb = ptlen / bs + (ptlen % bs != 0);
    if (!mul_add(nb, ns, 0, &k) || nlen != k || !mul_add(nb, aadlen, 0, &k) || aadslen != k ||
        !mul_add(nb, ns + 16, ptlen, &k) || outlen != k)
        return throw_inval(env, "sealBlocks: nonces, aads or out have the wrong length");
    if (!require_impl(env)) return NULL;
    for (k = 0, o = 0; k < nb; k++) {
        const size_t off = k * bs;
        const size_t len = ptlen - off < bs ? ptlen - off : bs;
        memcpy(out + o, nonces + k * ns, ns);
        g_enc[v](out + o + ns, out + o + ns + len, 16, pt + off, len, aads + k * aadlen, aadlen, nonces + k * ns, key);
        o += ns + len + 16;
    }
    scrub_stack(TSCRYPTFS_AEGIS_WIPE_BYTES);
    return NULL;
}

/* openBlocks(variant, key, sealed, cipherBlockSize, aads, aadLen, out) -> -1 or first bad block */
static napi_value js_open_blocks(napi_env env, napi_callback_info info)
{
    size_t argc = 7;
    napi_value argv[7];
    int v;
    uint8_t *key, *sealed, *aads, *out;
    size_t keylen, slen, cbs, aadslen, aadlen, outlen, nb, ns, k, last;
    int64_t bad = -1;
    napi_value r;
    CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 7 || !get_variant(env, argv[0], &v) || !get_bytes(env, argv[1], &key, &keylen) ||
        !get_bytes(env, argv[2], &sealed, &slen) || !get_size(env, argv[3], &cbs) ||
        !get_bytes(env, argv[4], &aads, &aadslen) || !get_size(env, argv[5], &aadlen) ||
        !get_bytes(env, argv[6], &out, &outlen))
        return throw_inval(env, "openBlocks(variant, key, sealed, cipherBlockSize, aads, aadLen, out): bad argument");
    ns = VARIANT_INFO[v].noncelen;
    if (keylen != VARIANT_INFO[v].keylen || cbs <= ns + 16)
        return throw_inval(env, "openBlocks: wrong key length or cipher block size");
    nb = slen / cbs + (slen % cbs != 0);
    last = nb ? slen - (nb - 1) * cbs : 0;
    if ((nb && last < ns + 16) || !mul_add(nb, aadlen, 0, &k) || aadslen != k || !mul_add(nb, ns + 16, outlen, &k) ||
        slen != k)
        return throw_inval(env, "openBlocks: sealed, aads or out have the wrong length");
    if (!require_impl(env)) return NULL;
    for (k = 0; k < nb; k++) {
        const uint8_t *blk = sealed + k * cbs;
        const size_t blen = k + 1 < nb ? cbs : last;
        const size_t len = blen - ns - 16;
        if (g_dec[v](out + k * (cbs - ns - 16), blk + ns, len, blk + ns + len, 16, aads + k * aadlen, aadlen, blk, key) !=
            0) {
            bad = (int64_t)k;
            secure_zero(out, outlen);
            break;
        }
    }
    scrub_stack(TSCRYPTFS_AEGIS_WIPE_BYTES);
    CHECK_NAPI(napi_create_int64(env, bad, &r));
    return r;
}

static void free_export(napi_env env, void *data, void *hint)
{
    (void)env;
    (void)hint;
    free(data);
}

/* decryptHandle(variant) -> external: the variant's decryption and encryption as the current code path has them */
static napi_value js_decrypt_handle(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], ext;
    int v;
    struct tscryptfs_aegis_export *x;
    CHECK_NAPI(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
    if (argc < 1 || !get_variant(env, argv[0], &v)) return throw_inval(env, "decryptHandle(variant): bad variant");
    if (!require_impl(env)) return NULL;
    x = calloc(1, sizeof *x);
    if (!x) return throw_inval(env, "decryptHandle: out of memory");
    x->magic = TSCRYPTFS_AEGIS_EXPORT_MAGIC;
    x->variant = v;
    x->dec = g_dec[v];
    x->enc = g_enc[v];
    x->wipe = scrub_stack;
    if (napi_create_external(env, x, free_export, NULL, &ext) != napi_ok) {
        free(x);
        return NULL;
    }
    return ext;
}

NAPI_MODULE_INIT()
{
    static const struct {
        const char *name;
        napi_callback cb;
    } fns[] = {
        {"available", js_available},
        {"implementation", js_implementation},
        {"implementations", js_implementations},
        {"useImplementation", js_use_implementation},
        {"seal", js_seal},
        {"open", js_open},
        {"sealBlocks", js_seal_blocks},
        {"openBlocks", js_open_blocks},
        {"decryptHandle", js_decrypt_handle},
    };
    size_t i;
    if (g_enc[0] == NULL && !g_have_aesni) {
        detect_cpu();
        if (!select_impl("vaes-avx2")) select_impl("aesni");
    }
    for (i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        napi_value f;
        if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].cb, NULL, &f) != napi_ok ||
            napi_set_named_property(env, exports, fns[i].name, f) != napi_ok)
            return NULL;
    }
    return exports;
}
