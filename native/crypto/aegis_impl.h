/*
 * AEGIS-128L/128X and AEGIS-256/256X (draft-irtf-cfrg-aegis-aead), written
 * once over an abstract vector type and included by aegis.c once per
 * instruction set. The includer defines:
 *
 *   VEC                 vector type holding VW AES blocks (VW = 1 or 2)
 *   VW                  AES blocks (lanes) per vector
 *   TARGET              function attribute enabling the instructions used
 *   FN(name)            prefixes generated names
 *   VXOR(a,b) VAND(a,b) VENC(x,rk)  (VENC = one AES round: AESENC)
 *   VLOAD(p) VSTORE(p,v)            unaligned, VW*16 bytes
 *   VBCAST(p)           the 16 bytes at p repeated in every lane
 *   VCTX(first, d)      lanes first..first+VW-1 of the context:
 *                       ctx[i] = Byte(i) || Byte(d-1) || 0^112
 *   VLEN(a, m)          LE64(a) || LE64(m) in every lane
 *   VFOLD(p, v)         stores the XOR of v's lanes (16 bytes) at p
 *
 * State: V[j * NV + v] is vector v of AES block row j (NV = D / VW
 * vectors per row, lane i = v * VW + (i % VW)); so a rate block's bytes map
 * to lanes in order, as in the draft's Split(M, 128).
 *
 * The state stays in registers: nothing takes its address. The callers
 * wipe the stack the cores used once their blocks are done (scrub_stack,
 * aegis_export.h): the state is key-equivalent (an Update can be undone
 * given its input), so no spilled vector may stay.
 */

#define AEGIS_MAXV 4 /* D = 4 with VW = 1 */

/* Update(M) for the 256 family: V'[0] = R(V[5], V[0]^M), V'[j] = R(V[j-1], V[j]). */
static inline __attribute__((always_inline)) TARGET void FN(upd256)(VEC *V, const VEC *m, const int NV)
{
    VEC t[AEGIS_MAXV];
    int i, j;
    for (i = 0; i < NV; i++) t[i] = V[5 * NV + i];
    for (j = 5; j >= 1; j--)
        for (i = 0; i < NV; i++) V[j * NV + i] = VENC(V[(j - 1) * NV + i], V[j * NV + i]);
    for (i = 0; i < NV; i++) V[i] = VENC(t[i], VXOR(V[i], m[i]));
}

/* Update(M0, M1) for the 128 family: M0 into V[0], M1 into V[4]. */
static inline __attribute__((always_inline)) TARGET void FN(upd128)(VEC *V, const VEC *m0, const VEC *m1, const int NV)
{
    VEC t[AEGIS_MAXV];
    int i, j;
    for (i = 0; i < NV; i++) t[i] = V[7 * NV + i];
    for (j = 7; j >= 5; j--)
        for (i = 0; i < NV; i++) V[j * NV + i] = VENC(V[(j - 1) * NV + i], V[j * NV + i]);
    for (i = 0; i < NV; i++) V[4 * NV + i] = VENC(V[3 * NV + i], VXOR(V[4 * NV + i], m1[i]));
    for (j = 3; j >= 1; j--)
        for (i = 0; i < NV; i++) V[j * NV + i] = VENC(V[(j - 1) * NV + i], V[j * NV + i]);
    for (i = 0; i < NV; i++) V[i] = VENC(t[i], VXOR(V[i], m0[i]));
}

/* Absorbs one rate block (F = 128: 32*D bytes, F = 256: 16*D bytes). */
static inline __attribute__((always_inline)) TARGET void FN(absorb)(VEC *V, const uint8_t *src, const int F, const int NV)
{
    VEC m[2 * AEGIS_MAXV];
    int i;
    for (i = 0; i < (F == 128 ? 2 : 1) * NV; i++) m[i] = VLOAD(src + i * VW * 16);
    if (F == 128) FN(upd128)(V, m, m + NV, NV);
    else FN(upd256)(V, m, NV);
}

/* Keystream for the next rate block into z (2*NV vectors for F = 128, NV for 256). */
static inline __attribute__((always_inline)) TARGET void FN(keystream)(const VEC *V, VEC *z, const int F, const int NV)
{
    int i;
    if (F == 128) {
        for (i = 0; i < NV; i++) {
            z[i] = VXOR(VXOR(V[6 * NV + i], V[1 * NV + i]), VAND(V[2 * NV + i], V[3 * NV + i]));
            z[NV + i] = VXOR(VXOR(V[2 * NV + i], V[5 * NV + i]), VAND(V[6 * NV + i], V[7 * NV + i]));
        }
    } else {
        for (i = 0; i < NV; i++)
            z[i] = VXOR(VXOR(VXOR(V[1 * NV + i], V[4 * NV + i]), V[5 * NV + i]), VAND(V[2 * NV + i], V[3 * NV + i]));
    }
}

static inline __attribute__((always_inline)) TARGET void FN(init)(VEC *V, const uint8_t *k, const uint8_t *n, const int F,
                                                                 const int D)
{
    static const uint8_t c0_[16] = {0x00, 0x01, 0x01, 0x02, 0x03, 0x05, 0x08, 0x0d,
                                    0x15, 0x22, 0x37, 0x59, 0x90, 0xe9, 0x79, 0x62};
    static const uint8_t c1_[16] = {0xdb, 0x3d, 0x18, 0x55, 0x6d, 0xc2, 0x2f, 0xf1,
                                    0x20, 0x11, 0x31, 0x42, 0x73, 0xb5, 0x28, 0xdd};
    const int NV = D / VW;
    const VEC c0 = VBCAST(c0_);
    const VEC c1 = VBCAST(c1_);
    VEC ctx[AEGIS_MAXV];
    int i, r;

    for (i = 0; i < NV; i++) ctx[i] = VCTX(i * VW, D);
    if (F == 256) {
        const VEC k0 = VBCAST(k), k1 = VBCAST(k + 16);
        const VEC n0 = VBCAST(n), n1 = VBCAST(n + 16);
        VEC feed[4][AEGIS_MAXV];
        for (i = 0; i < NV; i++) {
            V[0 * NV + i] = VXOR(k0, n0);
            V[1 * NV + i] = VXOR(k1, n1);
            V[2 * NV + i] = c1;
            V[3 * NV + i] = c0;
            V[4 * NV + i] = VXOR(k0, c0);
            V[5 * NV + i] = VXOR(k1, c1);
            feed[0][i] = k0;
            feed[1][i] = k1;
            feed[2][i] = VXOR(k0, n0);
            feed[3][i] = VXOR(k1, n1);
        }
        for (r = 0; r < 16; r++) {
            for (i = 0; i < NV; i++) {
                V[3 * NV + i] = VXOR(V[3 * NV + i], ctx[i]);
                V[5 * NV + i] = VXOR(V[5 * NV + i], ctx[i]);
            }
            FN(upd256)(V, feed[r & 3], NV);
        }
    } else {
        const VEC kk = VBCAST(k), nn = VBCAST(n);
        VEC mk[AEGIS_MAXV], mn[AEGIS_MAXV];
        for (i = 0; i < NV; i++) {
            V[0 * NV + i] = VXOR(kk, nn);
            V[1 * NV + i] = c1;
            V[2 * NV + i] = c0;
            V[3 * NV + i] = c1;
            V[4 * NV + i] = VXOR(kk, nn);
            V[5 * NV + i] = VXOR(kk, c0);
            V[6 * NV + i] = VXOR(kk, c1);
            V[7 * NV + i] = VXOR(kk, c0);
            mk[i] = kk;
            mn[i] = nn;
        }
        for (r = 0; r < 10; r++) {
            for (i = 0; i < NV; i++) {
                V[3 * NV + i] = VXOR(V[3 * NV + i], ctx[i]);
                V[7 * NV + i] = VXOR(V[7 * NV + i], ctx[i]);
            }
            FN(upd128)(V, mn, mk, NV);
        }
    }
}

/* Finalize: tag (16 or 32 bytes) from the state, lanes combined with XOR. */
static inline __attribute__((always_inline)) TARGET void FN(finalize)(VEC *V, uint8_t *tag, size_t taglen, uint64_t adlen,
                                                                     uint64_t mlen, const int F, const int D)
{
    const int NV = D / VW;
    const int B = F == 128 ? 8 : 6;
    const VEC u = VLEN(adlen << 3, mlen << 3);
    VEC t[AEGIS_MAXV], lo, hi;
    int i, j, r;

    for (i = 0; i < NV; i++) t[i] = VXOR(V[(F == 128 ? 2 : 3) * NV + i], u);
    for (r = 0; r < 7; r++) {
        if (F == 128) FN(upd128)(V, t, t, NV);
        else FN(upd256)(V, t, NV);
    }
    /* The lanes of every vector are combined, so the NV vectors of a row are XORed first. */
    if (taglen == 16) {
        lo = V[0];
        for (i = 1; i < NV; i++) lo = VXOR(lo, V[i]);
        for (j = 1; j < (F == 128 ? 7 : 6); j++)
            for (i = 0; i < NV; i++) lo = VXOR(lo, V[j * NV + i]);
        VFOLD(tag, lo);
    } else {
        lo = V[0];
        for (i = 1; i < NV; i++) lo = VXOR(lo, V[i]);
        for (j = 1; j < B / 2; j++)
            for (i = 0; i < NV; i++) lo = VXOR(lo, V[j * NV + i]);
        hi = V[(B / 2) * NV];
        for (i = 1; i < NV; i++) hi = VXOR(hi, V[(B / 2) * NV + i]);
        for (j = B / 2 + 1; j < B; j++)
            for (i = 0; i < NV; i++) hi = VXOR(hi, V[j * NV + i]);
        VFOLD(tag, lo);
        VFOLD(tag + 16, hi);
    }
}

/* Update(M) with one rate block of message vectors x (x + NV is the second half for AEGIS-128). */
static inline __attribute__((always_inline)) TARGET void FN(update)(VEC *V, const VEC *x, const int F, const int NV)
{
    if (F == 128) FN(upd128)(V, x, x + NV, NV);
    else FN(upd256)(V, x, NV);
}

/* Init(key, nonce), then the associated data, its last block zero-padded (pad: scratch of one rate block). */
static inline __attribute__((always_inline)) TARGET void FN(start)(VEC *V, uint8_t *pad, const uint8_t *ad, size_t adlen,
                                                                  const uint8_t *npub, const uint8_t *k, const int F, const int D)
{
    const int NV = D / VW;
    const size_t RATE = (size_t)(F == 128 ? 2 : 1) * NV * VW * 16;
    size_t i;
    FN(init)(V, k, npub, F, D);
    for (i = 0; i + RATE <= adlen; i += RATE) FN(absorb)(V, ad + i, F, NV);
    if (adlen % RATE) {
        memset(pad, 0, RATE);
        memcpy(pad, ad + i, adlen % RATE);
        FN(absorb)(V, pad, F, NV);
    }
}

static inline __attribute__((always_inline)) TARGET void FN(encrypt)(uint8_t *c, uint8_t *tag, size_t taglen,
                                                                    const uint8_t *m, size_t mlen, const uint8_t *ad,
                                                                    size_t adlen, const uint8_t *npub, const uint8_t *k,
                                                                    const int F, const int D)
{
    const int NV = D / VW;
    const int NM = (F == 128 ? 2 : 1) * NV; /* vectors per rate block */
    const size_t RATE = (size_t)NM * VW * 16;
    VEC V[8 * AEGIS_MAXV];
    VEC z[2 * AEGIS_MAXV], x[2 * AEGIS_MAXV];
    uint8_t pad[2 * AEGIS_MAXV * 16];
    size_t i;
    int v;

    FN(start)(V, pad, ad, adlen, npub, k, F, D);
    for (i = 0; i + RATE <= mlen; i += RATE) {
        FN(keystream)(V, z, F, NV);
        for (v = 0; v < NM; v++) {
            x[v] = VLOAD(m + i + v * VW * 16);
            VSTORE(c + i + v * VW * 16, VXOR(x[v], z[v]));
        }
        FN(update)(V, x, F, NV);
    }
    if (mlen % RATE) {
        const size_t rest = mlen % RATE;
        memset(pad, 0, RATE);
        memcpy(pad, m + i, rest);
        FN(keystream)(V, z, F, NV);
        for (v = 0; v < NM; v++) x[v] = VLOAD(pad + v * VW * 16);
        FN(update)(V, x, F, NV);
        for (v = 0; v < NM; v++) VSTORE(pad + v * VW * 16, VXOR(x[v], z[v]));
        memcpy(c + i, pad, rest);
    }
    FN(finalize)(V, tag, taglen, adlen, mlen, F, D);
}

/* Returns 0 when the tag verifies; otherwise -1 and m is zeroed. */
static inline __attribute__((always_inline)) TARGET int FN(decrypt)(uint8_t *m, const uint8_t *c, size_t clen,
                                                                   const uint8_t *tag, size_t taglen, const uint8_t *ad,
                                                                   size_t adlen, const uint8_t *npub, const uint8_t *k,
                                                                   const int F, const int D)
{
    const int NV = D / VW;
    const int NM = (F == 128 ? 2 : 1) * NV;
    const size_t RATE = (size_t)NM * VW * 16;
    VEC V[8 * AEGIS_MAXV];
    VEC z[2 * AEGIS_MAXV], x[2 * AEGIS_MAXV];
    uint8_t pad[2 * AEGIS_MAXV * 16];
    uint8_t expected[32];
    uint8_t diff = 0;
    size_t i;
    int v;

    FN(start)(V, pad, ad, adlen, npub, k, F, D);
    for (i = 0; i + RATE <= clen; i += RATE) {
        FN(keystream)(V, z, F, NV);
        for (v = 0; v < NM; v++) {
            x[v] = VXOR(VLOAD(c + i + v * VW * 16), z[v]);
            VSTORE(m + i + v * VW * 16, x[v]);
        }
        FN(update)(V, x, F, NV);
    }
    if (clen % RATE) {
        const size_t rest = clen % RATE;
        memset(pad, 0, RATE);
        memcpy(pad, c + i, rest);
        FN(keystream)(V, z, F, NV);
        for (v = 0; v < NM; v++) VSTORE(pad + v * VW * 16, VXOR(VLOAD(pad + v * VW * 16), z[v]));
        memset(pad + rest, 0, RATE - rest); /* DecPartial: absorb ZeroPad(Truncate(out, |cn|)) */
        memcpy(m + i, pad, rest);
        for (v = 0; v < NM; v++) x[v] = VLOAD(pad + v * VW * 16);
        FN(update)(V, x, F, NV);
    }
    FN(finalize)(V, expected, taglen, adlen, clen, F, D);
    for (i = 0; i < taglen; i++) diff |= (uint8_t)(expected[i] ^ tag[i]);
    if (diff != 0) {
        secure_zero(m, clen);
        return -1;
    }
    return 0;
}

/*
 * One non-inline core per variant and direction, so each gets its own fully
 * unrolled code; its callers wipe the stack it used (scrub_stack).
 */
#define AEGIS_INSTANCE(NAME, F, D)                                                                                    \
    static __attribute__((noinline)) TARGET void FN(NAME##_enc)(uint8_t * c, uint8_t * tag, size_t taglen,          \
                                                                const uint8_t *m, size_t mlen, const uint8_t *ad,      \
                                                                size_t adlen, const uint8_t *npub, const uint8_t *k)   \
    {                                                                                                                 \
        FN(encrypt)(c, tag, taglen, m, mlen, ad, adlen, npub, k, F, D);                                               \
    }                                                                                                                 \
    static __attribute__((noinline)) TARGET int FN(NAME##_dec)(uint8_t * m, const uint8_t *c, size_t clen,           \
                                                               const uint8_t *tag, size_t taglen, const uint8_t *ad,   \
                                                               size_t adlen, const uint8_t *npub, const uint8_t *k)    \
    {                                                                                                                 \
        return FN(decrypt)(m, c, clen, tag, taglen, ad, adlen, npub, k, F, D);                                        \
    }
