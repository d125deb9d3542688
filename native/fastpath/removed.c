/* See removed.h. */
#define _GNU_SOURCE
#include "removed.h"
#include <stdlib.h>
#include <string.h>

void removed_init(struct removed *l)
{
    memset(l, 0, sizeof *l);
    pthread_mutex_init(&l->mut, NULL);
}

void removed_free(struct removed *l)
{
    if (l->paths) {
        for (size_t i = 0; i < l->n; i++) free(l->paths[i]);
        free(l->paths);
        l->paths = NULL;
    }
    pthread_mutex_destroy(&l->mut);
}

void removed_start(struct removed *l)
{
    pthread_mutex_lock(&l->mut);
    if (!l->paths) l->paths = calloc(REMOVED_MAX, sizeof *l->paths);
    pthread_mutex_unlock(&l->mut);
}

void removed_add(struct removed *l, const char *cpath)
{
    pthread_mutex_lock(&l->mut);
    if (!l->paths || l->n >= REMOVED_MAX) {
        l->all = 1;
    } else {
        char *copy = strdup(cpath);
        if (copy) l->paths[l->n++] = copy;
        else l->all = 1;
    }
    __atomic_store_n(&l->pending, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&l->mut);
}

int removed_pending(struct removed *l) { return __atomic_load_n(&l->pending, __ATOMIC_ACQUIRE); }

int removed_take(struct removed *l, int (*take)(void *arg, int all, char *const *paths, size_t n), void *arg)
{
    pthread_mutex_lock(&l->mut);
    const int ok = take(arg, l->all, l->paths, l->n);
    if (ok) { /* handed over: the log starts again */
        for (size_t i = 0; i < l->n; i++) free(l->paths[i]);
        l->n = 0;
        l->all = 0;
        __atomic_store_n(&l->pending, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&l->mut);
    return ok;
}
