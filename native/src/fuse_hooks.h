/*
 * The two hooks the patched fuse-native binding calls on its own libfuse
 * threads (patches/fuse-native+2.2.6.patch: setReadHook, setAssistHook).
 * This is their one definition: native/src/reader.c and shared_job.c
 * build them, and scripts/patch-fuse-native.mjs copies this header into
 * the binding as tscryptfs_hooks.h before it is compiled. A hook travels
 * as a Node-API external; the binding checks its magic number (which
 * carries a version) before it uses one.
 */
#ifndef TSCRYPTFS_FUSE_HOOKS_H
#define TSCRYPTFS_FUSE_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#define TSCRYPTFS_READ_HOOK_MAGIC 0x54535248u   /* "TSRH", version 1 */
#define TSCRYPTFS_ASSIST_HOOK_MAGIC 0x54534148u /* "TSAH", version 1 */

/* Called for every READ before it goes to JavaScript. */
struct tscryptfs_read_hook {
    uint32_t magic;
    /* Bytes read into buf (0 at end of file), or -1: let JavaScript answer. */
    int (*read)(void *ctx, uint64_t fh, char *buf, size_t len, int64_t off);
    void *ctx;
};

/* Called between the polls of a libfuse thread waiting for JavaScript's answer. */
struct tscryptfs_assist_hook {
    uint32_t magic;
    /* Does some shared work if there is any; returns at once when there is none. */
    int (*assist)(void);
};

#endif
