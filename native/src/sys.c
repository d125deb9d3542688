/*
 * System calls Node does not offer, for the filesystem's own use:
 *
 *   fallocate(fd, mode, offset, length) -> 0 or -errno
 *   seekData(fd, offset)                 -> next data offset >= offset, or -errno
 *                                            (-ENXIO: only a hole follows)
 *
 * tscryptfs reserves the space of every cipher block before writing it
 * (FALLOC_FL_KEEP_SIZE, as gocryptfs does), so a full disk fails the write
 * with ENOSPC before anything is written instead of leaving a half-written,
 * undecryptable block; -fsck skips holes with lseek(SEEK_DATA) as
 * gocryptfs -fsck does. Offsets and lengths arrive as JavaScript numbers
 * (exact up to 2^53).
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

static napi_value sys_fallocate(napi_env env, napi_callback_info info)
{
    size_t argc = 4;
    napi_value argv[4];
    int32_t fd, mode;
    double off, len;
    napi_value result;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4 ||
        napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
        napi_get_value_int32(env, argv[1], &mode) != napi_ok ||
        napi_get_value_double(env, argv[2], &off) != napi_ok ||
        napi_get_value_double(env, argv[3], &len) != napi_ok ||
        off < 0 || len <= 0 || off > 9007199254740992.0 || len > 9007199254740992.0) {
        napi_throw_type_error(env, "EINVAL", "fallocate(fd, mode, offset >= 0, length > 0)");
        return NULL;
    }
    int rc;
    do {
        rc = fallocate(fd, mode, (off_t)off, (off_t)len);
    } while (rc != 0 && errno == EINTR);
    napi_create_int32(env, rc == 0 ? 0 : -errno, &result);
    return result;
}

static napi_value sys_seek_data(napi_env env, napi_callback_info info)
{
    size_t argc = 2;
    napi_value argv[2];
    int32_t fd;
    double off;
    napi_value result;
    if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2 ||
        napi_get_value_int32(env, argv[0], &fd) != napi_ok ||
        napi_get_value_double(env, argv[1], &off) != napi_ok || off < 0 || off > 9007199254740992.0) {
        napi_throw_type_error(env, "EINVAL", "seekData(fd, offset >= 0)");
        return NULL;
    }
    off_t r = lseek(fd, (off_t)off, SEEK_DATA);
    napi_create_double(env, r < 0 ? -(double)errno : (double)r, &result);
    return result;
}

static napi_value init(napi_env env, napi_value exports)
{
    napi_value fn;
    napi_create_function(env, "fallocate", NAPI_AUTO_LENGTH, sys_fallocate, NULL, &fn);
    napi_set_named_property(env, exports, "fallocate", fn);
    napi_create_function(env, "seekData", NAPI_AUTO_LENGTH, sys_seek_data, NULL, &fn);
    napi_set_named_property(env, exports, "seekData", fn);
    return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
