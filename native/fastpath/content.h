/*
 * The content format as the fast path reads and writes it
 * (Documentation/format.md §5.3, §5.5, §5.6, §6.1-§6.4): the content key
 * with its cipher, each file's header and block numbering, one block
 * opened or sealed, and each libfuse thread's cipher contexts and buffers.
 * The TypeScript home of the same rules is src/content (layout.ts,
 * file-header.ts) with src/crypto.
 */
#ifndef TSCRYPTFS_FASTPATH_CONTENT_H
#define TSCRYPTFS_FASTPATH_CONTENT_H

#include "aead_block.h"
#include "aegis_export.h"
#include "format.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BLOCK TSCRYPTFS_BLOCK_SIZE
#define HEADER TSCRYPTFS_HEADER_LEN
#define ID_LEN TSCRYPTFS_FILE_ID_LEN
#define AAD_LEN TSCRYPTFS_BLOCK_AAD_LEN

/* Besides aead_block.h's AEAD_GCM and AEAD_XCHACHA: AEGIS-256X2, through the AEGIS addon's functions (aegis_export.h). */
#define CONTENT_AEGIS 2

/* The content key and its cipher; `gen` is unique per key, so that thread contexts keyed for another are re-keyed. */
struct content_key {
    int cipher;
    size_t nonce; /* bytes in front of each sealed block */
    uint8_t key[32];
    uint64_t gen;
    tscryptfs_aegis_dec_fn aegis_dec; /* CONTENT_AEGIS only */
    tscryptfs_aegis_enc_fn aegis_enc; /* CONTENT_AEGIS only; NULL: blocks are only opened */
    tscryptfs_aegis_wipe_fn aegis_wipe; /* CONTENT_AEGIS only */
};

/* Fills `k`; `aegis` is the AEGIS addon's export for CONTENT_AEGIS (NULL otherwise). */
void content_key_init(struct content_key *k, int cipher, const uint8_t *key, const struct tscryptfs_aegis_export *aegis);
/* Wipes the key. */
void content_key_free(struct content_key *k);
/*
 * After a request's blocks: wipes the stack the AEGIS functions used
 * (aegis_export.h). Called from the hook's own function, one or two calls
 * above content_open_block and content_seal_block.
 */
void content_wipe(const struct content_key *k);

/*
 * Nonces come from a per-thread pool that one RAND_bytes call fills:
 * OpenSSL 3.0 takes about 1.9 us per call even for 32 bytes, more than
 * sealing a 4 KiB block with AEGIS, and 2.2 us for 4 KiB. Twin of
 * randomNonces in src/crypto/random.ts.
 */
#define CONTENT_NONCE_POOL 4096

/* Per libfuse thread: cipher contexts keyed for one content key, and buffers. */
struct content_thread {
    EVP_CIPHER_CTX *dctx; /* opening */
    int dcipher;
    uint64_t dgen; /* the key dctx holds; 0: re-key before use */
    EVP_CIPHER_CTX *ectx; /* sealing */
    int ecipher;
    uint64_t egen;
    uint8_t *buf; /* cipher bytes read */
    size_t cap;
    uint8_t *plain; /* the plaintext of the blocks a write covers */
    size_t plain_cap;
    uint8_t *out; /* the sealed blocks of a write */
    size_t out_cap;
    uint8_t part[BLOCK]; /* a block a read covers in part */
    uint8_t nonces[CONTENT_NONCE_POOL]; /* random bytes drawn ahead for nonces; the last nonces_left are unspent */
    size_t nonces_left;
};

/* This thread's state, with an opening context for `k` and room for `need` cipher bytes in buf; NULL when out of memory. */
struct content_thread *content_thread(const struct content_key *k, size_t need);
/* Gives `t` a sealing context for `k` (none is needed for AEGIS); 0 when it cannot be had. */
int content_sealing(const struct content_key *k, struct content_thread *t);
/* n fresh random bytes (n <= CONTENT_NONCE_POOL) into dst, each handed out once; 0 when the CSPRNG fails. */
int content_nonce(struct content_thread *t, uint8_t *dst, size_t n);
/* Grows *buf to at least `need` bytes; 0 when out of memory. */
int content_grow(uint8_t **buf, size_t *cap, size_t need);

/* pread(2) of exactly len bytes; 0 on a short read or an error. */
int content_pread_full(int fd, uint8_t *buf, size_t len, off_t off);
/* The file ID from fd's header into id; 0 when the header cannot be read or is not version 2. */
int content_file_id(int fd, uint8_t *id);
/* Block b's associated data: its number (big-endian) and the file ID. */
void content_block_aad(uint8_t *aad, uint64_t b, const uint8_t *id);

/*
 * Opens one sealed block (nonce, ciphertext of plen bytes, tag) into dst;
 * 0 when it does not open. t->dgen says whether the context holds the key
 * and is set to 0 on a failure (the context's state is not trusted then).
 */
int content_open_block(const struct content_key *k, struct content_thread *t, const uint8_t *blk, size_t plen, const uint8_t *aad,
                       uint8_t *dst);
/*
 * Whether a block that does not open is a hole: a whole block (`blen` =
 * `cbs` bytes) of zeros, left by a write past the end, which stands for a
 * block of zeros (twin: ContentCipher.openBlock in src/content/content-cipher.ts).
 */
int content_is_hole(const uint8_t *blk, size_t blen, size_t cbs);
/* Seals plen bytes of m under `nonce` (already in place) into sealed and tag; 0 on failure. */
int content_seal_block(const struct content_key *k, struct content_thread *t, const uint8_t *nonce, const uint8_t *aad, const uint8_t *m,
                       size_t plen, uint8_t *sealed, uint8_t *tag);

/* The plaintext size of a cipher file of `size` bytes (> HEADER); -1 when its last block is too short. */
int64_t content_plain_size(int64_t size, size_t cbs, size_t overhead);
/* The plaintext size stat shows for a cipher file of `size` bytes under `k`, as src/content/layout.ts's cipherSizeToPlainSize. */
int64_t content_shown_size(const struct content_key *k, int64_t size);

#endif
