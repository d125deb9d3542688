/*
 * Fence counters, FENCE_STRIDE int32 per file slot, in an ArrayBuffer that
 * JavaScript shares (src/vault/write-fences.ts):
 *   [0] started   bumped before a write touches the cipher file
 *   [1] finished  bumped after it
 *   [2] owner     0: free; -1: a native writer holds the file;
 *                 n > 0: JavaScript holds it n times (reads or a write)
 * A native writer takes `owner` with one compare-and-swap from 0 to -1 and
 * leaves the write to JavaScript when it is taken; JavaScript waits for a
 * native writer (which never waits for anything) to put it back to 0. A
 * native read (of blocks, or an fstat) goes on only if no write was under
 * way when it started and none started until it ended: fence_read_begin
 * and fence_read_end.
 *
 * Slots belong to files, not handles: JavaScript's file state and every
 * native handle of one file must use the same slot, so that a write through
 * JavaScript fences the native reads of every handle. So the slots are
 * handed out here, by device and inode, and counted.
 */
#ifndef TSCRYPTFS_FASTPATH_FENCES_H
#define TSCRYPTFS_FASTPATH_FENCES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define FENCE_STRIDE 4
#define FENCE_STARTED 0
#define FENCE_FINISHED 1
#define FENCE_OWNER 2
#define INODE_BUCKETS 1024

struct inode_slot;

struct fences {
    int32_t *words; /* FENCE_STRIDE per slot; the memory is JavaScript's ArrayBuffer */
    uint32_t n;     /* slots */
    pthread_mutex_t mut; /* inodes, free, nfree, next */
    struct inode_slot *inodes[INODE_BUCKETS];
    uint32_t *free; /* `n` entries, made at the first claim */
    uint32_t nfree, next;
};

/* Slots over `words` (FENCE_STRIDE * n int32, zeroed). */
void fences_init(struct fences *f, int32_t *words, uint32_t n);
void fences_free(struct fences *f);

/* Slot `slot`'s counters. */
static inline int32_t *fences_of(const struct fences *f, uint32_t slot) { return f->words + FENCE_STRIDE * (size_t)slot; }

/* A read's start: 1 with `started` in *seq when no write is under way, 0 when one is. */
static inline int fence_read_begin(const int32_t *fence, int32_t *seq)
{
    *seq = __atomic_load_n(&fence[FENCE_STARTED], __ATOMIC_ACQUIRE);
    return __atomic_load_n(&fence[FENCE_FINISHED], __ATOMIC_ACQUIRE) == *seq;
}
/* A read's end: 1 when no write started since fence_read_begin gave `seq`. */
static inline int fence_read_end(const int32_t *fence, int32_t seq)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&fence[FENCE_STARTED], __ATOMIC_ACQUIRE) == seq;
}

/* The slot of file (dev, ino), counted once more; -1 when all are taken or memory is short. */
int64_t fences_claim(struct fences *f, uint32_t dev, uint64_t ino);
/* Counts the slot of file (dev, ino) once less; free again at 0 (its counters stay as they are: equal, owner 0). */
void fences_release(struct fences *f, uint32_t dev, uint64_t ino);

#endif
