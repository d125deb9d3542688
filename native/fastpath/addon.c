/*
 * tscryptfs_fastpath.node: the Node-API face of the mount's native fast
 * path (fast_path.h), used by src/fuse/native-fast-path.ts. JavaScript
 * makes one fast path per mount, hands its external to the binding's
 * setFastPath, registers the handles it opens, and turns each hook on as
 * the mount's options allow. The key is kept until the external is
 * garbage-collected and is wiped then.
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include "napi_args.h"
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The fast path an external made by create points to; NULL for anything else. */
static struct fast_path *get_fp(napi_env env, napi_value v)
{
    void *p = NULL;
    napi_valuetype t;
    if (napi_typeof(env, v, &t) != napi_ok || t != napi_external || napi_get_value_external(env, v, &p) != napi_ok || !p) return NULL;
    struct fast_path *fp = p;
    return fp->hook.magic == TSCRYPTFS_FAST_PATH_MAGIC ? fp : NULL;
}

/* The arguments (fastPath, ...) of a call taking `n` of them, into argv; NULL when they are not that. */
static struct fast_path *args(napi_env env, napi_callback_info info, size_t n, napi_value *argv)
{
    size_t argc = n;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < n) return NULL;
    return get_fp(env, argv[0]);
}

/* Device and inode from JS: dev, inoLow, inoHigh (32 bits each). */
static int get_file(napi_env env, napi_value *argv, uint32_t *dev, uint64_t *ino)
{
    size_t d, lo, hi;
    if (!get_size(env, argv[0], &d) || !get_size(env, argv[1], &lo) || !get_size(env, argv[2], &hi) || d > 0xffffffffu || lo > 0xffffffffu ||
        hi > 0xffffffffu)
        return 0;
    *dev = (uint32_t)d;
    *ino = ((uint64_t)hi << 32) | lo;
    return 1;
}

static void fp_finalize(napi_env env, void *data, void *hint)
{
    struct fast_path *p = data;
    napi_ref fences_ref = hint;
    handles_free(&p->handles);
    fences_free(&p->fences);
    if (fences_ref) napi_delete_reference(env, fences_ref);
    dirs_free(&p->dirs);
    walk_free(&p->walk);
    removed_free(&p->removed);
    held_free(&p->held);
    content_key_free(&p->key);
    free(p);
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
 * create(cipher, key, slots[, aegis]) -> [fastPath, fences]: fences is an
 * ArrayBuffer of FENCE_STRIDE * slots int32 counters (fences.h); cipher
 * CONTENT_AEGIS takes the AEGIS addon's decryptHandle(4) as `aegis`.
 */
static napi_value js_create(napi_env env, napi_callback_info info)
{
    size_t argc = 4, c, keylen, slots;
    napi_value argv[4], ext, ab, out;
    uint8_t *key;
    void *words;
    napi_ref ref = NULL;
    const struct tscryptfs_aegis_export *aegis = NULL;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !get_size(env, argv[0], &c) || c > CONTENT_AEGIS ||
        !get_bytes(env, argv[1], &key, &keylen) || keylen != 32 || !get_size(env, argv[2], &slots) || slots == 0 || slots > (1u << 20) ||
        (c == CONTENT_AEGIS && (argc < 4 || !(aegis = get_aegis(env, argv[3])))))
        return throw_inval(env, "create(cipher, key, slots[, aegis]): bad argument");
    if (napi_create_arraybuffer(env, slots * FENCE_STRIDE * sizeof(int32_t), &words, &ab) != napi_ok ||
        napi_create_reference(env, ab, 1, &ref) != napi_ok)
        return NULL;
    memset(words, 0, slots * FENCE_STRIDE * sizeof(int32_t));
    struct fast_path *p = calloc(1, sizeof *p);
    if (!p) {
        napi_delete_reference(env, ref);
        return throw_inval(env, "create: out of memory");
    }
    content_key_init(&p->key, (int)c, key, aegis);
    handles_init(&p->handles);
    fences_init(&p->fences, words, (uint32_t)slots);
    dirs_init(&p->dirs);
    walk_clear(&p->walk);
    removed_init(&p->removed);
    held_init(&p->held);
    p->hook.magic = TSCRYPTFS_FAST_PATH_MAGIC;
    p->hook.ctx = p;
    p->hook.read = fp_read;
    p->hook.attr = fp_attr;
    p->hook.write = fp_write;
    p->hook.unlink = fp_unlink;
    p->hook.rmdir = fp_rmdir;
    p->hook.dir_stat = fp_dir_stat;
    p->hook.statfs = fp_statfs;
    p->hook.lookup = fp_lookup;
    p->hook.no_xattrs = fp_no_xattrs;
    p->hook.dirs_changed = fp_dirs_changed;
    p->hook.open = fp_open;
    p->hook.release = fp_release;
    p->hook.create = fp_create;
    p->hook.fgetattr = fp_fgetattr;
    p->hook.fsync = fp_fsync;
    p->hook.list = fp_list;
    p->hook.rename = fp_rename;
    if (napi_create_external(env, p, fp_finalize, ref, &ext) != napi_ok) {
        fp_finalize(env, p, ref);
        return NULL;
    }
    if (napi_create_array_with_length(env, 2, &out) != napi_ok || napi_set_element(env, out, 0, ext) != napi_ok ||
        napi_set_element(env, out, 1, ab) != napi_ok)
        return NULL;
    return out;
}

/*
 * handleOpened(fastPath, fh, fd, slot, flags): JavaScript opened handle
 * `fh`; its reads (flags HANDLE_READABLE), its writes (HANDLE_WRITABLE,
 * with answerWrites) and changes of its attributes may be answered natively
 * from now on.
 */
static napi_value js_handle_opened(napi_env env, napi_callback_info info)
{
    size_t fh, fd, slot, flags;
    napi_value argv[5];
    struct fast_path *p = args(env, info, 5, argv);
    if (!p || !get_size(env, argv[1], &fh) || !get_size(env, argv[2], &fd) || fd > 0x7fffffff || !get_size(env, argv[3], &slot) ||
        slot >= p->fences.n || !get_size(env, argv[4], &flags) || flags > (HANDLE_READABLE | HANDLE_WRITABLE))
        return throw_inval(env, "handleOpened(fastPath, fh, fd, slot, flags): bad argument");
    struct handle *h = calloc(1, sizeof *h);
    if (!h) return throw_inval(env, "handleOpened: out of memory");
    h->fh = fh;
    h->fd = (int)fd;
    h->flags = (int)flags;
    h->slot = (uint32_t)slot;
    handles_insert(&p->handles, h);
    return NULL;
}

/* handleClosing(fastPath, fh): before JavaScript closes the handle's descriptor; waits for a hook using it. */
static napi_value js_handle_closing(napi_env env, napi_callback_info info)
{
    size_t fh;
    napi_value argv[2];
    struct fast_path *p = args(env, info, 2, argv);
    if (!p || !get_size(env, argv[1], &fh)) return throw_inval(env, "handleClosing(fastPath, fh): bad argument");
    struct handle *h = handles_remove(&p->handles, fh, 0); /* an owned handle goes at its RELEASE (fp_release) */
    if (h) handle_free(h);
    return NULL;
}

/* answerAttrs(fastPath, on): whether the hook `attr` answers. */
static napi_value js_answer_attrs(napi_env env, napi_callback_info info)
{
    size_t on;
    napi_value argv[2];
    struct fast_path *p = args(env, info, 2, argv);
    if (!p || !get_size(env, argv[1], &on) || on > 1) return throw_inval(env, "answerAttrs(fastPath, on): bad argument");
    __atomic_store_n(&p->attrs, (int)on, __ATOMIC_RELEASE);
    return NULL;
}

/* answerWrites(fastPath, on, prealloc): whether the hook `write` answers, and whether it reserves space first. */
static napi_value js_answer_writes(napi_env env, napi_callback_info info)
{
    size_t on, prealloc;
    napi_value argv[3];
    struct fast_path *p = args(env, info, 3, argv);
    if (!p || !get_size(env, argv[1], &on) || on > 1 || !get_size(env, argv[2], &prealloc) || prealloc > 1)
        return throw_inval(env, "answerWrites(fastPath, on, prealloc): bad argument");
    __atomic_store_n(&p->prealloc, (int)prealloc, __ATOMIC_RELEASE);
    __atomic_store_n(&p->writes, (int)on, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * useCipherRoot(fastPath, rootFd, unlinks): from now on the fast path walks
 * the cipher directory from its own duplicate of `rootFd` (O_PATH is
 * enough): for the binding's dir_stat and statfs, and with `unlinks` true to
 * answer the unlinks the binding knows the cipher path of. Once only.
 */
static napi_value js_use_cipher_root(napi_env env, napi_callback_info info)
{
    int32_t fd;
    bool unlinks;
    napi_value argv[3];
    struct fast_path *p = args(env, info, 3, argv);
    if (!p || napi_get_value_int32(env, argv[1], &fd) != napi_ok || fd < 0 || napi_get_value_bool(env, argv[2], &unlinks) != napi_ok ||
        dirs_root(&p->dirs) >= 0)
        return throw_inval(env, "useCipherRoot(fastPath, rootFd, unlinks): bad argument");
    p->unlinks = unlinks ? 1 : 0; /* before the root, which publishes it */
    if (!dirs_set_root(&p->dirs, fd)) return throw_inval(env, "useCipherRoot: cannot duplicate rootFd");
    return NULL;
}

/*
 * useNames(fastPath, emeKey, longNameMax, raw64): from now on (after
 * useCipherRoot) the fast path answers the binding's lookups, with names
 * encrypted under `emeKey` (32 bytes, copied); once only.
 */
static napi_value js_use_names(napi_env env, napi_callback_info info)
{
    size_t keylen, max;
    uint8_t *key;
    bool raw64;
    napi_value argv[4];
    struct fast_path *p = args(env, info, 4, argv);
    if (!p || !get_bytes(env, argv[1], &key, &keylen) || keylen != 32 || !get_size(env, argv[2], &max) || max < 62 || max > NAME_DISK_MAX ||
        napi_get_value_bool(env, argv[3], &raw64) != napi_ok || p->walk.ready || dirs_root(&p->dirs) < 0)
        return throw_inval(env, "useNames(fastPath, emeKey, longNameMax, raw64): bad argument");
    if (!walk_init(&p->walk, key, max, raw64)) return throw_inval(env, "useNames: out of memory or OpenSSL failed");
    __atomic_store_n(&p->lookups, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* The arguments (fastPath, on) of a switch such as answerOpens; NULL when they are not that. */
static struct fast_path *switch_args(napi_env env, napi_callback_info info, bool *on)
{
    napi_value argv[2];
    struct fast_path *p = args(env, info, 2, argv);
    return p && napi_get_value_bool(env, argv[1], on) == napi_ok ? p : NULL;
}

/*
 * holdPath(fastPath, path, on): whether the hooks leave requests naming
 * plaintext `path` to JavaScript (held.h; src/fuse/hidden-files.ts).
 */
static napi_value js_hold_path(napi_env env, napi_callback_info info)
{
    napi_value argv[3];
    size_t len, got;
    bool on;
    struct fast_path *p = args(env, info, 3, argv);
    if (!p || napi_get_value_string_utf8(env, argv[1], NULL, 0, &len) != napi_ok || len == 0 || napi_get_value_bool(env, argv[2], &on) != napi_ok)
        return throw_inval(env, "holdPath(fastPath, path, on): bad argument");
    char *path = malloc(len + 1);
    if (path && napi_get_value_string_utf8(env, argv[1], path, len + 1, &got) == napi_ok && got == len) held_set(&p->held, path, on);
    else held_set(&p->held, NULL, on); /* out of memory: held.c then holds every path while this one is held */
    free(path);
    return NULL;
}

/* Sets hook switch `flag` (opens, creates) from the arguments (fastPath, on) of `usage`. */
static napi_value answer_switch(napi_env env, napi_callback_info info, size_t flag, const char *usage)
{
    bool on;
    struct fast_path *p = switch_args(env, info, &on);
    if (!p) return throw_inval(env, usage);
    __atomic_store_n((int *)((char *)p + flag), on ? 1 : 0, __ATOMIC_RELEASE);
    return NULL;
}

/* answerOpens(fastPath, on): whether the hook `open` answers opens (with lookups on; for writing with writes on). */
static napi_value js_answer_opens(napi_env env, napi_callback_info info)
{
    return answer_switch(env, info, offsetof(struct fast_path, opens), "answerOpens(fastPath, on): bad argument");
}

/* answerCreates(fastPath, on): whether the hook `create` answers creates (with opens and writes on). */
static napi_value js_answer_creates(napi_env env, napi_callback_info info)
{
    return answer_switch(env, info, offsetof(struct fast_path, creates), "answerCreates(fastPath, on): bad argument");
}

/* answerFsyncs(fastPath, on): whether the hook `fsync` answers. */
static napi_value js_answer_fsyncs(napi_env env, napi_callback_info info)
{
    return answer_switch(env, info, offsetof(struct fast_path, fsyncs), "answerFsyncs(fastPath, on): bad argument");
}

/* answerLists(fastPath, on): whether the hook `list` answers (with useNames). */
static napi_value js_answer_lists(napi_env env, napi_callback_info info)
{
    return answer_switch(env, info, offsetof(struct fast_path, lists), "answerLists(fastPath, on): bad argument");
}

/* answerRenames(fastPath, on): whether the hook `rename` answers (with lookups on). */
static napi_value js_answer_renames(napi_env env, napi_callback_info info)
{
    return answer_switch(env, info, offsetof(struct fast_path, renames), "answerRenames(fastPath, on): bad argument");
}

/*
 * answerRmdirs(fastPath, on, dirIVs): whether the hook `rmdir` answers
 * (with unlinks on, useCipherRoot); the caller then takes the log of what
 * it removed (takeRemovedDirs) before each request it answers. `dirIVs`:
 * each directory has a gocryptfs.diriv (the format's DirIV flag).
 */
static napi_value js_answer_rmdirs(napi_env env, napi_callback_info info)
{
    bool on, ivs;
    napi_value argv[3];
    struct fast_path *p = args(env, info, 3, argv);
    if (!p || napi_get_value_bool(env, argv[1], &on) != napi_ok || napi_get_value_bool(env, argv[2], &ivs) != napi_ok)
        return throw_inval(env, "answerRmdirs(fastPath, on, dirIVs): bad argument");
    p->rmdir_ivs = ivs ? 1 : 0; /* before rmdirs, which publishes it */
    if (on) removed_start(&p->removed);
    __atomic_store_n(&p->rmdirs, on && p->unlinks ? 1 : 0, __ATOMIC_RELEASE);
    return NULL;
}

/* claimSlot(fastPath, dev, inoLow, inoHigh) -> the file's fence slot, counted once more; -1 when none is free. */
static napi_value js_claim_slot(napi_env env, napi_callback_info info)
{
    napi_value argv[4], out;
    uint32_t dev;
    uint64_t ino;
    struct fast_path *p = args(env, info, 4, argv);
    if (!p || !get_file(env, argv + 1, &dev, &ino)) return throw_inval(env, "claimSlot(fastPath, dev, inoLow, inoHigh): bad argument");
    if (napi_create_int64(env, fences_claim(&p->fences, dev, ino), &out) != napi_ok) return NULL;
    return out;
}

/* releaseSlot(fastPath, dev, inoLow, inoHigh): gives back what claimSlot took. */
static napi_value js_release_slot(napi_env env, napi_callback_info info)
{
    napi_value argv[4];
    uint32_t dev;
    uint64_t ino;
    struct fast_path *p = args(env, info, 4, argv);
    if (!p || !get_file(env, argv + 1, &dev, &ino)) return throw_inval(env, "releaseSlot(fastPath, dev, inoLow, inoHigh): bad argument");
    fences_release(&p->fences, dev, ino);
    return NULL;
}

/*
 * adopt(fastPath, fh) -> [a duplicate of native handle fh's descriptor
 * (O_CLOEXEC), which JS closes, or -1 when fh is no such handle; the
 * access mode it was opened with (O_RDONLY, O_WRONLY or O_RDWR)].
 */
static napi_value js_adopt(napi_env env, napi_callback_info info)
{
    size_t fh;
    int access = O_RDONLY;
    napi_value argv[2], out, v;
    struct fast_path *p = args(env, info, 2, argv);
    if (!p || !get_size(env, argv[1], &fh)) return throw_inval(env, "adopt(fastPath, fh): bad argument");
    const int fd = handles_adopt_fd(&p->handles, fh, &access);
    if (napi_create_array_with_length(env, 2, &out) != napi_ok || napi_create_int32(env, fd, &v) != napi_ok ||
        napi_set_element(env, out, 0, v) != napi_ok || napi_create_int32(env, access, &v) != napi_ok || napi_set_element(env, out, 1, v) != napi_ok)
        return NULL;
    return out;
}

/* nativeHandles(fastPath) -> how many handles the fast path opened that JS has not adopted are open. */
static napi_value js_native_handles(napi_env env, napi_callback_info info)
{
    napi_value argv[1], out;
    struct fast_path *p = args(env, info, 1, argv);
    if (!p) return throw_inval(env, "nativeHandles(fastPath): bad argument");
    if (napi_create_double(env, (double)handles_owned_count(&p->handles), &out) != napi_ok) return NULL;
    return out;
}

/* opensOn(fastPath, dev, inoLow, inoHigh) -> the native handles open on that file that JS has not adopted. */
static napi_value js_opens_on(napi_env env, napi_callback_info info)
{
    napi_value argv[4], out = NULL, v;
    uint32_t dev;
    uint64_t ino;
    struct fast_path *p = args(env, info, 4, argv);
    if (!p || !get_file(env, argv + 1, &dev, &ino)) return throw_inval(env, "opensOn(fastPath, dev, inoLow, inoHigh): bad argument");
    uint64_t few[64], *fhs = few;
    size_t cap = 64, n = handles_owned_on(&p->handles, dev, ino, fhs, cap);
    if (n > cap) {
        cap = n + 64; /* more may open meanwhile: those are not this caller's concern */
        if (!(fhs = malloc(cap * sizeof *fhs))) return throw_inval(env, "opensOn: out of memory");
        n = handles_owned_on(&p->handles, dev, ino, fhs, cap);
        if (n > cap) n = cap;
    }
    if (napi_create_array_with_length(env, n, &out) == napi_ok)
        for (size_t i = 0; i < n; i++)
            if (napi_create_double(env, (double)fhs[i], &v) != napi_ok || napi_set_element(env, out, (uint32_t)i, v) != napi_ok) {
                out = NULL;
                break;
            }
    if (fhs != few) free(fhs);
    return out;
}

struct take_to_js {
    napi_env env;
    napi_value out;
};

static int take_to_js(void *arg, int all, char *const *paths, size_t n)
{
    struct take_to_js *t = arg;
    if (all) return napi_get_boolean(t->env, false, &t->out) == napi_ok;
    if (napi_create_array_with_length(t->env, n, &t->out) != napi_ok) return 0;
    for (size_t i = 0; i < n; i++) {
        napi_value s;
        if (napi_create_string_utf8(t->env, paths[i], NAPI_AUTO_LENGTH, &s) != napi_ok || napi_set_element(t->env, t->out, (uint32_t)i, s) != napi_ok)
            return 0;
    }
    return 1;
}

/*
 * takeRemovedDirs(fastPath) -> undefined (nothing removed since the last
 * call), an array of the cipher paths of the directories the hook `rmdir`
 * removed since (as the binding gave them: names on disk joined by "/"),
 * or false: too many to list, forget every directory.
 */
static napi_value js_take_removed_dirs(napi_env env, napi_callback_info info)
{
    napi_value argv[1];
    struct fast_path *p = args(env, info, 1, argv);
    if (!p) return throw_inval(env, "takeRemovedDirs(fastPath): bad argument");
    if (!removed_pending(&p->removed)) return NULL;
    struct take_to_js t = {env, NULL};
    return removed_take(&p->removed, take_to_js, &t) ? t.out : NULL;
}

/*
 * stats(fastPath) -> [reads answered natively, reads passed on to JavaScript,
 * attribute changes answered natively, writes answered natively, writes passed on,
 * unlinks answered natively, unlinks passed on, lookups answered natively, lookups passed on,
 * opens answered natively, opens passed on, rmdirs answered natively, rmdirs passed on,
 * getxattr and listxattr answered natively (no_xattrs), those passed on,
 * creates answered natively, creates passed on, fstats of owned handles answered natively, those passed on,
 * fsyncs answered natively, those passed on, listings answered natively, those passed on,
 * renames answered natively, those passed on]
 */
static napi_value js_stats(napi_env env, napi_callback_info info)
{
    napi_value argv[1], out, v;
    struct fast_path *p = args(env, info, 1, argv);
    if (!p) return throw_inval(env, "stats(fastPath): bad argument");
    const uint64_t *counts[] = {&p->reads.answered,    &p->reads.passed,    &p->attr_changes.answered, &p->written.answered,
                                &p->written.passed,    &p->unlinked.answered, &p->unlinked.passed,     &p->looked_up.answered,
                                &p->looked_up.passed,  &p->opened.answered, &p->opened.passed,         &p->rmdired.answered,
                                &p->rmdired.passed,    &p->xattrs_none.answered, &p->xattrs_none.passed,
                                &p->created.answered,  &p->created.passed, &p->fstated.answered, &p->fstated.passed,
                                &p->synced.answered,   &p->synced.passed, &p->listed.answered, &p->listed.passed,
                                &p->renamed.answered,  &p->renamed.passed};
    const size_t n = sizeof counts / sizeof counts[0];
    if (napi_create_array_with_length(env, n, &out) != napi_ok) return NULL;
    for (size_t i = 0; i < n; i++)
        if (napi_create_double(env, (double)__atomic_load_n(counts[i], __ATOMIC_RELAXED), &v) != napi_ok ||
            napi_set_element(env, out, (uint32_t)i, v) != napi_ok)
            return NULL;
    return out;
}

/*
 * nameEncrypt(emeKey, iv, name, longNameMax, raw64) -> [name on disk, is long]:
 * what the walk makes of one plaintext name (for the unit tests, which
 * hold it to src/names/name-codec.ts).
 */
static napi_value js_name_encrypt(napi_env env, napi_callback_info info)
{
    size_t argc = 5, keylen, ivlen, nlen, max;
    napi_value argv[5], out, v;
    uint8_t *key, *iv, *name;
    bool raw64;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 5 || !get_bytes(env, argv[0], &key, &keylen) || keylen != 32 ||
        !get_bytes(env, argv[1], &iv, &ivlen) || ivlen != NAME_IV_LEN || !get_bytes(env, argv[2], &name, &nlen) || nlen == 0 || nlen > 255 ||
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

/*
 * nameDecrypt(emeKey, iv, nameOnDisk, raw64) -> Buffer or null: what the
 * listing makes of one short name on disk (for the unit tests, which hold
 * it to src/names/name-codec.ts's decryptName).
 */
static napi_value js_name_decrypt(napi_env env, napi_callback_info info)
{
    size_t argc = 4, keylen, ivlen, clen;
    napi_value argv[4], out;
    uint8_t *key, *iv;
    char cname[NAME_DISK_MAX + 2];
    bool raw64;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || !get_bytes(env, argv[0], &key, &keylen) || keylen != 32 ||
        !get_bytes(env, argv[1], &iv, &ivlen) || ivlen != NAME_IV_LEN ||
        napi_get_value_string_latin1(env, argv[2], cname, sizeof cname, &clen) != napi_ok || clen > NAME_DISK_MAX ||
        napi_get_value_bool(env, argv[3], &raw64) != napi_ok)
        return throw_inval(env, "nameDecrypt(emeKey, iv, nameOnDisk, raw64): bad argument");
    struct name_key k;
    uint8_t plain[NAME_MAX_BLOCKS * 16];
    size_t len = 0;
    int ok = 0;
    EVP_CIPHER_CTX *ctx = NULL;
    if (!name_key_init(&k, key, 255, raw64) || !(ctx = name_dec_ctx_new(&k))) {
        OPENSSL_cleanse(&k, sizeof k);
        return throw_inval(env, "nameDecrypt: OpenSSL failed");
    }
    ok = name_decrypt(ctx, &k, iv, cname, clen, plain, &len);
    EVP_CIPHER_CTX_free(ctx);
    OPENSSL_cleanse(&k, sizeof k);
    void *data;
    if (!ok) return napi_get_null(env, &out) == napi_ok ? out : NULL;
    return napi_create_buffer_copy(env, len, plain, &data, &out) == napi_ok ? out : NULL;
}

NAPI_MODULE_INIT()
{
    static const struct {
        const char *name;
        napi_callback fn;
    } fns[] = {{"create", js_create},
               {"handleOpened", js_handle_opened},
               {"handleClosing", js_handle_closing},
               {"answerAttrs", js_answer_attrs},
               {"answerWrites", js_answer_writes},
               {"useCipherRoot", js_use_cipher_root},
               {"useNames", js_use_names},
               {"holdPath", js_hold_path},
               {"answerOpens", js_answer_opens},
               {"answerCreates", js_answer_creates},
               {"answerFsyncs", js_answer_fsyncs},
               {"answerLists", js_answer_lists},
               {"answerRenames", js_answer_renames},
               {"answerRmdirs", js_answer_rmdirs},
               {"claimSlot", js_claim_slot},
               {"releaseSlot", js_release_slot},
               {"adopt", js_adopt},
               {"opensOn", js_opens_on},
               {"nativeHandles", js_native_handles},
               {"takeRemovedDirs", js_take_removed_dirs},
               {"stats", js_stats},
               {"nameEncrypt", js_name_encrypt},
               {"nameDecrypt", js_name_decrypt}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        napi_value f;
        if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &f) != napi_ok ||
            napi_set_named_property(env, exports, fns[i].name, f) != napi_ok)
            return NULL;
    }
    return exports;
}
