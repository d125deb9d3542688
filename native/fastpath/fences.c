/* See fences.h. */
#include "fences.h"
#include <stdlib.h>
#include <string.h>

struct inode_slot {
    uint32_t dev;
    uint64_t ino;
    uint32_t slot;
    uint32_t refs;
    struct inode_slot *next;
};

static struct inode_slot **inode_bucket(struct fences *f, uint32_t dev, uint64_t ino)
{
    return &f->inodes[(ino ^ ((uint64_t)dev << 17)) % INODE_BUCKETS];
}

void fences_init(struct fences *f, int32_t *words, uint32_t n)
{
    f->words = words;
    f->n = n;
    memset(f->inodes, 0, sizeof f->inodes);
    f->free = NULL;
    f->nfree = f->next = 0;
    pthread_mutex_init(&f->mut, NULL);
}

void fences_free(struct fences *f)
{
    for (size_t i = 0; i < INODE_BUCKETS; i++) {
        struct inode_slot *e = f->inodes[i];
        while (e) {
            struct inode_slot *next = e->next;
            free(e);
            e = next;
        }
        f->inodes[i] = NULL;
    }
    free(f->free);
    f->free = NULL;
    pthread_mutex_destroy(&f->mut);
}

int64_t fences_claim(struct fences *f, uint32_t dev, uint64_t ino)
{
    int64_t slot = -1;
    pthread_mutex_lock(&f->mut);
    struct inode_slot **b = inode_bucket(f, dev, ino), *e = *b;
    while (e && !(e->dev == dev && e->ino == ino)) e = e->next;
    if (e) {
        e->refs++;
        slot = e->slot;
    } else if ((f->free || (f->free = calloc(f->n, sizeof *f->free))) && (f->nfree > 0 || f->next < f->n) && (e = calloc(1, sizeof *e))) {
        e->dev = dev;
        e->ino = ino;
        e->refs = 1;
        e->slot = f->nfree > 0 ? f->free[--f->nfree] : f->next++;
        e->next = *b;
        *b = e;
        slot = e->slot;
    }
    pthread_mutex_unlock(&f->mut);
    return slot;
}

void fences_release(struct fences *f, uint32_t dev, uint64_t ino)
{
    pthread_mutex_lock(&f->mut);
    for (struct inode_slot **p = inode_bucket(f, dev, ino); *p; p = &(*p)->next) {
        struct inode_slot *e = *p;
        if (e->dev == dev && e->ino == ino) {
            if (--e->refs == 0) {
                *p = e->next;
                f->free[f->nfree++] = e->slot;
                free(e);
            }
            break;
        }
    }
    pthread_mutex_unlock(&f->mut);
}
