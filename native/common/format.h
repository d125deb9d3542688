/*
 * The constants of the content format that the native read path needs
 * (Documentation/format.md §6.1-§6.2); src/content/layout.ts holds the same
 * numbers for TypeScript, and test/unit/native-constants.test.ts checks
 * that the two agree.
 */
#ifndef TSCRYPTFS_FORMAT_H
#define TSCRYPTFS_FORMAT_H

#define TSCRYPTFS_BLOCK_SIZE 4096    /* plaintext bytes per block */
#define TSCRYPTFS_HEADER_LEN 18      /* version (2) + file ID (16) */
#define TSCRYPTFS_HEADER_VERSION 2
#define TSCRYPTFS_FILE_ID_LEN 16
#define TSCRYPTFS_BLOCK_AAD_LEN (8 + TSCRYPTFS_FILE_ID_LEN) /* block number (BE64) + file ID */

#endif
