/*
 * The cipher directory's root and the directories below it that the fast
 * path used last, kept open. The native unlink, rmdir, lookup and open
 * each need the directory that holds a name, opened O_PATH from the root
 * without following a symlink; opened afresh for every request, that is an
 * openat2(2) (or a walk of openat(2)s) and a close(2) each time, though
 * `rm -r` removes a directory's names one after another and an untar or
 * `md5sum -c` stays in one directory for many requests.
 *
 * DIRS_SLOTS directories are kept by cipher path (one slot per hash of the
 * path) for KEPT_TTL_NS, as the vault's directory cache keeps its
 * descriptors (src/vault/backing/dir-cache.ts). When a mkdir, rmdir or
 * rename through the mount starts or ends (the hook's `dirs_changed`),
 * every kept directory is closed, or marked to be closed by the last
 * request using it, as the vault drops the slots of the directories it
 * removes or renames: no descriptor of a removed directory outlives the
 * removal, and a directory made again at once under the same cipher path
 * (-plaintextnames) is opened anew. Within that second, a directory
 * another program moves is used where it now is, as the vault would use it.
 */
#ifndef TSCRYPTFS_FASTPATH_DIRS_H
#define TSCRYPTFS_FASTPATH_DIRS_H

#include "kept.h"
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DIRS_SLOTS 32

struct dir_slot;

struct dirs {
    int root;       /* the cipher directory (the fast path's own duplicate); -1 until dirs_set_root */
    uint64_t epoch; /* steps on at every dirs_changed */
    struct dir_slot *slots; /* DIRS_SLOTS, under mut; NULL: none kept */
    pthread_mutex_t mut;
};

/* A directory dirs_get, dirs_keep or dirs_parent handed out: give it back with dirs_put. */
struct dir_ref {
    int fd;
    int slot;
};

void dirs_init(struct dirs *d);
/* Closes the root and what is kept. */
void dirs_free(struct dirs *d);
/* Walks from a duplicate of `fd` from now on, keeping directories if memory allows; 0 when it cannot be duplicated. Once only. */
int dirs_set_root(struct dirs *d, int fd);
/* The root's descriptor; -1 before dirs_set_root. */
static inline int dirs_root(const struct dirs *d) { return __atomic_load_n(&d->root, __ATOMIC_ACQUIRE); }

/* Directory `cpath` below `root`, O_PATH, never through a symlink (`root` itself for ""); -1 when that fails. */
int dirs_open_beneath(int root, const char *cpath);

/*
 * Directory `cpath` (`len` bytes, not NUL-terminated; "" is the root) in
 * ref->fd, as dirs_open_beneath finds it, or the one kept open; -1 when
 * the open fails. Every 0 is followed by one dirs_put.
 */
int dirs_get(struct dirs *d, const char *cpath, size_t len, struct dir_ref *ref);
/*
 * The directory holding the last component of `cpath` (names on disk
 * joined by '/'), as dirs_get gives it; *last points at that component.
 * -1 when a component is no name on disk or the open fails.
 */
int dirs_parent(struct dirs *d, const char *cpath, const char **last, struct dir_ref *ref);
/* Hands `fd` (directory `cpath`, opened at `at` with the epoch taken before) over to be kept; ref as dirs_get's. */
void dirs_keep(struct dirs *d, const char *cpath, size_t len, int fd, uint64_t epoch, int64_t at, struct dir_ref *ref);
/* Done with a directory handed out. */
void dirs_put(struct dirs *d, struct dir_ref *ref);
/* The count of directory changes, to take before an open that dirs_keep will keep. */
uint64_t dirs_epoch(struct dirs *d);
/* A directory changed through the mount: every kept directory is closed (by its last user, if in use). */
void dirs_changed(struct dirs *d);

/*
 * The names of the directory open at `fd`, read with getdents64 into the
 * caller's buffer (on its stack): no duplicate descriptor and no DIR to
 * allocate, as the descriptor is opened for the one reading.
 */
struct dents {
    int fd;
    char *buf;
    size_t size;
    ssize_t got, at;
    int failed; /* getdents64 failed */
};
void dents_start(struct dents *r, int fd, char *buf, size_t size);
/* The next name ("." and ".." too), or NULL at the end and when a read fails (r->failed). */
const char *dents_next(struct dents *r);

#endif
