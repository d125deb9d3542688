/*
 * What the native read path (reader.c) and the native write path
 * (writer.c) share: the registry of handles JavaScript opened, the reader
 * with its key and fence counters, and each libfuse thread's contexts and
 * buffers. Internal to the batch addon.
 *
 * Fence counters, FENCE_STRIDE int32 per file slot, in an ArrayBuffer that
 * JavaScript shares (src/vault/write-fences.ts):
 *   [0] started   bumped before a write touches the cipher file
 *   [1] finished  bumped after it
 *   [2] owner     0: free; -1: a native writer holds the file;
 *                 n > 0: JavaScript holds it n times (reads or a write)
 * A native writer takes `owner` with one compare-and-swap from 0 to -1 and
 * leaves the write to JavaScript when it is taken; JavaScript waits for a
 * native writer (which never waits for anything) to put it back to 0.
 */
#ifndef TSCRYPTFS_READER_CORE_H
#define TSCRYPTFS_READER_CORE_H

#include "aead_block.h"
#include "aegis_export.h"
#include "format.h"
#include "fuse_hooks.h"
#include "name_cipher.h"
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define BLOCK TSCRYPTFS_BLOCK_SIZE
#define HEADER TSCRYPTFS_HEADER_LEN
#define ID_LEN TSCRYPTFS_FILE_ID_LEN
#define AAD_LEN TSCRYPTFS_BLOCK_AAD_LEN
#define BUCKETS 1024
#define FENCE_STRIDE 4
#define FENCE_STARTED 0
#define FENCE_FINISHED 1
#define FENCE_OWNER 2

/* Besides aead_block.h's two: AEGIS-256X2, through the AEGIS addon's functions (aegis_export.h). */
#define READ_AEGIS 2

/*
 * How long lookup.c's IVs and dir_fds.c's directories are used after they
 * were read or opened: as long as the vault's directory cache keeps its
 * descriptors (src/vault/backing/dir-cache.ts, a second).
 */
#define KEPT_TTL_NS 1000000000LL

/* CLOCK_MONOTONIC in ns, the clock of KEPT_TTL_NS. */
static inline int64_t kept_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* FNV-1a of `len` bytes: the slot of a path in the kept tables. */
static inline uint32_t kept_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* lookup.c: directories' IVs and cipher paths kept by plaintext path */
#define IV_SLOTS 512
#define IV_PPATH_MAX 256
#define IV_CPATH_MAX 640
struct iv_slot;

/* dir_fds.c: cipher directories kept open by cipher path */
#define DIR_FD_SLOTS 32
struct dir_fd;
/* A directory dir_fds_get handed out: give it back with dir_fds_put. */
struct dir_ref {
    int fd;
    int slot; /* dir_fds.c's */
};

/* readerOpen's flags. */
#define HANDLE_READABLE 1 /* not O_WRONLY: its reads may be answered */
#define HANDLE_WRITABLE 2 /* open for writing, not O_APPEND: its writes may be answered */

/* Handles opener.c opens: from here up (JavaScript's stay below it; the binding hands JS a handle as 32 bits). */
#define NATIVE_FH_BASE 0x80000000u
/* opener.c: the fence slots of the files open, by device and inode */
#define INODE_BUCKETS 1024
struct inode_slot;

/* One registered handle: its cipher file descriptor and fence slot. */
struct handle {
    uint64_t fh;
    int fd;
    int flags;     /* HANDLE_* */
    int owned;     /* opener.c opened it: it closes `fd` at the RELEASE */
    int adopted;   /* JavaScript holds a duplicate of `fd` too (readerAdopt) and gets the RELEASE */
    uint32_t dev;  /* owned: the cipher file's, as JS's stat words give them */
    uint64_t ino;
    uint32_t busy; /* reader_attr and reader_write calls using `fd` (readerClose waits for 0) */
    uint32_t slot;
    int has_id;
    int32_t id_seq; /* `started` when the ID was read */
    uint8_t id[ID_LEN];
    struct handle *next;
};

struct reader {
    struct tscryptfs_read_hook hook; /* first: the binding gets a pointer to it */
    uint64_t gen;                    /* unique per reader: thread contexts re-key on change */
    int cipher;
    size_t nonce;
    uint8_t key[32];
    tscryptfs_aegis_dec_fn aegis;     /* READ_AEGIS only */
    tscryptfs_aegis_enc_fn aegis_enc; /* READ_AEGIS only; NULL: writes stay in JavaScript */
    int32_t *fences;                  /* FENCE_STRIDE per slot */
    uint32_t slots;
    napi_ref fences_ref;
    pthread_mutex_t mut;
    pthread_cond_t idle; /* a handle's `busy` went to 0 */
    struct handle *buckets[BUCKETS];
    uint64_t served, passed, attrs_served, written, writes_passed;
    int attrs;    /* reader_attr answers (readerAttrs) */
    int writes;   /* reader_write answers (readerWrites) */
    int prealloc; /* reserve space before writing (readerWrites); writes that grow a file go to JS when 0 */
    int root_fd;  /* unlinker.c: the cipher directory (readerCipherRoot's own copy); -1: unlinks go to JS, no listing is kept */
    int unlinks;  /* reader_unlink answers (readerCipherRoot); set before root_fd */
    uint64_t unlinked, unlinks_passed;
    int rmdirs;   /* reader_rmdir answers (readerRmdirs), with unlinks on */
    int rmdir_ivs; /* directories have a gocryptfs.diriv (readerRmdirs); set before rmdirs */
    uint64_t rmdired, rmdirs_passed;
    pthread_mutex_t removed_mut; /* removed, removed_n, removed_all */
    char **removed;              /* cipher paths of the directories reader_rmdir removed (REMOVED_MAX), for JS */
    size_t removed_n;
    int removed_all;             /* more than REMOVED_MAX: JS forgets every directory */
    int removed_pending;         /* atomic: the log has something */
    struct name_key names; /* lookup.c: set once by readerNames */
    int names_set;
    int lookups;            /* reader_lookup answers (readerNames, readerLookups) */
    struct iv_slot *ivs;    /* IV_SLOTS, under ivs_mut */
    pthread_mutex_t ivs_mut;
    uint64_t looked_up, lookups_passed;
    uint64_t dir_epoch;     /* dir_fds.c: steps on at every `dirs_changed` */
    struct dir_fd *dir_fds; /* DIR_FD_SLOTS, under dir_fds_mut; set by readerCipherRoot, NULL: none kept */
    pthread_mutex_t dir_fds_mut;
    int opens;                               /* reader_open answers (readerOpens), with lookups on */
    pthread_mutex_t slots_mut;               /* inodes, free_slots, nfree, next_slot */
    struct inode_slot *inodes[INODE_BUCKETS];
    uint32_t *free_slots;                    /* `slots` entries, made at the first claim */
    uint32_t nfree, next_slot;
    uint32_t next_fh;                        /* under mut */
    uint64_t opened, opens_passed;
};

/* Per libfuse thread: contexts keyed for one reader, and buffers. */
struct thread_state {
    EVP_CIPHER_CTX *ctx; /* decrypting */
    int cipher;
    uint64_t gen;
    EVP_CIPHER_CTX *ectx; /* encrypting (writer.c) */
    int ecipher;
    uint64_t egen;
    uint8_t *buf; /* ciphertext read */
    size_t cap;
    uint8_t *plain; /* writer.c: the plaintext of the blocks a write covers */
    size_t plain_cap;
    uint8_t *out; /* writer.c: the sealed blocks */
    size_t out_cap;
    uint8_t part[BLOCK];
    EVP_CIPHER_CTX *nctx; /* lookup.c: AES-256-ECB under the name key */
    uint64_t ngen;
};

/* This thread's state, with a decrypting context for `r` and room for `need` cipher bytes in buf; NULL when out of memory. */
struct thread_state *reader_thread_state(struct reader *r, size_t need);

/* Grows *buf to at least `need` bytes; 0 when out of memory. */
int reader_grow(uint8_t **buf, size_t *cap, size_t need);

/* Handle `fh`, held so that readerClose waits until reader_unpin; NULL when it is not registered. */
struct handle *reader_pin(struct reader *r, uint64_t fh);
void reader_unpin(struct reader *r, struct handle *h);

/* pread(2) of exactly len bytes; 0 on a short read or an error. */
int reader_pread_full(int fd, uint8_t *buf, size_t len, off_t off);

/* The file ID from fd's header into id; 0 when the header cannot be read or is not version 2. */
int reader_file_id(int fd, uint8_t *id);

/* Block b's associated data: its number (big-endian) and the file ID. */
void reader_block_aad(uint8_t *aad, uint64_t b, const uint8_t *id);

/*
 * Opens one cipher block (nonce, ciphertext of plen bytes, tag) into dst
 * with this thread's decrypting context (`rekey`: key it first); 0 when it
 * does not open, and the context must then be re-keyed before it is used again.
 */
int reader_open_block(struct reader *r, struct thread_state *t, int rekey, const uint8_t *blk, size_t plen, const uint8_t *aad, uint8_t *dst);

/* The plaintext size of a cipher file of `size` bytes (> HEADER); -1 when its last block is too short. */
int64_t reader_plain_size(int64_t size, size_t cbs, size_t overhead);

/* The plaintext size stat shows for a cipher file of `size` bytes, with `nonce`-byte nonces. */
int64_t reader_shown_size(int64_t size, size_t nonce);

/* The reader an external made by readerCreate points to; NULL for anything else. */
struct reader *reader_get(napi_env env, napi_value v);

/* The arguments (reader, on) of a switch such as readerLookups; 0 when they are not that. */
int reader_switch_args(napi_env env, napi_callback_info info, struct reader **r, bool *on);

/* The hook's `write` (fuse_hooks.h), in writer.c. */
int reader_write(void *ctx, uint64_t fh, const char *data, size_t len, int64_t off);

/* readerWrites(reader, on, prealloc), in writer.c. */
napi_value reader_js_writes(napi_env env, napi_callback_info info);

/* The hook's `unlink` (fuse_hooks.h), in unlinker.c. */
int reader_unlink(void *ctx, const char *cpath, int long_name);

/* The hook's `rmdir` (fuse_hooks.h), in unlinker.c. */
int reader_rmdir(void *ctx, const char *cpath, int long_name);

/* readerRmdirs(reader, on, dirIVs) and readerTakeRemovedDirs(reader), in unlinker.c. */
napi_value reader_js_rmdirs(napi_env env, napi_callback_info info);
napi_value reader_js_take_removed(napi_env env, napi_callback_info info);

/* The hook's `dir_stat` (fuse_hooks.h), in unlinker.c. */
int reader_dir_stat(void *ctx, const char *cpath, struct stat *st);

/* The hook's `statfs` (fuse_hooks.h), in unlinker.c. */
int reader_statfs(void *ctx, struct statvfs *st);

/* readerCipherRoot(reader, rootFd, unlinks), in unlinker.c. */
napi_value reader_js_cipher_root(napi_env env, napi_callback_info info);

int reader_lookup(void *ctx, const char *path, const uint64_t *dirs_gen, struct stat *st, char *cpath, size_t cap, int *cpath_long);

void reader_dirs_changed(void *ctx, const char *path);

napi_value reader_js_names(napi_env env, napi_callback_info info);

napi_value reader_js_lookups(napi_env env, napi_callback_info info);

napi_value reader_js_name_encrypt(napi_env env, napi_callback_info info);

/*
 * Finds plaintext `path` (not the root): its parent's descriptor in *dir
 * (given back with dir_fds_put), its last name on disk, the parent's cipher
 * path; 0: pass (nothing to give back).
 */
int reader_find(struct reader *r, int root, const char *path, const uint64_t *dirs_gen, struct dir_ref *dir, char *disk, int *is_long,
                char *cpath, size_t *clen);

/* Directory `cpath` below `root`, O_PATH, never through a symlink (`root` itself for ""); -1 when that fails. */
int reader_open_beneath(int root, const char *cpath);

/*
 * dir_fds.c: directory `cpath` (`len` bytes, not NUL-terminated; "" is
 * `root`) in ref->fd, as reader_open_beneath finds it, or the one the
 * reader keeps open; -1 when the open fails. Every 0 is followed by one
 * dir_fds_put.
 */
int dir_fds_get(struct reader *r, int root, const char *cpath, size_t len, struct dir_ref *ref);
/* Hands `fd` (directory `cpath`, opened at `at` with the epoch taken before) to the reader to keep; ref as dir_fds_get's. */
void dir_fds_keep(struct reader *r, const char *cpath, size_t len, int fd, uint64_t epoch, int64_t at, struct dir_ref *ref);
/* Done with a directory dir_fds_get or dir_fds_keep handed out. */
void dir_fds_put(struct reader *r, struct dir_ref *ref);
/* The reader's count of directory changes, to take before an open that dir_fds_keep will keep. */
uint64_t dir_fds_epoch(struct reader *r);
/* A directory changed through the mount: every kept directory is closed (by its last user, if in use). */
void dir_fds_changed(struct reader *r);
/* Starts keeping directories (readerCipherRoot): 0 when out of memory (then none are kept). */
int dir_fds_init(struct reader *r);
/* Closes what is kept (reader_finalize). */
void dir_fds_free(struct reader *r);

/* Registers `h` (an owned one gets its fh here, from NATIVE_FH_BASE up). */
void reader_insert(struct reader *r, struct handle *h);
/* Takes handle `fh` (one opener.c opened if `owned`, else one JS registered) out of the registry once no call uses it; NULL when there is none. */
struct handle *reader_remove(struct reader *r, uint64_t fh, int owned);
/* A duplicate of owned handle `fh`'s descriptor, marking it adopted; -1 when there is none. */
int reader_adopt_fd(struct reader *r, uint64_t fh);
/* The owned handles not adopted yet that are open on (dev, ino): up to `cap` into fhs; returns how many there are. */
size_t reader_owned_on(struct reader *r, uint32_t dev, uint64_t ino, uint64_t *fhs, size_t cap);

/* The hooks' `open` and `release` (fuse_hooks.h), in opener.c. */
int reader_open(void *ctx, const char *path, int flags, const uint64_t *dirs_gen, uint64_t *fh);
int reader_release(void *ctx, uint64_t fh);

/* readerOpens, readerSlot, readerSlotRelease, readerAdopt and readerOpensOn, in opener.c. */
napi_value reader_js_opens(napi_env env, napi_callback_info info);
napi_value reader_js_slot(napi_env env, napi_callback_info info);
napi_value reader_js_slot_release(napi_env env, napi_callback_info info);
napi_value reader_js_adopt(napi_env env, napi_callback_info info);
napi_value reader_js_opens_on(napi_env env, napi_callback_info info);

/* Closes what opener.c keeps of a reader (its descriptors, the slot table). */
void reader_opener_free(struct reader *r);

/* Frees lookup.c's part of a reader. */
void reader_names_free(struct reader *r);

#endif
