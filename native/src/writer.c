/*
 * A mount's native write path: the WRITE answered on the
 * libfuse thread that received it, as the read path (reader.c) answers a
 * READ. Answered in JavaScript, a write costs two thread hand-overs on top
 * of its sealing and pwrite, all on the one JS thread; an untar sends 3.6
 * per file, a sequential write one per 128 KiB.
 *
 * What happens here is what src/vault/file-content.ts's writeContent does
 * (Documentation/format.md §6.1-§6.4): a file without a header gets a fresh
 * one (a new random file ID), blocks only partly covered by the write are
 * read, opened and merged (read-modify-write), every block covered is
 * sealed with a fresh random nonce and its block number and file ID as
 * associated data, the space is reserved with fallocate(KEEP_SIZE) and the
 * blocks are written with one pwrite. The case that needs more goes to
 * JavaScript untouched: a write past the end (holes), a file shorter than
 * its header or with a last block too short, a block that does not open
 * (tampering, a hole's all-zero block), a handle opened O_APPEND, a failed
 * preallocation (JS reports it: ENOSPC, or the warning that fallocate is
 * missing), and with preallocation off a write that grows the file (JS
 * undoes the growth when the disk is full).
 *
 * JavaScript and this code never change one file at once: the file's
 * `owner` word (reader_core.h) is taken with a compare-and-swap before
 * anything is read, and a write finding it taken goes to JavaScript, which
 * takes its own locks and waits for the word. The fences are bumped around
 * the change, so native reads of the file leave the overlap to JavaScript.
 */
#define _GNU_SOURCE
#include "reader_core.h"
#include "napi_args.h"
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WRITE_MAX (1u << 20) /* more than a FUSE write carries (128 KiB) */

static int pass(struct reader *r)
{
    __atomic_add_fetch(&r->writes_passed, 1, __ATOMIC_RELAXED);
    return TSCRYPTFS_HOOK_PASS;
}

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

/* Gives this thread an encrypting context for `r` (none needed for AEGIS); 0 when it cannot be had. */
static int encrypting(struct reader *r, struct thread_state *t)
{
    if (r->cipher == READ_AEGIS) return 1;
    if (!t->ectx || t->ecipher != r->cipher) {
        if (t->ectx) EVP_CIPHER_CTX_free(t->ectx);
        t->ectx = aead_new_ctx(r->cipher, 1);
        t->ecipher = r->cipher;
        t->egen = 0;
    }
    return t->ectx != NULL;
}

/*
 * The plaintext of block `b` into dst (room for BLOCK bytes); 0 when it
 * cannot be had here (past the end, too short, does not open).
 */
static int old_block(struct reader *r, struct thread_state *t, int fd, uint64_t b, const uint8_t *id, int64_t csize, uint8_t *dst)
{
    const size_t overhead = r->nonce + AEAD_TAG, cbs = BLOCK + overhead;
    const int64_t coff = HEADER + (int64_t)(b * cbs);
    if (coff >= csize) return 0;
    const size_t clen = (size_t)(csize - coff) < cbs ? (size_t)(csize - coff) : cbs;
    if (clen <= overhead || !reader_pread_full(fd, t->buf, clen, (off_t)coff)) return 0;
    const size_t plen = clen - overhead;
    uint8_t aad[AAD_LEN];
    reader_block_aad(aad, b, id);
    const int ok = reader_open_block(r, t, t->gen != r->gen, t->buf, plen, aad, dst);
    t->gen = ok ? r->gen : 0; /* after a failure the context's state is not trusted: re-key next time */
    return ok;
}

/* The write, with the file's owner word held and its fences open. */
static int write_held(struct reader *r, int fd, const uint8_t *data, size_t len, int64_t off)
{
    const size_t overhead = r->nonce + AEAD_TAG, cbs = BLOCK + overhead;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return TSCRYPTFS_HOOK_PASS;
    const int64_t csize = st.st_size;
    const int fresh = csize == 0;
    uint8_t id[ID_LEN];
    int64_t plain = 0;
    if (fresh) {
        if (off != 0 || RAND_bytes(id, ID_LEN) != 1) return TSCRYPTFS_HOOK_PASS;
    } else {
        if (csize <= HEADER || (plain = reader_plain_size(csize, cbs, overhead)) < 0 || !reader_file_id(fd, id)) return TSCRYPTFS_HOOK_PASS;
    }
    if (off > plain) return TSCRYPTFS_HOOK_PASS; /* holes: JavaScript pads the last block */
    const int prealloc = __atomic_load_n(&r->prealloc, __ATOMIC_ACQUIRE);
    const uint64_t wend = (uint64_t)off + len;
    if (!prealloc && wend > (uint64_t)plain) return TSCRYPTFS_HOOK_PASS;

    /* The blocks [first, last] cover plaintext [start, end): the write, and what it keeps of partly covered blocks. */
    const uint64_t first = (uint64_t)off / BLOCK, last = (wend - 1) / BLOCK, start = first * BLOCK;
    const uint64_t keep = (uint64_t)plain < (last + 1) * BLOCK ? (uint64_t)plain : (last + 1) * BLOCK;
    const uint64_t end = wend > keep ? wend : keep;
    const size_t nblocks = (size_t)(last - first + 1);
    const size_t outlen = (fresh ? HEADER : 0) + (size_t)(end - start) + nblocks * overhead;
    struct thread_state *t = reader_thread_state(r, cbs);
    if (!t || !encrypting(r, t) || !reader_grow(&t->plain, &t->plain_cap, nblocks * BLOCK) || !reader_grow(&t->out, &t->out_cap, outlen))
        return TSCRYPTFS_HOOK_PASS;
    if ((uint64_t)off > start && !old_block(r, t, fd, first, id, csize, t->plain)) return TSCRYPTFS_HOOK_PASS;
    if (wend % BLOCK != 0 && wend < end && (last != first || (uint64_t)off == start) &&
        !old_block(r, t, fd, last, id, csize, t->plain + (last - first) * BLOCK))
        return TSCRYPTFS_HOOK_PASS;
    memcpy(t->plain + ((uint64_t)off - start), data, len);

    uint8_t *out = t->out;
    size_t o = 0;
    if (fresh) {
        out[0] = 0;
        out[1] = TSCRYPTFS_HEADER_VERSION;
        memcpy(out + 2, id, ID_LEN);
        o = HEADER;
    }
    uint8_t aad[AAD_LEN];
    for (uint64_t b = first; b <= last; b++) {
        const uint64_t bstart = b * BLOCK;
        const size_t plen = end - bstart < BLOCK ? (size_t)(end - bstart) : BLOCK;
        uint8_t *nonce = out + o, *sealed = nonce + r->nonce, *tag = sealed + plen;
        if (RAND_bytes(nonce, (int)r->nonce) != 1) return TSCRYPTFS_HOOK_PASS;
        reader_block_aad(aad, b, id);
        const uint8_t *m = t->plain + (bstart - start);
        if (r->cipher == READ_AEGIS) {
            r->aegis_enc(sealed, tag, AEAD_TAG, m, plen, aad, AAD_LEN, nonce, r->key);
        } else if (!aead_one(t->ectx, r->cipher, 1, t->egen != r->gen, r->key, nonce, aad, AAD_LEN, m, plen, sealed, tag)) {
            t->egen = 0;
            return TSCRYPTFS_HOOK_PASS;
        } else {
            t->egen = r->gen;
        }
        o += r->nonce + plen + AEAD_TAG;
    }
    OPENSSL_cleanse(t->plain, (size_t)(end - start));

    const off_t coff = fresh ? 0 : (off_t)(HEADER + first * cbs);
    if (prealloc && fallocate(fd, FALLOC_FL_KEEP_SIZE, coff, (off_t)o) != 0) {
        /* JavaScript reserves again and reports: ENOSPC, or the one warning that fallocate is missing. */
        if (errno == EOPNOTSUPP || errno == ENOSYS) __atomic_store_n(&r->prealloc, 0, __ATOMIC_RELEASE);
        return TSCRYPTFS_HOOK_PASS;
    }
    const int res = pwrite_full(fd, out, o, coff);
    if (res != 0) {
        /* As undoGrowth: back to no header, or to the old size when its last block was whole (and so untouched). */
        if (fresh) (void)!ftruncate(fd, 0);
        else if (plain % BLOCK == 0 && fstat(fd, &st) == 0 && st.st_size > csize) (void)!ftruncate(fd, (off_t)csize);
    }
    return res;
}

/* The hook's `write` (fuse_hooks.h). Twin: writeContent in src/vault/file-content.ts. */
int reader_write(void *ctx, uint64_t fh, const char *data, size_t len, int64_t off)
{
    struct reader *r = ctx;
    if (!__atomic_load_n(&r->writes, __ATOMIC_ACQUIRE) || len == 0 || len > WRITE_MAX || off < 0 || off > INT64_MAX / 2)
        return TSCRYPTFS_HOOK_PASS;
    if (r->cipher == READ_AEGIS && !r->aegis_enc) return TSCRYPTFS_HOOK_PASS;
    struct handle *h = reader_pin(r, fh);
    if (!h) return TSCRYPTFS_HOOK_PASS;
    int res = TSCRYPTFS_HOOK_PASS;
    int32_t *fence = r->fences + FENCE_STRIDE * (size_t)h->slot;
    int32_t free_word = 0;
    if ((h->flags & HANDLE_WRITABLE) &&
        __atomic_compare_exchange_n(&fence[FENCE_OWNER], &free_word, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_add_fetch(&fence[FENCE_STARTED], 1, __ATOMIC_SEQ_CST);
        res = write_held(r, h->fd, (const uint8_t *)data, len, off);
        __atomic_add_fetch(&fence[FENCE_FINISHED], 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&fence[FENCE_OWNER], 0, __ATOMIC_RELEASE);
    }
    reader_unpin(r, h);
    if (res == TSCRYPTFS_HOOK_PASS) return pass(r);
    __atomic_add_fetch(&r->written, 1, __ATOMIC_RELAXED);
    return res;
}

/* readerWrites(reader, on, prealloc): whether reader_write answers (off when created), and whether it reserves space first */
napi_value reader_js_writes(napi_env env, napi_callback_info info)
{
    size_t argc = 3, on, prealloc;
    napi_value argv[3];
    struct reader *r;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 3 || !(r = reader_get(env, argv[0])) ||
        !get_size(env, argv[1], &on) || on > 1 || !get_size(env, argv[2], &prealloc) || prealloc > 1)
        return throw_inval(env, "readerWrites(reader, on, prealloc): bad argument");
    __atomic_store_n(&r->prealloc, (int)prealloc, __ATOMIC_RELEASE);
    __atomic_store_n(&r->writes, (int)on, __ATOMIC_RELEASE);
    return NULL;
}
