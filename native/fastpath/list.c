/*
 * The hook `list`: a READDIR answered on the libfuse thread that received
 * it. In JavaScript each listing costs two thread hand-overs and about
 * 80 microseconds of the one JS thread (readdirat, then an lstat and a
 * listxattr per entry, the directory's fstat and its parent's); dbench 4
 * sends some 4,000 a second, two fifths of that thread's work.
 *
 * Twin: readdirPacked in src/vault/node-dir-ops.ts (with withDotsPacked
 * in src/fuse/dot-entries.ts). The directory is opened by walk.c
 * (O_DIRECTORY | O_NOFOLLOW from its parent), its IV the one walk.c keeps
 * for it or read through that descriptor; its attributes are read before its names, and offered for
 * keeping under src/vault/listing-state.ts's rule (keepable below). Each
 * name on disk is decrypted (name_cipher.c), a long name's from its .name
 * file once its hash matches; what a listing hides is left out as
 * visible() leaves it out (gocryptfs.diriv, .name files, gocryptfs.conf
 * and its .tmp at the root). Every name must decrypt to UTF-8 for the
 * listing to be answered here: anything else (a name that does not
 * decrypt, which JavaScript may show as a sync conflict copy or a
 * -badname, hides and logs; a long name without a matching .name file;
 * a name that is not UTF-8, which JavaScript shows with U+FFFD) sends the
 * whole listing to JavaScript, as does a walk that would pass or any
 * failing call before the first entry is handed over. Then each entry's
 * lstat, its plaintext size for a file, and the size of its xattr name
 * list, as statListingAt (native/sys/at_calls.c) reads them.
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include "xattr_list.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DIRIV_NAME "gocryptfs.diriv"
#define CONF_NAME "gocryptfs.conf"
#define CONF_TMP_NAME "gocryptfs.conf.tmp"
#define LONGNAME_PREFIX "gocryptfs.longname."
#define LONGNAME_SUFFIX ".name"
/* The most a .name file may hold (src/names/longnames.ts's LONGNAME_FILE_MAX). */
#define NAME_FILE_MAX 344
#define PLAIN_MAX 255
/* The names on disk read at a time (getdents64), on the libfuse thread's stack. */
#define DENTS_BUF 16384
/* listing-state.ts's KEEP_MARGIN_MS and COARSE_KEEP_MARGIN_MS, in ns. */
#define KEEP_MARGIN_NS 20000000LL
#define COARSE_KEEP_MARGIN_NS 2000000000LL

/* The entries a listing shows: NUL-terminated records of flag byte, name on disk, plaintext name. */
struct shown {
    char *buf;
    size_t len, cap;
    size_t count;
};

static int shown_add(struct shown *s, int is_long, const char *disk, size_t dlen, const uint8_t *plain, size_t plen)
{
    const size_t need = 1 + dlen + 1 + plen + 1;
    if (s->len + need > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        while (cap < s->len + need) cap *= 2;
        char *grown = realloc(s->buf, cap);
        if (!grown) return 0;
        s->buf = grown;
        s->cap = cap;
    }
    char *o = s->buf + s->len;
    *o++ = is_long ? 1 : 2; /* never 0: each record starts with a nonzero byte */
    memcpy(o, disk, dlen + 1);
    o += dlen + 1;
    memcpy(o, plain, plen);
    o[plen] = 0;
    s->len += need;
    s->count++;
    return 1;
}

/* The full encrypted name behind long name `disk` in `dfd`, into `out` (NAME_FILE_MAX + 1 bytes); its length, or -1 when it is missing, implausible or does not hash to `disk`. */
static long long_name_of(struct fast_path *p, int dfd, const char *disk, size_t dlen, char *out)
{
    char file[NAME_MAX + 1];
    if (dlen + sizeof LONGNAME_SUFFIX > sizeof file) return -1;
    memcpy(file, disk, dlen);
    memcpy(file + dlen, LONGNAME_SUFFIX, sizeof LONGNAME_SUFFIX);
    const int fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n;
    do n = read(fd, out, NAME_FILE_MAX + 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 1 || n > NAME_FILE_MAX) return -1;
    out[n] = 0;
    for (ssize_t i = 0; i < n; i++)
        if ((unsigned char)out[i] >= 0x80 || out[i] == 0) return -1;
    char hashed[NAME_DISK_MAX + 1];
    if (!walk_long_hash(&p->walk, out, (size_t)n, hashed) || strcmp(hashed, disk) != 0) return -1;
    return (long)n;
}

/* What a listing of `dfd` shows, into `s`; 0 when a name sends the listing to JavaScript (see above), a read fails or memory runs out. */
static int read_names(struct fast_path *p, int dfd, const uint8_t *iv, int at_root, struct shown *s)
{
    char dents[DENTS_BUF] __attribute__((aligned(8)));
    char full[NAME_FILE_MAX + 1];
    uint8_t plain[PLAIN_MAX];
    struct dents r;
    dents_start(&r, dfd, dents, sizeof dents);
    int ok = 1;
    for (const char *n; ok && (n = dents_next(&r)) != NULL;) {
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || strcmp(n, DIRIV_NAME) == 0) continue;
        if (at_root && (strcmp(n, CONF_NAME) == 0 || strcmp(n, CONF_TMP_NAME) == 0)) continue;
        const size_t dlen = strlen(n);
        const int is_long = strncmp(n, LONGNAME_PREFIX, sizeof LONGNAME_PREFIX - 1) == 0;
        if (is_long && dlen >= sizeof LONGNAME_SUFFIX - 1 && strcmp(n + dlen - (sizeof LONGNAME_SUFFIX - 1), LONGNAME_SUFFIX) == 0) continue;
        const char *cname = n;
        size_t clen = dlen, plen = 0;
        if (is_long) {
            const long l = long_name_of(p, dfd, n, dlen, full);
            if (l < 0) {
                ok = 0;
                break;
            }
            cname = full;
            clen = (size_t)l;
        }
        if (!walk_decrypt_name(&p->walk, iv, cname, clen, plain, &plen) || !utf8_valid(plain, plen) ||
            !shown_add(s, is_long, n, dlen, plain, plen))
            ok = 0;
    }
    if (r.failed) ok = 0;
    explicit_bzero(plain, sizeof plain); /* the last plaintext name */
    return ok;
}

/* listing-state.ts's keepableState: whether the directory's ctime lies far enough in the past for its listing to be kept. */
static int keepable(const struct stat *dir)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return 0;
    const int coarse = dir->st_ctim.tv_nsec == 0 && dir->st_mtim.tv_nsec == 0;
    const long long age = ((long long)now.tv_sec - (long long)dir->st_ctim.tv_sec) * 1000000000LL + (now.tv_nsec - dir->st_ctim.tv_nsec);
    return age > (coarse ? COARSE_KEEP_MARGIN_NS : KEEP_MARGIN_NS);
}

/* The hook's `list` (fuse_hooks.h). Twin: readdirPacked in src/vault/node-dir-ops.ts. */
int fp_list(void *ctx, const char *path, const uint64_t *dirs_gen, struct tscryptfs_list_sink *sink)
{
    struct fast_path *p = ctx;
    if (dirs_root(&p->dirs) < 0 || !fp_on(&p->lists) || !path || path[0] != '/') goto pass;
    char cpath[CPATH_MAX];
    size_t clen = 0;
    uint8_t iv[NAME_IV_LEN];
    int dfd = -1;
    if (!walk_open_dir(&p->walk, &p->dirs, path, dirs_gen, &dfd, iv, cpath, &clen)) goto pass;
    struct stat dir, parent;
    const int have_dir = fstat(dfd, &dir) == 0;
    struct shown s = {0};
    if (!read_names(p, dfd, iv, path[1] == 0, &s)) {
        free(s.buf);
        close(dfd);
        goto pass;
    }
    const int have_parent = fstatat(dfd, "..", &parent, AT_SYMLINK_NOFOLLOW) == 0;
    sink->start(sink, cpath, have_dir && keepable(&dir) ? &dir : NULL);
    int full = sink->entry(sink, ".", 1, have_dir ? &dir : NULL, 0, ".") || sink->entry(sink, "..", 2, have_parent ? &parent : NULL, 0, "..");
    char proc[NAME_DISK_MAX + 40];
    const int plen = snprintf(proc, sizeof proc, "/proc/self/fd/%d/", dfd);
    const char *r = s.buf;
    for (size_t i = 0; i < s.count && !full; i++) {
        const int is_long = r[0] == 1;
        const char *disk = r + 1;
        const size_t dlen = strlen(disk);
        const char *name = disk + dlen + 1;
        const size_t nlen = strlen(name);
        r = name + nlen + 1;
        struct stat st;
        if (fstatat(dfd, disk, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            full = sink->entry(sink, name, nlen, NULL, 0, disk);
            continue;
        }
        int flags = 0;
        if (!S_ISLNK(st.st_mode)) {
            if (S_ISREG(st.st_mode)) st.st_size = (off_t)content_shown_size(&p->key, (int64_t)st.st_size);
            memcpy(proc + plen, disk, dlen + 1);
            flags = TSCRYPTFS_LISTED_ATTRS | (xattr_list_size_at(dfd, disk, proc) == 0 ? TSCRYPTFS_LISTED_NO_XATTRS : 0) |
                    (is_long ? TSCRYPTFS_LISTED_LONG_NAME : 0);
        }
        full = sink->entry(sink, name, nlen, &st, flags, disk);
    }
    if (s.buf) explicit_bzero(s.buf, s.len); /* plaintext names are the user's */
    free(s.buf);
    close(dfd);
    return hook_answered(&p->listed, 0);
pass:
    hook_passed(&p->listed);
    return TSCRYPTFS_HOOK_PASS;
}
