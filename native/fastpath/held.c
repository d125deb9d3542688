/* See held.h. */
#define _GNU_SOURCE
#include "held.h"
#include <stdlib.h>
#include <string.h>

void held_init(struct held *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->mut, NULL);
}

void held_free(struct held *h)
{
    for (size_t i = 0; i < h->n; i++) free(h->paths[i]);
    free(h->paths);
    h->paths = NULL;
    h->n = h->cap = 0;
    pthread_mutex_destroy(&h->mut);
}

/* Adds `path`; 0 when out of memory. Under the lock. */
static int add(struct held *h, const char *path)
{
    if (h->n == h->cap) {
        const size_t cap = h->cap ? h->cap * 2 : 16;
        char **paths = realloc(h->paths, cap * sizeof *paths);
        if (!paths) return 0;
        h->paths = paths;
        h->cap = cap;
    }
    char *copy = strdup(path);
    if (!copy) return 0;
    h->paths[h->n++] = copy;
    return 1;
}

void held_set(struct held *h, const char *path, int on)
{
    pthread_mutex_lock(&h->mut);
    if (on) {
        if (!path || !add(h, path)) h->lost++;
    } else {
        size_t i = 0;
        while (path && i < h->n && strcmp(h->paths[i], path) != 0) i++;
        if (path && i < h->n) {
            free(h->paths[i]);
            h->paths[i] = h->paths[--h->n];
        } else if (h->lost > 0) {
            h->lost--; /* one JavaScript holds that this list lost */
        }
    }
    __atomic_store_n(&h->count, h->n + h->lost, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&h->mut);
}

int held_has(struct held *h, const char *path)
{
    if (__atomic_load_n(&h->count, __ATOMIC_ACQUIRE) == 0) return 0;
    pthread_mutex_lock(&h->mut);
    int found = h->lost > 0;
    for (size_t i = 0; i < h->n && !found; i++) found = strcmp(h->paths[i], path) == 0;
    pthread_mutex_unlock(&h->mut);
    return found;
}
