/*
 * The size of an entry's extended attribute name list, 0 when it has none:
 * what a listing (sys/at_calls.c, statListingAt) and the mount's fast path
 * (fastpath/lookup.c, no_xattrs) use to answer GETXATTR with ENODATA and
 * LISTXATTR with nothing, without JavaScript.
 *
 * listxattrat(2) (Linux 6.13; the same number on every architecture) of
 * `leaf` in `dirfd`, not followed: -1 with errno ENOSYS before 6.13, then
 * never tried again. One system call where llistxattr on `proc`
 * (/proc/self/fd/DIRFD/LEAF) walks procfs first (1.5 against 2.8
 * microseconds an entry: Documentation/performance.md, "xattr list sizes
 * per entry").
 */
#ifndef TSCRYPTFS_XATTR_LIST_H
#define TSCRYPTFS_XATTR_LIST_H

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef SYS_listxattrat
#define SYS_listxattrat 465
#endif

static inline ssize_t xattr_list_size_at(int dirfd, const char *leaf, const char *proc)
{
    static int no_listxattrat; /* set once when the kernel says ENOSYS; a kernel does not gain it while we run */
    if (!__atomic_load_n(&no_listxattrat, __ATOMIC_RELAXED)) {
        const long r = syscall(SYS_listxattrat, dirfd, leaf, AT_SYMLINK_NOFOLLOW, NULL, (size_t)0);
        if (r >= 0 || errno != ENOSYS) return (ssize_t)r;
        __atomic_store_n(&no_listxattrat, 1, __ATOMIC_RELAXED);
    }
    /* llistxattr on /proc/self/fd/N/leaf: the leaf looked up in that directory, not followed */
    return llistxattr(proc, NULL, 0);
}

#endif
