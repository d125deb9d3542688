/* Argument checks shared by the batch calls and the native reader. */
#ifndef TSCRYPTFS_NAPI_ARGS_H
#define TSCRYPTFS_NAPI_ARGS_H

#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

/* Throws an Error with code EINVAL; returns NULL for the caller to return. */
napi_value throw_inval(napi_env env, const char *msg);
/* A Uint8Array's bytes; 0 when `v` is anything else. */
int get_bytes(napi_env env, napi_value v, uint8_t **p, size_t *len);
/* A non-negative integer; 0 otherwise. */
int get_size(napi_env env, napi_value v, size_t *out);

#endif
