/* See handles.h. */
#define _GNU_SOURCE
#include "handles.h"
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct handle **bucket(struct handles *hs, uint64_t fh) { return &hs->buckets[fh % HANDLE_BUCKETS]; }

static struct handle *find_locked(struct handles *hs, uint64_t fh)
{
    struct handle *h = *bucket(hs, fh);
    while (h && h->fh != fh) h = h->next;
    return h;
}

void handles_init(struct handles *hs)
{
    memset(hs->buckets, 0, sizeof hs->buckets);
    hs->next_fh = NATIVE_FH_BASE;
    pthread_mutex_init(&hs->mut, NULL);
    pthread_cond_init(&hs->idle, NULL);
}

void handle_free(struct handle *h)
{
    OPENSSL_cleanse(h->id, ID_LEN);
    free(h);
}

void handles_free(struct handles *hs)
{
    for (size_t i = 0; i < HANDLE_BUCKETS; i++) {
        struct handle *h = hs->buckets[i];
        while (h) {
            struct handle *next = h->next;
            if (h->owned) close(h->fd);
            handle_free(h);
            h = next;
        }
        hs->buckets[i] = NULL;
    }
    pthread_mutex_destroy(&hs->mut);
    pthread_cond_destroy(&hs->idle);
}

void handles_insert(struct handles *hs, struct handle *h)
{
    pthread_mutex_lock(&hs->mut);
    if (h->owned) {
        do {
            if (hs->next_fh < NATIVE_FH_BASE) hs->next_fh = NATIVE_FH_BASE; /* after 0xffffffff */
            h->fh = hs->next_fh++;
        } while (find_locked(hs, h->fh));
    }
    h->next = *bucket(hs, h->fh);
    *bucket(hs, h->fh) = h;
    pthread_mutex_unlock(&hs->mut);
}

struct handle *handles_remove(struct handles *hs, uint64_t fh, int owned)
{
    struct handle *h = NULL;
    pthread_mutex_lock(&hs->mut);
    for (struct handle **p = bucket(hs, fh); *p; p = &(*p)->next) {
        if ((*p)->fh == fh && (*p)->owned == owned) {
            h = *p;
            *p = h->next;
            while (h->busy > 0) pthread_cond_wait(&hs->idle, &hs->mut);
            break;
        }
    }
    pthread_mutex_unlock(&hs->mut);
    return h;
}

int handles_copy(struct handles *hs, uint64_t fh, struct handle *out)
{
    pthread_mutex_lock(&hs->mut);
    struct handle *h = find_locked(hs, fh);
    if (h) *out = *h;
    pthread_mutex_unlock(&hs->mut);
    return h != NULL;
}

void handles_remember_id(struct handles *hs, uint64_t fh, int32_t seq, const uint8_t *id)
{
    pthread_mutex_lock(&hs->mut);
    struct handle *h = find_locked(hs, fh);
    if (h) {
        memcpy(h->id, id, ID_LEN);
        h->id_seq = seq;
        h->has_id = 1;
    }
    pthread_mutex_unlock(&hs->mut);
}

struct handle *handles_pin(struct handles *hs, uint64_t fh)
{
    pthread_mutex_lock(&hs->mut);
    struct handle *h = find_locked(hs, fh);
    if (h) h->busy++;
    pthread_mutex_unlock(&hs->mut);
    return h;
}

void handles_unpin(struct handles *hs, struct handle *h)
{
    pthread_mutex_lock(&hs->mut);
    if (--h->busy == 0) pthread_cond_broadcast(&hs->idle);
    pthread_mutex_unlock(&hs->mut);
}

int handles_adopt_fd(struct handles *hs, uint64_t fh, int *access)
{
    int fd = -1;
    pthread_mutex_lock(&hs->mut);
    struct handle *h = find_locked(hs, fh);
    if (h && h->owned) {
        fd = fcntl(h->fd, F_DUPFD_CLOEXEC, 0);
        if (fd >= 0) h->adopted = 1;
        *access = h->access;
    }
    pthread_mutex_unlock(&hs->mut);
    return fd;
}

size_t handles_owned_count(struct handles *hs)
{
    size_t n = 0;
    pthread_mutex_lock(&hs->mut);
    for (size_t i = 0; i < HANDLE_BUCKETS; i++)
        for (struct handle *h = hs->buckets[i]; h; h = h->next) n += h->owned && !h->adopted;
    pthread_mutex_unlock(&hs->mut);
    return n;
}

size_t handles_owned_on(struct handles *hs, uint32_t dev, uint64_t ino, uint64_t *fhs, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&hs->mut);
    for (size_t i = 0; i < HANDLE_BUCKETS; i++)
        for (struct handle *h = hs->buckets[i]; h; h = h->next)
            if (h->owned && !h->adopted && h->dev == dev && h->ino == ino) {
                if (n < cap) fhs[n] = h->fh;
                n++;
            }
    pthread_mutex_unlock(&hs->mut);
    return n;
}
