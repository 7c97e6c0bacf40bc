/* Internal: each built-in generator's word function over a local copy of its
 * state, for the hot loops (src/uniform/draws.c,
 * src/permute/shuffle_fused.c).  Stores into the caller's array cannot alias
 * a local, so the state stays in registers. */
#ifndef RF_WORD_LOCAL_H
#define RF_WORD_LOCAL_H

#include "riffle.h"

struct xo_local {
    uint64_t s0, s1, s2, s3;
};

static inline uint64_t xo_next(void *ctx)
{
    struct xo_local *x = ctx;
    const uint64_t result = rf_rotl64_(x->s0 + x->s3, 23) + x->s0;
    const uint64_t t = x->s1 << 17;
    x->s2 ^= x->s0;
    x->s3 ^= x->s1;
    x->s1 ^= x->s2;
    x->s0 ^= x->s3;
    x->s2 ^= t;
    x->s3 = rf_rotl64_(x->s3, 45);
    return result;
}

static inline uint64_t pcg_next(void *ctx)
{
    return rf_pcg64_next64(ctx);
}

/* ChaCha20: only the read position is local; the buffer is refilled in place. */
struct cc_local {
    rf_chacha *c;
    size_t avail;
};

static inline uint64_t cc_next(void *ctx)
{
    struct cc_local *l = ctx;
    if (l->avail < 8) {
        l->c->avail = l->avail;
        rf_chacha_refill(l->c);
        l->avail = l->c->avail;
    }
    uint64_t v = rf_load_le64_(l->c->buf + (RF_CHACHA_BUFFER - l->avail));
    l->avail -= 8;
    return v;
}

#endif
