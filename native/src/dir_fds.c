/*
 * The cipher directories the native hooks used last, kept open.
 * The native unlink, rmdir, lookup and open each need the directory that
 * holds a name, opened O_PATH from the cipher directory's root without
 * following a symlink; opened afresh for every request, that is an
 * openat2(2) (or a walk of openat(2)s) and a close(2) each time, though
 * `rm -r` removes a directory's names one after another and an untar or
 * `md5sum -c` stays in one directory for many requests.
 *
 * A reader keeps DIR_FD_SLOTS directories by cipher path (one slot per
 * hash of the path) for as long as the vault's directory cache keeps its
 * descriptors (src/vault/backing/dir-cache.ts: a second). When a mkdir,
 * rmdir or rename through the mount starts or ends (the hook's
 * `dirs_changed`), every kept directory is closed, or marked to be closed
 * by the last request using it, as the vault drops the slots of the
 * directories it removes or renames: no descriptor of a removed directory
 * outlives the removal, and a directory made again at once under the same
 * cipher path (-plaintextnames) is opened anew. Within that second, a
 * directory another program moves is used where it now is, as the vault
 * would use it.
 */
#define _GNU_SOURCE
#include "reader_core.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REF_ROOT (-2)  /* dir_ref.slot: the root's own descriptor */
#define REF_OWNED (-1) /* dir_ref.slot: a descriptor no slot took; closed by dir_fds_put */

struct dir_fd {
    int used;
    int fd;         /* O_PATH */
    unsigned users; /* requests using fd now */
    int doomed;     /* closed when users drops to 0 */
    int64_t at;     /* CLOCK_MONOTONIC ns when opened */
    uint16_t len;
    char cpath[IV_CPATH_MAX];
};

static struct dir_fd *slot_of(struct reader *r, const char *cpath, size_t len) { return &r->dir_fds[kept_hash(cpath, len) % DIR_FD_SLOTS]; }

/* Empties slot `s` (under dir_fds_mut): closed now, or by its last user. */
static void drop(struct dir_fd *s)
{
    if (!s->used) return;
    if (s->users > 0) {
        s->doomed = 1;
        return;
    }
    close(s->fd);
    s->used = 0;
}

uint64_t dir_fds_epoch(struct reader *r) { return __atomic_load_n(&r->dir_epoch, __ATOMIC_ACQUIRE); }

/*
 * The epoch steps on before the table is emptied, and dir_fds_keep checks
 * it under the same lock: a directory opened before a change is never put
 * in the table after it, so once this returns every slot in it was opened
 * since, and a slot needs no epoch of its own.
 */
void dir_fds_changed(struct reader *r)
{
    __atomic_add_fetch(&r->dir_epoch, 1, __ATOMIC_ACQ_REL);
    if (!r->dir_fds) return;
    pthread_mutex_lock(&r->dir_fds_mut);
    for (size_t i = 0; i < DIR_FD_SLOTS; i++) drop(&r->dir_fds[i]);
    pthread_mutex_unlock(&r->dir_fds_mut);
}

void dir_fds_keep(struct reader *r, const char *cpath, size_t len, int fd, uint64_t epoch, int64_t at, struct dir_ref *ref)
{
    ref->fd = fd;
    ref->slot = REF_OWNED;
    if (!r->dir_fds || len == 0 || len >= IV_CPATH_MAX) return;
    struct dir_fd *s = slot_of(r, cpath, len);
    pthread_mutex_lock(&r->dir_fds_mut);
    /* Not if a directory changed since it was opened, nor over a slot in use. */
    if (dir_fds_epoch(r) == epoch && !(s->used && (s->users > 0 || s->doomed))) {
        drop(s);
        s->used = 1;
        s->fd = fd;
        s->users = 1;
        s->doomed = 0;
        s->at = at;
        s->len = (uint16_t)len;
        memcpy(s->cpath, cpath, len);
        ref->slot = (int)(s - r->dir_fds);
    }
    pthread_mutex_unlock(&r->dir_fds_mut);
}

int dir_fds_get(struct reader *r, int root, const char *cpath, size_t len, struct dir_ref *ref)
{
    if (len == 0) {
        ref->fd = root;
        ref->slot = REF_ROOT;
        return 0;
    }
    if (len >= IV_CPATH_MAX) return -1;
    const uint64_t epoch = dir_fds_epoch(r);
    const int64_t now = kept_now_ns();
    if (r->dir_fds) {
        struct dir_fd *s = slot_of(r, cpath, len);
        pthread_mutex_lock(&r->dir_fds_mut);
        if (s->used && !s->doomed && now - s->at >= 0 && now - s->at < KEPT_TTL_NS && s->len == len &&
            memcmp(s->cpath, cpath, len) == 0) {
            s->users++;
            ref->fd = s->fd;
            ref->slot = (int)(s - r->dir_fds);
            pthread_mutex_unlock(&r->dir_fds_mut);
            return 0;
        }
        pthread_mutex_unlock(&r->dir_fds_mut);
    }
    char path[IV_CPATH_MAX];
    memcpy(path, cpath, len);
    path[len] = 0;
    const int fd = reader_open_beneath(root, path);
    if (fd < 0) return -1;
    dir_fds_keep(r, cpath, len, fd, epoch, now, ref);
    return 0;
}

void dir_fds_put(struct reader *r, struct dir_ref *ref)
{
    if (ref->slot == REF_OWNED) {
        if (ref->fd >= 0) close(ref->fd);
    } else if (ref->slot >= 0) {
        struct dir_fd *s = &r->dir_fds[ref->slot];
        pthread_mutex_lock(&r->dir_fds_mut);
        if (--s->users == 0 && s->doomed) {
            close(s->fd);
            s->used = 0;
            s->doomed = 0;
        }
        pthread_mutex_unlock(&r->dir_fds_mut);
    }
    ref->fd = -1;
    ref->slot = REF_ROOT;
}

int dir_fds_init(struct reader *r)
{
    r->dir_fds = calloc(DIR_FD_SLOTS, sizeof *r->dir_fds);
    if (!r->dir_fds) return 0;
    pthread_mutex_init(&r->dir_fds_mut, NULL);
    return 1;
}

void dir_fds_free(struct reader *r)
{
    if (!r->dir_fds) return;
    for (size_t i = 0; i < DIR_FD_SLOTS; i++)
        if (r->dir_fds[i].used) close(r->dir_fds[i].fd);
    free(r->dir_fds);
    r->dir_fds = NULL;
    pthread_mutex_destroy(&r->dir_fds_mut);
}
