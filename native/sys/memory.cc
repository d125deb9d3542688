/*
 * returnMemory(): hands the memory a burst of work left behind back to the
 * system, for a mount daemon that has gone quiet.
 *
 *   Isolate::LowMemoryNotification()  V8 collects everything it can and
 *                                     shrinks its heap spaces (the young
 *                                     generation alone is up to 32 MiB);
 *                                     V8 itself does this only after about
 *                                     8 s of low allocation, and only once
 *                                     a full collection has run.
 *   malloc_trim(0)                    glibc gives back the free tops of its
 *                                     arenas (one per libfuse thread that
 *                                     ever ran, see
 *                                     Documentation/performance.md,
 *                                     "Memory given back when idle").
 *
 * The only C++ here: Node-API has no way to reach either. It runs on the
 * JS thread, which the notification requires.
 */
#include <node_api.h>
#include <v8.h>
#include <malloc.h>
#include "sys.h"

napi_value sys_return_memory(napi_env env, napi_callback_info info)
{
    (void)info;
    v8::Isolate *isolate = v8::Isolate::GetCurrent();
    if (isolate != nullptr) isolate->LowMemoryNotification();
    malloc_trim(0);
    napi_value undefined;
    napi_get_undefined(env, &undefined);
    return undefined;
}
