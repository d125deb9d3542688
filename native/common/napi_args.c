/* See napi_args.h. */
#include "napi_args.h"

napi_value throw_inval(napi_env env, const char *msg)
{
    napi_throw_error(env, "EINVAL", msg);
    return NULL;
}

int get_bytes(napi_env env, napi_value v, uint8_t **p, size_t *len)
{
    bool is;
    if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
    napi_typedarray_type t;
    napi_value ab;
    size_t off;
    void *data;
    if (napi_get_typedarray_info(env, v, &t, len, &data, &ab, &off) != napi_ok || t != napi_uint8_array) return 0;
    *p = (uint8_t *)data;
    return 1;
}

int get_size(napi_env env, napi_value v, size_t *out)
{
    int64_t x;
    if (napi_get_value_int64(env, v, &x) != napi_ok || x < 0) return 0;
    *out = (size_t)x;
    return 1;
}
