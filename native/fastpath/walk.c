/* See walk.h. */
#define _GNU_SOURCE
#include "walk.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIRIV_NAME "gocryptfs.diriv"
#define NAME_MAX_PLAIN 255
#define IV_SLOTS 512
#define PPATH_MAX 4096 /* the longest plaintext path a walk keeps: PATH_MAX */

/* One directory's IV and paths; `paths` holds the plaintext path, then the cipher path, each as long as it is. */
struct iv_slot {
    int used;
    int64_t at; /* CLOCK_MONOTONIC ns when read */
    uint16_t plen, clen, room;
    char *paths;
    uint8_t iv[NAME_IV_LEN];
};

/* Each libfuse thread's AES-256-ECB contexts under one walk's name key: encrypting, and decrypting (made at its first listing). */
struct walk_thread {
    EVP_CIPHER_CTX *ctx, *dec;
    uint64_t gen;
};

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static uint64_t next_gen = 1;

static void tl_free(void *p)
{
    struct walk_thread *t = p;
    if (!t) return;
    if (t->ctx) EVP_CIPHER_CTX_free(t->ctx);
    if (t->dec) EVP_CIPHER_CTX_free(t->dec);
    free(t);
}

static void tl_init(void) { pthread_key_create(&tl_key, tl_free); }

/* This thread's contexts for `w`; NULL when they cannot be had. */
static struct walk_thread *thread_ctxs(struct walk *w)
{
    pthread_once(&tl_once, tl_init);
    struct walk_thread *t = pthread_getspecific(tl_key);
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t || pthread_setspecific(tl_key, t) != 0) {
            free(t);
            return NULL;
        }
    }
    if (!t->ctx || t->gen != w->gen) {
        if (t->ctx) EVP_CIPHER_CTX_free(t->ctx);
        if (t->dec) EVP_CIPHER_CTX_free(t->dec);
        t->ctx = name_ctx_new(&w->names);
        t->dec = NULL;
        t->gen = w->gen;
    }
    return t->ctx ? t : NULL;
}

/* This thread's encryption context for `w`; NULL when it cannot be had. */
static EVP_CIPHER_CTX *thread_ctx(struct walk *w)
{
    struct walk_thread *t = thread_ctxs(w);
    return t ? t->ctx : NULL;
}

void walk_clear(struct walk *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mut, NULL);
}

int walk_init(struct walk *w, const uint8_t *key, size_t long_name_max, int raw64)
{
    if (w->ready) return 0;
    w->ivs = calloc(IV_SLOTS, sizeof *w->ivs);
    if (!w->ivs || !name_key_init(&w->names, key, long_name_max, raw64)) return 0;
    w->gen = __atomic_fetch_add(&next_gen, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
    return 1;
}

void walk_free(struct walk *w)
{
    OPENSSL_cleanse(&w->names, sizeof w->names);
    if (w->ivs) {
        /* IVs are not secret; cipher paths and plaintext paths are the user's */
        for (size_t i = 0; i < IV_SLOTS; i++) {
            if (w->ivs[i].paths) OPENSSL_cleanse(w->ivs[i].paths, w->ivs[i].room);
            free(w->ivs[i].paths);
        }
        OPENSSL_cleanse(w->ivs, IV_SLOTS * sizeof *w->ivs);
    }
    free(w->ivs);
    w->ivs = NULL;
    w->ready = 0;
    pthread_mutex_destroy(&w->mut);
}

/* The kept IV and cipher path of plaintext directory `p` (`plen` bytes; 0: the root); 0 when none is valid. */
static int iv_get(struct walk *w, const char *p, size_t plen, uint8_t *iv, char *cpath, size_t *clen)
{
    if (plen >= PPATH_MAX) return 0;
    struct iv_slot *s = &w->ivs[kept_hash(p, plen) % IV_SLOTS];
    const int64_t now = kept_now_ns();
    int hit = 0;
    pthread_mutex_lock(&w->mut);
    if (s->used && s->plen == plen && memcmp(s->paths, p, plen) == 0 && kept_fresh(s->at, now)) {
        memcpy(iv, s->iv, NAME_IV_LEN);
        memcpy(cpath, s->paths + plen, s->clen);
        cpath[s->clen] = 0;
        *clen = s->clen;
        hit = 1;
    }
    pthread_mutex_unlock(&w->mut);
    return hit;
}

/* Keeps what a walk read at `at`, under dirs_gen `gen`, unless a directory change started or ended since. */
static void iv_put(struct walk *w, const char *p, size_t plen, const uint64_t *dirs_gen, uint64_t gen, int64_t at, const uint8_t *iv,
                   const char *cpath, size_t clen)
{
    if (plen >= PPATH_MAX || clen >= CPATH_MAX) return;
    struct iv_slot *s = &w->ivs[kept_hash(p, plen) % IV_SLOTS];
    pthread_mutex_lock(&w->mut);
    if (__atomic_load_n(dirs_gen, __ATOMIC_ACQUIRE) == gen) {
        if (s->room < plen + clen) {
            /* Grown in steps of 256 bytes, and never shrunk: a slot keeps paths of about one depth. */
            const size_t room = (plen + clen + 255) & ~(size_t)255;
            char *grown = malloc(room);
            if (grown) {
                if (s->paths) OPENSSL_cleanse(s->paths, s->room);
                free(s->paths);
                s->paths = grown;
                s->room = (uint16_t)room;
            }
        }
        if (s->room >= plen + clen) {
            s->used = 1;
            s->at = at;
            s->plen = (uint16_t)plen;
            s->clen = (uint16_t)clen;
            memcpy(s->paths, p, plen);
            memcpy(s->paths + plen, cpath, clen);
            memcpy(s->iv, iv, NAME_IV_LEN);
        } else {
            s->used = 0;
        }
    }
    pthread_mutex_unlock(&w->mut);
}

void walk_forget(struct walk *w, const char *path)
{
    if (!__atomic_load_n(&w->ready, __ATOMIC_ACQUIRE) || !path) return;
    const size_t n = strlen(path);
    pthread_mutex_lock(&w->mut);
    for (size_t i = 0; i < IV_SLOTS; i++) {
        struct iv_slot *s = &w->ivs[i];
        if (s->used && s->plen >= n && memcmp(s->paths, path, n) == 0 && (s->plen == n || s->paths[n] == '/')) s->used = 0;
    }
    pthread_mutex_unlock(&w->mut);
}

/* The IV of the directory `dfd`, as src/names/diriv.ts reads it: exactly 16 bytes, not all zero. */
static int read_iv(int dfd, uint8_t *iv)
{
    int fd = openat(dfd, DIRIV_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    uint8_t buf[NAME_IV_LEN + 1];
    ssize_t n;
    do n = read(fd, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n != NAME_IV_LEN) return 0; /* a short read of a regular file on a local file system is its end */
    uint8_t any = 0;
    for (int i = 0; i < NAME_IV_LEN; i++) any |= buf[i];
    if (!any) return 0;
    memcpy(iv, buf, NAME_IV_LEN);
    return 1;
}

/* See walk.h; RFC 3629 §4: no overlong forms, no surrogates, nothing above U+10FFFF. */
int utf8_valid(const uint8_t *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        const uint8_t c = s[i];
        size_t n;
        uint8_t lo = 0x80, hi = 0xbf;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xc2 && c <= 0xdf) n = 1;
        else if (c >= 0xe0 && c <= 0xef) { n = 2; if (c == 0xe0) lo = 0xa0; if (c == 0xed) hi = 0x9f; }
        else if (c >= 0xf0 && c <= 0xf4) { n = 3; if (c == 0xf0) lo = 0x90; if (c == 0xf4) hi = 0x8f; }
        else return 0;
        if (i + n >= len) return 0; /* cut short */
        if (s[i + 1] < lo || s[i + 1] > hi) return 0;
        for (size_t k = 2; k <= n; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xbf) return 0;
        i += n + 1;
    }
    return 1;
}

/* One plaintext component: what cipher-tree.ts's components() lets through without an error. */
static int valid_component(const char *s, size_t len)
{
    return len > 0 && len <= NAME_MAX_PLAIN && !(len == 1 && s[0] == '.') && !(len == 2 && s[0] == '.' && s[1] == '.') &&
           utf8_valid((const uint8_t *)s, len);
}

/*
 * A name that may be shown for a sync conflict copy: what it stands for
 * depends on the directory's other names, which JavaScript works out
 * (twin: mayBeConflictName in src/names/conflicts.ts).
 */
static int may_be_conflict(const char *s)
{
    return strstr(s, " (conflict ") != NULL;
}

int cpath_append(char *cpath, size_t *clen, size_t cap, const char *name)
{
    const size_t n = strlen(name), sep = *clen > 0;
    if (*clen + sep + n >= cap) return 0;
    if (sep) cpath[(*clen)++] = '/';
    memcpy(cpath + *clen, name, n + 1);
    *clen += n;
    return 1;
}

int walk_find(struct walk *w, struct dirs *d, const char *path, const uint64_t *dirs_gen, struct dir_ref *dir, char *disk, int *is_long,
              char *cpath, size_t *clen)
{
    const int root = dirs_root(d);
    EVP_CIPHER_CTX *ctx;
    if (root < 0 || !__atomic_load_n(&w->ready, __ATOMIC_ACQUIRE) || !(ctx = thread_ctx(w))) return 0;
    const uint64_t gen = __atomic_load_n(dirs_gen, __ATOMIC_ACQUIRE);
    const char *last = strrchr(path, '/') + 1;
    const size_t dlen = (size_t)(last - 1 - path); /* the parent's plaintext path, "" for the root */
    uint8_t iv[NAME_IV_LEN];
    *clen = 0;
    if (iv_get(w, path, dlen, iv, cpath, clen)) {
        if (dirs_get(d, cpath, *clen, dir) != 0) return 0;
    } else {
        /* A parent whose IV cannot be kept stays with JavaScript: walking to it here would start from the top every time. */
        if (dlen >= PPATH_MAX) return 0;
        /*
         * The walk down from the deepest directory above whose IV is kept
         * (the root at worst), keeping each directory it reads and the last
         * one open: a lookup after its parent's costs one level, not all.
         */
        const uint64_t epoch = dirs_epoch(d);
        int64_t at = kept_now_ns();
        size_t slen = dlen;
        do {
            while (slen > 0 && path[--slen] != '/') {}
        } while (slen > 0 && !iv_get(w, path, slen, iv, cpath, clen));
        struct dir_ref held = {.fd = -1};
        int dfd = root;
        if (slen > 0) {
            if (dirs_get(d, cpath, *clen, &held) != 0) return 0;
            dfd = held.fd;
        } else {
            *clen = 0;
            cpath[0] = 0;
            if (!iv_get(w, path, 0, iv, cpath, clen)) {
                if (!read_iv(root, iv)) return 0;
                iv_put(w, path, 0, dirs_gen, gen, at, iv, "", 0);
            }
        }
        for (const char *p = path + slen + 1; p < last;) {
            const char *slash = strchr(p, '/');
            const size_t len = (size_t)(slash - p);
            int next = -1;
            if (valid_component(p, len) && name_encrypt(ctx, &w->names, iv, (const uint8_t *)p, len, disk, is_long) &&
                cpath_append(cpath, clen, CPATH_MAX, disk))
                next = openat(dfd, disk, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (held.fd >= 0) {
                dirs_put(d, &held);
                held.fd = -1;
            } else if (dfd != root) {
                close(dfd);
            }
            dfd = next;
            at = kept_now_ns();
            if (dfd < 0) return 0;
            if (!read_iv(dfd, iv)) {
                close(dfd);
                return 0;
            }
            iv_put(w, path, (size_t)(slash - path), dirs_gen, gen, at, iv, cpath, *clen);
            p = slash + 1;
        }
        if (dfd == root) dirs_get(d, "", 0, dir);
        else dirs_keep(d, cpath, *clen, dfd, epoch, at, dir);
    }
    const size_t nlen = strlen(last);
    if (!valid_component(last, nlen) || may_be_conflict(last) || !name_encrypt(ctx, &w->names, iv, (const uint8_t *)last, nlen, disk, is_long)) {
        dirs_put(d, dir);
        return 0;
    }
    return 1;
}

int walk_open_dir(struct walk *w, struct dirs *d, const char *path, const uint64_t *dirs_gen, int *fd, uint8_t *iv, char *cpath, size_t *clen)
{
    const int root = dirs_root(d);
    if (root < 0 || !__atomic_load_n(&w->ready, __ATOMIC_ACQUIRE) || path[0] != '/') return 0;
    const size_t plen = path[1] == 0 ? 0 : strlen(path); /* the root is kept as "" */
    const uint64_t gen = __atomic_load_n(dirs_gen, __ATOMIC_ACQUIRE);
    const int64_t at = kept_now_ns();
    int dfd;
    if (plen == 0) {
        *clen = 0;
        cpath[0] = 0;
        dfd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } else {
        char disk[NAME_DISK_MAX + 1];
        int is_long = 0;
        struct dir_ref parent;
        if (!walk_find(w, d, path, dirs_gen, &parent, disk, &is_long, cpath, clen)) return 0;
        dfd = cpath_append(cpath, clen, CPATH_MAX, disk) ? openat(parent.fd, disk, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        dirs_put(d, &parent);
    }
    if (dfd < 0) return 0;
    /* The IV a walk kept for this directory at this cipher path, else the one on disk, kept from now on. */
    char kept[CPATH_MAX];
    size_t klen = 0;
    if (!iv_get(w, path, plen, iv, kept, &klen) || klen != *clen || memcmp(kept, cpath, klen) != 0) {
        if (!read_iv(dfd, iv)) {
            close(dfd);
            return 0;
        }
        iv_put(w, path, plen, dirs_gen, gen, at, iv, cpath, *clen);
    }
    *fd = dfd;
    return 1;
}

int walk_decrypt_name(struct walk *w, const uint8_t *iv, const char *cname, size_t clen, uint8_t *out, size_t *len)
{
    struct walk_thread *t = thread_ctxs(w);
    if (!t) return 0;
    if (!t->dec && !(t->dec = name_dec_ctx_new(&w->names))) return 0;
    return name_decrypt(t->dec, &w->names, iv, cname, clen, out, len);
}

int walk_long_hash(struct walk *w, const char *cname, size_t len, char *out)
{
    return name_long_hash(cname, len, w->names.raw64, out);
}
