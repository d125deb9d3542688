/*
 * System calls Node does not offer, for the filesystem's own use:
 *
 *   fallocate(fd, mode, offset, length) -> 0 or -errno
 *   seekData(fd, offset)                 -> next data offset >= offset, or -errno
 *                                            (-ENXIO: only a hole follows)
 *   statListing(dir, names)              -> ArrayBuffer: for each dir/name, its
 *                                            lstat as 22 words, then the size of
 *                                            its extended attribute name list
 *                                            (llistxattr, 0: none) or -errno
 *   lock(fd, set, type, start, len, out) -> 0 or -errno: an open file
 *                                            description lock (F_OFD_SETLK
 *                                            when set, else F_OFD_GETLK, whose
 *                                            answer goes to out[0..3]: type,
 *                                            start, length, pid); never waits
 *   flock(fd, op)                        -> 0 or -errno (flock(2))
 *   returnMemory(collect)                -> kB of file pages unmapped: V8's and
 *                                            malloc's free memory back to the
 *                                            system, and the clean pages of
 *                                            read-only file mappings
 *                                            (memory.cc)
 *   limitMallocArenas(n)                 -> 1 when malloc may have at most
 *                                            n arenas from now on, 0 when
 *                                            not set (memory.cc)
 *
 * tscryptfs reserves the space of every cipher block before writing it
 * (FALLOC_FL_KEEP_SIZE, as gocryptfs does), so a full disk fails the write
 * with ENOSPC before anything is written instead of leaving a half-written,
 * undecryptable block; -fsck skips holes with lseek(SEEK_DATA) as
 * gocryptfs -fsck does. Offsets and lengths arrive as JavaScript numbers
 * (exact up to 2^53). statListing serves a directory listing in one call: a
 * mount hands the attributes to the kernel with the listing and notes which
 * entries have no extended attributes at all, so that the lookups and ls
 * -l's ACL queries that follow are answered without a trip to JavaScript.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include "stat_words.h"
#include "sys.h"

static napi_value sys_fallocate(napi_env env, napi_callback_info info)
{
    size_t argc = 4;
    napi_value argv[4];
    int32_t fd, mode;
    double off, len;
    napi_value result;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4 ||
        napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
        napi_get_value_int32(env, argv[1], &mode) != napi_ok ||
        napi_get_value_double(env, argv[2], &off) != napi_ok ||
        napi_get_value_double(env, argv[3], &len) != napi_ok ||
        off < 0 || len <= 0 || off > 9007199254740992.0 || len > 9007199254740992.0) {
        napi_throw_type_error(env, "EINVAL", "fallocate(fd, mode, offset >= 0, length > 0)");
        return NULL;
    }
    int rc;
    do {
        rc = fallocate(fd, mode, (off_t)off, (off_t)len);
    } while (rc != 0 && errno == EINTR);
    napi_create_int32(env, rc == 0 ? 0 : -errno, &result);
    return result;
}

static napi_value sys_seek_data(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    int32_t fd;
    double off;
    napi_value result;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
        napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
        napi_get_value_double(env, argv[1], &off) != napi_ok || off < 0 || off > 9007199254740992.0) {
        napi_throw_type_error(env, "EINVAL", "seekData(fd, offset >= 0)");
        return NULL;
    }
    off_t r = lseek(fd, (off_t)off, SEEK_DATA);
    napi_create_double(env, r < 0 ? -(double)errno : (double)r, &result);
    return result;
}

/*
 * statListing(dir, names) -> ArrayBuffer: for each name, lstat through one
 * descriptor of `dir` (fstatat, no walk of the whole path per entry) as
 * STAT_WORDS uint32 words (all zero when it failed), then, after all of
 * those, one int32 per name: llistxattr's size (0: no extended attributes)
 * or -errno.
 */
static napi_value sys_stat_listing(napi_env env, napi_callback_info info)
{
    size_t argc = 2, dirlen = 0;
    napi_value argv[2], result;
    uint32_t n = 0;
    bool is_array = false;
    char path[4096];
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
        napi_get_value_string_utf8(env, argv[0], path, sizeof(path), &dirlen) != napi_ok ||
        napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array ||
        napi_get_array_length(env, argv[1], &n) != napi_ok || dirlen + 2 >= sizeof(path)) {
        napi_throw_type_error(env, "EINVAL", "statListing(dir, names[])");
        return NULL;
    }
    uint32_t *words = NULL;
    if (napi_create_arraybuffer(env, (size_t)n * (STAT_WORDS + 1) * sizeof(uint32_t), (void **)&words, &result) != napi_ok)
        return NULL;
    memset(words, 0, (size_t)n * (STAT_WORDS + 1) * sizeof(uint32_t));
    int32_t *sizes = (int32_t *)(words + (size_t)n * STAT_WORDS);
    int dfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    path[dirlen] = '/';
    for (uint32_t i = 0; i < n; i++) {
        napi_value name;
        size_t len = 0;
        char *leaf = path + dirlen + 1;
        if (napi_get_element(env, argv[1], i, &name) != napi_ok ||
            napi_get_value_string_utf8(env, name, leaf, sizeof(path) - dirlen - 1, &len) != napi_ok ||
            dirlen + 1 + len + 1 >= sizeof(path)) {
            sizes[i] = -ENAMETOOLONG;
            continue;
        }
        struct stat st;
        if (dfd < 0 || fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            sizes[i] = dfd < 0 ? -EBADF : -errno;
            continue;
        }
        stat_words(words + (size_t)i * STAT_WORDS, &st);
        ssize_t r = llistxattr(path, NULL, 0);
        sizes[i] = r < 0 ? -errno : (r > INT32_MAX ? INT32_MAX : (int32_t)r);
    }
    if (dfd >= 0) close(dfd);
    return result;
}

/* Locks a mount takes on the cipher file for its callers (the caller waits and retries). */
static napi_value sys_lock(napi_env env, napi_callback_info info)
{
    size_t argc = 6;
    napi_value argv[6];
    int32_t fd, set, type;
    double start, len;
    double *out = NULL;
    size_t out_len = 0;
    napi_typedarray_type kind;
    napi_value ab, result;
    size_t off;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 6 ||
        napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int32(env, argv[1], &set) != napi_ok ||
        napi_get_value_int32(env, argv[2], &type) != napi_ok || napi_get_value_double(env, argv[3], &start) != napi_ok ||
        napi_get_value_double(env, argv[4], &len) != napi_ok ||
        napi_get_typedarray_info(env, argv[5], &kind, &out_len, (void **)&out, &ab, &off) != napi_ok ||
        kind != napi_float64_array || out_len < 4 || start < 0 || len < 0 || start > 9007199254740992.0 || len > 9007199254740992.0 ||
        (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK)) {
        napi_throw_type_error(env, "EINVAL", "lock(fd, set, type, start >= 0, len >= 0, Float64Array(4))");
        return NULL;
    }
    struct flock fl;
    memset(&fl, 0, sizeof(fl));
    fl.l_type = (short)type;
    fl.l_whence = SEEK_SET;
    fl.l_start = (off_t)start;
    fl.l_len = (off_t)len;
    int rc = fcntl(fd, set ? F_OFD_SETLK : F_OFD_GETLK, &fl);
    if (rc == 0 && !set) {
        out[0] = fl.l_type;
        out[1] = (double)fl.l_start;
        out[2] = (double)fl.l_len;
        out[3] = fl.l_pid;
    }
    napi_create_int32(env, rc == 0 ? 0 : -errno, &result);
    return result;
}

static napi_value sys_flock(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2], result;
    int32_t fd, op;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
        napi_get_value_int32(env, argv[0], &fd) != napi_ok || napi_get_value_int32(env, argv[1], &op) != napi_ok) {
        napi_throw_type_error(env, "EINVAL", "flock(fd, op)");
        return NULL;
    }
    napi_create_int32(env, flock(fd, op) == 0 ? 0 : -errno, &result);
    return result;
}

static napi_value init(napi_env env, napi_value exports)
{
    napi_value fn;
    napi_create_function(env, "fallocate", NAPI_AUTO_LENGTH, sys_fallocate, NULL, &fn);
    napi_set_named_property(env, exports, "fallocate", fn);
    napi_create_function(env, "seekData", NAPI_AUTO_LENGTH, sys_seek_data, NULL, &fn);
    napi_set_named_property(env, exports, "seekData", fn);
    napi_create_function(env, "statListing", NAPI_AUTO_LENGTH, sys_stat_listing, NULL, &fn);
    napi_set_named_property(env, exports, "statListing", fn);
    napi_create_function(env, "lock", NAPI_AUTO_LENGTH, sys_lock, NULL, &fn);
    napi_set_named_property(env, exports, "lock", fn);
    napi_create_function(env, "flock", NAPI_AUTO_LENGTH, sys_flock, NULL, &fn);
    napi_set_named_property(env, exports, "flock", fn);
    napi_create_function(env, "returnMemory", NAPI_AUTO_LENGTH, sys_return_memory, NULL, &fn);
    napi_set_named_property(env, exports, "returnMemory", fn);
    napi_create_function(env, "limitMallocArenas", NAPI_AUTO_LENGTH, sys_limit_malloc_arenas, NULL, &fn);
    napi_set_named_property(env, exports, "limitMallocArenas", fn);
    sys_at_register(env, exports);
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
