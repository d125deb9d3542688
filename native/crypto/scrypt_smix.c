/*
 * scrypt's SMix (RFC 7914 §5) with BlockMix over Salsa20/8 (§3, §4), for
 * src/config/scrypt.ts (see scrypt_smix.h). OpenSSL's scrypt, which
 * node:crypto calls, takes about twice as long for gocryptfs's N=2^16: it
 * works one 32-bit word at a time and its 64 MiB table sits in 4 KiB pages.
 * Here each 64-byte Salsa20 block is four 128-bit vectors in the diagonal
 * order (word i at position i*5 mod 16, as Percival's SSE2 scrypt stores
 * it), so every quarter-round step is one vector add, rotate and xor; the
 * table is asked for in huge pages, and each entry the second half reads
 * is prefetched whole (table_entry); on x86-64 a second copy is compiled for
 * AVX-512 (one-instruction rotates) and picked at load time.
 */
#include "scrypt_smix.h"
#include "napi_args.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef uint32_t v4 __attribute__((vector_size(16), aligned(16)));
#define ROTL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))
#ifdef __clang__
#define SHUF(x, a, b, c, d) __builtin_shufflevector(x, x, a, b, c, d)
#else
#define SHUF(x, a, b, c, d) __builtin_shuffle(x, (v4){a, b, c, d})
#endif
#define INLINE static inline __attribute__((always_inline))

/* b = Salsa20/8(b ^ x), both 4 vectors in the diagonal order. */
INLINE void salsa8_xor(v4 *b, const v4 *x)
{
    v4 x0 = b[0] ^ x[0], x1 = b[1] ^ x[1], x2 = b[2] ^ x[2], x3 = b[3] ^ x[3];
    const v4 y0 = x0, y1 = x1, y2 = x2, y3 = x3;
    for (int i = 0; i < 8; i += 2) {
        /* columns */
        x1 ^= ROTL(x0 + x3, 7);
        x2 ^= ROTL(x1 + x0, 9);
        x3 ^= ROTL(x2 + x1, 13);
        x0 ^= ROTL(x3 + x2, 18);
        x1 = SHUF(x1, 3, 0, 1, 2);
        x2 = SHUF(x2, 2, 3, 0, 1);
        x3 = SHUF(x3, 1, 2, 3, 0);
        /* rows */
        x3 ^= ROTL(x0 + x1, 7);
        x2 ^= ROTL(x3 + x0, 9);
        x1 ^= ROTL(x2 + x3, 13);
        x0 ^= ROTL(x1 + x2, 18);
        x1 = SHUF(x1, 1, 2, 3, 0);
        x2 = SHUF(x2, 2, 3, 0, 1);
        x3 = SHUF(x3, 3, 0, 1, 2);
    }
    b[0] = x0 + y0;
    b[1] = x1 + y1;
    b[2] = x2 + y2;
    b[3] = x3 + y3;
}

/* y = BlockMix(x ^ v) for 2r Salsa20 blocks (v NULL: just x); even outputs first, then odd (§4). */
INLINE void block_mix(const v4 *x, const v4 *v, v4 *y, size_t r)
{
    v4 t[4], in[4];
    const size_t last = (2 * r - 1) * 4;
    for (int k = 0; k < 4; k++) t[k] = v ? x[last + k] ^ v[last + k] : x[last + k];
    for (size_t i = 0; i < 2 * r; i++) {
        for (int k = 0; k < 4; k++) in[k] = v ? x[i * 4 + k] ^ v[i * 4 + k] : x[i * 4 + k];
        salsa8_xor(t, in);
        memcpy(y + ((i & 1) * r + i / 2) * 4, t, sizeof t);
    }
}

/* Integerify(x) mod N: word 0 of the last Salsa20 block (position 0 keeps word 0). */
INLINE uint32_t integerify(const v4 *x, size_t r, uint32_t n) { return x[(2 * r - 1) * 4][0] & (n - 1); }

/*
 * Entry j of the table (`vecs` vectors), with all its cache lines asked
 * for at once. j is known only when the BlockMix before ends; fetched a
 * line at a time, as BlockMix reads them, the random reads of SMix's
 * second half wait on memory once per line: gocryptfs's N=2^16 takes
 * 110 ms so on this workplace's machine, 80 ms with the prefetches (the
 * same bytes either way).
 */
INLINE const v4 *table_entry(const v4 *table, uint32_t j, size_t vecs)
{
    const v4 *v = table + (size_t)j * vecs;
    for (size_t k = 0; k < vecs; k += 4) __builtin_prefetch(v + k); /* 4 vectors: one 64-byte line */
    return v;
}

#if defined(__x86_64__) && !defined(__clang__) && __GNUC__ >= 11
__attribute__((target_clones("arch=x86-64-v4", "default")))
#endif
static void smix_core(v4 *x, v4 *y, v4 *table, size_t r, uint32_t n)
{
    const size_t vecs = 8 * r; /* 128r bytes */
    for (uint32_t i = 0; i < n; i += 2) {
        memcpy(table + (size_t)i * vecs, x, vecs * sizeof(v4));
        block_mix(x, NULL, y, r);
        memcpy(table + (size_t)(i + 1) * vecs, y, vecs * sizeof(v4));
        block_mix(y, NULL, x, r);
    }
    for (uint32_t i = 0; i < n; i += 2) {
        block_mix(x, table_entry(table, integerify(x, r, n), vecs), y, r);
        block_mix(y, table_entry(table, integerify(y, r, n), vecs), x, r);
    }
}

/* b (128r little-endian bytes) = SMix_r(b, N); 0 when the table cannot be had. N is a power of two >= 2. */
static int smix(uint8_t *b, size_t r, uint32_t n)
{
    const size_t bytes = 128 * r, huge = 2u << 20, table_len = bytes * n + huge;
    v4 *xy = NULL;
    if (posix_memalign((void **)&xy, 64, 2 * bytes)) xy = NULL;
    uint8_t *map = mmap(NULL, table_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!xy || map == MAP_FAILED) {
        free(xy);
        if (map != MAP_FAILED) munmap(map, table_len);
        return 0;
    }
    /* huge pages where the system allows them: the table is read at random, and 4 KiB pages make that cost twice as much */
    uint8_t *table = (uint8_t *)(((uintptr_t)map + huge - 1) & ~(uintptr_t)(huge - 1));
#ifdef MADV_HUGEPAGE
    madvise(table, bytes * n, MADV_HUGEPAGE);
#endif
    uint32_t *w = (uint32_t *)xy;
    for (size_t k = 0; k < 2 * r; k++)
        for (size_t i = 0; i < 16; i++) memcpy(&w[k * 16 + i], b + k * 64 + (i * 5 % 16) * 4, 4);
    smix_core(xy, xy + 8 * r, (v4 *)table, r, n);
    for (size_t k = 0; k < 2 * r; k++)
        for (size_t i = 0; i < 16; i++) memcpy(b + k * 64 + (i * 5 % 16) * 4, &w[k * 16 + i], 4);
    memset(xy, 0, 2 * bytes);
    free(xy);
    munmap(map, table_len);
    return 1;
}

struct smix_work {
    napi_async_work work;
    napi_deferred deferred;
    uint8_t *block; /* p blocks of 128r bytes, a copy owned here */
    size_t len, r;
    uint32_t n;
    int ok;
};

static void smix_execute(napi_env env, void *data)
{
    (void)env;
    struct smix_work *s = data;
    s->ok = 1;
    for (size_t off = 0; s->ok && off < s->len; off += 128 * s->r) s->ok = smix(s->block + off, s->r, s->n);
}

static void smix_complete(napi_env env, napi_status status, void *data)
{
    struct smix_work *s = data;
    napi_value result = NULL, msg;
    if (status == napi_ok && s->ok) {
        void *out;
        if (napi_create_buffer_copy(env, s->len, s->block, &out, &result) == napi_ok) napi_resolve_deferred(env, s->deferred, result);
        else result = NULL;
    }
    if (!result && napi_create_string_utf8(env, "scrypt: cannot allocate the SMix table", NAPI_AUTO_LENGTH, &msg) == napi_ok &&
        napi_create_error(env, NULL, msg, &result) == napi_ok)
        napi_reject_deferred(env, s->deferred, result);
    memset(s->block, 0, s->len);
    free(s->block);
    napi_delete_async_work(env, s->work);
    free(s);
}

/* scryptSmix(block, N, r) -> Promise<Buffer>: SMix of each 128r-byte part of `block`, off the JS thread. */
static napi_value js_scrypt_smix(napi_env env, napi_callback_info info)
{
    size_t argc = 3, len, n, r;
    napi_value argv[3], promise, name;
    uint8_t *block;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !get_bytes(env, argv[0], &block, &len) ||
        !get_size(env, argv[1], &n) || !get_size(env, argv[2], &r))
        return throw_inval(env, "scryptSmix(block, N, r): bad argument");
    if (n < 2 || n > (1u << 30) || (n & (n - 1)) || r == 0 || r > (1u << 20) || len == 0 || len % (128 * r))
        return throw_inval(env, "scryptSmix: N must be a power of two, block a multiple of 128r bytes");
    struct smix_work *s = calloc(1, sizeof *s);
    if (!s || !(s->block = malloc(len))) {
        free(s);
        return throw_inval(env, "scryptSmix: out of memory");
    }
    memcpy(s->block, block, len);
    s->len = len;
    s->r = r;
    s->n = (uint32_t)n;
    if (napi_create_promise(env, &s->deferred, &promise) != napi_ok ||
        napi_create_string_utf8(env, "tscryptfs:scryptSmix", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, NULL, name, smix_execute, smix_complete, s, &s->work) != napi_ok ||
        napi_queue_async_work(env, s->work) != napi_ok) {
        free(s->block);
        free(s);
        return throw_inval(env, "scryptSmix: cannot queue the work");
    }
    return promise;
}

int scrypt_smix_register(napi_env env, napi_value exports)
{
    napi_value f;
    return napi_create_function(env, "scryptSmix", NAPI_AUTO_LENGTH, js_scrypt_smix, NULL, &f) == napi_ok &&
           napi_set_named_property(env, exports, "scryptSmix", f) == napi_ok;
}
