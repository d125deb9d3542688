/*
 * The plaintext paths whose lookups, opens, creates and renames the hooks
 * leave to JavaScript. libfuse2 hides a file that is unlinked or renamed
 * over while open by renaming it to a `.fuse_hidden` name, and
 * src/fuse/hidden-files.ts (justHidden, the twin) must see what comes next
 * at that path: the second half of libfuse's rename over an open file, or
 * a lookup, which tells it that a later rename onto the path is a rename
 * of its own. Every other path stays with the hooks meanwhile.
 */
#ifndef TSCRYPTFS_FASTPATH_HELD_H
#define TSCRYPTFS_FASTPATH_HELD_H

#include <pthread.h>
#include <stddef.h>

struct held {
    pthread_mutex_t mut; /* paths, n, cap, lost */
    char **paths;
    size_t n, cap;
    size_t lost;  /* paths that could not be kept (out of memory): while any, every path is held */
    size_t count; /* atomic: n + lost, read without the lock */
};

void held_init(struct held *h);
void held_free(struct held *h);
/*
 * Holds `path` (on) or lets it go; JavaScript holds a path at most once.
 * NULL stands for a path the caller could not copy (out of memory): every
 * path is held until it is let go.
 */
void held_set(struct held *h, const char *path, int on);
/* Whether `path` is held: one atomic load while nothing is. */
int held_has(struct held *h, const char *path);

#endif
