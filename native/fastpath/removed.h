/*
 * The log of the directories the native rmdir removed. JavaScript keeps
 * descriptors of the directories it walked, by plaintext path
 * (src/vault/backing/dir-cache.ts), and must forget a removed one before
 * it makes anything at that path again: it takes the log before every
 * request it answers.
 */
#ifndef TSCRYPTFS_FASTPATH_REMOVED_H
#define TSCRYPTFS_FASTPATH_REMOVED_H

#include <pthread.h>
#include <stddef.h>

#define REMOVED_MAX 4096

struct removed {
    pthread_mutex_t mut; /* paths, n, all */
    char **paths;        /* cipher paths (REMOVED_MAX), made by removed_start */
    size_t n;
    int all;     /* more than REMOVED_MAX, or out of memory: JavaScript forgets every directory */
    int pending; /* atomic: the log has something */
};

void removed_init(struct removed *l);
void removed_free(struct removed *l);
/* Makes room for the log (before the first removal). */
void removed_start(struct removed *l);
/* Adds cipher path `cpath`. */
void removed_add(struct removed *l, const char *cpath);
/* Whether the log has something (one atomic load). */
int removed_pending(struct removed *l);
/*
 * Hands the log to `take` (under the log's lock: all = 1 means "every
 * directory", else the n paths) and empties it when `take` returns 1.
 */
int removed_take(struct removed *l, int (*take)(void *arg, int all, char *const *paths, size_t n), void *arg);

#endif
