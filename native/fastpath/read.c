/*
 * The hooks `read` and `attr`.
 *
 * read: a sequential read through the mount is one 128 KiB READ at a
 * time; answered in JavaScript, each costs two thread hand-overs on top of
 * the pread and the decryption, all on the one JS thread. Here the libfuse
 * thread that received the READ preads the cipher blocks of a registered
 * handle and opens them, so reads run in parallel on libfuse's threads and
 * never wait for the event loop. The plain case and holes are answered (a
 * whole block of zeros, left by a write past the end, reads as zeros); a
 * block that does not open (tampering, a torn write), a header that is not
 * version 2, a cipher size whose last block is too short or a short pread
 * go to JavaScript, which answers and logs them.
 * A read goes on only if no write is under way when it starts and none
 * started until it ended (fences.h), so it never returns a mix of old and
 * new blocks; otherwise JavaScript answers under the file's lock. The
 * header's file ID is cached per handle with the `started` count it was
 * read at.
 *
 * attr: the kernel sends a chmod, chown or utimens of an open file as a
 * SETATTR of the file's node, and libfuse2 splits it into path operations,
 * each a trip to JavaScript that ends in the same fchmodat, fchownat or
 * utimensat of the cipher file. When the binding knows a handle open on
 * that node, the change goes to the handle's cipher file descriptor here,
 * and the attributes after it (fstat, with the plaintext size) go back as
 * the binding's carried ones. An untar makes three such calls per file.
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int pass(struct fast_path *p)
{
    hook_passed(&p->reads);
    return -1;
}

/* The read, its blocks opened into buf. */
static int read_blocks(struct fast_path *p, uint64_t fh, char *buf, size_t len, int64_t off)
{
    const struct content_key *k = &p->key;
    struct handle h;
    if (off < 0 || !handles_copy(&p->handles, fh, &h) || !(h.flags & HANDLE_READABLE)) return -1;
    const int32_t *fence = fences_of(&p->fences, h.slot);
    int32_t started;
    if (!fence_read_begin(fence, &started)) return pass(p);

    const size_t overhead = k->nonce + AEAD_TAG, cbs = BLOCK + overhead;
    struct stat st;
    if (fstat(h.fd, &st) != 0 || (st.st_size > 0 && st.st_size <= HEADER)) return pass(p);
    const int64_t plain = st.st_size == 0 ? 0 : content_plain_size(st.st_size, cbs, overhead);
    if (plain < 0) return pass(p);
    size_t n = 0;
    if (off < plain) n = (size_t)(plain - off) < len ? (size_t)(plain - off) : len;
    if (n > 0) {
        if (!(h.has_id && h.id_seq == started) && !content_file_id(h.fd, h.id)) return pass(p);
        const uint64_t first = (uint64_t)off / BLOCK, last = ((uint64_t)off + n - 1) / BLOCK;
        const off_t coff = HEADER + (off_t)(first * cbs);
        const size_t want = (size_t)((uint64_t)st.st_size - (uint64_t)coff < (last - first + 1) * cbs ? (uint64_t)st.st_size - (uint64_t)coff : (last - first + 1) * cbs);
        struct content_thread *t = content_thread(k, want);
        if (!t || !content_pread_full(h.fd, t->buf, want, coff)) return pass(p);
        uint8_t aad[AAD_LEN];
        for (uint64_t b = first; b <= last; b++) {
            const uint8_t *blk = t->buf + (b - first) * cbs;
            const size_t blen = (b - first + 1) * cbs <= want ? cbs : want - (b - first) * cbs;
            if (blen <= overhead) return pass(p);
            const size_t plen = blen - overhead;
            content_block_aad(aad, b, h.id);
            const uint64_t bstart = b * BLOCK;
            const uint64_t from = bstart > (uint64_t)off ? bstart : (uint64_t)off;
            const uint64_t to = bstart + plen < (uint64_t)off + n ? bstart + plen : (uint64_t)off + n;
            const int whole = from == bstart && to == bstart + plen;
            uint8_t *dst = whole ? (uint8_t *)buf + (bstart - (uint64_t)off) : t->part;
            if (!content_open_block(k, t, blk, plen, aad, dst)) {
                if (!content_is_hole(blk, blen, cbs)) return pass(p);
                memset(dst, 0, plen);
            }
            if (!whole && to > from) memcpy(buf + (from - (uint64_t)off), t->part + (from - bstart), to - from);
        }
    }
    if (!fence_read_end(fence, started)) return pass(p);
    if (n > 0 && !(h.has_id && h.id_seq == started)) handles_remember_id(&p->handles, fh, started, h.id);
    return hook_answered(&p->reads, (int)n);
}

/* The hook's `read` (fuse_hooks.h). Twin: readContentInto in src/vault/file-content.ts. */
int fp_read(void *ctx, uint64_t fh, char *buf, size_t len, int64_t off)
{
    struct fast_path *p = ctx;
    const int res = read_blocks(p, fh, buf, len, off);
    content_wipe(&p->key);
    return res;
}

/* The hook's `attr` (fuse_hooks.h): the change on the handle's cipher file, as src/vault/node-attrs.ts's
 * chmod, chown and utimens (its twins) make it on the name. */
int fp_attr(void *ctx, uint64_t fh, const struct tscryptfs_attr_change *c, struct stat *st, int *have_stat, int (*still)(void *arg),
            void *arg)
{
    struct fast_path *p = ctx;
    *have_stat = 0;
    if (!fp_on(&p->attrs)) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = handles_pin(&p->handles, fh);
    if (!h) return TSCRYPTFS_HOOK_PASS;
    int res = TSCRYPTFS_HOOK_PASS, rc = -1;
    if (still && !still(arg)) goto out;
    switch (c->op) {
    case TSCRYPTFS_ATTR_CHMOD: rc = fchmod(h->fd, c->mode & 07777); break;
    case TSCRYPTFS_ATTR_CHOWN: rc = fchown(h->fd, c->uid, c->gid); break;
    case TSCRYPTFS_ATTR_UTIMENS: rc = futimens(h->fd, c->tv); break;
    default: goto out;
    }
    res = rc == 0 ? 0 : -errno;
    if (res == 0 && fstat(h->fd, st) == 0) {
        if (S_ISREG(st->st_mode)) st->st_size = (off_t)content_shown_size(&p->key, (int64_t)st->st_size);
        *have_stat = 1;
    }
    hook_answered(&p->attr_changes, 0);
out:
    handles_unpin(&p->handles, h);
    return res;
}
