/*
 * The *at() system calls the Vault needs to work inside the cipher directory
 * through directory descriptors only (src/vault/backing/): nothing here
 * builds a path from the root, and nothing follows a symlink in the last
 * component except readlinkat, which reads one. Node has none of these.
 *
 * Every call returns a number >= 0 on success or -errno; readlinkat,
 * readdirat and the xattr reads return their data instead. Names are one
 * path component (or "." for the directory itself); a bad argument throws
 * (code EINVAL), a failing system call never throws.
 *
 * Creating calls (openat with O_CREAT, mkdirat, mknodat, symlinkat) take an
 * optional credential [uid, gid, supplementary groups...]: the call then
 * runs with that file system uid, gid and group list on this thread only
 * (raw setfsuid/setfsgid/setgroups, which glibc would apply to every
 * thread), so the new entry belongs to the caller and the kernel applies
 * its own rules for a setgid parent, the umask-free mode and permission
 * checks, as for a process of that user. gocryptfs does the same when it
 * runs as root (syscallcompat.asUser).
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "napi_args.h"
#include "stat_words.h"
#include "xattr_list.h"
#include "sys.h"

#define NAME_BUF 4097

/*
 * A string argument into buf (NUL-terminated); 0 when it is not a string or
 * does not fit. A copy cut short stops at a character boundary, up to three
 * bytes before the buffer's end, so a copy that reaches that close is
 * checked against the string's whole length.
 */
static int get_str(napi_env env, napi_value v, char *buf, size_t size)
{
    size_t len = 0, whole = 0;
    if (napi_get_value_string_utf8(env, v, buf, size, &len) != napi_ok) return 0;
    if (len + 4 >= size && (napi_get_value_string_utf8(env, v, NULL, 0, &whole) != napi_ok || whole != len)) return 0;
    return strlen(buf) == len; /* no embedded NUL */
}

static int get_i32(napi_env env, napi_value v, int32_t *out)
{
    napi_valuetype t;
    return napi_typeof(env, v, &t) == napi_ok && t == napi_number && napi_get_value_int32(env, v, out) == napi_ok;
}

static napi_value num(napi_env env, double v)
{
    napi_value r;
    napi_create_double(env, v, &r);
    return r;
}

/* -errno of the last failure, or r itself. */
static napi_value result(napi_env env, long r)
{
    return num(env, r < 0 ? -(double)errno : (double)r);
}

/* ---------------------------------------------------------- credentials */

struct cred {
    int active;
    int old_uid, old_gid;
    int old_ngroups;
    gid_t *old_groups;
};

/*
 * Enters the credential in `v` (undefined/null: none) on this thread.
 * Returns 0, or -errno when the switch did not take (then nothing changed).
 */
static int cred_enter(napi_env env, napi_value v, struct cred *c)
{
    memset(c, 0, sizeof(*c));
    napi_valuetype t;
    if (v == NULL || napi_typeof(env, v, &t) != napi_ok || t == napi_undefined || t == napi_null) return 0;
    bool is_ta = false;
    napi_typedarray_type type;
    size_t len = 0;
    void *data = NULL;
    if (napi_is_typedarray(env, v, &is_ta) != napi_ok || !is_ta ||
        napi_get_typedarray_info(env, v, &type, &len, &data, NULL, NULL) != napi_ok ||
        (type != napi_uint32_array && type != napi_int32_array) || len < 2 || len > 2 + 65536)
        return -EINVAL;
    const uint32_t *w = data;
    int n = getgroups(0, NULL);
    if (n < 0) return -errno;
    c->old_groups = malloc(sizeof(gid_t) * (size_t)(n > 0 ? n : 1));
    if (!c->old_groups) return -ENOMEM;
    c->old_ngroups = getgroups(n, c->old_groups);
    if (c->old_ngroups < 0) {
        free(c->old_groups);
        return -errno;
    }
    size_t ng = len - 2;
    gid_t *groups = malloc(sizeof(gid_t) * (ng > 0 ? ng : 1));
    if (!groups) {
        free(c->old_groups);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ng; i++) groups[i] = w[2 + i];
    long rc = syscall(SYS_setgroups, (long)ng, groups);
    free(groups);
    if (rc != 0) {
        int e = errno;
        free(c->old_groups);
        return -e;
    }
    c->old_gid = (int)syscall(SYS_setfsgid, (long)w[1]);
    c->old_uid = (int)syscall(SYS_setfsuid, (long)w[0]);
    c->active = 1;
    /* setfsuid/setfsgid report no failure: check that both took. */
    if ((uint32_t)syscall(SYS_setfsuid, -1L) != w[0] || (uint32_t)syscall(SYS_setfsgid, -1L) != w[1]) return -EPERM;
    return 0;
}

static void cred_leave(struct cred *c)
{
    if (c->active) {
        syscall(SYS_setfsuid, (long)c->old_uid);
        syscall(SYS_setfsgid, (long)c->old_gid);
        syscall(SYS_setgroups, (long)c->old_ngroups, c->old_groups);
    }
    free(c->old_groups);
    c->old_groups = NULL;
    c->active = 0;
}

/* Runs `expr` as the credential in argv[ci] (if given); `r` gets its result or -errno. */
#define AS_CRED(ci, r, expr)                                    \
    do {                                                        \
        struct cred c_;                                         \
        int e_ = cred_enter(env, argc > (ci) ? argv[ci] : NULL, &c_); \
        if (e_ != 0) {                                          \
            cred_leave(&c_);                                    \
            (r) = e_;                                           \
            break;                                              \
        }                                                       \
        long v_ = (expr);                                       \
        int errno_ = errno;                                     \
        cred_leave(&c_);                                        \
        (r) = v_ < 0 ? -errno_ : v_;                            \
    } while (0)

/* ------------------------------------------------------------- the calls */

#define ARGS(n)                                                   \
    size_t argc = (n);                                            \
    napi_value argv[n];                                           \
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL

/* openat(dirfd, name, flags, mode, cred?) -> fd; O_NOFOLLOW and O_CLOEXEC are always added. */
static napi_value at_openat(napi_env env, napi_callback_info info)
{
    ARGS(5);
    char name[NAME_BUF];
    int32_t dirfd, flags, mode;
    if (argc < 4 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) ||
        !get_i32(env, argv[2], &flags) || !get_i32(env, argv[3], &mode))
        return throw_inval(env, "openat(dirfd, name, flags, mode, cred?)");
    long r;
    AS_CRED(4, r, openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode));
    return num(env, (double)r);
}

/* mkdirat(dirfd, name, mode, cred?) */
static napi_value at_mkdirat(napi_env env, napi_callback_info info)
{
    ARGS(4);
    char name[NAME_BUF];
    int32_t dirfd, mode;
    if (argc < 3 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) || !get_i32(env, argv[2], &mode))
        return throw_inval(env, "mkdirat(dirfd, name, mode, cred?)");
    long r;
    AS_CRED(3, r, mkdirat(dirfd, name, (mode_t)mode));
    return num(env, (double)r);
}

/* mknodat(dirfd, name, mode, dev, cred?); dev as a number (Linux's encoding). */
static napi_value at_mknodat(napi_env env, napi_callback_info info)
{
    ARGS(5);
    char name[NAME_BUF];
    int32_t dirfd, mode;
    double dev;
    if (argc < 4 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) || !get_i32(env, argv[2], &mode) ||
        napi_get_value_double(env, argv[3], &dev) != napi_ok || dev < 0)
        return throw_inval(env, "mknodat(dirfd, name, mode, dev, cred?)");
    long r;
    AS_CRED(4, r, mknodat(dirfd, name, (mode_t)mode, (dev_t)dev));
    return num(env, (double)r);
}

/* symlinkat(target, dirfd, name, cred?) */
static napi_value at_symlinkat(napi_env env, napi_callback_info info)
{
    ARGS(4);
    char target[NAME_BUF], name[NAME_BUF];
    int32_t dirfd;
    if (argc < 3 || !get_str(env, argv[0], target, sizeof(target)) || !get_i32(env, argv[1], &dirfd) || !get_str(env, argv[2], name, sizeof(name)))
        return throw_inval(env, "symlinkat(target, dirfd, name, cred?)");
    long r;
    AS_CRED(3, r, symlinkat(target, dirfd, name));
    return num(env, (double)r);
}

/* readlinkat(dirfd, name) -> Buffer (the target's bytes) | -errno */
static napi_value at_readlinkat(napi_env env, napi_callback_info info)
{
    ARGS(2);
    char name[NAME_BUF], target[PATH_MAX + 1];
    int32_t dirfd;
    if (argc < 2 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)))
        return throw_inval(env, "readlinkat(dirfd, name)");
    ssize_t n = readlinkat(dirfd, name, target, sizeof(target));
    if (n < 0) return num(env, -(double)errno);
    if ((size_t)n >= sizeof(target)) return num(env, -(double)ENAMETOOLONG);
    napi_value buf;
    void *data;
    if (napi_create_buffer_copy(env, (size_t)n, target, &data, &buf) != napi_ok) return NULL;
    return buf;
}

/* unlinkat(dirfd, name, flags): flags 0 or AT_REMOVEDIR */
static napi_value at_unlinkat(napi_env env, napi_callback_info info)
{
    ARGS(3);
    char name[NAME_BUF];
    int32_t dirfd, flags;
    if (argc < 3 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) || !get_i32(env, argv[2], &flags))
        return throw_inval(env, "unlinkat(dirfd, name, flags)");
    return result(env, unlinkat(dirfd, name, flags));
}

/* renameat2(olddirfd, oldname, newdirfd, newname, flags): RENAME_NOREPLACE 1, RENAME_EXCHANGE 2 */
static napi_value at_renameat2(napi_env env, napi_callback_info info)
{
    ARGS(5);
    char a[NAME_BUF], b[NAME_BUF];
    int32_t fa, fb, flags;
    if (argc < 5 || !get_i32(env, argv[0], &fa) || !get_str(env, argv[1], a, sizeof(a)) || !get_i32(env, argv[2], &fb) ||
        !get_str(env, argv[3], b, sizeof(b)) || !get_i32(env, argv[4], &flags))
        return throw_inval(env, "renameat2(olddirfd, oldname, newdirfd, newname, flags)");
    return result(env, syscall(SYS_renameat2, (long)fa, a, (long)fb, b, (long)(unsigned)flags));
}

/* linkat(olddirfd, oldname, newdirfd, newname): never follows oldname */
static napi_value at_linkat(napi_env env, napi_callback_info info)
{
    ARGS(4);
    char a[NAME_BUF], b[NAME_BUF];
    int32_t fa, fb;
    if (argc < 4 || !get_i32(env, argv[0], &fa) || !get_str(env, argv[1], a, sizeof(a)) || !get_i32(env, argv[2], &fb) || !get_str(env, argv[3], b, sizeof(b)))
        return throw_inval(env, "linkat(olddirfd, oldname, newdirfd, newname)");
    return result(env, linkat(fa, a, fb, b, 0));
}

/* fchownat(dirfd, name, uid, gid): of the entry itself (-1 leaves one as it is) */
static napi_value at_fchownat(napi_env env, napi_callback_info info)
{
    ARGS(4);
    char name[NAME_BUF];
    int32_t dirfd, uid, gid;
    if (argc < 4 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) || !get_i32(env, argv[2], &uid) || !get_i32(env, argv[3], &gid))
        return throw_inval(env, "fchownat(dirfd, name, uid, gid)");
    return result(env, fchownat(dirfd, name, (uid_t)uid, (gid_t)gid, AT_SYMLINK_NOFOLLOW));
}

/*
 * An O_PATH descriptor of the entry itself (never a symlink's target) and
 * the /proc path that reaches exactly that inode; -errno on failure.
 * A symlink gives -ELOOP when `no_symlink`.
 */
static int open_entry(int dirfd, const char *name, int no_symlink, char *proc, size_t size)
{
    int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -errno;
    if (no_symlink) {
        struct stat st;
        if (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode)) {
            int e = S_ISLNK(st.st_mode) ? ELOOP : errno;
            close(fd);
            return -e;
        }
    }
    snprintf(proc, size, "/proc/self/fd/%d", fd);
    return fd;
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452 /* the same number on every architecture (Linux 6.6) */
#endif
/* 0 until fchmodat2 answered ENOSYS once (a kernel before 6.6); then only the O_PATH way. */
static int no_fchmodat2 = 0;

/*
 * chmodat(dirfd, name, mode): chmod of the entry, never through a symlink (a
 * symlink: -EOPNOTSUPP). fchmodat2(AT_SYMLINK_NOFOLLOW) is one system call;
 * before Linux 6.6 the entry is opened O_PATH|O_NOFOLLOW and chmod'ed
 * through /proc/self/fd, as gocryptfs's FchmodatNofollow does.
 */
static napi_value at_chmodat(napi_env env, napi_callback_info info)
{
    ARGS(3);
    char name[NAME_BUF], proc[64];
    int32_t dirfd, mode;
    if (argc < 3 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) || !get_i32(env, argv[2], &mode))
        return throw_inval(env, "chmodat(dirfd, name, mode)");
    if (!no_fchmodat2) {
        if (syscall(SYS_fchmodat2, dirfd, name, (mode_t)mode, AT_SYMLINK_NOFOLLOW) == 0) return num(env, 0);
        /* EPERM: perhaps a seccomp filter that does not know the call; the old way tells. */
        if (errno == ENOSYS) no_fchmodat2 = 1;
        else if (errno != EPERM) return num(env, -(double)errno);
    }
    int fd = open_entry(dirfd, name, 1, proc, sizeof(proc));
    if (fd == -ELOOP) return num(env, -(double)EOPNOTSUPP);
    if (fd < 0) return num(env, fd);
    int rc = chmod(proc, (mode_t)mode);
    int e = errno;
    close(fd);
    return num(env, rc == 0 ? 0 : -(double)e);
}

/*
 * utimensat(dirfd, name, times): times a Float64Array [atime s, atime ns,
 * mtime s, mtime ns]; ns -1: leave that time (UTIME_OMIT), -2: now (UTIME_NOW).
 * An empty name sets the times of the open file dirfd itself (futimens).
 */
static napi_value at_utimensat(napi_env env, napi_callback_info info)
{
    ARGS(3);
    char name[NAME_BUF];
    int32_t dirfd;
    bool is_ta = false;
    napi_typedarray_type type;
    size_t len = 0;
    void *data = NULL;
    if (argc < 3 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) ||
        napi_is_typedarray(env, argv[2], &is_ta) != napi_ok || !is_ta ||
        napi_get_typedarray_info(env, argv[2], &type, &len, &data, NULL, NULL) != napi_ok || type != napi_float64_array || len != 4)
        return throw_inval(env, "utimensat(dirfd, name, Float64Array[4])");
    const double *t = data;
    struct timespec ts[2];
    for (int i = 0; i < 2; i++) {
        double ns = t[2 * i + 1];
        ts[i].tv_sec = (time_t)t[2 * i];
        ts[i].tv_nsec = ns == -1 ? UTIME_OMIT : ns == -2 ? UTIME_NOW : (long)ns;
    }
    if (name[0] == '\0') return result(env, futimens(dirfd, ts));
    return result(env, utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW));
}

static int get_words(napi_env env, napi_value v, uint32_t **w)
{
    bool is_ta = false;
    napi_typedarray_type type;
    size_t len = 0;
    return napi_is_typedarray(env, v, &is_ta) == napi_ok && is_ta &&
           napi_get_typedarray_info(env, v, &type, &len, (void **)w, NULL, NULL) == napi_ok && type == napi_uint32_array && len >= STAT_WORDS;
}

/* fstatat(dirfd, name, out): lstat of the entry into out (a Uint32Array of STAT_WORDS words) */
static napi_value at_fstatat(napi_env env, napi_callback_info info)
{
    ARGS(3);
    char name[NAME_BUF];
    int32_t dirfd;
    uint32_t *w;
    if (argc < 3 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)) || !get_words(env, argv[2], &w))
        return throw_inval(env, "fstatat(dirfd, name, Uint32Array)");
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return num(env, -(double)errno);
    stat_words(w, &st);
    return num(env, 0);
}

/* fstat(fd, out) */
static napi_value at_fstat(napi_env env, napi_callback_info info)
{
    ARGS(2);
    int32_t fd;
    uint32_t *w;
    if (argc < 2 || !get_i32(env, argv[0], &fd) || !get_words(env, argv[1], &w)) return throw_inval(env, "fstat(fd, Uint32Array)");
    struct stat st;
    if (fstat(fd, &st) != 0) return num(env, -(double)errno);
    stat_words(w, &st);
    return num(env, 0);
}

/* readdirat(dirfd, name) -> string[] (without . and ..) | -errno */
static napi_value at_readdirat(napi_env env, napi_callback_info info)
{
    ARGS(2);
    char name[NAME_BUF];
    int32_t dirfd;
    if (argc < 2 || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, sizeof(name)))
        return throw_inval(env, "readdirat(dirfd, name)");
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return num(env, -(double)errno);
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return num(env, -(double)e);
    }
    napi_value arr;
    napi_create_array(env, &arr);
    uint32_t n = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == 0 || (e->d_name[1] == '.' && e->d_name[2] == 0))) continue;
        napi_value s;
        napi_create_string_utf8(env, e->d_name, NAPI_AUTO_LENGTH, &s);
        napi_set_element(env, arr, n++, s);
        errno = 0;
    }
    int err = errno;
    closedir(d);
    return err ? num(env, -(double)err) : arr;
}

/*
 * statListingAt(dirfd, names) -> ArrayBuffer: for each name, its lstat as
 * STAT_WORDS words (all zero when it failed), then one int32 per name: the
 * size of its extended attribute name list (0: none) or -errno.
 */
static napi_value at_stat_listing(napi_env env, napi_callback_info info)
{
    ARGS(2);
    int32_t dirfd;
    uint32_t n = 0;
    bool is_array = false;
    if (argc < 2 || !get_i32(env, argv[0], &dirfd) || napi_is_array(env, argv[1], &is_array) != napi_ok || !is_array ||
        napi_get_array_length(env, argv[1], &n) != napi_ok)
        return throw_inval(env, "statListingAt(dirfd, names[])");
    napi_value out;
    uint32_t *words = NULL;
    size_t bytes = (size_t)n * (STAT_WORDS + 1) * sizeof(uint32_t);
    if (napi_create_arraybuffer(env, bytes, (void **)&words, &out) != napi_ok) return NULL;
    memset(words, 0, bytes);
    int32_t *sizes = (int32_t *)(words + (size_t)n * STAT_WORDS);
    char proc[NAME_BUF + 32];
    int plen = snprintf(proc, sizeof(proc), "/proc/self/fd/%d/", dirfd);
    for (uint32_t i = 0; i < n; i++) {
        napi_value v;
        char *leaf = proc + plen;
        if (napi_get_element(env, argv[1], i, &v) != napi_ok || !get_str(env, v, leaf, sizeof(proc) - (size_t)plen)) {
            sizes[i] = -ENAMETOOLONG;
            continue;
        }
        struct stat st;
        if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            sizes[i] = -errno;
            continue;
        }
        stat_words(words + (size_t)i * STAT_WORDS, &st);
        ssize_t r = xattr_list_size_at(dirfd, leaf, proc);
        sizes[i] = r < 0 ? -errno : (r > INT32_MAX ? INT32_MAX : (int32_t)r);
    }
    return out;
}

/* ---------------------------------------------------------------- xattrs */

/*
 * Reads an xattr value or name list of `proc` into a new Buffer, growing the
 * buffer while the value grows under us; -errno as a number on failure.
 */
static napi_value read_xattr(napi_env env, const char *proc, const char *attr)
{
    for (int tries = 0; tries < 4; tries++) {
        ssize_t size = attr ? getxattr(proc, attr, NULL, 0) : listxattr(proc, NULL, 0);
        if (size < 0) return num(env, -(double)errno);
        char *tmp = malloc((size_t)size + 1);
        if (!tmp) return num(env, -(double)ENOMEM);
        ssize_t got = attr ? getxattr(proc, attr, tmp, (size_t)size) : listxattr(proc, tmp, (size_t)size);
        int e = errno;
        napi_value buf = NULL;
        void *data;
        if (got >= 0) napi_create_buffer_copy(env, (size_t)got, tmp, &data, &buf);
        free(tmp);
        if (got >= 0) return buf;
        if (e != ERANGE) return num(env, -(double)e);
    }
    return num(env, -(double)ERANGE);
}

/*
 * The arguments (dirfd, name[, attr]) of an xattr call, and the entry
 * opened for it (open_entry, symlinks refused): its descriptor, or -errno;
 * XATTR_ARGS_BAD after throwing for bad arguments. `attr` may be NULL and
 * otherwise holds XATTR_NAME_MAX + 1 bytes; an attribute name longer than
 * XATTR_NAME_MAX is -ERANGE, the kernel's answer to such a name (the proc
 * twin, src/util/xattr-io.ts, answers the same).
 */
#define XATTR_ARGS_BAD INT32_MIN
static int xattr_entry(napi_env env, size_t argc, napi_value *argv, char *name, char *attr, char *proc)
{
    int32_t dirfd;
    size_t need = attr ? 3 : 2, alen = 0;
    if (argc < need || !get_i32(env, argv[0], &dirfd) || !get_str(env, argv[1], name, NAME_BUF)) {
        throw_inval(env, attr ? "xattr call(dirfd, name, attr, ...)" : "xattr call(dirfd, name)");
        return XATTR_ARGS_BAD;
    }
    if (attr && !get_str(env, argv[2], attr, XATTR_NAME_MAX + 1)) {
        if (napi_get_value_string_utf8(env, argv[2], NULL, 0, &alen) == napi_ok && alen > XATTR_NAME_MAX) return -ERANGE;
        throw_inval(env, "xattr call(dirfd, name, attr, ...)");
        return XATTR_ARGS_BAD;
    }
    return open_entry(dirfd, name, 1, proc, 64);
}

/* getxattrat(dirfd, name, attr) -> Buffer | -errno; a symlink: -ENODATA (Linux keeps no user xattrs on links) */
static napi_value at_getxattr(napi_env env, napi_callback_info info)
{
    ARGS(3);
    char name[NAME_BUF], attr[XATTR_NAME_MAX + 1], proc[64];
    int fd = xattr_entry(env, argc, argv, name, attr, proc);
    if (fd == XATTR_ARGS_BAD) return NULL;
    if (fd == -ELOOP) return num(env, -(double)ENODATA);
    if (fd < 0) return num(env, fd);
    napi_value ret = read_xattr(env, proc, attr);
    close(fd);
    return ret;
}

/* listxattrat(dirfd, name) -> Buffer (NUL-separated names) | -errno; a symlink: an empty list */
static napi_value at_listxattr(napi_env env, napi_callback_info info)
{
    ARGS(2);
    char name[NAME_BUF], proc[64];
    int fd = xattr_entry(env, argc, argv, name, NULL, proc);
    if (fd == XATTR_ARGS_BAD) return NULL;
    if (fd == -ELOOP) {
        napi_value buf;
        void *data;
        napi_create_buffer(env, 0, &data, &buf);
        return buf;
    }
    if (fd < 0) return num(env, fd);
    napi_value ret = read_xattr(env, proc, NULL);
    close(fd);
    return ret;
}

/* setxattrat(dirfd, name, attr, value, flags): flags XATTR_CREATE 1, XATTR_REPLACE 2; a symlink: -EPERM */
static napi_value at_setxattr(napi_env env, napi_callback_info info)
{
    ARGS(5);
    char name[NAME_BUF], attr[XATTR_NAME_MAX + 1], proc[64];
    int32_t flags;
    uint8_t *value;
    size_t vlen;
    if (argc < 5 || !get_bytes(env, argv[3], &value, &vlen) || !get_i32(env, argv[4], &flags))
        return throw_inval(env, "setxattrat(dirfd, name, attr, Uint8Array, flags)");
    int fd = xattr_entry(env, argc, argv, name, attr, proc);
    if (fd == XATTR_ARGS_BAD) return NULL;
    if (fd == -ELOOP) return num(env, -(double)EPERM);
    if (fd < 0) return num(env, fd);
    int rc = setxattr(proc, attr, value, vlen, flags);
    int e = errno;
    close(fd);
    return num(env, rc == 0 ? 0 : -(double)e);
}

/* removexattrat(dirfd, name, attr); a symlink: -ENODATA */
static napi_value at_removexattr(napi_env env, napi_callback_info info)
{
    ARGS(3);
    char name[NAME_BUF], attr[XATTR_NAME_MAX + 1], proc[64];
    int fd = xattr_entry(env, argc, argv, name, attr, proc);
    if (fd == XATTR_ARGS_BAD) return NULL;
    if (fd == -ELOOP) return num(env, -(double)ENODATA);
    if (fd < 0) return num(env, fd);
    int rc = removexattr(proc, attr);
    int e = errno;
    close(fd);
    return num(env, rc == 0 ? 0 : -(double)e);
}

/* close(fd) -> 0 | -errno */
static napi_value at_close(napi_env env, napi_callback_info info)
{
    ARGS(1);
    int32_t fd;
    if (argc < 1 || !get_i32(env, argv[0], &fd)) return throw_inval(env, "close(fd)");
    return result(env, close(fd));
}

void sys_at_register(napi_env env, napi_value exports)
{
    static const struct {
        const char *name;
        napi_callback fn;
    } calls[] = {
        {"openat", at_openat},
        {"mkdirat", at_mkdirat},
        {"mknodat", at_mknodat},
        {"symlinkat", at_symlinkat},
        {"readlinkat", at_readlinkat},
        {"unlinkat", at_unlinkat},
        {"renameat2", at_renameat2},
        {"linkat", at_linkat},
        {"fchownat", at_fchownat},
        {"chmodat", at_chmodat},
        {"utimensat", at_utimensat},
        {"fstatat", at_fstatat},
        {"fstat", at_fstat},
        {"readdirat", at_readdirat},
        {"statListingAt", at_stat_listing},
        {"getxattrat", at_getxattr},
        {"listxattrat", at_listxattr},
        {"setxattrat", at_setxattr},
        {"removexattrat", at_removexattr},
        {"close", at_close},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        napi_value fn;
        napi_create_function(env, calls[i].name, NAPI_AUTO_LENGTH, calls[i].fn, NULL, &fn);
        napi_set_named_property(env, exports, calls[i].name, fn);
    }
}
