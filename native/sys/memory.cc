/*
 * returnMemory(collect = true): hands the memory a burst of work left
 * behind back to the system, for a mount daemon that has gone quiet.
 * Returns the kB of file pages it unmapped. Without `collect`, V8 is left
 * alone.
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
 *   drop_clean_file_pages()           unmaps the pages of read-only file
 *                                     mappings that hold no private copy:
 *                                     the node executable's code and data
 *                                     (about 40 MB after start-up, most of
 *                                     it never used again) and the
 *                                     libraries'. They stay in the page
 *                                     cache; a later use maps them again
 *                                     with a minor fault.
 *
 * The only C++ here: Node-API has no way to reach V8's notification. It
 * runs on the JS thread, which the notification requires.
 *
 * limitMallocArenas(n): mallopt(M_ARENA_MAX, n). glibc gives each thread
 * that mallocs while the others' arenas are busy an arena of its own, up
 * to eight per CPU, and an arena keeps its pages while any allocation
 * lives in them. libfuse starts and ends worker threads all the time, so a
 * mount that served dbench with 16 clients kept 15 arenas of about 1 MB
 * each after malloc_trim. One arena per CPU (src/cli/daemon.ts's
 * mallocArenaLimit) leaves the daemon 9 MB lighter when idle; threads then
 * share arenas, which their small allocations mostly do not notice, as
 * each thread keeps a cache of freed chunks (Documentation/performance.md,
 * "Memory given back when idle"). Threads that had their arenas before
 * the call keep them: the background process gets the limit in its
 * environment (MALLOC_ARENA_MAX) from its start.
 */
#include <node_api.h>
#include <v8.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "sys.h"

/* One mapping of /proc/self/smaps, as far as drop_clean_file_pages needs it. */
struct Mapping {
    unsigned long start, end;
    bool candidate; /* a file, not writable */
    unsigned long rss_kb;
};

/* MADV_DONTNEED on `m` when every resident page is the file's own (no anonymous copy). */
static unsigned long drop_if_clean(const Mapping &m, unsigned long anon_kb)
{
    if (!m.candidate || anon_kb != 0 || m.rss_kb == 0) return 0;
    if (madvise(reinterpret_cast<void *>(m.start), m.end - m.start, MADV_DONTNEED) != 0) return 0;
    return m.rss_kb;
}

/*
 * Walks /proc/self/smaps. A private file mapping's page is either the
 * page cache's (dropping it loses nothing: the next use reads the same
 * bytes from the file) or a private copy (relocated data, a breakpoint),
 * which smaps counts as Anonymous; a mapping with any such page is left
 * alone, as are writable ones, devices and everything that is not a file.
 */
static unsigned long drop_clean_file_pages()
{
    FILE *f = fopen("/proc/self/smaps", "re");
    if (f == nullptr) return 0;
    char *line = nullptr;
    size_t cap = 0;
    Mapping m = {0, 0, false, 0};
    unsigned long dropped = 0;
    while (getline(&line, &cap, f) > 0) {
        unsigned long a, b;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &a, &b, perms, &path_at) == 3 && path_at > 0) {
            const char *path = line + path_at;
            m = {a, b, perms[1] != 'w' && path[0] == '/' && strncmp(path, "/dev/", 5) != 0, 0};
        } else if (strncmp(line, "Rss:", 4) == 0) {
            m.rss_kb = strtoul(line + 4, nullptr, 10);
        } else if (strncmp(line, "Anonymous:", 10) == 0) {
            dropped += drop_if_clean(m, strtoul(line + 10, nullptr, 10));
            m.candidate = false;
        }
    }
    free(line);
    fclose(f);
    return dropped;
}

napi_value sys_return_memory(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    bool collect = true;
    if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) == napi_ok && argc >= 1) napi_get_value_bool(env, argv[0], &collect);
    v8::Isolate *isolate = v8::Isolate::GetCurrent();
    if (collect && isolate != nullptr) isolate->LowMemoryNotification();
    malloc_trim(0);
    napi_value kb;
    napi_create_double(env, static_cast<double>(drop_clean_file_pages()), &kb);
    return kb;
}

napi_value sys_limit_malloc_arenas(napi_env env, napi_callback_info info)
{
    size_t argc = 1;
    napi_value argv[1];
    int32_t arenas = 0;
    if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 1 ||
        napi_get_value_int32(env, argv[0], &arenas) != napi_ok || arenas < 1)
        arenas = 0;
    napi_value r;
    napi_create_int32(env, arenas > 0 && mallopt(M_ARENA_MAX, arenas) == 1 ? 1 : 0, &r);
    return r;
}
