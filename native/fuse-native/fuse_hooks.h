/*
 * The two hooks the binding (fuse-native.c: setFastPath, setAssistHook)
 * calls on its own libfuse threads. This is their one definition: the
 * binding calls them, native/fastpath (addon.c) and native/crypto/shared_job.c
 * build them. A
 * hook travels as a Node-API external; the binding checks its magic number
 * (which carries a version) before it uses one.
 */
#ifndef TSCRYPTFS_FUSE_HOOKS_H
#define TSCRYPTFS_FUSE_HOOKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#define TSCRYPTFS_FAST_PATH_MAGIC 0x54535244u   /* "TSRD": version 16, with `attr`, `write`, `unlink`, `dir_stat`, `statfs`, `lookup`, `dirs_changed`, `open`, `release`, `rmdir`, `no_xattrs`, `create`, `fgetattr`, `fsync`, `list` and `rename` */
#define TSCRYPTFS_ASSIST_HOOK_MAGIC 0x54534148u /* "TSAH", version 1 */

/* One of the attribute changes a SETATTR is made of, as libfuse2 splits it. */
#define TSCRYPTFS_ATTR_CHMOD 1
#define TSCRYPTFS_ATTR_CHOWN 2
#define TSCRYPTFS_ATTR_UTIMENS 3
struct tscryptfs_attr_change {
    int op;
    mode_t mode;            /* CHMOD */
    uid_t uid;              /* CHOWN; (uid_t)-1 leaves it */
    gid_t gid;              /* CHOWN; (gid_t)-1 leaves it */
    struct timespec tv[2];  /* UTIMENS: atime, mtime; UTIME_NOW and UTIME_OMIT as utimensat(2) takes them */
};

/* The hook's answer when it leaves a request to JavaScript. */
#define TSCRYPTFS_HOOK_PASS 1

/* An entry's flags in a listing, as src/vault/node-dir-ops.ts's LISTED_* give them. */
#define TSCRYPTFS_LISTED_ATTRS 1     /* its attributes are what stat() gives (not so for symlinks) */
#define TSCRYPTFS_LISTED_NO_XATTRS 2 /* it has no extended attributes at all */
#define TSCRYPTFS_LISTED_LONG_NAME 4 /* its name on disk is a long name's */

/* Where the hook `list` puts a listing: the binding's, called on the hook's thread. */
struct tscryptfs_list_sink {
    /*
     * Called once, first: the listed directory's cipher path (as for
     * `unlink`; "" for the cipher directory itself), and its attributes
     * read before its names when the kernel may keep the listing until
     * they change (else NULL).
     */
    void (*start)(struct tscryptfs_list_sink *s, const char *cpath, const struct stat *keep);
    /*
     * Then once per entry, "." and ".." first: its plaintext name (`len`
     * bytes, NUL-terminated), its attributes (NULL when lstat failed),
     * TSCRYPTFS_LISTED_* flags and its name on disk. Returns nonzero when
     * the reply is full: the hook stops there.
     */
    int (*entry)(struct tscryptfs_list_sink *s, const char *name, size_t len, const struct stat *st, int flags, const char *disk);
};

/* The mount's native fast path: each hook is called for its kind of request before it goes to JavaScript. */
struct tscryptfs_fast_path {
    uint32_t magic;
    /* Bytes read into buf (0 at end of file), or -1: let JavaScript answer. */
    int (*read)(void *ctx, uint64_t fh, char *buf, size_t len, int64_t off);
    void *ctx;
    /*
     * Called for a chmod, chown or utimens of a file that handle `fh` has
     * open, before it goes to JavaScript: applies `c` to the handle's cipher
     * file once `still(arg)` (called with the handle held, so that it cannot
     * be closed meanwhile) says the handle is still the file's. Returns 0 or
     * -errno, with the file's plaintext attributes in `st` and *have_stat = 1
     * when they could be read after the change; TSCRYPTFS_HOOK_PASS (before
     * changing anything): let JavaScript answer.
     */
    int (*attr)(void *ctx, uint64_t fh, const struct tscryptfs_attr_change *c, struct stat *st, int *have_stat,
                int (*still)(void *arg), void *arg);
    /*
     * Called for every WRITE before it goes to JavaScript (not for one that
     * must drop set-id bits first): writes all `len` bytes of `buf` at `off`
     * through handle `fh`. Returns 0 when all were written, -errno, or
     * TSCRYPTFS_HOOK_PASS (before changing anything): let JavaScript answer.
     */
    int (*write)(void *ctx, uint64_t fh, const char *buf, size_t len, int64_t off);
    /*
     * Called for an UNLINK of a name a listing showed less than a second
     * ago (the binding's attribute cache kept it), with its cipher path from
     * the cipher directory's root (`cpath`, names on disk joined by '/') and whether the last of
     * them is a long name's (its .name file goes too). Returns 0 when the
     * name was removed, -errno when it was but its .name file could not be,
     * or TSCRYPTFS_HOOK_PASS (before changing anything): let JavaScript answer.
     */
    int (*unlink)(void *ctx, const char *cpath, int long_name);
    /*
     * Called for an OPENDIR of a directory a listing showed less than a
     * second ago, with that directory's cipher path (as for `unlink`; ""
     * for the cipher directory itself): its attributes as lstat(2) gives
     * them, found by the same walk. Returns 0, or -1 when the walk fails
     * or what it finds is no directory.
     */
    int (*dir_stat)(void *ctx, const char *cpath, struct stat *st);
    /*
     * Called for every STATFS before it goes to JavaScript: the file system
     * the cipher directory is on, as src/vault/node-attrs.ts's statfs gives
     * it. Returns 0, or -1: let JavaScript answer.
     */
    int (*statfs)(void *ctx, struct statvfs *st);
    /*
     * Called for a GETATTR (libfuse2's LOOKUP too) the attribute cache
     * cannot answer, before it goes to JavaScript: the attributes of
     * plaintext `path` ("/..."), as src/vault/node-attrs.ts's statWords
     * gives them, and its cipher path (as for `unlink`; "" when it does
     * not fit in `cap` bytes) with whether its last name is a long name's.
     * `dirs_gen` counts the directory changes (mkdir, rmdir, rename) that
     * started and that ended: the hook keeps what it read of directories
     * only if it stood still meanwhile. Returns 0, -ENOENT when the name
     * does not exist, or TSCRYPTFS_HOOK_PASS: let JavaScript answer.
     */
    int (*lookup)(void *ctx, const char *path, const uint64_t *dirs_gen, struct stat *st, char *cpath, size_t cap, int *cpath_long);
    /*
     * Called when a mkdir, rmdir or rename starts and when it has ended
     * (after dirs_gen stepped on), for its path and a rename's new path:
     * the hook forgets what it kept of that directory and all below it.
     */
    void (*dirs_changed)(void *ctx, const char *path);
    /*
     * Called for an OPEN (not a CREATE) before it goes to JavaScript, with
     * the open(2) flags: opens plaintext `path`, found as for `lookup`, and
     * registers the handle for native reads and writes. Returns 0 with
     * the new handle in *fh (NATIVE_FH_BASE and up, never one JavaScript
     * gives), or TSCRYPTFS_HOOK_PASS (nothing opened): let JavaScript
     * answer.
     */
    int (*open)(void *ctx, const char *path, int flags, const uint64_t *dirs_gen, uint64_t *fh);
    /*
     * Called for every RELEASE before it goes to JavaScript: closes a handle
     * `open` made. Returns 0 when that was all, or TSCRYPTFS_HOOK_PASS: the
     * handle is JavaScript's, or JavaScript holds a copy of it, and gets
     * the RELEASE too.
     */
    int (*release)(void *ctx, uint64_t fh);
    /*
     * Called for an RMDIR of a directory a listing showed less than a
     * second ago, with its cipher path (as for `unlink`): removes it if it
     * holds nothing but its IV, and its .name file for a long name. Returns
     * 0 when it was removed, -errno when it was but its .name file could
     * not be, or TSCRYPTFS_HOOK_PASS (nothing changed): let JavaScript answer.
     */
    int (*rmdir)(void *ctx, const char *cpath, int long_name);
    /*
     * Called for a GETXATTR of attribute `name` (NULL for a LISTXATTR) that
     * the binding's cache cannot answer, before it goes to JavaScript:
     * whether plaintext `path`, found as for `lookup`, has no extended
     * attributes at all, so that the answer is ENODATA (an empty list) as
     * JavaScript would give it. Returns -ENODATA then, or TSCRYPTFS_HOOK_PASS:
     * let JavaScript answer (it has some, a name JavaScript would refuse
     * or store under a name too long for the backing file system, anything
     * the lookup would pass on).
     */
    int (*no_xattrs)(void *ctx, const char *path, const char *name, const uint64_t *dirs_gen);
    /*
     * Called for a CREATE before it goes to JavaScript, with the mode, the
     * open(2) flags and the caller's uid and gid: makes plaintext `path`,
     * found as for `lookup`, a new empty regular file and opens it, its
     * handle registered as `open` registers one (for writes too). Returns 0
     * with the handle in *fh and the new file's attributes in `st`, or
     * TSCRYPTFS_HOOK_PASS (nothing made): let JavaScript answer.
     */
    int (*create)(void *ctx, const char *path, mode_t mode, int flags, uid_t uid, gid_t gid, const uint64_t *dirs_gen, uint64_t *fh,
                  struct stat *st);
    /*
     * Called for an FGETATTR the attribute cache cannot answer, before it
     * goes to JavaScript: the plaintext attributes of the file handle `fh`
     * has open, when `open` or `create` made it and JavaScript has not
     * adopted it, as src/vault/vault-file.ts's statWords gives them. Returns
     * 0, or TSCRYPTFS_HOOK_PASS: let JavaScript answer.
     */
    int (*fgetattr)(void *ctx, uint64_t fh, struct stat *st);
    /*
     * Called for every FSYNC before it goes to JavaScript: fsync(2), or
     * fdatasync(2) when `datasync`, of the cipher file of handle `fh`, any
     * handle the fast path knows (its own, adopted or not, and those
     * JavaScript registered), as src/vault/vault-file.ts's sync and
     * datasync do. Returns 0 or -errno, or TSCRYPTFS_HOOK_PASS: let
     * JavaScript answer.
     */
    int (*fsync)(void *ctx, uint64_t fh, int datasync);
    /*
     * Called for a READDIR from offset 0 of plaintext directory `path`,
     * before it goes to JavaScript: lists it as src/vault/node-dir-ops.ts's
     * readdirPacked does, with "." and ".." in front as
     * src/fuse/dot-entries.ts puts them, into `sink`. Returns 0 when the
     * sink got the listing, or TSCRYPTFS_HOOK_PASS (the sink untouched):
     * let JavaScript answer (a name that does not decrypt, a long name
     * whose .name file does not match, a walk that would pass, any error).
     */
    int (*list)(void *ctx, const char *path, const uint64_t *dirs_gen, struct tscryptfs_list_sink *sink);
    /*
     * Called for a RENAME without flags from plaintext `from` to `to`,
     * before it goes to JavaScript: renames the entry, found as for
     * `lookup`, over whatever holds the name `to`, as
     * src/vault/node-links.ts's rename does, when it is no directory and
     * both its names on disk are short ones. Returns 0 when it was renamed,
     * or TSCRYPTFS_HOOK_PASS (nothing changed): let JavaScript answer (a
     * directory, a long name, a walk that would pass, any error).
     */
    int (*rename)(void *ctx, const char *from, const char *to, const uint64_t *dirs_gen);
};

/* Called between the polls of a libfuse thread waiting for JavaScript's answer. */
struct tscryptfs_assist_hook {
    uint32_t magic;
    /* Does some shared work if there is any; returns at once when there is none. */
    int (*assist)(void);
};

#endif
