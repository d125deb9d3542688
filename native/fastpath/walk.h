/*
 * From a plaintext path to its place in the cipher directory, as
 * src/vault/backing/cipher-tree.ts finds it: each plaintext component
 * encrypted under its directory's IV (name_cipher.c), each directory
 * opened with openat(O_PATH|O_DIRECTORY|O_NOFOLLOW) from its parent's
 * descriptor, from the deepest directory above whose IV is kept (the
 * root at worst) down, the IV read through that descriptor. A symlink
 * planted in the cipher directory is never followed. A path longer than
 * PATH_MAX (plaintext or cipher) stays with JavaScript.
 *
 * Directories' IVs and cipher paths are kept, by plaintext path, as the
 * vault's directory cache keeps them (dir-cache.ts): for KEPT_TTL_NS. A
 * mkdir, rmdir or rename through the mount makes the hook forget the
 * directories it touches and all below them when it starts and again when
 * it ends (walk_forget), and what a walk read is kept only if the
 * binding's count of those changes (`dirs_gen`, which steps on before each
 * forgetting) stood still while it read. A kept directory is then opened
 * in one openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, which
 * refuses symlinks on the way as the walk does, unless dirs.c still has
 * it open.
 */
#ifndef TSCRYPTFS_FASTPATH_WALK_H
#define TSCRYPTFS_FASTPATH_WALK_H

#include "dirs.h"
#include "name_cipher.h"
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct iv_slot;

struct walk {
    struct name_key names;
    int ready;            /* walk_init succeeded */
    uint64_t gen;         /* unique per key: thread contexts re-key on change */
    struct iv_slot *ivs;  /* IV_SLOTS, under mut */
    pthread_mutex_t mut;
};

/* An empty walk: walk_find passes until walk_init. */
void walk_clear(struct walk *w);
/* Encrypts names under the 32-byte EME key (copied) from now on; 0 when out of memory or OpenSSL fails. */
int walk_init(struct walk *w, const uint8_t *key, size_t long_name_max, int raw64);
void walk_free(struct walk *w);

/*
 * Finds plaintext `path` ("/a/b", not the root) below d's root: its parent
 * directory in *dir (given back with dirs_put), its last name on disk in
 * `disk` (NAME_DISK_MAX + 1 bytes, with *is_long) and the parent's cipher
 * path in `cpath` (CPATH_MAX bytes, *clen of them used). Returns 1, or 0
 * when the request must go to JavaScript (nothing to give back then): a
 * name the vault refuses or that JavaScript would see otherwise (one that
 * may be shown for a sync conflict copy), a missing directory or IV.
 */
int walk_find(struct walk *w, struct dirs *d, const char *path, const uint64_t *dirs_gen, struct dir_ref *dir, char *disk, int *is_long,
              char *cpath, size_t *clen);

/*
 * Opens plaintext directory `path` ("/" for the root) for reading
 * (O_DIRECTORY | O_NOFOLLOW, from its parent as walk_find finds it) into
 * *fd, with its IV and its cipher path as walk_find gives one. The IV is
 * the one kept for that path when it was kept at the same cipher path,
 * else read through the descriptor and kept as a walk keeps it. Returns 1 (the caller closes *fd), or 0 when
 * walk_find would pass or the directory or its IV cannot be opened.
 */
int walk_open_dir(struct walk *w, struct dirs *d, const char *path, const uint64_t *dirs_gen, int *fd, uint8_t *iv, char *cpath, size_t *clen);

/* name_decrypt (name_cipher.h) of name on disk `cname` under `iv`, with this thread's context; 0 when it is no valid name. */
int walk_decrypt_name(struct walk *w, const uint8_t *iv, const char *cname, size_t clen, uint8_t *out, size_t *len);

/* The long name (name_long_hash) that stands for encrypted name `cname` under the walk's encoding; 0 when OpenSSL fails. */
int walk_long_hash(struct walk *w, const char *cname, size_t len, char *out);

/*
 * Whether `len` bytes are well-formed UTF-8 (RFC 3629 §4). The binding
 * hands JS its paths as strings, which turn any other byte into U+FFFD:
 * a name that is not UTF-8 stays with JavaScript, in walks and listings.
 */
int utf8_valid(const uint8_t *s, size_t len);

/* Forgets plaintext directory `path` and everything kept below it. */
void walk_forget(struct walk *w, const char *path);

/* Appends "/" (unless cpath is "") and `name` to cpath (*clen bytes, room for `cap`); 0 when it does not fit. */
int cpath_append(char *cpath, size_t *clen, size_t cap, const char *name);

#endif
