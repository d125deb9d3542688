/*
 * The hooks that find things by path: `lookup`, `no_xattrs`,
 * `dirs_changed`, `dir_stat` and `statfs`.
 *
 * lookup: the GETATTR libfuse2 sends for every LOOKUP and stat(2) that the
 * binding's attribute cache cannot answer. In JavaScript each costs two
 * thread hand-overs for one fstatat; an md5sum -c of the bench tree sends
 * 20,477, and an untar one per file it creates (to learn that the name is
 * free). Here: the entry found by walk.c, then fstatat(AT_SYMLINK_NOFOLLOW)
 * of its name on disk. Answers: 0 with the entry's attributes (a regular
 * file's size made plaintext) and its cipher path, which the binding keeps
 * for a native unlink; -ENOENT when every directory was found but the name
 * was not; anything else goes to JavaScript untouched: a symlink (its size
 * needs its target decrypted), a name the vault refuses, a directory that
 * is gone or whose IV cannot be read, any other error (JS then gives it,
 * with its log line).
 *
 * no_xattrs: a GETXATTR or LISTXATTR of an entry no listing has shown
 * (ls -l asks two of each file it lists; each costs a trip to JS that finds
 * nothing). Found as for lookup; when its name list is empty, nothing is
 * stored under any name, so the answer is ENODATA (an empty list), as
 * src/vault/node-xattr.ts gives it, provided the name JavaScript would
 * store (src/names/name-codec.ts encryptXattrName) fits in the 255 bytes
 * of an xattr name: JavaScript refuses a longer one, so it stays with
 * JavaScript, as does a name that is not ASCII (the binding hands JS names
 * as strings, which may change their length).
 *
 * dirs_changed: a mkdir, rmdir or rename starts or ended; what dirs.c and
 * walk.c keep of directories is forgotten.
 *
 * dir_stat: the attributes of a listed directory, which the binding
 * compares with those the listing was read under before it lets the kernel
 * keep that listing (kept listings, Documentation/fuse-native.md).
 *
 * statfs: the cipher directory's file system (dbench asks 1,400 times in 8 s).
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include "xattr_list.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* The hook's `lookup` (fuse_hooks.h). Twin: statWords in src/vault/node-attrs.ts. */
int fp_lookup(void *ctx, const char *path, const uint64_t *dirs_gen, struct stat *st, char *cpath_out, size_t cap, int *cpath_long)
{
    struct fast_path *p = ctx;
    const int root = dirs_root(&p->dirs);
    if (root < 0 || !fp_walks(p, path) || path[0] != '/') goto pass;
    *cpath_long = 0;
    cpath_out[0] = 0;
    if (path[1] == 0) {
        if (fstat(root, st) != 0) goto pass;
        return hook_answered(&p->looked_up, 0);
    }
    char cpath[CPATH_MAX], disk[NAME_DISK_MAX + 1];
    size_t clen = 0;
    int is_long = 0;
    struct dir_ref dir;
    if (!walk_find(&p->walk, &p->dirs, path, dirs_gen, &dir, disk, &is_long, cpath, &clen)) goto pass;
    const int failed = fstatat(dir.fd, disk, st, AT_SYMLINK_NOFOLLOW) != 0 ? errno : 0;
    dirs_put(&p->dirs, &dir);
    if (failed) {
        if (failed != ENOENT) goto pass;
        return hook_answered(&p->looked_up, -ENOENT);
    }
    if (S_ISLNK(st->st_mode)) goto pass;
    if (S_ISREG(st->st_mode)) st->st_size = (off_t)content_shown_size(&p->key, (int64_t)st->st_size);
    if (cpath_append(cpath, &clen, cap < sizeof cpath ? cap : sizeof cpath, disk)) {
        memcpy(cpath_out, cpath, clen + 1);
        *cpath_long = is_long;
    }
    return hook_answered(&p->looked_up, 0);
pass:
    hook_passed(&p->looked_up);
    return TSCRYPTFS_HOOK_PASS;
}

/* Stored names: "user.gocryptfs." and the name padded to 16 bytes, encrypted, in base64 (twin: encryptXattrName). */
#define XATTR_STORE_PREFIX_LEN 15
#define XATTR_STORED_MAX 255

/* Whether `name`, as JavaScript stores it, fits in an xattr name; 0 for a name JS should see. */
static int xattr_name_storable(const char *name, int raw64)
{
    if (strcmp(name, "system.posix_acl_access") == 0 || strcmp(name, "system.posix_acl_default") == 0) return 1; /* stored as they are */
    size_t n = 0;
    for (; name[n]; n++)
        if ((unsigned char)name[n] >= 0x80) return 0;
    const size_t padded = (n / 16 + 1) * 16;
    const size_t b64 = raw64 ? (padded * 4 + 2) / 3 : (padded + 2) / 3 * 4;
    return n > 0 && XATTR_STORE_PREFIX_LEN + b64 <= XATTR_STORED_MAX;
}

/* The hook's `no_xattrs` (fuse_hooks.h). */
int fp_no_xattrs(void *ctx, const char *path, const char *name, const uint64_t *dirs_gen)
{
    struct fast_path *p = ctx;
    if (dirs_root(&p->dirs) < 0 || !fp_walks(p, path) || path[0] != '/' || path[1] == 0) goto pass;
    if (name && !xattr_name_storable(name, p->walk.names.raw64)) goto pass;
    char cpath[CPATH_MAX], disk[NAME_DISK_MAX + 1], proc[NAME_DISK_MAX + 40];
    size_t clen = 0;
    int is_long = 0;
    struct dir_ref dir;
    if (!walk_find(&p->walk, &p->dirs, path, dirs_gen, &dir, disk, &is_long, cpath, &clen)) goto pass;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d/%s", dir.fd, disk);
    const ssize_t size = xattr_list_size_at(dir.fd, disk, proc);
    dirs_put(&p->dirs, &dir);
    if (size != 0) goto pass;
    return hook_answered(&p->xattrs_none, -ENODATA);
pass:
    hook_passed(&p->xattrs_none);
    return TSCRYPTFS_HOOK_PASS;
}

/* The hook's `dirs_changed` (fuse_hooks.h): forgets plaintext directory `path` and everything kept below it. */
void fp_dirs_changed(void *ctx, const char *path)
{
    struct fast_path *p = ctx;
    dirs_changed(&p->dirs);
    walk_forget(&p->walk, path);
}

/* The hook's `dir_stat` (fuse_hooks.h). */
int fp_dir_stat(void *ctx, const char *cpath, struct stat *st)
{
    struct fast_path *p = ctx;
    const int root = dirs_root(&p->dirs);
    if (root < 0 || !cpath) return -1;
    int res;
    if (cpath[0] == 0) {
        res = fstat(root, st);
    } else {
        const char *last = NULL;
        struct dir_ref dir;
        if (dirs_parent(&p->dirs, cpath, &last, &dir) != 0) return -1;
        res = fstatat(dir.fd, last, st, AT_SYMLINK_NOFOLLOW);
        dirs_put(&p->dirs, &dir);
    }
    return res == 0 && S_ISDIR(st->st_mode) ? 0 : -1;
}

/*
 * The hook's `statfs` (fuse_hooks.h). Twin: src/vault/node-attrs.ts's statfs
 * with src/fuse/answer.ts's statfsReply, from the cipher directory's
 * statfs(2) as libuv fills it: the fragment size is the block size,
 * favail is ffree, no fsid or flags, names up to 255 bytes.
 */
int fp_statfs(void *ctx, struct statvfs *st)
{
    struct fast_path *p = ctx;
    const int root = dirs_root(&p->dirs);
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
