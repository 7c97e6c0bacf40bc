/* The Fisher-Yates draw schedule, specialised per generator so that each hot
 * loop keeps the generator state in locals: stores into the caller's array
 * cannot alias it, and the compiler keeps it in registers (state reached
 * through a pointer could alias the array and force a reload per step). */
#include "bounded_internal.h"
#include "rng/word_local.h"

/* One loop body for every generator: NEXT is an inline word function of a
 * local context; the batch function inlines it.  The schedule is walked in its
 * phases -- the batch length k changes only where b = n - t crosses 2^30, 2^19,
 * 2^14, 2^11 and 2^9 (rfi_batch_len) -- so that k is a compile-time constant in
 * each phase and the digit loop unrolls into registers; the last batch (b <= 6,
 * k = b - 1) is the only one with a variable k.  Same batches, same words, same
 * draws as rfi_batch_len describes (tests/unit/test_shuffle.c compares them). */
#define DRAW_PHASE(NEXT, CTX, K, B_MIN, U)                                        \
    while (m < want && b > (B_MIN) && b > (K)) {                                  \
        rfi_lemire64_falling(NEXT, CTX, b, K, U, d + m);                          \
        m += (K);                                                                 \
        b -= (K);                                                                 \
    }

#define DRAW_STEPS_LOOP(NEXT, CTX)                                                \
    size_t m = 0;                                                                 \
    uint64_t b = n - t;                                                           \
    while (m < want && b > (UINT64_C(1) << 30)) {                                 \
        rfi_lemire64_falling(NEXT, CTX, b, 1, b, d + m);                          \
        m++;                                                                      \
        b--;                                                                      \
    }                                                                             \
    DRAW_PHASE(NEXT, CTX, 2, UINT64_C(1) << 19, UINT64_C(1) << 60)                \
    DRAW_PHASE(NEXT, CTX, 3, UINT64_C(1) << 14, UINT64_C(1) << 57)                \
    DRAW_PHASE(NEXT, CTX, 4, UINT64_C(1) << 11, UINT64_C(1) << 56)                \
    DRAW_PHASE(NEXT, CTX, 5, UINT64_C(1) << 9, UINT64_C(1) << 55)                 \
    DRAW_PHASE(NEXT, CTX, 6, 0, UINT64_C(1) << 54)                                \
    if (m < want && b >= 2) {                                                     \
        rfi_lemire64_falling(NEXT, CTX, b, (size_t)(b - 1), UINT64_C(1) << 54,    \
                             d + m);                                              \
        m += (size_t)(b - 1);                                                     \
    }

static size_t steps_xoshiro(rf_xoshiro *g, uint64_t n, uint64_t t, size_t want, uint64_t *d)
{
    struct xo_local x = {g->s[0], g->s[1], g->s[2], g->s[3]};
    DRAW_STEPS_LOOP(xo_next, &x)
    g->s[0] = x.s0;
    g->s[1] = x.s1;
    g->s[2] = x.s2;
    g->s[3] = x.s3;
    return m;
}

static size_t steps_pcg(rf_pcg64 *g, uint64_t n, uint64_t t, size_t want, uint64_t *d)
{
    rf_pcg64 p = *g;
    DRAW_STEPS_LOOP(pcg_next, &p)
    *g = p;
    return m;
}

static size_t steps_chacha(rf_chacha *c, uint64_t n, uint64_t t, size_t want, uint64_t *d)
{
    struct cc_local l = {c, c->avail};
    DRAW_STEPS_LOOP(cc_next, &l)
    c->avail = l.avail;
    return m;
}

static uint64_t src_next(void *ctx)
{
    const rf_source *s = ctx;
    return s->next64(s->ctx);
}

static size_t steps_source(const rf_source *s, uint64_t n, uint64_t t, size_t want,
                           uint64_t *d)
{
    if (s->below == NULL) {
        DRAW_STEPS_LOOP(src_next, (void *)(uintptr_t)s)
        return m;
    }
    /* Scripted draws: one below() per step, in step order, batches kept only
     * so that the count returned matches the real generators'. */
    size_t m = 0;
    while (m < want && t + 1 < n) {
        uint64_t U;
        const size_t k = rfi_batch_len(n - t, &U);
        for (size_t i = 0; i < k; i++)
            d[m + i] = s->below(s->ctx, n - t - i);
        m += k;
        t += k;
    }
    return m;
}

size_t rfi_draw_steps(rf_rng *g, uint64_t n, uint64_t t, size_t want, uint64_t *d)
{
    switch (g->kind) {
    case RF_RNG_XOSHIRO256PP:
        return steps_xoshiro(&g->u.xoshiro, n, t, want, d);
    case RF_RNG_PCG64:
        return steps_pcg(&g->u.pcg, n, t, want, d);
    case RF_RNG_SOURCE:
        return steps_source(&g->u.source, n, t, want, d);
    case RF_RNG_CHACHA20:
    default:
        return steps_chacha(&g->u.chacha, n, t, want, d);
    }
}
