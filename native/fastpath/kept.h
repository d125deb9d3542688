/*
 * What the fast path keeps of directories (dirs.c: open descriptors;
 * walk.c: IVs and cipher paths) is kept as long as the vault's directory
 * cache keeps its descriptors (src/vault/backing/dir-cache.ts): a second,
 * in tables of fixed size indexed by a hash of the path.
 */
#ifndef TSCRYPTFS_FASTPATH_KEPT_H
#define TSCRYPTFS_FASTPATH_KEPT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define KEPT_TTL_NS 1000000000LL

/* The longest cipher path (names on disk joined by '/', from the cipher directory) kept or walked: PATH_MAX, what openat2 takes. */
#define CPATH_MAX 4096

/* CLOCK_MONOTONIC in ns, the clock of KEPT_TTL_NS. */
static inline int64_t kept_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* FNV-1a of `len` bytes: the slot of a path in the kept tables. */
static inline uint32_t kept_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* Whether something kept at `at` is still valid at `now`. */
static inline int kept_fresh(int64_t at, int64_t now) { return now - at >= 0 && now - at < KEPT_TTL_NS; }

#endif
