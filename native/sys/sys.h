/*
 * tscryptfs_sys.node: system calls Node does not offer. sys.c is the
 * addon's entry and holds the calls on open files; at_calls.c the *at()
 * calls inside the cipher directory; memory.cc returnMemory() and
 * limitMallocArenas().
 */
#ifndef TSCRYPTFS_SYS_H
#define TSCRYPTFS_SYS_H

#include <node_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Adds the *at() calls (at_calls.c) to `exports`. */
void sys_at_register(napi_env env, napi_value exports);
/* returnMemory() and limitMallocArenas() (memory.cc). */
napi_value sys_return_memory(napi_env env, napi_callback_info info);
napi_value sys_limit_malloc_arenas(napi_env env, napi_callback_info info);

#ifdef __cplusplus
}
#endif

#endif
