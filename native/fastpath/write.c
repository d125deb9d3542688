/*
 * The hook `write`: a WRITE answered on the libfuse thread that received
 * it. Answered in JavaScript, a write costs two thread hand-overs on top
 * of its sealing and pwrite, all on the one JS thread; an untar sends 3.6
 * per file, a sequential write one per 128 KiB.
 *
 * What happens here is what src/vault/file-content.ts's writeContent does
 * (Documentation/format.md §6.1-§6.4): a file without a header gets a fresh
 * one (a new random file ID), blocks only partly covered by the write are
 * read, opened and merged (read-modify-write; a hole's all-zero block is a
 * block of zeros), every block covered is sealed with a fresh random nonce
 * and its block number and file ID as associated data, the space is
 * reserved with fallocate(KEEP_SIZE) and the blocks are written with one
 * pwrite. A write that starts in a block past the file's last one first
 * pads that last block with zeros to a whole block (re-sealed), and leaves
 * the blocks between as holes, as writeContent does; dbench writes most new
 * files from an offset past 0. The case that needs more goes to JavaScript
 * untouched: a file shorter than its header or with a last block too
 * short, a block that does not open (tampering), a handle opened O_APPEND,
 * a failed preallocation (JS reports it: ENOSPC, or the warning that
 * fallocate is missing), and with preallocation off a write that grows
 * the file (JS undoes the growth when the disk is full).
 *
 * JavaScript and this code never change one file at once: the file's
 * `owner` word (fences.h) is taken with a compare-and-swap before anything
 * is read, and a write finding it taken goes to JavaScript, which takes its
 * own locks and waits for the word. The fences are bumped around the
 * change, so native reads of the file leave the overlap to JavaScript.
 */
#define _GNU_SOURCE
#include "fast_path.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WRITE_MAX (1u << 20) /* more than a FUSE write carries (128 KiB) */

static int pwrite_full(int fd, const uint8_t *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fd, buf + done, len - done, off + (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) return -EIO;
        done += (size_t)n;
    }
    return 0;
}

/* Room for one sealed block: the largest nonce (AEGIS-256X2's 32 bytes) and tag. */
#define CBS_MAX (BLOCK + 32 + AEAD_TAG)

/*
 * The plaintext of block `b` into dst (room for BLOCK bytes), its cipher
 * bytes left in t->buf; 0 when it cannot be had here (past the end, too
 * short, does not open).
 */
static int old_block(const struct content_key *k, struct content_thread *t, int fd, uint64_t b, const uint8_t *id, int64_t csize, uint8_t *dst)
{
    const size_t overhead = k->nonce + AEAD_TAG, cbs = BLOCK + overhead;
    const int64_t coff = HEADER + (int64_t)(b * cbs);
    if (coff >= csize) return 0;
    const size_t clen = (size_t)(csize - coff) < cbs ? (size_t)(csize - coff) : cbs;
    if (clen <= overhead || !content_pread_full(fd, t->buf, clen, (off_t)coff)) return 0;
    uint8_t aad[AAD_LEN];
    content_block_aad(aad, b, id);
    if (content_open_block(k, t, t->buf, clen - overhead, aad, dst)) return 1;
    if (!content_is_hole(t->buf, clen, cbs)) return 0;
    memset(dst, 0, BLOCK);
    return 1;
}

/* Undoes a write that failed after the file grew: back to no header, or to the old last block and size. */
static void undo_growth(int fd, int fresh, int64_t csize, int64_t plain, const uint8_t *old_last, size_t old_last_len, off_t old_last_off)
{
    struct stat st;
    if (fresh) {
        (void)!ftruncate(fd, 0);
    } else if (old_last_len > 0) {
        /* the padded last block back as it was (its old cipher bytes), then the old size */
        if (pwrite_full(fd, old_last, old_last_len, old_last_off) == 0) (void)!ftruncate(fd, (off_t)csize);
    } else if (plain % BLOCK == 0 && fstat(fd, &st) == 0 && st.st_size > csize) {
        /* as undoGrowth: the old size, when the old last block was whole (and so untouched) */
        (void)!ftruncate(fd, (off_t)csize);
    }
}

/* Leaves the write to JavaScript once plaintext is in the thread's buffer: its `nblocks` blocks are wiped first. */
static int pass_cleansed(struct content_thread *t, size_t nblocks)
{
    OPENSSL_cleanse(t->plain, nblocks * BLOCK);
    return TSCRYPTFS_HOOK_PASS;
}

/* The write, with the file's owner word held and its fences open. */
static int write_held(struct fast_path *p, int fd, const uint8_t *data, size_t len, int64_t off)
{
    const struct content_key *k = &p->key;
    const size_t overhead = k->nonce + AEAD_TAG, cbs = BLOCK + overhead;
    if (cbs > CBS_MAX) return TSCRYPTFS_HOOK_PASS;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return TSCRYPTFS_HOOK_PASS;
    const int64_t csize = st.st_size;
    const int fresh = csize == 0;
    uint8_t id[ID_LEN];
    int64_t plain = 0;
    if (!fresh && (csize <= HEADER || (plain = content_plain_size(csize, cbs, overhead)) < 0 || !content_file_id(fd, id)))
        return TSCRYPTFS_HOOK_PASS;
    const int prealloc = fp_on(&p->prealloc);
    const uint64_t wend = (uint64_t)off + len;
    if (!prealloc && wend > (uint64_t)plain) return TSCRYPTFS_HOOK_PASS;

    /* The blocks [first, last] cover plaintext [start, end): the write, and what it keeps of partly covered blocks. */
    const uint64_t first = (uint64_t)off / BLOCK, last = (wend - 1) / BLOCK, start = first * BLOCK;
    /* Past the last block: that block is padded to a whole one first (zeroPadLastBlock), those between stay holes. */
    const int past = first > (uint64_t)plain / BLOCK;
    const int pad = past && plain % BLOCK != 0;
    const uint64_t size = past ? ((uint64_t)plain + BLOCK - 1) / BLOCK * BLOCK : (uint64_t)plain;
    const uint64_t keep = size < (last + 1) * BLOCK ? size : (last + 1) * BLOCK;
    const uint64_t end = wend > keep ? wend : keep;
    const size_t nblocks = (size_t)(last - first + 1);
    /* A new file's header goes in front of its blocks when they start at block 0, else on its own. */
    const int header_in_front = fresh && first == 0;
    const size_t outlen = (header_in_front ? HEADER : 0) + (size_t)(end - start) + nblocks * overhead;
    struct content_thread *t = content_thread(k, cbs);
    if (!t || !content_sealing(k, t) || !content_grow(&t->plain, &t->plain_cap, nblocks * BLOCK) || !content_grow(&t->out, &t->out_cap, outlen))
        return TSCRYPTFS_HOOK_PASS;
    /* A new file's ID comes from the thread's nonce pool, as src/content/header.ts's does from JS's. */
    if (fresh && !content_nonce(t, id, ID_LEN)) return TSCRYPTFS_HOOK_PASS;
    uint8_t aad[AAD_LEN];

    /* The old last block's cipher bytes (to undo) and the padded block sealed. */
    uint8_t old_last[CBS_MAX], padded[CBS_MAX];
    size_t old_last_len = 0;
    const off_t pad_off = (off_t)(HEADER + (uint64_t)plain / BLOCK * cbs);
    if (pad) {
        const uint64_t b = (uint64_t)plain / BLOCK;
        if (!old_block(k, t, fd, b, id, csize, t->plain)) return pass_cleansed(t, nblocks);
        old_last_len = (size_t)(csize - pad_off);
        memcpy(old_last, t->buf, old_last_len);
        memset(t->plain + plain % BLOCK, 0, BLOCK - (size_t)(plain % BLOCK));
        content_block_aad(aad, b, id);
        if (!content_nonce(t, padded, k->nonce) ||
            !content_seal_block(k, t, padded, aad, t->plain, BLOCK, padded + k->nonce, padded + k->nonce + BLOCK))
            return pass_cleansed(t, nblocks);
    }

    /* Before the write in its first block: the old bytes there, zeros past them (a write past the end). */
    memset(t->plain, 0, (size_t)((uint64_t)off - start));
    if ((uint64_t)off > start && start < size && !old_block(k, t, fd, first, id, csize, t->plain)) return pass_cleansed(t, nblocks);
    if (wend % BLOCK != 0 && wend < end && (last != first || (uint64_t)off == start) &&
        !old_block(k, t, fd, last, id, csize, t->plain + (last - first) * BLOCK))
        return pass_cleansed(t, nblocks);
    memcpy(t->plain + ((uint64_t)off - start), data, len);

    uint8_t *out = t->out;
    size_t o = 0;
    uint8_t header[HEADER];
    header[0] = 0;
    header[1] = TSCRYPTFS_HEADER_VERSION;
    memcpy(header + 2, id, ID_LEN);
    if (header_in_front) {
        memcpy(out, header, HEADER);
        o = HEADER;
    }
    for (uint64_t b = first; b <= last; b++) {
        const uint64_t bstart = b * BLOCK;
        const size_t plen = end - bstart < BLOCK ? (size_t)(end - bstart) : BLOCK;
        uint8_t *nonce = out + o, *sealed = nonce + k->nonce, *tag = sealed + plen;
        if (!content_nonce(t, nonce, k->nonce)) return pass_cleansed(t, nblocks);
        content_block_aad(aad, b, id);
        if (!content_seal_block(k, t, nonce, aad, t->plain + (bstart - start), plen, sealed, tag)) return pass_cleansed(t, nblocks);
        o += k->nonce + plen + AEAD_TAG;
    }
    /* All the plaintext this write put there: its blocks, and a padded block's whole, which may be longer. */
    OPENSSL_cleanse(t->plain, nblocks * BLOCK);

    const off_t coff = header_in_front ? 0 : (off_t)(HEADER + first * cbs);
    if (prealloc && (fallocate(fd, FALLOC_FL_KEEP_SIZE, coff, (off_t)o) != 0 || (fresh && !header_in_front && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, HEADER) != 0) ||
                     (pad && fallocate(fd, FALLOC_FL_KEEP_SIZE, pad_off, (off_t)cbs) != 0))) {
        /* JavaScript reserves again and reports: ENOSPC, or the one warning that fallocate is missing. */
        if (errno == EOPNOTSUPP || errno == ENOSYS) __atomic_store_n(&p->prealloc, 0, __ATOMIC_RELEASE);
        return TSCRYPTFS_HOOK_PASS;
    }
    int res = 0;
    if (fresh && !header_in_front) res = pwrite_full(fd, header, HEADER, 0);
    if (res == 0 && pad) res = pwrite_full(fd, padded, cbs, pad_off);
    if (res == 0) res = pwrite_full(fd, out, o, coff);
    if (res != 0) undo_growth(fd, fresh, csize, plain, old_last, old_last_len, pad_off);
    return res;
}

/* The hook's `write` (fuse_hooks.h). Twin: writeContent in src/vault/file-content.ts. */
int fp_write(void *ctx, uint64_t fh, const char *data, size_t len, int64_t off)
{
    struct fast_path *p = ctx;
    if (!fp_on(&p->writes) || len == 0 || len > WRITE_MAX || off < 0 || off > INT64_MAX / 2) return TSCRYPTFS_HOOK_PASS;
    if (p->key.cipher == CONTENT_AEGIS && !p->key.aegis_enc) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = handles_pin(&p->handles, fh);
    if (!h) return TSCRYPTFS_HOOK_PASS;
    int res = TSCRYPTFS_HOOK_PASS;
    int32_t *fence = fences_of(&p->fences, h->slot);
    int32_t free_word = 0;
    if ((h->flags & HANDLE_WRITABLE) &&
        __atomic_compare_exchange_n(&fence[FENCE_OWNER], &free_word, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&fence[FENCE_STARTED], 1, __ATOMIC_SEQ_CST);
        res = write_held(p, h->fd, (const uint8_t *)data, len, off);
        content_wipe(&p->key);
        __atomic_add_fetch(&fence[FENCE_FINISHED], 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&fence[FENCE_OWNER], 0, __ATOMIC_RELEASE);
    }
    handles_unpin(&p->handles, h);
    if (res == TSCRYPTFS_HOOK_PASS) {
        hook_passed(&p->written);
        return res;
    }
    return hook_answered(&p->written, res);
}
