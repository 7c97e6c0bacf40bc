/* Fisher-Yates with the draws fused into the swaps, for the built-in
 * generators and 4-, 8- and 16-byte elements: the fast path of rf_shuffle and
 * rf_shuffle_partial.
 *
 * It makes exactly the draws of src/uniform/draws.c -- the same schedule, the
 * same words, the same proven batch draw (riffle_lemire.h) -- and applies each
 * batch's swaps as soon as the batch is accepted, instead of storing the draws
 * and applying them in a second loop.  The schedule is walked in its phases
 * (batch length k changes only where b = n - t crosses 2^30, 2^19, 2^14, 2^11
 * and 2^9), so k is a compile-time constant and the digits stay in
 * registers.  tests/unit/test_shuffle.c checks that this path gives exactly the
 * permutation of the generic path (which the exact enumeration proves uniform)
 * on the same words, at sizes that use every batch length. */
#include "uniform/bounded_internal.h"
#include "shuffle_internal.h"
#include "rng/word_local.h"

#include <string.h>

#define SWAP_W(W, a, i, j)                                                        \
    do {                                                                          \
        unsigned char *x_ = (a) + (i) * (W), *y_ = (a) + (j) * (W);              \
        unsigned char tmp_[W];                                                    \
        memcpy(tmp_, x_, W);                                                      \
        memcpy(x_, y_, W);                                                        \
        memcpy(y_, tmp_, W);                                                      \
    } while (0)

/* The k swaps of the batch drawn at step t; a partial shuffle applies only
 * those below `limit` (the batch itself is drawn whole, as in the full
 * shuffle, so the head stays the same). */
#define APPLY_BATCH(W, K, P)                                                      \
    if (!(P) || t + (K) <= limit) {                                                       \
        RF_UNROLL_                                                                \
        for (size_t i_ = 0; i_ < (K); i_++)                                       \
            SWAP_W(W, a, t + i_, t + i_ + (size_t)d[i_]);                         \
    } else {                                                                      \
        for (size_t i_ = 0; t + i_ < limit; i_++)                                 \
            SWAP_W(W, a, t + i_, t + i_ + (size_t)d[i_]);                         \
    }

#define PHASE(NEXT, CTX, W, K, B_MIN, U, P)                                       \
    while ((!(P) || t < limit) && b > (B_MIN) && b > (K)) {                       \
        uint64_t d[K];                                                            \
        rfi_lemire64_falling(NEXT, CTX, b, K, U, d);                              \
        APPLY_BATCH(W, K, P)                                                         \
        t += (K);                                                                 \
        b -= (K);                                                                 \
    }

/* b = n - t throughout; bounds and upper bounds as rfi_batch_len gives them.
 * P = 0 compiles the full shuffle (limit = n - 1, which b > 1 already
 * enforces), without the per-batch limit tests; P = 1 the partial one. */
#define FUSED_BODY(NEXT, CTX, W, P)                                               \
    size_t t = 0;                                                                 \
    uint64_t b = n;                                                               \
    while ((!(P) || t < limit) && b > (UINT64_C(1) << 30)) {                      \
        uint64_t d[1];                                                            \
        rfi_lemire64_falling(NEXT, CTX, b, 1, b, d);                              \
        SWAP_W(W, a, t, t + (size_t)d[0]);                                        \
        t++;                                                                      \
        b--;                                                                      \
    }                                                                             \
    PHASE(NEXT, CTX, W, 2, UINT64_C(1) << 19, UINT64_C(1) << 60, P)               \
    PHASE(NEXT, CTX, W, 3, UINT64_C(1) << 14, UINT64_C(1) << 57, P)               \
    PHASE(NEXT, CTX, W, 4, UINT64_C(1) << 11, UINT64_C(1) << 56, P)               \
    PHASE(NEXT, CTX, W, 5, UINT64_C(1) << 9, UINT64_C(1) << 55, P)                \
    PHASE(NEXT, CTX, W, 6, 0, UINT64_C(1) << 54, P)                               \
    if ((!(P) || t < limit) && b >= 2) { /* the last batch: k = b - 1 <= 5 */     \
        uint64_t d[RFI_BATCH_STEPS_MAX];                                          \
        const size_t k = (size_t)(b - 1);                                         \
        rfi_lemire64_falling(NEXT, CTX, b, k, UINT64_C(1) << 54, d);              \
        for (size_t i_ = 0; i_ < k && (!(P) || t + i_ < limit); i_++)             \
            SWAP_W(W, a, t + i_, t + i_ + (size_t)d[i_]);                         \
    }

#define DEFINE_FUSED(W, P, SUF)                                                           \
    static void fused_xoshiro_w##W##SUF(rf_xoshiro *g, unsigned char *a, size_t n,     \
                                   size_t limit)                                  \
    {                                                                             \
        struct xo_local x = {g->s[0], g->s[1], g->s[2], g->s[3]};                 \
        FUSED_BODY(xo_next, &x, W, P)                                                \
        g->s[0] = x.s0;                                                           \
        g->s[1] = x.s1;                                                           \
        g->s[2] = x.s2;                                                           \
        g->s[3] = x.s3;                                                           \
    }                                                                             \
    static void fused_pcg_w##W##SUF(rf_pcg64 *g, unsigned char *a, size_t n,           \
                               size_t limit)                                      \
    {                                                                             \
        rf_pcg64 p = *g;                                                          \
        FUSED_BODY(pcg_next, &p, W, P)                                               \
        *g = p;                                                                   \
    }                                                                             \
    static void fused_chacha_w##W##SUF(rf_chacha *g, unsigned char *a, size_t n,       \
                                  size_t limit)                                   \
    {                                                                             \
        struct cc_local l = {g, g->avail};                                        \
        FUSED_BODY(cc_next, &l, W, P)                                                \
        g->avail = l.avail;                                                       \
    }

DEFINE_FUSED(4, 0, _full)
DEFINE_FUSED(8, 0, _full)
DEFINE_FUSED(16, 0, _full)
DEFINE_FUSED(4, 1, _part)
DEFINE_FUSED(8, 1, _part)
DEFINE_FUSED(16, 1, _part)

#define DISPATCH_KIND(W, SUF)                                                          \
    switch (g->kind) {                                                            \
    case RF_RNG_XOSHIRO256PP:                                                     \
        fused_xoshiro_w##W##SUF(&g->u.xoshiro, a, n, limit);                           \
        return 1;                                                                 \
    case RF_RNG_PCG64:                                                            \
        fused_pcg_w##W##SUF(&g->u.pcg, a, n, limit);                                   \
        return 1;                                                                 \
    case RF_RNG_CHACHA20:                                                         \
        fused_chacha_w##W##SUF(&g->u.chacha, a, n, limit);                             \
        return 1;                                                                 \
    default:                                                                      \
        return 0;                                                                 \
    }

int rfi_shuffle_fused(rf_rng *g, unsigned char *a, size_t n, size_t size, size_t limit)
{
    const int full = limit + 1 >= n;
    switch (size * 2 + (size_t)full) {
    case 4 * 2:
        DISPATCH_KIND(4, _part)
    case 4 * 2 + 1:
        DISPATCH_KIND(4, _full)
    case 8 * 2:
        DISPATCH_KIND(8, _part)
    case 8 * 2 + 1:
        DISPATCH_KIND(8, _full)
    case 16 * 2:
        DISPATCH_KIND(16, _part)
    case 16 * 2 + 1:
        DISPATCH_KIND(16, _full)
    default:
        return 0;
    }
}
