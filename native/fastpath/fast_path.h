/*
 * The mount's native fast path: the hooks (struct tscryptfs_fast_path,
 * fuse_hooks.h) that the fuse-native binding calls on the libfuse thread
 * that received a request, before it would hand the request to
 * JavaScript. Each hook answers the plain case of one operation as its
 * TypeScript twin in src/vault does, and passes anything else to
 * JavaScript untouched, which then answers and logs it.
 *
 * This header puts the parts together; each part owns its state and is
 * made and freed by its own functions:
 *   content.c   the content key, blocks, each thread's contexts
 *   handles.c   the handles open, by number
 *   fences.c    the fence counters shared with JavaScript, by file
 *   dirs.c      the cipher root and the directories kept open
 *   walk.c      plaintext path -> parent directory and name on disk
 *   removed.c   the log of directories removed, for JavaScript
 *   held.c      the paths whose requests JavaScript must see
 * The hooks use them and never each other:
 *   read.c (read, attr), write.c (write), lookup.c (lookup, no_xattrs,
 *   dirs_changed, dir_stat, statfs), open.c (open, create, fgetattr, fsync, release), remove.c (unlink,
 *   rmdir), list.c (list), rename.c (rename).
 * addon.c, the top, is the Node-API face that makes a fast path and turns
 * its hooks on.
 */
#ifndef TSCRYPTFS_FASTPATH_H
#define TSCRYPTFS_FASTPATH_H

#include "content.h"
#include "dirs.h"
#include "fences.h"
#include "fuse_hooks.h"
#include "handles.h"
#include "held.h"
#include "removed.h"
#include "walk.h"

/* How many requests of one kind a hook answered and passed on to JavaScript. */
struct hook_count {
    uint64_t answered, passed;
};

struct fast_path {
    struct tscryptfs_fast_path hook; /* first: the binding gets a pointer to it */
    struct content_key key;
    struct handles handles;
    struct fences fences;
    struct dirs dirs;
    struct walk walk;
    struct removed removed;
    struct held held;
    /* Which hooks answer (each off until addon.c turns it on; read always answers). */
    int attrs, writes, prealloc, unlinks, lookups, opens, creates, rmdirs, fsyncs, lists, renames;
    int rmdir_ivs; /* directories have a gocryptfs.diriv */
    struct hook_count reads, attr_changes, written, unlinked, looked_up, opened, created, rmdired, xattrs_none, fstated, synced, listed, renamed;
};

/* Counts one request of `c` answered (returning `res`) or passed on (returning TSCRYPTFS_HOOK_PASS or -1). */
static inline int hook_answered(struct hook_count *c, int res)
{
    __atomic_add_fetch(&c->answered, 1, __ATOMIC_RELAXED);
    return res;
}
static inline void hook_passed(struct hook_count *c) { __atomic_add_fetch(&c->passed, 1, __ATOMIC_RELAXED); }

/* The hooks, in the files named above. */
int fp_read(void *ctx, uint64_t fh, char *buf, size_t len, int64_t off);
int fp_attr(void *ctx, uint64_t fh, const struct tscryptfs_attr_change *c, struct stat *st, int *have_stat, int (*still)(void *arg),
            void *arg);
int fp_write(void *ctx, uint64_t fh, const char *data, size_t len, int64_t off);
int fp_lookup(void *ctx, const char *path, const uint64_t *dirs_gen, struct stat *st, char *cpath, size_t cap, int *cpath_long);
int fp_no_xattrs(void *ctx, const char *path, const char *name, const uint64_t *dirs_gen);
void fp_dirs_changed(void *ctx, const char *path);
int fp_dir_stat(void *ctx, const char *cpath, struct stat *st);
int fp_statfs(void *ctx, struct statvfs *st);
int fp_open(void *ctx, const char *path, int flags, const uint64_t *dirs_gen, uint64_t *fh);
int fp_create(void *ctx, const char *path, mode_t mode, int flags, uid_t uid, gid_t gid, const uint64_t *dirs_gen, uint64_t *fh, struct stat *st);
int fp_fgetattr(void *ctx, uint64_t fh, struct stat *st);
int fp_release(void *ctx, uint64_t fh);
int fp_fsync(void *ctx, uint64_t fh, int datasync);
int fp_unlink(void *ctx, const char *cpath, int long_name);
int fp_rmdir(void *ctx, const char *cpath, int long_name);
int fp_list(void *ctx, const char *path, const uint64_t *dirs_gen, struct tscryptfs_list_sink *sink);
int fp_rename(void *ctx, const char *from, const char *to, const uint64_t *dirs_gen);

/* Whether a hook is on (addon.c sets them with release stores). */
static inline int fp_on(const int *flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }

/* Whether the hooks that walk may answer a request naming `path` (held.h): lookups are on and JavaScript does not hold it. */
static inline int fp_walks(struct fast_path *p, const char *path) { return fp_on(&p->lookups) && path && !held_has(&p->held, path); }

#endif
