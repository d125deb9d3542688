/*
 * A mount's native read path: see reader.c. The fuse-native binding
 * (native/fuse-native/fuse-native.c, setReadHook) calls its hook (struct tscryptfs_read_hook, fuse_hooks.h) for every READ on its
 * own libfuse thread, before it would hand the request to JavaScript.
 */
#ifndef TSCRYPTFS_READER_H
#define TSCRYPTFS_READER_H

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>
#include "fuse_hooks.h"

/* Adds readerCreate, readerOpen, readerClose, readerAttrs, readerWrites, readerCipherRoot and readerStats to `exports`; 0 on failure. */
int reader_register(napi_env env, napi_value exports);

#endif
