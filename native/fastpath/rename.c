/*
 * The hook `rename`: rename(2) of anything but a directory, on the
 * libfuse thread.
 *
 * Answered in JavaScript, each RENAME costs two thread hand-overs for one
 * renameat(2); dbench sends some 300 a second. Both plaintext paths are
 * found as the native lookup finds them (walk.c: each parent directory
 * opened from the cipher root, never through a symlink, each name
 * encrypted under its directory's IV); the source is lstat'ed and, when it
 * is no directory, renamed over whatever holds the target's name, as
 * src/vault/node-links.ts's rename does for a rename without flags. A
 * file's rename moves no directory, so what walk.c and dirs.c keep of
 * directories stays true, as does the vault's directory cache
 * (src/vault/backing/dir-cache.ts), which keeps directories and the cipher
 * names of plaintext names, never whether a name exists.
 *
 * Everything else goes to JavaScript untouched: a directory (the vault and
 * the fast path must forget what they keep of it and below it, and a
 * target directory empty in plaintext loses its IV first), a long name on
 * either side (its .name file comes before the entry and goes after it,
 * format.md §7.8), a walk that would pass, and any error renameat gives (JS
 * then gives it again, with its log line).
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

/* The hook's `rename` (fuse_hooks.h). Twin: rename in src/vault/node-links.ts. */
int fp_rename(void *ctx, const char *from, const char *to, const uint64_t *dirs_gen)
{
    struct fast_path *p = ctx;
    if (dirs_root(&p->dirs) < 0 || !fp_on(&p->renames) || !fp_walks(p, from) || !fp_walks(p, to) || from[0] != '/' || to[0] != '/' ||
        strcmp(from, to) == 0)
        goto pass;
    char src_cpath[CPATH_MAX], dst_cpath[CPATH_MAX], src_disk[NAME_DISK_MAX + 1], dst_disk[NAME_DISK_MAX + 1];
    size_t src_clen = 0, dst_clen = 0;
    int src_long = 0, dst_long = 0;
    struct dir_ref src_dir, dst_dir;
    if (!walk_find(&p->walk, &p->dirs, from, dirs_gen, &src_dir, src_disk, &src_long, src_cpath, &src_clen)) goto pass;
    if (!walk_find(&p->walk, &p->dirs, to, dirs_gen, &dst_dir, dst_disk, &dst_long, dst_cpath, &dst_clen)) {
        dirs_put(&p->dirs, &src_dir);
        goto pass;
    }
    struct stat st;
    const int renamed = !src_long && !dst_long && fstatat(src_dir.fd, src_disk, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
                        renameat(src_dir.fd, src_disk, dst_dir.fd, dst_disk) == 0;
    dirs_put(&p->dirs, &dst_dir);
    dirs_put(&p->dirs, &src_dir);
    if (renamed) return hook_answered(&p->renamed, 0);
pass:
    hook_passed(&p->renamed);
    return TSCRYPTFS_HOOK_PASS;
}
