/*
 * Each libfuse thread's descriptors of the cipher directories it used
 * last (issue 16). The native unlink, rmdir, lookup and open each need the
 * directory that holds a name, opened O_PATH from the cipher directory's
 * root without following a symlink; opened afresh for every request, that
 * is an openat2(2) (or a walk of openat(2)s) and a close(2) each time,
 * though `rm -r` removes a directory's names one after another and an
 * untar or `md5sum -c` stays in one directory for many requests.
 *
 * A thread keeps its last DIR_FDS directories by cipher path for as long
 * as the vault's directory cache keeps its descriptors
 * (src/vault/backing/dir-cache.ts: a second), and forgets them all when a
 * mkdir, rmdir or rename through the mount starts or ends (the hook's
 * `dirs_changed` steps the reader's `dir_epoch`): a directory another
 * program moves within that second is used where it now is, as the vault
 * would use it. The descriptors belong to the thread's state (reader.c
 * closes them when the thread ends); a caller never closes one.
 */
#define _GNU_SOURCE
#include "reader_core.h"
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DIR_FD_TTL_NS 1000000000LL

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t dir_fds_epoch(struct reader *r) { return __atomic_load_n(&r->dir_epoch, __ATOMIC_ACQUIRE); }

void dir_fds_changed(struct reader *r) { __atomic_add_fetch(&r->dir_epoch, 1, __ATOMIC_ACQ_REL); }

void dir_fds_keep(struct thread_state *t, struct reader *r, const char *cpath, size_t len, int fd, uint64_t epoch, int64_t at)
{
    struct dir_fd *s = NULL;
    for (size_t i = 0; i < DIR_FDS && !s; i++)
        if (!t->dirs[i].used) s = &t->dirs[i];
    if (!s) s = &t->dirs[t->next_dir++ % DIR_FDS];
    if (s->used) close(s->fd);
    s->used = 1;
    s->fd = fd;
    s->reader = r->gen;
    s->epoch = epoch;
    s->at = at;
    s->len = (uint16_t)len;
    memcpy(s->cpath, cpath, len);
}

int dir_fds_get(struct thread_state *t, struct reader *r, int root, const char *cpath, size_t len)
{
    if (len == 0) return root;
    if (len >= IV_CPATH_MAX) return -1;
    const uint64_t epoch = dir_fds_epoch(r);
    const int64_t now = now_ns();
    for (size_t i = 0; i < DIR_FDS; i++) {
        struct dir_fd *s = &t->dirs[i];
        if (s->used && s->reader == r->gen && s->epoch == epoch && now - s->at >= 0 && now - s->at < DIR_FD_TTL_NS && s->len == len &&
            memcmp(s->cpath, cpath, len) == 0)
            return s->fd;
    }
    char path[IV_CPATH_MAX];
    memcpy(path, cpath, len);
    path[len] = 0;
    const int fd = reader_open_beneath(root, path);
    if (fd < 0) return -1;
    dir_fds_keep(t, r, cpath, len, fd, epoch, now);
    return fd;
}

void dir_fds_free(struct thread_state *t)
{
    for (size_t i = 0; i < DIR_FDS; i++)
        if (t->dirs[i].used) close(t->dirs[i].fd);
    memset(t->dirs, 0, sizeof t->dirs);
}
