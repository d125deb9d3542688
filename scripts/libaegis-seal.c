/*
 * libaegis's sealing speed measured the way tscryptfs -speed measures its
 * own AEGIS rows: 4096-byte blocks with a 24-byte AAD and a 16-byte tag, 32
 * blocks per round, each block with a fresh nonce cut from a 64 KiB pool
 * that one RAND_bytes call fills (as randomNonces does), copied in front of
 * its block. Prints "AEGIS-256X2 MB/s" and "AEGIS-128X2 MB/s", each over
 * one run of 0.45 s after a warm-up as long, as -speed times a batched row. Built and run by
 * scripts/bench-libaegis.bash.
 */
#include <aegis.h>
#include <aegis128x2.h>
#include <aegis256x2.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BS 4096
#define BATCH 32

static uint8_t in[BATCH][BS], out[BATCH][BS + 32 + 16], pool[64 * 1024], key[32], ad[24];
static size_t pool_left;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const uint8_t *nonces(size_t n)
{
    if (pool_left < n) {
        if (RAND_bytes(pool, sizeof pool) != 1) abort();
        pool_left = sizeof pool;
    }
    pool_left -= n;
    return pool + sizeof pool - pool_left - n;
}

/* MB/s (10^6 bytes per second) of one run of `secs`; wide: AEGIS-256X2, else AEGIS-128X2. */
static double run(int wide, double secs)
{
    const size_t nl = wide ? 32 : 16;
    const double t0 = now();
    double t;
    long bytes = 0;
    do {
        const uint8_t *n = nonces(BATCH * nl);
        for (int b = 0; b < BATCH; b++, n += nl) {
            memcpy(out[b], n, nl);
            if (wide) aegis256x2_encrypt_detached(out[b] + nl, out[b] + nl + BS, 16, in[b], BS, ad, sizeof ad, n, key);
            else aegis128x2_encrypt_detached(out[b] + nl, out[b] + nl + BS, 16, in[b], BS, ad, sizeof ad, n, key);
        }
        bytes += BATCH * BS;
    } while ((t = now()) - t0 < secs);
    return (double)bytes / (t - t0) / 1e6;
}

int main(void)
{
    double mbs[2];
    if (aegis_init() != 0 || RAND_bytes(key, sizeof key) != 1) return 1;
    memset(in, 7, sizeof in);
    for (int w = 1; w >= 0; w--) {
        (void)run(w, 0.45);
        mbs[w] = run(w, 0.45);
    }
    printf("AEGIS-256X2 %.2f\nAEGIS-128X2 %.2f\n", mbs[1], mbs[0]);
    return 0;
}
