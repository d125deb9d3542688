/*
 * The hooks `unlink` and `rmdir`.
 *
 * unlink: answered in JavaScript, each UNLINK costs two thread hand-overs
 * for one unlinkat; an rm -r of the bench tree sends 19,392. The binding's
 * attribute cache keeps the cipher path of every entry a listing returned
 * (readdir_packed in native/fuse-native/fuse-native.c), and calls the hook
 * for a name a listing showed less than a second ago, with no rename since:
 * what src/vault/node-links.ts's unlink would find by encrypting the path,
 * as its directory cache (src/vault/backing/dir-cache.ts) remembers names
 * for a second. The directory holding the name comes from dirs.c (never
 * through a symlink); then unlinkat(2) of the name, and of its .name file
 * for a long name (Documentation/format.md §7.8), as deleteLongName does
 * (a missing .name file is no error). Anything else goes to JavaScript
 * untouched: a component that is gone or is not a directory (another
 * program renamed it within that second), a name unlinkat refuses (JS then
 * gives the error, with its log line).
 *
 * rmdir: src/vault/node-dir-ops.ts's rmdirEntry on the libfuse thread. The
 * directory is opened from its parent's descriptor (O_DIRECTORY|O_NOFOLLOW)
 * and listed; it goes only when it holds nothing but its IV
 * (Documentation/format.md §7.7), which is moved out beside it under a
 * random name first (a directory is never empty on disk: if the removal
 * fails, the IV is put back) and deleted after. Then its .name file, for a
 * long name. Anything else goes to JavaScript, which gives the error
 * (ENOTEMPTY, ...) and its log line: a directory with other names, a walk
 * or system call that fails. Each removal goes into the log (removed.h).
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#define DISK_NAME_MAX 255
#define LONGNAME_SUFFIX ".name"
#define DIRIV_NAME "gocryptfs.diriv"

/* Removes the .name file of long name `last` in `dfd` (format.md §7.8): 0, also when there is none; else -errno. */
static int remove_name_file(int dfd, const char *last)
{
    char name[DISK_NAME_MAX + sizeof LONGNAME_SUFFIX];
    size_t len = strlen(last);
    if (len + sizeof LONGNAME_SUFFIX > sizeof name) return 0;
    memcpy(name, last, len);
    memcpy(name + len, LONGNAME_SUFFIX, sizeof LONGNAME_SUFFIX);
    return unlinkat(dfd, name, 0) != 0 && errno != ENOENT ? -errno : 0;
}

/* The hook's `unlink` (fuse_hooks.h). Twin: unlink in src/vault/node-links.ts. */
int fp_unlink(void *ctx, const char *cpath, int long_name)
{
    struct fast_path *p = ctx;
    const char *last = NULL;
    struct dir_ref dir;
    if (dirs_root(&p->dirs) < 0 || !p->unlinks || !cpath || dirs_parent(&p->dirs, cpath, &last, &dir) != 0) goto pass;
    if (unlinkat(dir.fd, last, 0) != 0) {
        dirs_put(&p->dirs, &dir);
        goto pass;
    }
    const int res = long_name ? remove_name_file(dir.fd, last) : 0;
    dirs_put(&p->dirs, &dir);
    return hook_answered(&p->unlinked, res);
pass:
    hook_passed(&p->unlinked);
    return TSCRYPTFS_HOOK_PASS;
}

/* 1: the directory open at `fd` holds nothing but its IV (*has_iv) or nothing at all; 0: something else, or it cannot be listed. */
static int holds_only_iv(int fd, int *has_iv)
{
    char buf[1024] __attribute__((aligned(8)));
    struct dents r;
    dents_start(&r, fd, buf, sizeof buf);
    *has_iv = 0;
    for (const char *n; (n = dents_next(&r)) != NULL;) {
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0) continue;
        if (strcmp(n, DIRIV_NAME) != 0) return 0;
        *has_iv = 1;
    }
    return !r.failed;
}

/* Removes directory `last` in `dfd` (open at `fd`), moving its IV out first; 1 when it is gone. */
static int remove_dir(int dfd, int fd, const char *last, int has_iv)
{
    if (!has_iv) return unlinkat(dfd, last, AT_REMOVEDIR) == 0;
    uint64_t rnd = 0;
    char parked[sizeof DIRIV_NAME + 32];
    if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) return 0;
    snprintf(parked, sizeof parked, "%s.rmdir.%llu", DIRIV_NAME, (unsigned long long)rnd);
    if (renameat(fd, DIRIV_NAME, dfd, parked) != 0) return 0;
    const int gone = unlinkat(dfd, last, AT_REMOVEDIR) == 0;
    if (gone) unlinkat(dfd, parked, 0);
    else renameat(dfd, parked, fd, DIRIV_NAME);
    return gone;
}

/* The hook's `rmdir` (fuse_hooks.h). Twin: rmdirEntry in src/vault/node-dir-ops.ts. */
int fp_rmdir(void *ctx, const char *cpath, int long_name)
{
    struct fast_path *p = ctx;
    const char *last = NULL;
    struct dir_ref dir;
    if (dirs_root(&p->dirs) < 0 || !fp_on(&p->rmdirs) || !cpath || dirs_parent(&p->dirs, cpath, &last, &dir) != 0) goto pass;
    const int fd = openat(dir.fd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int has_iv = 0, gone = 0;
    /* Without directory IVs (plaintext or deterministic names) a gocryptfs.diriv is a name like any other, as for JS. */
    if (fd >= 0 && holds_only_iv(fd, &has_iv) && (!has_iv || p->rmdir_ivs)) gone = remove_dir(dir.fd, fd, last, has_iv);
    if (fd >= 0) close(fd);
    if (!gone) {
        dirs_put(&p->dirs, &dir);
        goto pass;
    }
    removed_add(&p->removed, cpath);
    const int res = long_name ? remove_name_file(dir.fd, last) : 0;
    dirs_put(&p->dirs, &dir);
    return hook_answered(&p->rmdired, res);
pass:
    hook_passed(&p->rmdired);
    return TSCRYPTFS_HOOK_PASS;
}
