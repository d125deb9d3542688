/*
 * The hooks `open`, `create`, `fgetattr`, `fsync` and `release`: an OPEN and a
 * CREATE answered on the libfuse thread that received it. In JavaScript
 * each costs two thread hand-overs for a walk, one openat(2) and one
 * fstat(2); an md5sum -c of the bench tree sends 19,376 opens, an untar
 * of it 19,425 creates, their last trips to JS once lookups, reads and
 * writes are native.
 *
 * The file is found by walk.c, opened with openat(O_NOFOLLOW) from its
 * parent's descriptor, and kept only if fstat says it is a regular file.
 * The handle is registered as one JavaScript opened would be, under a
 * number from NATIVE_FH_BASE up, with the file's fence slot (fences.h),
 * and owns its descriptor: an FGETATTR the binding's cache cannot answer
 * is an fstat(2) of it, an FSYNC an fsync(2) of it (of any registered
 * handle's, JavaScript's too), and the RELEASE closes it, here without a
 * trip to JavaScript. Most programs fstat a file right after they open it (stdio,
 * Python, Node's readFile, fsstress), and writes leave the cache without
 * the file's attributes.
 *
 * open: with O_NONBLOCK (a FIFO planted in the cipher directory must not
 * hang the thread; it does nothing to a regular file), read-write for
 * writing (read-modify-write needs it, open-flags.ts's backingFlags), for
 * writing only while writes are native too (write.c).
 *
 * create (twin: open with O_CREAT in src/vault/node-open-create.ts): the
 * cipher file is made with O_EXCL, read-write whatever the caller asked
 * (read-modify-write needs it, open-flags.ts's backingFlags), empty: the
 * first write gives it its header (write.c). Only as the daemon's own
 * user: a root daemon makes a file for anyone else as that user, with
 * the supplementary groups JavaScript reads from /proc (src/fuse/caller.ts,
 * vault-core.ts credentialOf), so such a create goes to JavaScript. So
 * does a long name (its .name file is JavaScript's) and a name that
 * exists already (JavaScript opens it, or says EEXIST).
 *
 * JavaScript learns of such a handle only when it needs it: a READ or
 * WRITE the fast path passes on (a block that does not open, a hole), an
 * FSYNC, an FGETATTR without a path, the rename that hides a file unlinked
 * while open. It then adopts the handle: it gets a duplicate of
 * the descriptor and the caller's access mode, wraps it as it wraps one it
 * opened, and gets the RELEASE too.
 *
 * Anything out of the ordinary goes to JavaScript untouched, which then
 * answers and logs it: a name the vault refuses, a missing directory or
 * IV, an open that fails, no free slot, lookups turned off (while libfuse
 * hides a file, src/fuse/hidden-files.ts).
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Registers the regular file `fd` (stat `st`) as an owned handle with `flags` (HANDLE_*); 0 when no slot or memory is left (fd untouched). */
static int own_handle(struct fast_path *p, int fd, const struct stat *st, int flags, int access, uint64_t *fh)
{
    struct handle *h = calloc(1, sizeof *h);
    if (!h) return 0;
    const int64_t slot = fences_claim(&p->fences, (uint32_t)st->st_dev, (uint64_t)st->st_ino);
    if (slot < 0) {
        free(h);
        return 0;
    }
    h->fd = fd;
    h->flags = flags;
    h->access = access;
    h->slot = (uint32_t)slot;
    h->owned = 1;
    h->dev = (uint32_t)st->st_dev;
    h->ino = (uint64_t)st->st_ino;
    handles_insert(&p->handles, h);
    *fh = h->fh;
    return 1;
}

/* The hook's `open` (fuse_hooks.h). Twin: open in src/vault/node-open-create.ts. */
int fp_open(void *ctx, const char *path, int flags, const uint64_t *dirs_gen, uint64_t *fh)
{
    struct fast_path *p = ctx;
    if (dirs_root(&p->dirs) < 0 || !fp_on(&p->opens) || !fp_walks(p, path)) return TSCRYPTFS_HOOK_PASS;
    const int access = flags & O_ACCMODE;
    if (access == O_ACCMODE || (access != O_RDONLY && !fp_on(&p->writes)) || !path || path[0] != '/' || path[1] == 0) goto pass;
    char cpath[CPATH_MAX], disk[NAME_DISK_MAX + 1];
    size_t clen = 0;
    int is_long = 0;
    struct dir_ref dir;
    if (!walk_find(&p->walk, &p->dirs, path, dirs_gen, &dir, disk, &is_long, cpath, &clen)) goto pass;
    /*
     * As src/vault/open-flags.ts's backingFlags of what src/fuse/operations.ts
     * passes on: the caller's flags but for what the kernel handled (appends
     * placed, O_TRUNC sent as a truncate after the open) and O_DIRECT; read
     * access for read-modify-write.
     */
    const int oflags = (flags & ~(O_ACCMODE | O_DIRECT | O_APPEND | O_TRUNC | O_CREAT | O_EXCL)) | (access == O_RDONLY ? O_RDONLY : O_RDWR) |
                       O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    const int fd = openat(dir.fd, disk, oflags);
    dirs_put(&p->dirs, &dir);
    if (fd < 0) goto pass;
    struct stat st;
    const int hflags = (access != O_WRONLY ? HANDLE_READABLE : 0) | (access != O_RDONLY ? HANDLE_WRITABLE : 0);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !own_handle(p, fd, &st, hflags, access, fh)) goto close_pass;
    return hook_answered(&p->opened, 0);
close_pass:
    close(fd);
pass:
    hook_passed(&p->opened);
    return TSCRYPTFS_HOOK_PASS;
}

/* The hook's `create` (fuse_hooks.h). Twin: open with O_CREAT in src/vault/node-open-create.ts. */
int fp_create(void *ctx, const char *path, mode_t mode, int flags, uid_t uid, gid_t gid, const uint64_t *dirs_gen, uint64_t *fh, struct stat *st)
{
    struct fast_path *p = ctx;
    if (dirs_root(&p->dirs) < 0 || !fp_on(&p->creates) || !fp_on(&p->opens) || !fp_walks(p, path)) return TSCRYPTFS_HOOK_PASS;
    const int access = flags & O_ACCMODE;
    if ((getuid() == 0 && (uid != 0 || gid != 0)) || access == O_ACCMODE || !path || path[0] != '/' || path[1] == 0) goto pass;
    char cpath[CPATH_MAX], disk[NAME_DISK_MAX + 1];
    size_t clen = 0;
    int is_long = 0;
    struct dir_ref dir;
    if (!walk_find(&p->walk, &p->dirs, path, dirs_gen, &dir, disk, &is_long, cpath, &clen)) goto pass;
    if (is_long) {
        dirs_put(&p->dirs, &dir);
        goto pass;
    }
    /* backingFlags as the create in src/fuse/operations.ts asks for it: the kernel handled O_APPEND and O_TRUNC. */
    const int oflags = (flags & ~(O_ACCMODE | O_APPEND | O_TRUNC | O_DIRECT)) | O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    const int fd = openat(dir.fd, disk, oflags, mode & 07777);
    if (fd < 0) {
        dirs_put(&p->dirs, &dir);
        goto pass;
    }
    const int flags_h = (access != O_WRONLY ? HANDLE_READABLE : 0) | (fp_on(&p->writes) ? HANDLE_WRITABLE : 0);
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || !own_handle(p, fd, st, flags_h, access, fh)) {
        /* what this call made goes again, so that JavaScript meets the name as it was */
        close(fd);
        unlinkat(dir.fd, disk, 0);
        dirs_put(&p->dirs, &dir);
        goto pass;
    }
    dirs_put(&p->dirs, &dir);
    st->st_size = (off_t)content_shown_size(&p->key, (int64_t)st->st_size);
    return hook_answered(&p->created, 0);
pass:
    hook_passed(&p->created);
    return TSCRYPTFS_HOOK_PASS;
}

/* The hook's `fgetattr` (fuse_hooks.h). Twin: statWords in src/vault/vault-file.ts, which reads under the file's
 * lock; here no write through the fast path may be under way from before the fstat until after it (fences.h). */
int fp_fgetattr(void *ctx, uint64_t fh, struct stat *st)
{
    struct fast_path *p = ctx;
    if (fh < NATIVE_FH_BASE) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = handles_pin(&p->handles, fh);
    if (!h) return TSCRYPTFS_HOOK_PASS;
    int res = TSCRYPTFS_HOOK_PASS;
    if (h->owned && !h->adopted) {
        const int32_t *fence = fences_of(&p->fences, h->slot);
        int32_t started;
        if (fence_read_begin(fence, &started) && fstat(h->fd, st) == 0 && fence_read_end(fence, started)) res = 0;
    }
    handles_unpin(&p->handles, h);
    if (res != 0) {
        hook_passed(&p->fstated);
        return TSCRYPTFS_HOOK_PASS;
    }
    st->st_size = (off_t)content_shown_size(&p->key, (int64_t)st->st_size);
    return hook_answered(&p->fstated, 0);
}

/* The hook's `fsync` (fuse_hooks.h). Twin: sync and datasync in src/vault/vault-file.ts. Writes answered before it
 * are in the cipher file already (neither side keeps any back), so syncing the descriptor is all there is to do. */
int fp_fsync(void *ctx, uint64_t fh, int datasync)
{
    struct fast_path *p = ctx;
    if (!fp_on(&p->fsyncs)) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = handles_pin(&p->handles, fh);
    if (!h) {
        hook_passed(&p->synced);
        return TSCRYPTFS_HOOK_PASS;
    }
    const int res = (datasync ? fdatasync(h->fd) : fsync(h->fd)) == 0 ? 0 : -errno;
    handles_unpin(&p->handles, h);
    return hook_answered(&p->synced, res);
}

/* The hook's `release` (fuse_hooks.h). */
int fp_release(void *ctx, uint64_t fh)
{
    struct fast_path *p = ctx;
    if (fh < NATIVE_FH_BASE) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = handles_remove(&p->handles, fh, 1);
    if (!h) return TSCRYPTFS_HOOK_PASS;
    const int adopted = h->adopted;
    close(h->fd);
    fences_release(&p->fences, h->dev, h->ino);
    handle_free(h);
    return adopted ? TSCRYPTFS_HOOK_PASS : 0;
}
