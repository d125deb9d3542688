/*
 * What the AEGIS addon (aegis.c) hands to the batch addon's read and write
 * paths (reader.c, writer.c): the decryption and encryption functions of one variant, as the code path
 * selected when it was asked for (AES-NI or VAES). JavaScript carries it
 * from one addon to the other as an external (decryptHandle(variant) ->
 * readerCreate(..., handle)); both addons stay loaded for the life of the
 * process, so the function pointer stays valid.
 */
#ifndef TSCRYPTFS_AEGIS_EXPORT_H
#define TSCRYPTFS_AEGIS_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#define TSCRYPTFS_AEGIS_EXPORT_MAGIC 0x41454732u /* "AEG2": with `enc` */

/* Opens c (clen bytes) with its tag into m; 0 when the tag verifies, -1 (m zeroed) when not. */
typedef int (*tscryptfs_aegis_dec_fn)(uint8_t *m, const uint8_t *c, size_t clen, const uint8_t *tag, size_t taglen,
                                      const uint8_t *ad, size_t adlen, const uint8_t *npub, const uint8_t *k);

/* Seals m (mlen bytes) into c (mlen bytes) and its tag (taglen bytes). */
typedef void (*tscryptfs_aegis_enc_fn)(uint8_t *c, uint8_t *tag, size_t taglen, const uint8_t *m, size_t mlen, const uint8_t *ad,
                                       size_t adlen, const uint8_t *npub, const uint8_t *k);

/* The variant numbers of aegis.c's `enum variant`; gocryptfs's -aegis is AEGIS-256X2. */
#define TSCRYPTFS_AEGIS_256X2 4

struct tscryptfs_aegis_export {
    uint32_t magic;
    int variant; /* the reader takes TSCRYPTFS_AEGIS_256X2 only: 32-byte key and nonce, 16-byte tag */
    tscryptfs_aegis_dec_fn dec;
    tscryptfs_aegis_enc_fn enc;
};

#endif
