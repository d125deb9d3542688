/*
 * See shared_job.h. One job open at a time (`busy`): its caller writes
 * job_fn/job_drop/job_arg, then publishes it in `ticket` =
 * generation (40 bits) | chunk count (12) | next chunk (12). A chunk is
 * taken by a compare-and-swap that bumps "next"; the job's fields are read
 * only after that succeeded, while the caller is still waiting for the
 * chunk. A thread holding an old ticket can take nothing: every chunk of
 * that job was taken before its caller let go of it.
 */
#include "shared_job.h"
#include <sched.h>

#define IDX_BITS 12
#define IDX_MASK ((1ull << IDX_BITS) - 1)
#define GEN_SHIFT (2 * IDX_BITS)

static uint64_t ticket;
static chunk_fn job_fn;
static void (*job_drop)(void *);
static void *job_arg;
static size_t finished;
static int failed;
static int busy;
static uint64_t shared_jobs, assisted_chunks; /* statistics: jobs opened to others, chunks others did */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

static int work(void)
{
    void *scratch = NULL;
    void (*drop)(void *) = NULL;
    int done = 0;
    for (;;) {
        uint64_t t = __atomic_load_n(&ticket, __ATOMIC_ACQUIRE);
        const uint64_t n = (t >> IDX_BITS) & IDX_MASK, i = t & IDX_MASK;
        if (i >= n) break;
        if (!__atomic_compare_exchange_n(&ticket, &t, t + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
        drop = job_drop;
        if (!job_fn(job_arg, (size_t)i, &scratch)) __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
        done++;
        __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE); /* from here on the job may be gone */
    }
    if (scratch && drop) drop(scratch);
    return done;
}

int shared_job_assist(void)
{
    const int n = work();
    if (n) __atomic_add_fetch(&assisted_chunks, (uint64_t)n, __ATOMIC_RELAXED);
    return n;
}

int shared_job_run(chunk_fn fn, void (*drop)(void *), void *arg, size_t nchunks)
{
    if (nchunks < 2 || nchunks > IDX_MASK || __atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE)) {
        void *scratch = NULL;
        int ok = 1;
        for (size_t i = 0; i < nchunks; i++) ok &= fn(arg, i, &scratch) != 0;
        if (scratch) drop(scratch);
        return ok;
    }
    __atomic_add_fetch(&shared_jobs, 1, __ATOMIC_RELAXED);
    job_fn = fn;
    job_drop = drop;
    job_arg = arg;
    __atomic_store_n(&finished, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&failed, 0, __ATOMIC_RELAXED);
    const uint64_t gen = (__atomic_load_n(&ticket, __ATOMIC_RELAXED) >> GEN_SHIFT) + 1;
    __atomic_store_n(&ticket, (gen << GEN_SHIFT) | ((uint64_t)nchunks << IDX_BITS), __ATOMIC_RELEASE);
    work();
    /* What is left is being done by another thread: a few microseconds, unless it lost its CPU. */
    for (unsigned spins = 0; __atomic_load_n(&finished, __ATOMIC_ACQUIRE) < nchunks; spins++) {
        if (spins < 4096) cpu_relax();
        else sched_yield();
    }
    const int ok = !__atomic_load_n(&failed, __ATOMIC_RELAXED);
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
    return ok;
}

static struct tscryptfs_assist_hook hook = {TSCRYPTFS_ASSIST_HOOK_MAGIC, shared_job_assist};

static napi_value js_assist_hook(napi_env env, napi_callback_info info)
{
    (void)info;
    napi_value r;
    if (napi_create_external(env, &hook, NULL, NULL, &r) != napi_ok) return NULL;
    return r;
}

/* sharedJobStats() -> [jobs opened to other threads, chunks they did] (this process, so far) */
static napi_value js_stats(napi_env env, napi_callback_info info)
{
    (void)info;
    napi_value r, v;
    if (napi_create_array_with_length(env, 2, &r) != napi_ok ||
        napi_create_double(env, (double)__atomic_load_n(&shared_jobs, __ATOMIC_RELAXED), &v) != napi_ok ||
        napi_set_element(env, r, 0, v) != napi_ok ||
        napi_create_double(env, (double)__atomic_load_n(&assisted_chunks, __ATOMIC_RELAXED), &v) != napi_ok ||
        napi_set_element(env, r, 1, v) != napi_ok)
        return NULL;
    return r;
}

int shared_job_register(napi_env env, napi_value exports)
{
    napi_value f, g;
    return napi_create_function(env, "assistHook", NAPI_AUTO_LENGTH, js_assist_hook, NULL, &f) == napi_ok &&
           napi_set_named_property(env, exports, "assistHook", f) == napi_ok &&
           napi_create_function(env, "sharedJobStats", NAPI_AUTO_LENGTH, js_stats, NULL, &g) == napi_ok &&
           napi_set_named_property(env, exports, "sharedJobStats", g) == napi_ok;
}
