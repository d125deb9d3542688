/*
 * The hooks `open` and `release`: an OPEN for reading answered on the
 * libfuse thread that received it. In JavaScript each costs two thread
 * hand-overs for a walk, one openat(2) and one fstat(2); an md5sum -c of
 * the bench tree sends 19,376, its last trips to JS once lookups and reads
 * are native.
 *
 * The file is found by walk.c, opened with openat(O_RDONLY | O_NOFOLLOW |
 * O_NONBLOCK) from its parent's descriptor (O_NONBLOCK: a FIFO planted in
 * the cipher directory must not hang the thread; it does nothing to a
 * regular file), and kept only if fstat says it is a regular file. The
 * handle is registered as one JavaScript opened would be, under a number
 * from NATIVE_FH_BASE up, with the file's fence slot (fences.h), and owns
 * its descriptor: the RELEASE closes it here without a trip to JavaScript.
 *
 * JavaScript learns of such a handle only when it needs it: a READ the
 * fast path passes on (a block that does not open, a hole), an FSYNC, an
 * FGETATTR the cache cannot answer, the rename that hides a file unlinked
 * while open. It then adopts the handle: it gets a duplicate of the
 * descriptor, wraps it as it wraps one it opened, and gets the RELEASE too.
 *
 * Anything out of the ordinary goes to JavaScript untouched, which then
 * answers and logs it: a name the vault refuses, a missing directory or
 * IV, an open that fails, no free slot, lookups turned off (while libfuse
 * hides a file, src/fuse/hidden-files.ts), a flag other than reading.
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The hook's `open` (fuse_hooks.h), for reading. Twin: open in src/vault/node-open-create.ts. */
int fp_open(void *ctx, const char *path, int flags, const uint64_t *dirs_gen, uint64_t *fh)
{
    struct fast_path *p = ctx;
    if (dirs_root(&p->dirs) < 0 || !fp_on(&p->opens) || !fp_on(&p->lookups)) return TSCRYPTFS_HOOK_PASS;
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_EXCL | O_TRUNC | O_APPEND)) || !path || path[0] != '/' || path[1] == 0)
        goto pass;
    char cpath[CPATH_MAX], disk[NAME_DISK_MAX + 1];
    size_t clen = 0;
    int is_long = 0;
    struct dir_ref dir;
    if (!walk_find(&p->walk, &p->dirs, path, dirs_gen, &dir, disk, &is_long, cpath, &clen)) goto pass;
    /* As src/vault/open-flags.ts's backingFlags: the caller's flags, but for what the kernel handled and O_DIRECT. */
    const int oflags = (flags & ~(O_ACCMODE | O_DIRECT)) | O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    const int fd = openat(dir.fd, disk, oflags);
    dirs_put(&p->dirs, &dir);
    if (fd < 0) goto pass;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) goto close_pass;
    struct handle *h = calloc(1, sizeof *h);
    if (!h) goto close_pass;
    const int64_t slot = fences_claim(&p->fences, (uint32_t)st.st_dev, (uint64_t)st.st_ino);
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
    handles_insert(&p->handles, h);
    *fh = h->fh;
    return hook_answered(&p->opened, 0);
close_pass:
    close(fd);
pass:
    hook_passed(&p->opened);
    return TSCRYPTFS_HOOK_PASS;
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
