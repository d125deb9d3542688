/* See dirs.h. */
#define _GNU_SOURCE
#include "dirs.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REF_ROOT (-2)  /* dir_ref.slot: the root's own descriptor */
#define REF_OWNED (-1) /* dir_ref.slot: a descriptor no slot took; closed by dirs_put */
#define DISK_NAME_MAX 255

struct dir_slot {
    int used;
    int fd;         /* O_PATH */
    unsigned users; /* requests using fd now */
    int doomed;     /* closed when users drops to 0 */
    int64_t at;     /* CLOCK_MONOTONIC ns when opened */
    uint16_t len;
    char cpath[CPATH_MAX];
};

void dirs_init(struct dirs *d)
{
    d->root = -1;
    d->epoch = 0;
    d->slots = NULL;
    pthread_mutex_init(&d->mut, NULL);
}

void dirs_free(struct dirs *d)
{
    if (d->slots) {
        for (size_t i = 0; i < DIRS_SLOTS; i++)
            if (d->slots[i].used) close(d->slots[i].fd);
        free(d->slots);
        d->slots = NULL;
    }
    if (d->root >= 0) close(d->root);
    d->root = -1;
    pthread_mutex_destroy(&d->mut);
}

int dirs_set_root(struct dirs *d, int fd)
{
    const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return 0;
    d->slots = calloc(DIRS_SLOTS, sizeof *d->slots); /* out of memory: none kept, each request opens its own */
    __atomic_store_n(&d->root, copy, __ATOMIC_RELEASE);
    return 1;
}

int dirs_open_beneath(int root, const char *cpath)
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
        char name[DISK_NAME_MAX + 1];
        if (len == 0 || len > DISK_NAME_MAX) break;
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

static struct dir_slot *slot_of(struct dirs *d, const char *cpath, size_t len) { return &d->slots[kept_hash(cpath, len) % DIRS_SLOTS]; }

/* Empties slot `s` (under mut): closed now, or by its last user. */
static void drop(struct dir_slot *s)
{
    if (!s->used) return;
    if (s->users > 0) {
        s->doomed = 1;
        return;
    }
    close(s->fd);
    s->used = 0;
}

uint64_t dirs_epoch(struct dirs *d) { return __atomic_load_n(&d->epoch, __ATOMIC_ACQUIRE); }

/*
 * The epoch steps on before the table is emptied, and dirs_keep checks it
 * under the same lock: a directory opened before a change is never put in
 * the table after it, so once this returns every slot in it was opened
 * since, and a slot needs no epoch of its own.
 */
void dirs_changed(struct dirs *d)
{
    __atomic_add_fetch(&d->epoch, 1, __ATOMIC_ACQ_REL);
    if (!d->slots) return;
    pthread_mutex_lock(&d->mut);
    for (size_t i = 0; i < DIRS_SLOTS; i++) drop(&d->slots[i]);
    pthread_mutex_unlock(&d->mut);
}

void dirs_keep(struct dirs *d, const char *cpath, size_t len, int fd, uint64_t epoch, int64_t at, struct dir_ref *ref)
{
    ref->fd = fd;
    ref->slot = REF_OWNED;
    if (!d->slots || len == 0 || len >= CPATH_MAX) return;
    struct dir_slot *s = slot_of(d, cpath, len);
    pthread_mutex_lock(&d->mut);
    /* Not if a directory changed since it was opened, nor over a slot in use. */
    if (dirs_epoch(d) == epoch && !(s->used && (s->users > 0 || s->doomed))) {
        drop(s);
        s->used = 1;
        s->fd = fd;
        s->users = 1;
        s->doomed = 0;
        s->at = at;
        s->len = (uint16_t)len;
        memcpy(s->cpath, cpath, len);
        ref->slot = (int)(s - d->slots);
    }
    pthread_mutex_unlock(&d->mut);
}

int dirs_get(struct dirs *d, const char *cpath, size_t len, struct dir_ref *ref)
{
    const int root = dirs_root(d);
    if (len == 0) {
        ref->fd = root;
        ref->slot = REF_ROOT;
        return root >= 0 ? 0 : -1;
    }
    if (root < 0 || len >= CPATH_MAX) return -1;
    const uint64_t epoch = dirs_epoch(d);
    const int64_t now = kept_now_ns();
    if (d->slots) {
        struct dir_slot *s = slot_of(d, cpath, len);
        pthread_mutex_lock(&d->mut);
        if (s->used && !s->doomed && kept_fresh(s->at, now) && s->len == len && memcmp(s->cpath, cpath, len) == 0) {
            s->users++;
            ref->fd = s->fd;
            ref->slot = (int)(s - d->slots);
            pthread_mutex_unlock(&d->mut);
            return 0;
        }
        pthread_mutex_unlock(&d->mut);
    }
    char path[CPATH_MAX];
    memcpy(path, cpath, len);
    path[len] = 0;
    const int fd = dirs_open_beneath(root, path);
    if (fd < 0) return -1;
    dirs_keep(d, cpath, len, fd, epoch, now, ref);
    return 0;
}

/* One component of a cipher path: a name on disk, never "", "." or "..". */
static int disk_component(const char *s, size_t len)
{
    return len > 0 && len <= DISK_NAME_MAX && !(len == 1 && s[0] == '.') && !(len == 2 && s[0] == '.' && s[1] == '.');
}

int dirs_parent(struct dirs *d, const char *cpath, const char **last, struct dir_ref *ref)
{
    const char *p = cpath;
    for (const char *slash; (slash = strchr(p, '/')) != NULL; p = slash + 1)
        if (!disk_component(p, (size_t)(slash - p))) return -1;
    if (!disk_component(p, strlen(p))) return -1;
    *last = p;
    return dirs_get(d, cpath, p == cpath ? 0 : (size_t)(p - 1 - cpath), ref);
}

void dirs_put(struct dirs *d, struct dir_ref *ref)
{
    if (ref->slot == REF_OWNED) {
        if (ref->fd >= 0) close(ref->fd);
    } else if (ref->slot >= 0) {
        struct dir_slot *s = &d->slots[ref->slot];
        pthread_mutex_lock(&d->mut);
        if (--s->users == 0 && s->doomed) {
            close(s->fd);
            s->used = 0;
            s->doomed = 0;
        }
        pthread_mutex_unlock(&d->mut);
    }
    ref->fd = -1;
    ref->slot = REF_ROOT;
}

void dents_start(struct dents *r, int fd, char *buf, size_t size)
{
    r->fd = fd;
    r->buf = buf;
    r->size = size;
    r->got = r->at = 0;
    r->failed = 0;
}

const char *dents_next(struct dents *r)
{
    if (r->at >= r->got) {
        r->got = getdents64(r->fd, r->buf, r->size);
        r->at = 0;
        if (r->got <= 0) {
            r->failed = r->got < 0;
            r->got = 0;
            return NULL;
        }
    }
    const struct dirent64 *e = (const struct dirent64 *)(r->buf + r->at);
    r->at += e->d_reclen;
    return e->d_name;
}
