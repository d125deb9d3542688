/*
 * A file's attributes as 22 uint32 words: the one layout in which stat
 * results travel between the native calls, JavaScript
 * (src/util/stat-words.ts, checked against this file by
 * test/unit/native-constants.test.ts) and the binding (fuse-native.c).
 * 64-bit values are (low, high) word
 * pairs, times (seconds low, seconds high, nanoseconds):
 *
 *   0 mode  1 uid  2 gid  3-4 size  5 dev  6 nlink  7-8 ino  9 rdev
 *   10 blksize  11-12 blocks  13-15 atime  16-18 mtime  19-21 ctime
 */
#ifndef TSCRYPTFS_STAT_WORDS_H
#define TSCRYPTFS_STAT_WORDS_H

#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#define STAT_WORDS 22

static inline void stat_words_put64(uint32_t *w, uint64_t v)
{
    w[0] = (uint32_t)v;
    w[1] = (uint32_t)(v >> 32);
}

static inline void stat_words_put_time(uint32_t *w, const struct timespec *t)
{
    stat_words_put64(w, (uint64_t)(int64_t)t->tv_sec);
    w[2] = (uint32_t)t->tv_nsec;
}

static inline void stat_words(uint32_t *w, const struct stat *st)
{
    w[0] = st->st_mode;
    w[1] = st->st_uid;
    w[2] = st->st_gid;
    stat_words_put64(w + 3, (uint64_t)st->st_size);
    w[5] = (uint32_t)st->st_dev;
    w[6] = (uint32_t)st->st_nlink;
    stat_words_put64(w + 7, (uint64_t)st->st_ino);
    w[9] = (uint32_t)st->st_rdev;
    w[10] = (uint32_t)st->st_blksize;
    stat_words_put64(w + 11, (uint64_t)st->st_blocks);
    stat_words_put_time(w + 13, &st->st_atim);
    stat_words_put_time(w + 16, &st->st_mtim);
    stat_words_put_time(w + 19, &st->st_ctim);
}

static inline uint64_t stat_words_get64(const uint32_t *w)
{
    return (uint64_t)w[0] | ((uint64_t)w[1] << 32);
}

static inline void stat_words_get_time(struct timespec *t, const uint32_t *w)
{
    t->tv_sec = (time_t)(int64_t)stat_words_get64(w);
    t->tv_nsec = (long)w[2];
}

/* The reverse of stat_words: a struct stat from the words (as the binding answers getattr). */
static inline void stat_from_words(struct stat *st, const uint32_t *w)
{
    st->st_mode = w[0];
    st->st_uid = w[1];
    st->st_gid = w[2];
    st->st_size = (off_t)stat_words_get64(w + 3);
    st->st_dev = w[5];
    st->st_nlink = w[6];
    st->st_ino = (ino_t)stat_words_get64(w + 7);
    st->st_rdev = w[9];
    st->st_blksize = (blksize_t)w[10];
    st->st_blocks = (blkcnt_t)stat_words_get64(w + 11);
    stat_words_get_time(&st->st_atim, w + 13);
    stat_words_get_time(&st->st_mtim, w + 16);
    stat_words_get_time(&st->st_ctim, w + 19);
}

#endif
