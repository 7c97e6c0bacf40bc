/* Unbiased bounded integers and uniform doubles (the "uniform" layer). */
#include "bounded_internal.h"

#include <assert.h>

static uint64_t rng_next64(void *g)
{
    return rf_rng_next64(g);
}

/* 32-bit words are the high halves of 64-bit words: the high bits are the
 * stronger ones for every generator here, and the choice is part of the
 * stream contract. */
static uint32_t rng_next32(void *g)
{
    return (uint32_t)(rf_rng_next64(g) >> 32);
}

static int scripted(const rf_rng *g)
{
    return g->kind == RF_RNG_SOURCE && g->u.source.below != NULL;
}

uint32_t rf_below32(rf_rng *g, uint32_t n)
{
    assert(n >= 1);
    if (scripted(g))
        return (uint32_t)g->u.source.below(g->u.source.ctx, n);
    uint32_t r;
    rfi_lemire32_batch(rng_next32, g, &n, 1, &r);
    return r;
}

uint64_t rf_range(rf_rng *g, uint64_t lo, uint64_t hi)
{
    assert(lo <= hi);
    if (lo == 0 && hi == UINT64_MAX)
        return rf_rng_next64(g); /* the span 2^64 does not fit in a word */
    return lo + rf_below(g, hi - lo + 1);
}

double rf_double(rf_rng *g)
{
    return (double)(rf_rng_next64(g) >> 11) * 0x1.0p-53;
}

/* Whether b[0]*...*b[k-1] <= 2^64 (all b >= 1). */
static int product_fits(const uint64_t *b, size_t k)
{
    uint64_t p = 1; /* the product so far, below 2^64 */
    for (size_t i = 0; i < k; i++) {
        uint64_t lo, hi = rfi_mulhi64(p, b[i], &lo);
        if (hi == 0) {
            p = lo;
            continue;
        }
        /* At least 2^64: fits only as exactly 2^64 times factors of 1. */
        if (hi != 1 || lo != 0)
            return 0;
        for (size_t j = i + 1; j < k; j++)
            if (b[j] != 1)
                return 0;
        return 1;
    }
    return 1;
}

rf_status rf_below_batch(rf_rng *g, const uint64_t *bounds, size_t k, uint64_t *out)
{
    if (k < 1 || k > RF_BATCH_MAX)
        return RF_ERANGE;
    for (size_t i = 0; i < k; i++)
        if (bounds[i] < 1)
            return RF_EINVAL;
    if (!product_fits(bounds, k))
        return RF_ERANGE;
    if (scripted(g)) {
        for (size_t i = 0; i < k; i++)
            out[i] = g->u.source.below(g->u.source.ctx, bounds[i]);
        return RF_OK;
    }
    rfi_lemire64_batch(rng_next64, g, bounds, k, out);
    return RF_OK;
}
