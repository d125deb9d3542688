/*
 * A mount's native read path. A sequential read through the mount
 * is one 128 KiB READ at a time; answered in JavaScript, each costs two
 * thread hand-overs on top of the pread and the decryption, all on the one
 * JS thread. Here the libfuse thread that received the READ answers it
 * itself: it preads the cipher blocks of a handle JavaScript registered and
 * opens them (Documentation/format.md §5.3, §5.5, §5.6, §6.1, §6.3), so reads run in parallel on
 * libfuse's threads and never wait for the event loop.
 *
 * Only the plain case is answered here; everything else returns -1 and the
 * request goes to JavaScript exactly as before, which also logs what it
 * finds: a block that does not open (tampering, a hole's all-zero block, a
 * torn write), a header that is not version 2, a cipher size whose last
 * block is too short, a short pread.
 *
 * Writes are fenced by two counters per file (reader_core.h), which
 * JavaScript bumps with Atomics (src/vault/write-fences.ts) and the native
 * write path (writer.c) with the same atomics: `started`
 * before it touches the cipher file, `finished` after. A read here goes on
 * only if no write is under way when it starts (started == finished) and
 * none started until it ended (started unchanged), so it never returns a
 * mix of old and new blocks; otherwise JavaScript answers under the file's
 * lock. The header's file ID is cached per handle together with the
 * `started` count it was read at.
 *
 * The same registry answers chmod, chown and utimens of an open file
 * (reader_attr): the kernel sends them as a SETATTR of the file's node, and
 * libfuse2 splits it into path operations, each a trip to JavaScript that
 * ends in the same fchmodat, fchownat or utimensat of the cipher file. When
 * the binding knows a handle open on that node, the change goes to the
 * handle's cipher file descriptor here instead, and the attributes after
 * it (fstat, with the plaintext size) go back as the binding's carried
 * ones. An untar makes three such calls per file (futimens, fchown and
 * fchmod on the descriptor it wrote through).
 */
#define _GNU_SOURCE
#include "reader.h"
#include "reader_core.h"
#include "napi_args.h"
#include <errno.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static uint64_t next_gen = 1;

static void tl_free(void *p)
{
    struct thread_state *t = p;
    if (!t) return;
    if (t->ctx) EVP_CIPHER_CTX_free(t->ctx);
    if (t->ectx) EVP_CIPHER_CTX_free(t->ectx);
    if (t->nctx) EVP_CIPHER_CTX_free(t->nctx);
    free(t->buf);
    if (t->plain) OPENSSL_cleanse(t->plain, t->plain_cap);
    free(t->plain);
    free(t->out);
    OPENSSL_cleanse(t->part, sizeof t->part);
    free(t);
}

static void tl_init(void) { pthread_key_create(&tl_key, tl_free); }

/* This thread's state, with a context for `r` and room for `need` cipher bytes; NULL when out of memory. */
struct thread_state *reader_thread_state(struct reader *r, size_t need)
{
    pthread_once(&tl_once, tl_init);
    struct thread_state *t = pthread_getspecific(tl_key);
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t || pthread_setspecific(tl_key, t) != 0) {
            free(t);
            return NULL;
        }
    }
    if (r->cipher != READ_AEGIS && (!t->ctx || t->cipher != r->cipher)) {
        if (t->ctx) EVP_CIPHER_CTX_free(t->ctx);
        t->ctx = aead_new_ctx(r->cipher, 0);
        t->cipher = r->cipher;
        t->gen = 0;
        if (!t->ctx) return NULL;
    }
    return reader_grow(&t->buf, &t->cap, need) ? t : NULL;
}

int reader_grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (*cap >= need) return 1;
    uint8_t *b = realloc(*buf, need);
    if (!b) return 0;
    *buf = b;
    *cap = need;
    return 1;
}

static struct handle **bucket(struct reader *r, uint64_t fh) { return &r->buckets[fh % BUCKETS]; }

static struct handle *find_locked(struct reader *r, uint64_t fh)
{
    struct handle *h = *bucket(r, fh);
    while (h && h->fh != fh) h = h->next;
    return h;
}

void reader_insert(struct reader *r, struct handle *h)
{
    pthread_mutex_lock(&r->mut);
    if (h->owned) {
        do {
            if (r->next_fh < NATIVE_FH_BASE) r->next_fh = NATIVE_FH_BASE; /* first, and after 0xffffffff */
            h->fh = r->next_fh++;
        } while (find_locked(r, h->fh));
    }
    h->next = *bucket(r, h->fh);
    *bucket(r, h->fh) = h;
    pthread_mutex_unlock(&r->mut);
}

struct handle *reader_remove(struct reader *r, uint64_t fh, int owned)
{
    struct handle *h = NULL;
    pthread_mutex_lock(&r->mut);
    for (struct handle **p = bucket(r, fh); *p; p = &(*p)->next) {
        if ((*p)->fh == fh && (*p)->owned == owned) {
            h = *p;
            *p = h->next;
            while (h->busy > 0) pthread_cond_wait(&r->idle, &r->mut);
            break;
        }
    }
    pthread_mutex_unlock(&r->mut);
    return h;
}

int reader_adopt_fd(struct reader *r, uint64_t fh)
{
    int fd = -1;
    pthread_mutex_lock(&r->mut);
    struct handle *h = find_locked(r, fh);
    if (h && h->owned) {
        fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
        if (fd >= 0) h->adopted = 1;
    }
    pthread_mutex_unlock(&r->mut);
    return fd;
}

size_t reader_owned_on(struct reader *r, uint32_t dev, uint64_t ino, uint64_t *fhs, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&r->mut);
    for (size_t i = 0; i < BUCKETS; i++)
        for (struct handle *h = r->buckets[i]; h; h = h->next)
            if (h->owned && !h->adopted && h->dev == dev && h->ino == ino) {
                if (n < cap) fhs[n] = h->fh;
                n++;
            }
    pthread_mutex_unlock(&r->mut);
    return n;
}

/* A copy of handle `fh`; 0 when it is not registered. */
static int lookup(struct reader *r, uint64_t fh, struct handle *out)
{
    int found = 0;
    pthread_mutex_lock(&r->mut);
    for (struct handle *h = *bucket(r, fh); h; h = h->next) {
        if (h->fh == fh) {
            *out = *h;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&r->mut);
    return found;
}

static void remember_id(struct reader *r, uint64_t fh, int32_t seq, const uint8_t *id)
{
    pthread_mutex_lock(&r->mut);
    for (struct handle *h = *bucket(r, fh); h; h = h->next) {
        if (h->fh == fh) {
            memcpy(h->id, id, ID_LEN);
            h->id_seq = seq;
            h->has_id = 1;
            break;
        }
    }
    pthread_mutex_unlock(&r->mut);
}

int reader_pread_full(int fd, uint8_t *buf, size_t len, off_t off)
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

static int pass(struct reader *r)
{
    __atomic_add_fetch(&r->passed, 1, __ATOMIC_RELAXED);
    return -1;
}

int reader_file_id(int fd, uint8_t *id)
{
    uint8_t hdr[HEADER];
    if (!reader_pread_full(fd, hdr, HEADER, 0) || hdr[0] != 0 || hdr[1] != TSCRYPTFS_HEADER_VERSION) return 0;
    memcpy(id, hdr + 2, ID_LEN);
    return 1;
}

void reader_block_aad(uint8_t *aad, uint64_t b, const uint8_t *id)
{
    for (int i = 0; i < 8; i++) aad[i] = (uint8_t)(b >> (56 - 8 * i));
    memcpy(aad + 8, id, ID_LEN);
}

int reader_open_block(struct reader *r, struct thread_state *t, int rekey, const uint8_t *blk, size_t plen, const uint8_t *aad, uint8_t *dst)
{
    const uint8_t *tag = blk + r->nonce + plen;
    if (r->cipher == READ_AEGIS) return r->aegis(dst, blk + r->nonce, plen, tag, AEAD_TAG, aad, AAD_LEN, blk, r->key) == 0;
    return aead_one(t->ctx, r->cipher, 0, rekey, r->key, blk, aad, AAD_LEN, blk + r->nonce, plen, dst, (uint8_t *)tag);
}

int64_t reader_plain_size(int64_t size, size_t cbs, size_t overhead)
{
    const int64_t body = size - HEADER, rem = body % (int64_t)cbs;
    if (rem > 0 && rem <= (int64_t)overhead) return -1;
    return body - ((body + (int64_t)cbs - 1) / (int64_t)cbs) * (int64_t)overhead;
}

/* The hook's `read` (fuse_hooks.h). Twin: readContentInto in src/vault/file-content.ts. */
static int reader_read(void *ctx, uint64_t fh, char *buf, size_t len, int64_t off)
{
    struct reader *r = ctx;
    struct handle h;
    if (off < 0 || !lookup(r, fh, &h) || !(h.flags & HANDLE_READABLE)) return -1;
    int32_t *fence = r->fences + FENCE_STRIDE * (size_t)h.slot;
    const int32_t started = __atomic_load_n(&fence[0], __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&fence[1], __ATOMIC_ACQUIRE) != started) return pass(r);

    const size_t overhead = r->nonce + AEAD_TAG, cbs = BLOCK + overhead;
    struct stat st;
    if (fstat(h.fd, &st) != 0 || (st.st_size > 0 && st.st_size <= HEADER)) return pass(r);
    const int64_t plain = st.st_size == 0 ? 0 : reader_plain_size(st.st_size, cbs, overhead);
    if (plain < 0) return pass(r);
    size_t n = 0;
    if (off < plain) n = (size_t)(plain - off) < len ? (size_t)(plain - off) : len;
    if (n > 0) {
        if (!(h.has_id && h.id_seq == started) && !reader_file_id(h.fd, h.id)) return pass(r);
        const uint64_t first = (uint64_t)off / BLOCK, last = ((uint64_t)off + n - 1) / BLOCK;
        const off_t coff = HEADER + (off_t)(first * cbs);
        const size_t want = (size_t)((uint64_t)st.st_size - (uint64_t)coff < (last - first + 1) * cbs ? (uint64_t)st.st_size - (uint64_t)coff : (last - first + 1) * cbs);
        struct thread_state *t = reader_thread_state(r, want);
        if (!t || !reader_pread_full(h.fd, t->buf, want, coff)) return pass(r);
        const int rekey = t->gen != r->gen;
        uint8_t aad[AAD_LEN];
        for (uint64_t b = first; b <= last; b++) {
            const uint8_t *blk = t->buf + (b - first) * cbs;
            const size_t blen = (b - first + 1) * cbs <= want ? cbs : want - (b - first) * cbs;
            if (blen <= overhead) return pass(r);
            const size_t plen = blen - overhead;
            reader_block_aad(aad, b, h.id);
            const uint64_t bstart = b * BLOCK;
            const uint64_t from = bstart > (uint64_t)off ? bstart : (uint64_t)off;
            const uint64_t to = bstart + plen < (uint64_t)off + n ? bstart + plen : (uint64_t)off + n;
            const int whole = from == bstart && to == bstart + plen;
            uint8_t *dst = whole ? (uint8_t *)buf + (bstart - (uint64_t)off) : t->part;
            if (!reader_open_block(r, t, rekey && b == first, blk, plen, aad, dst)) {
                t->gen = 0; /* the context's state after a failure is not trusted: re-key next time */
                return pass(r);
            }
            if (!whole && to > from) memcpy(buf + (from - (uint64_t)off), t->part + (from - bstart), to - from);
        }
        t->gen = r->gen;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&fence[0], __ATOMIC_ACQUIRE) != started) return pass(r);
    if (n > 0 && !(h.has_id && h.id_seq == started)) remember_id(r, fh, started, h.id);
    __atomic_add_fetch(&r->served, 1, __ATOMIC_RELAXED);
    return (int)n;
}

/* The plaintext size stat shows, as src/content/layout.ts's cipherSizeToPlainSize: a too short last block counts as one byte. */
static int64_t shown_size(int64_t size, size_t cbs, size_t overhead)
{
    if (size <= HEADER) return 0;
    const int64_t rem = (size - HEADER) % (int64_t)cbs;
    if (rem > 0 && rem <= (int64_t)overhead) size += (int64_t)overhead + 1 - rem;
    return reader_plain_size(size, cbs, overhead);
}

int64_t reader_shown_size(int64_t size, size_t nonce)
{
    return shown_size(size, BLOCK + nonce + AEAD_TAG, nonce + AEAD_TAG);
}

struct handle *reader_pin(struct reader *r, uint64_t fh)
{
    struct handle *h;
    pthread_mutex_lock(&r->mut);
    for (h = *bucket(r, fh); h && h->fh != fh; h = h->next) {
    }
    if (h) h->busy++;
    pthread_mutex_unlock(&r->mut);
    return h;
}

void reader_unpin(struct reader *r, struct handle *h)
{
    pthread_mutex_lock(&r->mut);
    if (--h->busy == 0) pthread_cond_broadcast(&r->idle);
    pthread_mutex_unlock(&r->mut);
}

/* The hook's `attr` (fuse_hooks.h): the change on the handle's cipher file, as src/vault/node-attrs.ts's
 * chmod, chown and utimens (its twins) make it on the name. */
static int reader_attr(void *ctx, uint64_t fh, const struct tscryptfs_attr_change *c, struct stat *st, int *have_stat,
                       int (*still)(void *arg), void *arg)
{
    struct reader *r = ctx;
    *have_stat = 0;
    if (!__atomic_load_n(&r->attrs, __ATOMIC_ACQUIRE)) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = reader_pin(r, fh);
    if (!h) return TSCRYPTFS_HOOK_PASS;
    int res = TSCRYPTFS_HOOK_PASS, rc = -1;
    if (still && !still(arg)) goto out;
    switch (c->op) {
    case TSCRYPTFS_ATTR_CHMOD: rc = fchmod(h->fd, c->mode & 07777); break;
    case TSCRYPTFS_ATTR_CHOWN: rc = fchown(h->fd, c->uid, c->gid); break;
    case TSCRYPTFS_ATTR_UTIMENS: rc = futimens(h->fd, c->tv); break;
    default: goto out;
    }
    res = rc == 0 ? 0 : -errno;
    if (res == 0 && fstat(h->fd, st) == 0) {
        if (S_ISREG(st->st_mode)) st->st_size = (off_t)reader_shown_size((int64_t)st->st_size, r->nonce);
        *have_stat = 1;
    }
    __atomic_add_fetch(&r->attrs_served, 1, __ATOMIC_RELAXED);
out:
    reader_unpin(r, h);
    return res;
}

static void reader_finalize(napi_env env, void *data, void *hint)
{
    struct reader *r = data;
    (void)hint;
    for (size_t i = 0; i < BUCKETS; i++) {
        struct handle *h = r->buckets[i];
        while (h) {
            struct handle *next = h->next;
            if (h->owned) close(h->fd);
            OPENSSL_cleanse(h->id, ID_LEN);
            free(h);
            h = next;
        }
    }
    if (r->fences_ref) napi_delete_reference(env, r->fences_ref);
    if (r->root_fd >= 0) close(r->root_fd);
    reader_names_free(r);
    reader_opener_free(r);
    dir_fds_free(r);
    pthread_mutex_destroy(&r->mut);
    pthread_mutex_destroy(&r->slots_mut);
    pthread_mutex_destroy(&r->ivs_mut);
    if (r->removed) {
        for (size_t i = 0; i < r->removed_n; i++) free(r->removed[i]);
        free(r->removed);
    }
    pthread_mutex_destroy(&r->removed_mut);
    pthread_cond_destroy(&r->idle);
    OPENSSL_cleanse(r->key, sizeof r->key);
    free(r);
}

struct reader *reader_get(napi_env env, napi_value v)
{
    void *p = NULL;
    napi_valuetype t;
    if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_get_value_external(env, v, &p) != napi_ok || !p) return NULL;
    struct reader *r = p;
    return r->hook.magic == TSCRYPTFS_READ_HOOK_MAGIC ? r : NULL;
}

int reader_switch_args(napi_env env, napi_callback_info info, struct reader **r, bool *on)
{
    size_t argc = 2;
    napi_value argv[2];
    return napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= 2 && (*r = reader_get(env, argv[0])) &&
           napi_get_value_bool(env, argv[1], on) == napi_ok;
}

/* The AEGIS addon's export in `v` (decryptHandle(4): AEGIS-256X2), or NULL. */
static const struct tscryptfs_aegis_export *get_aegis(napi_env env, napi_value v)
{
    void *p = NULL;
    napi_valuetype t;
    if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_get_value_external(env, v, &p) != napi_ok || !p) return NULL;
    const struct tscryptfs_aegis_export *x = p;
    return x->magic == TSCRYPTFS_AEGIS_EXPORT_MAGIC && x->variant == TSCRYPTFS_AEGIS_256X2 && x->dec ? x : NULL;
}

/*
 * readerCreate(cipher, key, slots[, aegis]) -> [reader, fences]: fences is an
 * ArrayBuffer of FENCE_STRIDE * slots int32 counters (reader_core.h); cipher READ_AEGIS takes the AEGIS
 * addon's decryptHandle(4) as `aegis`.
 */
static napi_value js_create(napi_env env, napi_callback_info info)
{
    size_t argc = 4, c, keylen, slots;
    napi_value argv[4], ext, ab, out;
    uint8_t *key;
    void *fences;
    const struct tscryptfs_aegis_export *aegis = NULL;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !get_size(env, argv[0], &c) || c > READ_AEGIS ||
        !get_bytes(env, argv[1], &key, &keylen) || keylen != 32 || !get_size(env, argv[2], &slots) || slots == 0 || slots > (1u << 20) ||
        (c == READ_AEGIS && (argc < 4 || !(aegis = get_aegis(env, argv[3])))))
        return throw_inval(env, "readerCreate(cipher, key, slots[, aegis]): bad argument");
    struct reader *r = calloc(1, sizeof *r);
    if (!r) return throw_inval(env, "readerCreate: out of memory");
    r->hook.magic = TSCRYPTFS_READ_HOOK_MAGIC;
    r->hook.read = reader_read;
    r->hook.attr = reader_attr;
    r->hook.ctx = r;
    r->gen = __atomic_fetch_add(&next_gen, 1, __ATOMIC_RELAXED);
    r->cipher = (int)c;
    r->nonce = aegis ? 32 : aead_nonce_len((int)c); /* AEGIS-256X2's nonce */
    r->aegis = aegis ? aegis->dec : NULL;
    r->aegis_enc = aegis ? aegis->enc : NULL;
    r->hook.write = reader_write;
    r->hook.unlink = reader_unlink;
    r->hook.rmdir = reader_rmdir;
    r->hook.dir_stat = reader_dir_stat;
    r->hook.statfs = reader_statfs;
    r->hook.lookup = reader_lookup;
    r->hook.dirs_changed = reader_dirs_changed;
    r->hook.open = reader_open;
    r->hook.release = reader_release;
    r->root_fd = -1;
    memcpy(r->key, key, 32);
    r->slots = (uint32_t)slots;
    pthread_mutex_init(&r->mut, NULL);
    pthread_mutex_init(&r->ivs_mut, NULL);
    pthread_mutex_init(&r->removed_mut, NULL);
    pthread_mutex_init(&r->slots_mut, NULL);
    pthread_cond_init(&r->idle, NULL);
    if (napi_create_arraybuffer(env, slots * FENCE_STRIDE * sizeof(int32_t), &fences, &ab) != napi_ok) {
        reader_finalize(env, r, NULL);
        return NULL;
    }
    memset(fences, 0, slots * FENCE_STRIDE * sizeof(int32_t));
    r->fences = fences;
    if (napi_create_reference(env, ab, 1, &r->fences_ref) != napi_ok) {
        reader_finalize(env, r, NULL);
        return NULL;
    }
    if (napi_create_external(env, r, reader_finalize, NULL, &ext) != napi_ok) {
        reader_finalize(env, r, NULL);
        return NULL;
    }
    if (napi_create_array_with_length(env, 2, &out) != napi_ok || napi_set_element(env, out, 0, ext) != napi_ok ||
        napi_set_element(env, out, 1, ab) != napi_ok)
        return NULL;
    return out;
}

/*
 * readerOpen(reader, fh, fd, slot, flags): reads of `fh` (flags HANDLE_READABLE),
 * its writes (HANDLE_WRITABLE, when readerWrites turned them on) and changes of
 * its attributes may be answered natively from now on
 */
static napi_value js_open(napi_env env, napi_callback_info info)
{
    size_t argc = 5, fh, fd, slot, flags;
    napi_value argv[5];
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 || !(r = reader_get(env, argv[0])) ||
        !get_size(env, argv[1], &fh) || !get_size(env, argv[2], &fd) || fd > 0x7fffffff || !get_size(env, argv[3], &slot) || slot >= r->slots ||
        !get_size(env, argv[4], &flags) || flags > (HANDLE_READABLE | HANDLE_WRITABLE))
        return throw_inval(env, "readerOpen(reader, fh, fd, slot, flags): bad argument");
    struct handle *h = calloc(1, sizeof *h);
    if (!h) return throw_inval(env, "readerOpen: out of memory");
    h->fh = fh;
    h->fd = (int)fd;
    h->flags = (int)flags;
    h->slot = (uint32_t)slot;
    reader_insert(r, h);
    return NULL;
}

/* readerClose(reader, fh): before the handle's descriptor is closed; waits for a reader_attr using it */
static napi_value js_close(napi_env env, napi_callback_info info)
{
    size_t argc = 2, fh;
    napi_value argv[2];
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || !(r = reader_get(env, argv[0])) || !get_size(env, argv[1], &fh))
        return throw_inval(env, "readerClose(reader, fh): bad argument");
    struct handle *h = reader_remove(r, fh, 0); /* an owned handle goes at its RELEASE (reader_release) */
    if (h) {
        OPENSSL_cleanse(h->id, ID_LEN);
        free(h);
    }
    return NULL;
}

/* readerAttrs(reader, on): whether reader_attr answers (off when created) */
static napi_value js_attrs(napi_env env, napi_callback_info info)
{
    size_t argc = 2, on;
    napi_value argv[2];
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || !(r = reader_get(env, argv[0])) || !get_size(env, argv[1], &on) || on > 1)
        return throw_inval(env, "readerAttrs(reader, on): bad argument");
    __atomic_store_n(&r->attrs, (int)on, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * readerStats(reader) -> [reads answered natively, reads passed on to JavaScript,
 * attribute changes answered natively, writes answered natively, writes passed on,
 * unlinks answered natively, unlinks passed on, lookups answered natively, lookups passed on,
 * opens answered natively, opens passed on, rmdirs answered natively, rmdirs passed on]
 */
static napi_value js_stats(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out, v;
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || !(r = reader_get(env, argv[0])))
        return throw_inval(env, "readerStats(reader): bad argument");
    if (napi_create_array_with_length(env, 13, &out) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->served, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 0, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->passed, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 1, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->attrs_served, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 2, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->written, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 3, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->writes_passed, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 4, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->unlinked, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 5, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->unlinks_passed, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 6, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->looked_up, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 7, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->lookups_passed, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 8, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->opened, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 9, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->opens_passed, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 10, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->rmdired, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 11, v) != napi_ok) return NULL;
    if (napi_create_double(env, (double)__atomic_load_n(&r->rmdirs_passed, __ATOMIC_RELAXED), &v) != napi_ok || napi_set_element(env, out, 12, v) != napi_ok) return NULL;
    return out;
}

int reader_register(napi_env env, napi_value exports)
{
    static const struct {
        const char *name;
        napi_callback fn;
    } fns[] = {{"readerCreate", js_create}, {"readerOpen", js_open}, {"readerClose", js_close}, {"readerAttrs", js_attrs}, {"readerWrites", reader_js_writes}, {"readerCipherRoot", reader_js_cipher_root},
                 {"readerNames", reader_js_names}, {"readerLookups", reader_js_lookups}, {"nameEncrypt", reader_js_name_encrypt},
                 {"readerOpens", reader_js_opens}, {"readerSlot", reader_js_slot}, {"readerSlotRelease", reader_js_slot_release},
                 {"readerAdopt", reader_js_adopt}, {"readerOpensOn", reader_js_opens_on}, {"readerRmdirs", reader_js_rmdirs},
                 {"readerTakeRemovedDirs", reader_js_take_removed}, {"readerStats", js_stats}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        napi_value f;
        if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) != napi_ok ||
            napi_set_named_property(env, exports, fns[i].name, f) != napi_ok)
            return 0;
    }
    return 1;
}
