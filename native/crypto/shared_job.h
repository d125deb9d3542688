/*
 * A batch whose chunks other threads may take while its caller works
 * through them too. gocryptfs seals a large write's blocks in two
 * goroutines (contentenc.EncryptBlocks); here the second pair of hands is a
 * libfuse thread that would otherwise spin idle, waiting for JavaScript to
 * answer the very WRITE being sealed: the binding calls the
 * assist hook (fuse_hooks.h) from that spin. The caller never waits for anyone to
 * join: all take chunks from one counter. Which thread seals which chunk
 * does not change the bytes.
 */
#ifndef TSCRYPTFS_SHARED_JOB_H
#define TSCRYPTFS_SHARED_JOB_H

#include "fuse_hooks.h"
#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Does chunk `i`; 1 on success. `*scratch` starts NULL on each thread's turn
 * at a job and may hold that thread's working state (an OpenSSL context)
 * from chunk to chunk; the job's `drop` frees it afterwards.
 */
typedef int (*chunk_fn)(void *arg, size_t i, void **scratch);

/*
 * Runs fn for every chunk i < nchunks, here and on any thread that calls
 * shared_job_assist meanwhile; returns when all are done: 1 if every chunk
 * succeeded. Serial when nchunks < 2 or when another job is open.
 */
int shared_job_run(chunk_fn fn, void (*drop)(void *scratch), void *arg, size_t nchunks);

/* Takes and does chunks of the open job, if any; returns how many. Cheap when there is none (one atomic load). */
int shared_job_assist(void);

/* Adds assistHook() (an external for setAssistHook) and sharedJobStats() to `exports`; 0 on failure. */
int shared_job_register(napi_env env, napi_value exports);

#endif
