/*
 * A mount's native unlink: an UNLINK answered on the libfuse
 * thread that received it. Answered in JavaScript, each costs two thread
 * hand-overs for one unlinkat; an rm -r of the bench tree sends 19,392.
 *
 * The binding's attribute cache keeps the cipher path of every entry a
 * listing returned (readdir_packed in native/fuse-native/fuse-native.c), and calls
 * the hook's `unlink` for a name a listing showed less than a second ago,
 * with no rename since: what src/vault/node-links.ts's unlink would find by
 * encrypting the path, as its directory cache
 * (src/vault/backing/dir-cache.ts) remembers names for a second. The
 * directory holding the name is opened O_PATH from the cipher directory's
 * descriptor with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) (or a walk
 * of openat(O_NOFOLLOW)s before Linux 5.6, as the vault walks), so a
 * symlink planted in the cipher directory is never followed, and kept
 * open for the next requests as the vault keeps its descriptors
 * (dir_fds.c); then unlinkat(2) of the name, and of
 * its .name file for a long name (Documentation/format.md §7.8), as
 * deleteLongName does (a missing .name file is no error).
 *
 * Anything else goes to JavaScript untouched: a component that is gone or
 * is not a directory (another program renamed it within that second), a
 * name unlinkat refuses (JS then gives the error, with its log line).
 *
 * The same walk gives the hook's `dir_stat`: the attributes of a listed
 * directory, which the binding compares with those the listing was read
 * under before it lets the kernel keep that listing (kept listings, see
 * Documentation/fuse-native.md). And the same root gives the hook's
 * `statfs` (dbench asks for it 1,400 times in 8 s).
 */
#define _GNU_SOURCE
#include "reader_core.h"
#include "napi_args.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/vfs.h>
#include <unistd.h>

#define NAME_MAX_ON_DISK 255
#define LONGNAME_SUFFIX ".name"

/* One component of a cipher path: a name on disk, never "", "." or "..". */
static int plain_component(const char *s, size_t len)
{
    return len > 0 && len <= NAME_MAX_ON_DISK && !(len == 1 && s[0] == '.') && !(len == 2 && s[0] == '.' && s[1] == '.');
}

/*
 * The directory holding the last component of `cpath`, in *dir (the root's
 * own descriptor, or one the reader keeps, dir_fds.c, opened O_PATH from
 * `root` without following a symlink; given back with dir_fds_put); *last
 * points at that component. -1 when a component is no name on disk or the
 * open fails (nothing to give back then).
 */
static int parent_of(struct reader *r, int root, const char *cpath, const char **last, struct dir_ref *dir)
{
    const char *p = cpath;
    for (const char *slash; (slash = strchr(p, '/')) != NULL; p = slash + 1)
        if (!plain_component(p, (size_t)(slash - p))) return -1;
    if (!plain_component(p, strlen(p))) return -1;
    *last = p;
    return dir_fds_get(r, root, cpath, p == cpath ? 0 : (size_t)(p - 1 - cpath), dir);
}

/* Removes the .name file of long name `last` in `dfd` (format.md §7.8): 0, also when there is none; else -errno. */
static int remove_name_file(int dfd, const char *last)
{
    char name[NAME_MAX_ON_DISK + sizeof LONGNAME_SUFFIX];
    size_t len = strlen(last);
    if (len + sizeof LONGNAME_SUFFIX > sizeof name) return 0;
    memcpy(name, last, len);
    memcpy(name + len, LONGNAME_SUFFIX, sizeof LONGNAME_SUFFIX);
    return unlinkat(dfd, name, 0) != 0 && errno != ENOENT ? -errno : 0;
}

/* The hook's `unlink` (fuse_hooks.h). Twin: unlink in src/vault/node-links.ts. */
int reader_unlink(void *ctx, const char *cpath, int long_name)
{
    struct reader *r = ctx;
    const int root = __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE);
    const char *last = NULL;
    struct dir_ref dir;
    if (root < 0 || !r->unlinks || !cpath || parent_of(r, root, cpath, &last, &dir) != 0) goto pass;
    if (unlinkat(dir.fd, last, 0) != 0) {
        dir_fds_put(r, &dir);
        goto pass;
    }
    const int res = long_name ? remove_name_file(dir.fd, last) : 0;
    dir_fds_put(r, &dir);
    __atomic_fetch_add(&r->unlinked, 1, __ATOMIC_RELAXED);
    return res;
pass:
    __atomic_fetch_add(&r->unlinks_passed, 1, __ATOMIC_RELAXED);
    return TSCRYPTFS_HOOK_PASS;
}

/* The hook's `dir_stat` (fuse_hooks.h). */
int reader_dir_stat(void *ctx, const char *cpath, struct stat *st)
{
    struct reader *r = ctx;
    const int root = __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE);
    if (root < 0 || !cpath) return -1;
    int res;
    if (cpath[0] == 0) {
        res = fstat(root, st);
    } else {
        const char *last = NULL;
        struct dir_ref dir;
        if (parent_of(r, root, cpath, &last, &dir) != 0) return -1;
        res = fstatat(dir.fd, last, st, AT_SYMLINK_NOFOLLOW);
        dir_fds_put(r, &dir);
    }
    return res == 0 && S_ISDIR(st->st_mode) ? 0 : -1;
}

/*
 * The hook's `statfs` (fuse_hooks.h): what src/vault/node-attrs.ts's statfs
 * and src/fuse/answer.ts's statfsReply make of the cipher directory's
 * statfs(2) (Node's fs.statfs, as libuv fills it): the fragment size is the
 * block size, favail is ffree, no fsid or flags, names up to 255 bytes.
 */
int reader_statfs(void *ctx, struct statvfs *st)
{
    struct reader *r = ctx;
    const int root = __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE);
    struct statfs sfs;
    if (root < 0 || fstatfs(root, &sfs) != 0) return -1;
    memset(st, 0, sizeof *st);
    st->f_bsize = (unsigned long)sfs.f_bsize;
    st->f_frsize = (unsigned long)sfs.f_bsize;
    st->f_blocks = sfs.f_blocks;
    st->f_bfree = sfs.f_bfree;
    st->f_bavail = sfs.f_bavail;
    st->f_files = sfs.f_files;
    st->f_ffree = sfs.f_ffree;
    st->f_favail = sfs.f_ffree;
    st->f_namemax = 255;
    return 0;
}

/*
 * readerCipherRoot(reader, rootFd, unlinks): from now on the reader walks
 * the cipher directory from `rootFd` (an O_PATH descriptor is enough): for
 * the binding's `dir_stat` calls, and with `unlinks` true to answer the
 * unlinks the binding knows the cipher path of. The reader keeps its own
 * duplicate until it goes (reader_finalize); once only.
 */
napi_value reader_js_cipher_root(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    int32_t fd;
    bool unlinks;
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !(r = reader_get(env, argv[0])) ||
        napi_get_value_int32(env, argv[1], &fd) != napi_ok || fd < 0 || napi_get_value_bool(env, argv[2], &unlinks) != napi_ok ||
        __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE) >= 0)
        return throw_inval(env, "readerCipherRoot(reader, rootFd, unlinks): bad argument");
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return throw_inval(env, "readerCipherRoot: cannot duplicate rootFd");
    r->unlinks = unlinks ? 1 : 0;
    dir_fds_init(r); /* out of memory: no directory is kept open, each request opens its own */
    __atomic_store_n(&r->root_fd, copy, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * The hook's `rmdir` (fuse_hooks.h): src/vault/node-dir-ops.ts's rmdirEntry
 * on the libfuse thread. The directory is opened from its parent's
 * descriptor (O_DIRECTORY|O_NOFOLLOW) and listed; it goes only when it
 * holds nothing but its IV (Documentation/format.md §7.7), which is moved
 * out beside it under a random name first (a directory is never empty on
 * disk: if the removal fails, the IV is put back) and deleted after. Then
 * its .name file, for a long name. Anything else goes to JavaScript, which
 * gives the error (ENOTEMPTY, ...) and its log line: a directory with other
 * names, a walk or system call that fails.
 *
 * JavaScript keeps descriptors of the directories it walked, by plaintext
 * path (src/vault/backing/dir-cache.ts), and must forget the removed one
 * before it makes anything at that path again: each removal is logged
 * here, and readerTakeRemovedDirs hands the log over (the mount takes it
 * before every request it answers).
 */
#define DIRIV_NAME "gocryptfs.diriv"
#define REMOVED_MAX 4096

/* Adds `cpath` to the log of removed directories; past REMOVED_MAX, JavaScript forgets every directory instead. */
static void removed_log(struct reader *r, const char *cpath)
{
    pthread_mutex_lock(&r->removed_mut);
    if (!r->removed || r->removed_n >= REMOVED_MAX) {
        r->removed_all = 1;
    } else {
        char *copy = strdup(cpath);
        if (copy) r->removed[r->removed_n++] = copy;
        else r->removed_all = 1;
    }
    __atomic_store_n(&r->removed_pending, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&r->removed_mut);
}

/* 1: the directory open at `fd` holds nothing but its IV (*has_iv) or nothing at all; 0: something else, or it cannot be listed. */
static int holds_only_iv(int fd, int *has_iv)
{
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = copy < 0 ? NULL : fdopendir(copy);
    if (!d) {
        if (copy >= 0) close(copy);
        return 0;
    }
    int only = 1;
    *has_iv = 0;
    errno = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (strcmp(e->d_name, DIRIV_NAME) == 0) {
            *has_iv = 1;
            continue;
        }
        only = 0;
        break;
    }
    if (only && errno != 0) only = 0; /* readdir failed */
    closedir(d);
    return only;
}

/* The hook's `rmdir` (fuse_hooks.h). Twin: rmdirEntry in src/vault/node-dir-ops.ts. */
int reader_rmdir(void *ctx, const char *cpath, int long_name)
{
    struct reader *r = ctx;
    const int root = __atomic_load_n(&r->root_fd, __ATOMIC_ACQUIRE);
    const char *last = NULL;
    struct dir_ref dir;
    if (root < 0 || !__atomic_load_n(&r->rmdirs, __ATOMIC_ACQUIRE) || !cpath || parent_of(r, root, cpath, &last, &dir) != 0) goto pass;
    const int dfd = dir.fd;
    int fd = openat(dfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int has_iv = 0, gone = 0;
    /* Without directory IVs (plaintext or deterministic names) a gocryptfs.diriv is a name like any other, as for JS. */
    if (fd >= 0 && holds_only_iv(fd, &has_iv) && (!has_iv || r->rmdir_ivs)) {
        if (!has_iv) {
            gone = unlinkat(dfd, last, AT_REMOVEDIR) == 0;
        } else {
            uint64_t rnd = 0;
            char parked[sizeof DIRIV_NAME + 32];
            if (getrandom(&rnd, sizeof rnd, 0) == (ssize_t)sizeof rnd) {
                snprintf(parked, sizeof parked, "%s.rmdir.%llu", DIRIV_NAME, (unsigned long long)rnd);
                if (renameat(fd, DIRIV_NAME, dfd, parked) == 0) {
                    gone = unlinkat(dfd, last, AT_REMOVEDIR) == 0;
                    if (gone) unlinkat(dfd, parked, 0);
                    else renameat(dfd, parked, fd, DIRIV_NAME);
                }
            }
        }
    }
    if (fd >= 0) close(fd);
    if (!gone) {
        dir_fds_put(r, &dir);
        goto pass;
    }
    removed_log(r, cpath);
    const int res = long_name ? remove_name_file(dfd, last) : 0;
    dir_fds_put(r, &dir);
    __atomic_fetch_add(&r->rmdired, 1, __ATOMIC_RELAXED);
    return res;
pass:
    __atomic_fetch_add(&r->rmdirs_passed, 1, __ATOMIC_RELAXED);
    return TSCRYPTFS_HOOK_PASS;
}

/*
 * readerRmdirs(reader, on, dirIVs): from now on (with `on` true) the reader
 * answers the rmdirs the binding knows the cipher path of, with unlinks on
 * (readerCipherRoot); the caller then takes the log of what it removed
 * (readerTakeRemovedDirs) before each request it answers. `dirIVs`: each
 * directory has a gocryptfs.diriv (the format's DirIV flag).
 */
napi_value reader_js_rmdirs(napi_env env, napi_callback_info info)
{
    size_t argc = 3;
    napi_value argv[3];
    bool on, ivs;
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !(r = reader_get(env, argv[0])) ||
        napi_get_value_bool(env, argv[1], &on) != napi_ok || napi_get_value_bool(env, argv[2], &ivs) != napi_ok)
        return throw_inval(env, "readerRmdirs(reader, on, dirIVs): bad argument");
    r->rmdir_ivs = ivs ? 1 : 0; /* before rmdirs, which publishes it */
    pthread_mutex_lock(&r->removed_mut);
    if (on && !r->removed) r->removed = calloc(REMOVED_MAX, sizeof *r->removed);
    pthread_mutex_unlock(&r->removed_mut);
    __atomic_store_n(&r->rmdirs, on && r->unlinks ? 1 : 0, __ATOMIC_RELEASE);
    return NULL;
}

/*
 * readerTakeRemovedDirs(reader) -> undefined (nothing removed since the
 * last call), an array of the cipher paths of the directories the hook's
 * `rmdir` removed since (as the binding gave them: names on disk joined by
 * "/"), or false: too many to list, forget every directory.
 */
napi_value reader_js_take_removed(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1], out = NULL;
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || !(r = reader_get(env, argv[0])))
        return throw_inval(env, "readerTakeRemovedDirs(reader): bad argument");
    if (!__atomic_load_n(&r->removed_pending, __ATOMIC_ACQUIRE)) return NULL;
    pthread_mutex_lock(&r->removed_mut);
    napi_status st = napi_ok;
    if (r->removed_all) {
        st = napi_get_boolean(env, false, &out);
    } else {
        st = napi_create_array_with_length(env, r->removed_n, &out);
        for (size_t i = 0; st == napi_ok && i < r->removed_n; i++) {
            napi_value s;
            st = napi_create_string_utf8(env, r->removed[i], NAPI_AUTO_LENGTH, &s);
            if (st == napi_ok) st = napi_set_element(env, out, (uint32_t)i, s);
        }
    }
    if (st == napi_ok) { /* handed over: the log starts again */
        for (size_t i = 0; i < r->removed_n; i++) free(r->removed[i]);
        r->removed_n = 0;
        r->removed_all = 0;
        __atomic_store_n(&r->removed_pending, 0, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&r->removed_mut);
    return st == napi_ok ? out : NULL;
}
