/* See content.h. */
#define _GNU_SOURCE
#include "content.h"
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static uint64_t next_gen = 1;

static void tl_free(void *p)
{
    struct content_thread *t = p;
    if (!t) return;
    if (t->dctx) EVP_CIPHER_CTX_free(t->dctx);
    if (t->ectx) EVP_CIPHER_CTX_free(t->ectx);
    free(t->buf);
    if (t->plain) OPENSSL_cleanse(t->plain, t->plain_cap);
    free(t->plain);
    free(t->out);
    OPENSSL_cleanse(t->part, sizeof t->part);
    free(t);
}

static void tl_init(void) { pthread_key_create(&tl_key, tl_free); }

void content_key_init(struct content_key *k, int cipher, const uint8_t *key, const struct tscryptfs_aegis_export *aegis)
{
    k->cipher = cipher;
    k->nonce = cipher == CONTENT_AEGIS ? 32 : aead_nonce_len(cipher); /* AEGIS-256X2's nonce */
    memcpy(k->key, key, sizeof k->key);
    k->gen = __atomic_fetch_add(&next_gen, 1, __ATOMIC_RELAXED);
    k->aegis_dec = aegis ? aegis->dec : NULL;
    k->aegis_enc = aegis ? aegis->enc : NULL;
    k->aegis_wipe = aegis ? aegis->wipe : NULL;
}

void content_key_free(struct content_key *k) { OPENSSL_cleanse(k->key, sizeof k->key); }

void content_wipe(const struct content_key *k)
{
    if (k->aegis_wipe) k->aegis_wipe(TSCRYPTFS_AEGIS_WIPE_BYTES);
}

struct content_thread *content_thread(const struct content_key *k, size_t need)
{
    pthread_once(&tl_once, tl_init);
    struct content_thread *t = pthread_getspecific(tl_key);
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t || pthread_setspecific(tl_key, t) != 0) {
            free(t);
            return NULL;
        }
    }
    if (k->cipher != CONTENT_AEGIS && (!t->dctx || t->dcipher != k->cipher)) {
        if (t->dctx) EVP_CIPHER_CTX_free(t->dctx);
        t->dctx = aead_new_ctx(k->cipher, 0);
        t->dcipher = k->cipher;
        t->dgen = 0;
        if (!t->dctx) return NULL;
    }
    return content_grow(&t->buf, &t->cap, need) ? t : NULL;
}

int content_sealing(const struct content_key *k, struct content_thread *t)
{
    if (k->cipher == CONTENT_AEGIS) return k->aegis_enc != NULL;
    if (!t->ectx || t->ecipher != k->cipher) {
        if (t->ectx) EVP_CIPHER_CTX_free(t->ectx);
        t->ectx = aead_new_ctx(k->cipher, 1);
        t->ecipher = k->cipher;
        t->egen = 0;
    }
    return t->ectx != NULL;
}

int content_nonce(struct content_thread *t, uint8_t *dst, size_t n)
{
    if (n > sizeof t->nonces) return 0;
    if (t->nonces_left < n) {
        if (RAND_bytes(t->nonces, (int)sizeof t->nonces) != 1) return 0;
        t->nonces_left = sizeof t->nonces;
    }
    memcpy(dst, t->nonces + (sizeof t->nonces - t->nonces_left), n);
    t->nonces_left -= n;
    return 1;
}

int content_grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (*cap >= need) return 1;
    uint8_t *b = realloc(*buf, need);
    if (!b) return 0;
    *buf = b;
    *cap = need;
    return 1;
}

int content_pread_full(int fd, uint8_t *buf, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, off + (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        got += (size_t)n;
    }
    return 1;
}

int content_file_id(int fd, uint8_t *id)
{
    uint8_t hdr[HEADER];
    if (!content_pread_full(fd, hdr, HEADER, 0) || hdr[0] != 0 || hdr[1] != TSCRYPTFS_HEADER_VERSION) return 0;
    memcpy(id, hdr + 2, ID_LEN);
    return 1;
}

void content_block_aad(uint8_t *aad, uint64_t b, const uint8_t *id)
{
    for (int i = 0; i < 8; i++) aad[i] = (uint8_t)(b >> (56 - 8 * i));
    memcpy(aad + 8, id, ID_LEN);
}

int content_open_block(const struct content_key *k, struct content_thread *t, const uint8_t *blk, size_t plen, const uint8_t *aad,
                       uint8_t *dst)
{
    const uint8_t *tag = blk + k->nonce + plen;
    if (k->cipher == CONTENT_AEGIS) return k->aegis_dec(dst, blk + k->nonce, plen, tag, AEAD_TAG, aad, AAD_LEN, blk, k->key) == 0;
    const int ok = aead_one(t->dctx, k->cipher, 0, t->dgen != k->gen, k->key, blk, aad, AAD_LEN, blk + k->nonce, plen, dst, (uint8_t *)tag);
    t->dgen = ok ? k->gen : 0;
    return ok;
}

int content_seal_block(const struct content_key *k, struct content_thread *t, const uint8_t *nonce, const uint8_t *aad, const uint8_t *m,
                       size_t plen, uint8_t *sealed, uint8_t *tag)
{
    if (k->cipher == CONTENT_AEGIS) {
        k->aegis_enc(sealed, tag, AEAD_TAG, m, plen, aad, AAD_LEN, nonce, k->key);
        return 1;
    }
    const int ok = aead_one(t->ectx, k->cipher, 1, t->egen != k->gen, k->key, nonce, aad, AAD_LEN, m, plen, sealed, tag);
    t->egen = ok ? k->gen : 0;
    return ok;
}

int64_t content_plain_size(int64_t size, size_t cbs, size_t overhead)
{
    const int64_t body = size - HEADER, rem = body % (int64_t)cbs;
    if (rem > 0 && rem <= (int64_t)overhead) return -1;
    return body - ((body + (int64_t)cbs - 1) / (int64_t)cbs) * (int64_t)overhead;
}

int64_t content_shown_size(const struct content_key *k, int64_t size)
{
    const size_t overhead = k->nonce + AEAD_TAG, cbs = BLOCK + overhead;
    if (size <= HEADER) return 0;
    const int64_t rem = (size - HEADER) % (int64_t)cbs;
    if (rem > 0 && rem <= (int64_t)overhead) size += (int64_t)overhead + 1 - rem; /* a too short last block counts as one byte */
    return content_plain_size(size, cbs, overhead);
}

int content_is_hole(const uint8_t *blk, size_t blen, size_t cbs)
{
    if (blen != cbs) return 0;
    uint8_t acc = 0;
    for (size_t i = 0; i < blen; i++) acc |= blk[i];
    return acc == 0;
}
