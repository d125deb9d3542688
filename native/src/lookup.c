/*
 * A mount's native lookup: the GETATTR libfuse2 sends for every
 * LOOKUP and stat(2) that the binding's attribute cache cannot answer,
 * answered on the libfuse thread that received it. In JavaScript each
 * costs two thread hand-overs for one fstatat; an md5sum -c of the bench
 * tree sends 20,477, and an untar one per file it creates (to learn that
 * the name is free).
 *
 * It finds the entry as src/vault/backing/cipher-tree.ts does: each plaintext
 * component encrypted under its directory's IV (name_cipher.c), each
 * directory opened with openat(O_PATH|O_DIRECTORY|O_NOFOLLOW) from its
 * parent's descriptor, from the cipher directory down, the IV read through
 * that descriptor; then fstatat(AT_SYMLINK_NOFOLLOW) of the last name on
 * disk. A symlink planted in the cipher directory is never followed.
 *
 * Directories' IVs and cipher paths are kept, by plaintext path, as the
 * vault's directory cache keeps them (dir-cache.ts): for a second. A mkdir,
 * rmdir or rename through the mount makes the hook forget the directories
 * it touches and all below them when it starts and again when it ends
 * (`dirs_changed`), and what a walk read is kept only if the binding's
 * count of those changes (`dirs_gen`, which steps on before each
 * forgetting) stood still while it read. A kept directory is opened in one openat2(2)
 * with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, which refuses symlinks on the
 * way as the walk does (or by the walk, on kernels before 5.6), unless the
 * mount still has it open from its last requests (dir_fds.c).
 *
 * Answers: 0 with the entry's attributes (a regular file's size made
 * plaintext, as reader.c's attribute hook does) and its cipher path, which
 * the binding keeps for a native unlink; -ENOENT when every directory was
 * found but the name was not; anything else goes to JavaScript untouched:
 * a symlink (its size needs its target decrypted), a name the vault
 * refuses, a directory that is gone or whose IV cannot be read, any other
 * error (JS then gives it, with its log line).
 */
#define _GNU_SOURCE
#include "reader_core.h"
#include "napi_args.h"
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DIRIV_NAME "gocryptfs.diriv"
#define NAME_MAX_PLAIN 255

struct iv_slot {
    int used;
    int64_t at; /* CLOCK_MONOTONIC ns when read */
    uint16_t plen, clen;
    char ppath[IV_PPATH_MAX];
    char cpath[IV_CPATH_MAX];
    uint8_t iv[NAME_IV_LEN];
};

/* The kept IV and cipher path of plaintext directory `p` (`plen` bytes; 0: the root); 0 when none is valid. */
static int iv_get(struct reader *r, const char *p, size_t plen, uint8_t *iv, char *cpath, size_t *clen)
{
    if (plen >= IV_PPATH_MAX) return 0;
    struct iv_slot *s = &r->ivs[kept_hash(p, plen) % IV_SLOTS];
    const int64_t now = kept_now_ns();
    int hit = 0;
    pthread_mutex_lock(&r->ivs_mut);
    if (s->used && s->plen == plen && memcmp(s->ppath, p, plen) == 0 && now - s->at >= 0 && now - s->at < KEPT_TTL_NS) {
        memcpy(iv, s->iv, NAME_IV_LEN);
        memcpy(cpath, s->cpath, s->clen);
        cpath[s->clen] = 0;
        *clen = s->clen;
        hit = 1;
    }
    pthread_mutex_unlock(&r->ivs_mut);
    return hit;
}

/* Keeps what a walk read at `at`, under dirs_gen `gen`, unless a directory change started or ended since. */
static void iv_put(struct reader *r, const char *p, size_t plen, const uint64_t *dirs_gen, uint64_t gen, int64_t at, const uint8_t *iv,
                   const char *cpath, size_t clen)
{
    if (plen >= IV_PPATH_MAX || clen >= IV_CPATH_MAX) return;
    struct iv_slot *s = &r->ivs[kept_hash(p, plen) % IV_SLOTS];
    pthread_mutex_lock(&r->ivs_mut);
    if (__atomic_load_n(dirs_gen, __ATOMIC_ACQUIRE) == gen) {
        s->used = 1;
        s->at = at;
        s->plen = (uint16_t)plen;
        memcpy(s->ppath, p, plen);
        s->clen = (uint16_t)clen;
        memcpy(s->cpath, cpath, clen);
        memcpy(s->iv, iv, NAME_IV_LEN);
    }
    pthread_mutex_unlock(&r->ivs_mut);
}

/* The hook's `dirs_changed` (fuse_hooks.h): forgets plaintext directory `path` and everything kept below it. */
void reader_dirs_changed(void *ctx, const char *path)
{
    struct reader *r = ctx;
    dir_fds_changed(r);
    if (!r->ivs || !path) return;
    const size_t n = strlen(path);
    pthread_mutex_lock(&r->ivs_mut);
    for (size_t i = 0; i < IV_SLOTS; i++) {
        struct iv_slot *s = &r->ivs[i];
        if (s->used && s->plen >= n && memcmp(s->ppath, path, n) == 0 && (s->plen == n || s->ppath[n] == '/')) s->used = 0;
    }
    pthread_mutex_unlock(&r->ivs_mut);
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

/* reader_core.h */
int reader_open_beneath(int root, const char *cpath)
{
    static int no_openat2; /* set once when the kernel says ENOSYS (before Linux 5.6); a kernel does not gain it while we run */
    if (cpath[0] == 0) return root;
    if (!__atomic_load_n(&no_openat2, __ATOMIC_RELAXED)) {
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
        const long fd = syscall(SYS_openat2, root, cpath, &how, sizeof how);
        if (fd >= 0 || errno != ENOSYS) return (int)fd;
        __atomic_store_n(&no_openat2, 1, __ATOMIC_RELAXED);
    }
    int dfd = root;
    for (const char *p = cpath;;) {
        const char *slash = strchr(p, '/');
        const size_t len = slash ? (size_t)(slash - p) : strlen(p);
        char name[NAME_DISK_MAX + 1];
        if (len == 0 || len > NAME_DISK_MAX) break;
        memcpy(name, p, len);
        name[len] = 0;
        const int next = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd != root) close(dfd);
        if (next < 0) return -1;
        dfd = next;
        if (!slash) return dfd;
        p = slash + 1;
    }
    if (dfd != root) close(dfd);
    return -1;
}

/*
 * Whether `len` bytes are well-formed UTF-8 (RFC 3629 §4: no overlong
 * forms, no surrogates, nothing above U+10FFFF). The binding hands JS its
 * paths as strings, which turn any other byte into U+FFFD, so JS encrypts
 * such a name as something else: those stay with JS, to be found as they
 * were made.
 */
static int utf8_ok(const uint8_t *s, size_t len)
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
           utf8_ok((const uint8_t *)s, len);
}

static int appended(char *cpath, size_t *clen, size_t cap, const char *name)
{
    const size_t n = strlen(name), sep = *clen > 0;
    if (*clen + sep + n >= cap) return 0;
    if (sep) cpath[(*clen)++] = '/';
    memcpy(cpath + *clen, name, n + 1);
    *clen += n;
    return 1;
}

/*
 * Finds plaintext `path` ("/a/b", not the root) as the vault does: its
 * parent directory's descriptor in *dir (the root's own, or one the reader
 * keeps, dir_fds.c; the caller gives it back with dir_fds_put), its last
 * name on disk in `disk` (with *is_long) and the parent's cipher path in
 * `cpath` (*clen bytes). Returns 1, or 0 when the request must go to
 * JavaScript (nothing to give back then).
 */
int reader_find(struct reader *r, int root, const char *path, const uint64_t *dirs_gen, struct dir_ref *dir, char *disk, int *is_long,
                char *cpath, size_t *clen)
{
    struct thread_state *t = reader_thread_state(r, 0);
    if (!t) return 0;
    if (!t->nctx || t->ngen != r->gen) {
        if (t->nctx) EVP_CIPHER_CTX_free(t->nctx);
        t->nctx = name_ctx_new(&r->names);
        t->ngen = r->gen;
        if (!t->nctx) return 0;
    }
    const uint64_t gen = __atomic_load_n(dirs_gen, __ATOMIC_ACQUIRE);
    const char *last = strrchr(path, '/') + 1;
    const size_t dlen = (size_t)(last - 1 - path); /* the parent's plaintext path, "" for the root */
    uint8_t iv[NAME_IV_LEN];
    *clen = 0;
    if (iv_get(r, path, dlen, iv, cpath, clen)) {
        if (dir_fds_get(r, root, cpath, *clen, dir) != 0) return 0;
    } else {
        /* The walk from the root, keeping each directory it reads, and the last one open. */
        const uint64_t epoch = dir_fds_epoch(r);
        int64_t at = kept_now_ns();
        if (!iv_get(r, path, 0, iv, cpath, clen)) {
            if (!read_iv(root, iv)) return 0;
            iv_put(r, path, 0, dirs_gen, gen, at, iv, "", 0);
        }
        *clen = 0;
        cpath[0] = 0;
        int dfd = root;
        for (const char *p = path + 1; p < last;) {
            const char *slash = strchr(p, '/');
            const size_t len = (size_t)(slash - p);
            int next = -1;
            if (valid_component(p, len) && name_encrypt(t->nctx, &r->names, iv, (const uint8_t *)p, len, disk, is_long) &&
                appended(cpath, clen, IV_CPATH_MAX, disk))
                next = openat(dfd, disk, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (dfd != root) close(dfd);
            dfd = next;
            at = kept_now_ns();
            if (dfd < 0) return 0;
            if (!read_iv(dfd, iv)) {
                close(dfd);
                return 0;
            }
            iv_put(r, path, (size_t)(slash - path), dirs_gen, gen, at, iv, cpath, *clen);
            p = slash + 1;
        }
        if (dfd == root) dir_fds_get(r, root, "", 0, dir);
        else dir_fds_keep(r, cpath, *clen, dfd, epoch, at, dir);
    }
    const size_t nlen = strlen(last);
    if (!valid_component(last, nlen) || !name_encrypt(t->nctx, &r->names, iv, (const uint8_t *)last, nlen, disk, is_long)) {
        dir_fds_put(r, dir);
        return 0;
    }
    return 1;
}

/* The hook's `lookup` (fuse_hooks.h). Twin: statWords in src/vault/node-attrs.ts. */
int reader_lookup(void *ctx, const char *path, const uint64_t *dirs_gen, struct stat *st, char *cpath_out, size_t cap, int *cpath_long)
{
    struct reader *r = ctx;
    const int root = __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE);
    if (root < 0 || !__atomic_load_n(&r->lookups, __ATOMIC_ACQUIRE) || !path || path[0] != '/') goto pass;
    *cpath_long = 0;
    cpath_out[0] = 0;
    if (path[1] == 0) {
        if (fstat(root, st) != 0) goto pass;
        __atomic_fetch_add(&r->looked_up, 1, __ATOMIC_RELAXED);
        return 0;
    }
    char cpath[IV_CPATH_MAX], disk[NAME_DISK_MAX + 1];
    size_t clen = 0;
    int is_long = 0;
    struct dir_ref dir;
    if (!reader_find(r, root, path, dirs_gen, &dir, disk, &is_long, cpath, &clen)) goto pass;
    const int failed = fstatat(dir.fd, disk, st, AT_SYMLINK_NOFOLLOW) != 0 ? errno : 0;
    dir_fds_put(r, &dir);
    if (failed) {
        if (failed != ENOENT) goto pass;
        __atomic_fetch_add(&r->looked_up, 1, __ATOMIC_RELAXED);
        return -ENOENT;
    }
    if (S_ISLNK(st->st_mode)) goto pass;
    if (S_ISREG(st->st_mode)) st->st_size = (off_t)reader_shown_size((int64_t)st->st_size, r->nonce);
    if (appended(cpath, &clen, cap < sizeof cpath ? cap : sizeof cpath, disk)) {
        memcpy(cpath_out, cpath, clen + 1);
        *cpath_long = is_long;
    }
    __atomic_fetch_add(&r->looked_up, 1, __ATOMIC_RELAXED);
    return 0;
pass:
    __atomic_fetch_add(&r->lookups_passed, 1, __ATOMIC_RELAXED);
    return TSCRYPTFS_HOOK_PASS;
}

/*
 * readerNames(reader, emeKey, longNameMax, raw64): from now on the reader
 * answers the binding's lookups (after readerCipherRoot), with names
 * encrypted under `emeKey` (32 bytes, copied); once only. readerLookups
 * turns them off and on again.
 */
napi_value reader_js_names(napi_env env, napi_callback_info info)
{
    size_t argc = 4, keylen, max;
    napi_value argv[4];
    uint8_t *key;
    bool raw64;
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || !(r = reader_get(env, argv[0])) ||
        !get_bytes(env, argv[1], &key, &keylen) || keylen != 32 || !get_size(env, argv[2], &max) || max < 62 || max > NAME_DISK_MAX ||
        napi_get_value_bool(env, argv[3], &raw64) != napi_ok || r->names_set || __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE) < 0)
        return throw_inval(env, "readerNames(reader, emeKey, longNameMax, raw64): bad argument");
    r->ivs = calloc(IV_SLOTS, sizeof *r->ivs);
    if (!r->ivs) return throw_inval(env, "readerNames: out of memory");
    if (!name_key_init(&r->names, key, max, raw64)) return throw_inval(env, "readerNames: OpenSSL failed");
    r->names_set = 1;
    __atomic_store_n(&r->lookups, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* readerLookups(reader, on): whether the reader answers lookups (once readerNames gave it the key). */
napi_value reader_js_lookups(napi_env env, napi_callback_info info)
{
    bool on;
    struct reader *r;
    if (!reader_switch_args(env, info, &r, &on)) return throw_inval(env, "readerLookups(reader, on): bad argument");
    __atomic_store_n(&r->lookups, on && r->names_set ? 1 : 0, __ATOMIC_RELEASE);
    return NULL;
}

void reader_names_free(struct reader *r)
{
    OPENSSL_cleanse(&r->names, sizeof r->names);
    if (r->ivs) OPENSSL_cleanse(r->ivs, IV_SLOTS * sizeof *r->ivs); /* IVs are not secret; cipher paths and plaintext paths are the user's */
    free(r->ivs);
    r->ivs = NULL;
}

/*
 * nameEncrypt(emeKey, iv, name, longNameMax, raw64) -> [name on disk, is long]:
 * what the lookup makes of one plaintext name (for the unit tests, which
 * hold it to src/names/name-codec.ts).
 */
napi_value reader_js_name_encrypt(napi_env env, napi_callback_info info)
{
    size_t argc = 5, keylen, ivlen, nlen, max;
    napi_value argv[5], out, v;
    uint8_t *key, *iv, *name;
    bool raw64;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 || !get_bytes(env, argv[0], &key, &keylen) || keylen != 32 ||
        !get_bytes(env, argv[1], &iv, &ivlen) || ivlen != NAME_IV_LEN || !get_bytes(env, argv[2], &name, &nlen) || nlen == 0 || nlen > NAME_MAX_PLAIN ||
        !get_size(env, argv[3], &max) || napi_get_value_bool(env, argv[4], &raw64) != napi_ok)
        return throw_inval(env, "nameEncrypt(emeKey, iv, name, longNameMax, raw64): bad argument");
    struct name_key k;
    char disk[NAME_DISK_MAX + 1];
    int is_long = 0, ok = 0;
    EVP_CIPHER_CTX *ctx = NULL;
    if (name_key_init(&k, key, max, raw64) && (ctx = name_ctx_new(&k))) ok = name_encrypt(ctx, &k, iv, name, nlen, disk, &is_long);
    if (ctx) EVP_CIPHER_CTX_free(ctx);
    OPENSSL_cleanse(&k, sizeof k);
    if (!ok) return throw_inval(env, "nameEncrypt: OpenSSL failed");
    if (napi_create_array_with_length(env, 2, &out) != napi_ok || napi_create_string_latin1(env, disk, NAPI_AUTO_LENGTH, &v) != napi_ok ||
        napi_set_element(env, out, 0, v) != napi_ok || napi_get_boolean(env, is_long, &v) != napi_ok || napi_set_element(env, out, 1, v) != napi_ok)
        return NULL;
    return out;
}
