/*
 * The open files the fast path may serve: each handle's cipher file
 * descriptor, its fence slot (fences.h) and its cached file ID, by the
 * handle number the kernel uses. JavaScript registers the handles it opens
 * (they stay below NATIVE_FH_BASE, as the binding hands JavaScript a
 * handle as 32 bits); open.c registers the ones it opens from
 * NATIVE_FH_BASE up and owns their descriptors.
 */
#ifndef TSCRYPTFS_FASTPATH_HANDLES_H
#define TSCRYPTFS_FASTPATH_HANDLES_H

#include "content.h"
#include <pthread.h>
#include <stdint.h>

#define HANDLE_BUCKETS 1024
#define NATIVE_FH_BASE 0x80000000u

/* A handle's flags. */
#define HANDLE_READABLE 1 /* not O_WRONLY: its reads may be answered */
#define HANDLE_WRITABLE 2 /* open for writing, not O_APPEND: its writes may be answered */

struct handle {
    uint64_t fh;
    int fd;
    int flags;     /* HANDLE_* */
    int owned;     /* open.c opened it: it is closed at the RELEASE */
    int adopted;   /* JavaScript holds a duplicate of `fd` too and gets the RELEASE */
    int access;    /* owned: the caller's access mode (O_RDONLY, O_WRONLY, O_RDWR), which JavaScript adopts it with */
    uint32_t dev;  /* owned: the cipher file's, as JS's stat words give them */
    uint64_t ino;
    uint32_t busy; /* calls using `fd` through handles_pin (handles_remove waits for 0) */
    uint32_t slot;
    int has_id;
    int32_t id_seq; /* the fence's `started` when the ID was read */
    uint8_t id[ID_LEN];
    struct handle *next;
};

struct handles {
    pthread_mutex_t mut;
    pthread_cond_t idle; /* a handle's `busy` went to 0 */
    struct handle *buckets[HANDLE_BUCKETS];
    uint32_t next_fh; /* the next owned handle's number */
};

void handles_init(struct handles *hs);
/* Frees every handle, closing the descriptors of owned ones. */
void handles_free(struct handles *hs);

/* Registers `h` (an owned one gets its fh here, from NATIVE_FH_BASE up). */
void handles_insert(struct handles *hs, struct handle *h);
/* Takes handle `fh` (owned or JavaScript's) out once no call uses it; NULL when there is none. */
struct handle *handles_remove(struct handles *hs, uint64_t fh, int owned);
/* Frees a handle taken out (its file ID wiped). */
void handle_free(struct handle *h);

/* A copy of handle `fh`; 0 when it is not registered. */
int handles_copy(struct handles *hs, uint64_t fh, struct handle *out);
/* Caches handle `fh`'s file ID, read when the fence's `started` was `seq`. */
void handles_remember_id(struct handles *hs, uint64_t fh, int32_t seq, const uint8_t *id);
/* Handle `fh`, held so that handles_remove waits until handles_unpin; NULL when it is not registered. */
struct handle *handles_pin(struct handles *hs, uint64_t fh);
void handles_unpin(struct handles *hs, struct handle *h);

/* A duplicate of owned handle `fh`'s descriptor, marking it adopted, and its access mode in *access; -1 when there is none. */
int handles_adopt_fd(struct handles *hs, uint64_t fh, int *access);
/* How many owned handles JavaScript has not adopted are open. */
size_t handles_owned_count(struct handles *hs);
/* The owned handles not adopted yet that are open on (dev, ino): up to `cap` into fhs; returns how many there are. */
size_t handles_owned_on(struct handles *hs, uint32_t dev, uint64_t ino, uint64_t *fhs, size_t cap);

#endif
