/*
 * A mount's native read path (issue 4): see reader.c. The patched
 * fuse-native binding (patches/fuse-native+2.2.6.patch, setReadHook) calls
 * the hook below for every READ on its own libfuse thread, before it would
 * hand the request to JavaScript; it declares the same struct.
 */
#ifndef TSCRYPTFS_READER_H
#define TSCRYPTFS_READER_H

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

#define TSCRYPTFS_READ_HOOK_MAGIC 0x54535248u /* "TSRH", version 1 */

struct tscryptfs_read_hook {
    uint32_t magic;
    /* Bytes read into buf (0 at end of file), or -1: let JavaScript answer. */
    int (*read)(void *ctx, uint64_t fh, char *buf, size_t len, int64_t off);
    void *ctx;
};

/* Adds readerCreate, readerOpen, readerClose and readerStats to `exports`; 0 on failure. */
int reader_register(napi_env env, napi_value exports);

#endif
