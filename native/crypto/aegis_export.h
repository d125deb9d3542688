/*
 * What the AEGIS addon (aegis.c) hands to the mount's fast path
 * (native/fastpath/content.c): the decryption, encryption and stack-wipe
 * functions of one variant, as the code path selected when it was asked
 * for (AES-NI or VAES). JavaScript carries it from one addon to the other
 * as an external (decryptHandle(variant) -> the fast path's creation, in
 * src/fuse/native-fast-path.ts); both addons stay loaded for the life of
 * the process, so the function pointers stay valid.
 */
#ifndef TSCRYPTFS_AEGIS_EXPORT_H
#define TSCRYPTFS_AEGIS_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#define TSCRYPTFS_AEGIS_EXPORT_MAGIC 0x41454733u /* "AEG3": with `enc` and `wipe` */

/*
 * `dec` and `enc` leave the cipher state's spilled vectors on the stack (the
 * state is key-equivalent). Once a run of blocks is done, the caller calls
 * wipe(TSCRYPTFS_AEGIS_WIPE_BYTES) from the function that called them, or
 * from one that called that function, with less than that many bytes of
 * frames in between: the wipe clears that much stack below its caller.
 */
#define TSCRYPTFS_AEGIS_WIPE_BYTES 2560

/* Opens c (clen bytes) with its tag into m; 0 when the tag verifies, -1 (m zeroed) when not. */
typedef int (*tscryptfs_aegis_dec_fn)(uint8_t *m, const uint8_t *c, size_t clen, const uint8_t *tag, size_t taglen,
                                      const uint8_t *ad, size_t adlen, const uint8_t *npub, const uint8_t *k);

/* Seals m (mlen bytes) into c (mlen bytes) and its tag (taglen bytes). */
typedef void (*tscryptfs_aegis_enc_fn)(uint8_t *c, uint8_t *tag, size_t taglen, const uint8_t *m, size_t mlen, const uint8_t *ad,
                                       size_t adlen, const uint8_t *npub, const uint8_t *k);

/* Clears the n bytes of stack below the caller's frame. */
typedef void (*tscryptfs_aegis_wipe_fn)(size_t n);

/* The variant numbers of aegis.c's `enum variant`; gocryptfs's -aegis is AEGIS-256X2. */
#define TSCRYPTFS_AEGIS_256X2 4

struct tscryptfs_aegis_export {
    uint32_t magic;
    int variant; /* the reader takes TSCRYPTFS_AEGIS_256X2 only: 32-byte key and nonce, 16-byte tag */
    tscryptfs_aegis_dec_fn dec;
    tscryptfs_aegis_enc_fn enc;
    tscryptfs_aegis_wipe_fn wipe;
};

#endif
