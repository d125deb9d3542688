/*
 * A mount's native open: an OPEN for reading answered on the
 * libfuse thread that received it. In JavaScript each costs two thread
 * hand-overs for a walk, one openat(2) and one fstat(2); an md5sum -c of
 * the bench tree sends 19,376, its last trips to JS once lookups and reads
 * are native.
 *
 * The file is found as the native lookup finds it (lookup.c, reader_find),
 * opened with openat(O_RDONLY | O_NOFOLLOW | O_NONBLOCK) from its parent's
 * descriptor (O_NONBLOCK: a FIFO planted in the cipher directory must not
 * hang the thread; it does nothing to a regular file), and kept only if
 * fstat says it is a regular file. The handle is registered for native
 * reads as one JavaScript opened would be, under a number from
 * NATIVE_FH_BASE up, and this file owns its descriptor: the RELEASE closes
 * it here (reader_release) without a trip to JavaScript.
 *
 * JavaScript learns of such a handle only when it needs it: a READ the
 * native path passes on (a block that does not open, a hole), an FSYNC, an
 * FGETATTR the cache cannot answer, the rename that hides a file unlinked
 * while open. It then adopts the handle (readerAdopt): it gets a duplicate
 * of the descriptor, wraps it as it wraps one it opened, and gets the
 * RELEASE too.
 *
 * Fence slots (reader_core.h) belong to files, not handles: JavaScript's
 * file state and every native handle of one file must use the same slot,
 * so that a write through JavaScript fences the native reads of every
 * handle. So the slots are handed out here, by device and inode, and
 * counted: JavaScript's file states take theirs with readerSlot and give
 * it back with readerSlotRelease.
 *
 * Anything out of the ordinary goes to JavaScript untouched, which then
 * answers and logs it: a name the vault refuses, a missing directory or
 * IV, an open that fails, no free slot, lookups turned off (while libfuse
 * hides a file, src/fuse/hidden-files.ts), a flag other than reading.
 */
#define _GNU_SOURCE
#include "reader_core.h"
#include "napi_args.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct inode_slot {
    uint32_t dev;
    uint64_t ino;
    uint32_t slot;
    uint32_t refs;
    struct inode_slot *next;
};

static struct inode_slot **inode_bucket(struct reader *r, uint32_t dev, uint64_t ino)
{
    return &r->inodes[(ino ^ ((uint64_t)dev << 17)) % INODE_BUCKETS];
}

/* The slot of file (dev, ino), counted once more; -1 when all are taken or memory is short. */
static int64_t slot_acquire(struct reader *r, uint32_t dev, uint64_t ino)
{
    int64_t slot = -1;
    pthread_mutex_lock(&r->slots_mut);
    struct inode_slot **b = inode_bucket(r, dev, ino), *e = *b;
    while (e && !(e->dev == dev && e->ino == ino)) e = e->next;
    if (e) {
        e->refs++;
        slot = e->slot;
    } else if ((r->free_slots || (r->free_slots = calloc(r->slots, sizeof *r->free_slots))) && (r->nfree > 0 || r->next_slot < r->slots) &&
               (e = calloc(1, sizeof *e))) {
        e->dev = dev;
        e->ino = ino;
        e->refs = 1;
        e->slot = r->nfree > 0 ? r->free_slots[--r->nfree] : r->next_slot++;
        e->next = *b;
        *b = e;
        slot = e->slot;
    }
    pthread_mutex_unlock(&r->slots_mut);
    return slot;
}

/* Counts the slot of file (dev, ino) once less; free again at 0 (its counters stay as they are: equal, owner 0). */
static void slot_release(struct reader *r, uint32_t dev, uint64_t ino)
{
    pthread_mutex_lock(&r->slots_mut);
    for (struct inode_slot **p = inode_bucket(r, dev, ino); *p; p = &(*p)->next) {
        struct inode_slot *e = *p;
        if (e->dev == dev && e->ino == ino) {
            if (--e->refs == 0) {
                *p = e->next;
                r->free_slots[r->nfree++] = e->slot;
                free(e);
            }
            break;
        }
    }
    pthread_mutex_unlock(&r->slots_mut);
}

/* The hook's `open` (fuse_hooks.h), for reading. Twin: open in src/vault/node-open-create.ts. */
int reader_open(void *ctx, const char *path, int flags, const uint64_t *dirs_gen, uint64_t *fh)
{
    struct reader *r = ctx;
    const int root = __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE);
    if (root < 0 || !__atomic_load_n(&r->opens, __ATOMIC_ACQUIRE) || !__atomic_load_n(&r->lookups, __ATOMIC_ACQUIRE)) return TSCRYPTFS_HOOK_PASS;
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_EXCL | O_TRUNC | O_APPEND)) || !path || path[0] != '/' || path[1] == 0)
        goto pass;
    char cpath[IV_CPATH_MAX], disk[NAME_DISK_MAX + 1];
    size_t clen = 0;
    int is_long = 0;
    struct dir_ref dir;
    if (!reader_find(r, root, path, dirs_gen, &dir, disk, &is_long, cpath, &clen)) goto pass;
    /* As src/vault/open-flags.ts's backingFlags: the caller's flags, but for what the kernel handled and O_DIRECT. */
    const int oflags = (flags & ~(O_ACCMODE | O_DIRECT)) | O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    const int fd = openat(dir.fd, disk, oflags);
    dir_fds_put(r, &dir);
    if (fd < 0) goto pass;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) goto close_pass;
    struct handle *h = calloc(1, sizeof *h);
    if (!h) goto close_pass;
    const int64_t slot = slot_acquire(r, (uint32_t)st.st_dev, (uint64_t)st.st_ino);
    if (slot < 0) {
        free(h);
        goto close_pass;
    }
    h->fd = fd;
    h->flags = HANDLE_READABLE;
    h->slot = (uint32_t)slot;
    h->owned = 1;
    h->dev = (uint32_t)st.st_dev;
    h->ino = (uint64_t)st.st_ino;
    reader_insert(r, h);
    *fh = h->fh;
    __atomic_fetch_add(&r->opened, 1, __ATOMIC_RELAXED);
    return 0;
close_pass:
    close(fd);
pass:
    __atomic_fetch_add(&r->opens_passed, 1, __ATOMIC_RELAXED);
    return TSCRYPTFS_HOOK_PASS;
}

/* The hook's `release` (fuse_hooks.h). */
int reader_release(void *ctx, uint64_t fh)
{
    struct reader *r = ctx;
    if (fh < NATIVE_FH_BASE) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = reader_remove(r, fh, 1);
    if (!h) return TSCRYPTFS_HOOK_PASS;
    const int adopted = h->adopted;
    close(h->fd);
    slot_release(r, h->dev, h->ino);
    OPENSSL_cleanse(h->id, ID_LEN);
    free(h);
    return adopted ? TSCRYPTFS_HOOK_PASS : 0;
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

/* readerOpens(reader, on): whether the reader answers opens for reading (with lookups, readerNames). */
napi_value reader_js_opens(napi_env env, napi_callback_info info)
{
    bool on;
    struct reader *r;
    if (!reader_switch_args(env, info, &r, &on)) return throw_inval(env, "readerOpens(reader, on): bad argument");
    __atomic_store_n(&r->opens, on ? 1 : 0, __ATOMIC_RELEASE);
    return NULL;
}

/* readerSlot(reader, dev, inoLow, inoHigh) -> the file's fence slot, counted once more; -1 when none is free. */
napi_value reader_js_slot(napi_env env, napi_callback_info info)
{
    size_t argc = 4;
    napi_value argv[4], out;
    struct reader *r;
    uint32_t dev;
    uint64_t ino;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || !(r = reader_get(env, argv[0])) || !get_file(env, argv + 1, &dev, &ino))
        return throw_inval(env, "readerSlot(reader, dev, inoLow, inoHigh): bad argument");
    if (napi_create_int64(env, slot_acquire(r, dev, ino), &out) != napi_ok) return NULL;
    return out;
}

/* readerSlotRelease(reader, dev, inoLow, inoHigh): gives back what readerSlot took. */
napi_value reader_js_slot_release(napi_env env, napi_callback_info info)
{
    size_t argc = 4;
    napi_value argv[4];
    struct reader *r;
    uint32_t dev;
    uint64_t ino;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || !(r = reader_get(env, argv[0])) || !get_file(env, argv + 1, &dev, &ino))
        return throw_inval(env, "readerSlotRelease(reader, dev, inoLow, inoHigh): bad argument");
    slot_release(r, dev, ino);
    return NULL;
}

/* readerAdopt(reader, fh) -> a duplicate of native handle fh's descriptor (O_CLOEXEC), which JS closes; -1 when fh is no such handle. */
napi_value reader_js_adopt(napi_env env, napi_callback_info info)
{
    size_t argc = 2, fh;
    napi_value argv[2], out;
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2 || !(r = reader_get(env, argv[0])) || !get_size(env, argv[1], &fh))
        return throw_inval(env, "readerAdopt(reader, fh): bad argument");
    if (napi_create_int32(env, reader_adopt_fd(r, fh), &out) != napi_ok) return NULL;
    return out;
}

/* readerOpensOn(reader, dev, inoLow, inoHigh) -> the native handles open on that file that JS has not adopted. */
napi_value reader_js_opens_on(napi_env env, napi_callback_info info)
{
    size_t argc = 4;
    napi_value argv[4], out, v;
    struct reader *r;
    uint32_t dev;
    uint64_t ino;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 4 || !(r = reader_get(env, argv[0])) || !get_file(env, argv + 1, &dev, &ino))
        return throw_inval(env, "readerOpensOn(reader, dev, inoLow, inoHigh): bad argument");
    uint64_t few[64], *fhs = few;
    size_t cap = 64, n = reader_owned_on(r, dev, ino, fhs, cap);
    if (n > cap) {
        cap = n + 64; /* more may open meanwhile: those are not this caller's concern */
        if (!(fhs = malloc(cap * sizeof *fhs))) return throw_inval(env, "readerOpensOn: out of memory");
        n = reader_owned_on(r, dev, ino, fhs, cap);
        if (n > cap) n = cap;
    }
    out = NULL;
    if (napi_create_array_with_length(env, n, &out) == napi_ok)
        for (size_t i = 0; i < n; i++)
            if (napi_create_double(env, (double)fhs[i], &v) != napi_ok || napi_set_element(env, out, (uint32_t)i, v) != napi_ok) {
                out = NULL;
                break;
            }
    if (fhs != few) free(fhs);
    return out;
}

void reader_opener_free(struct reader *r)
{
    for (size_t i = 0; i < INODE_BUCKETS; i++) {
        struct inode_slot *e = r->inodes[i];
        while (e) {
            struct inode_slot *next = e->next;
            free(e);
            e = next;
        }
        r->inodes[i] = NULL;
    }
    free(r->free_slots);
    r->free_slots = NULL;
}
