/* Fisher-Yates (Durstenfeld), front to back, with batched draws:
 *     for t = 0 .. n-2:  j = t + d_t,  d_t uniform in [0, n - t);  swap a[t], a[j]
 * Every sequence (d_0, ..., d_{n-2}) has probability 1/n!, and distinct
 * sequences give distinct permutations (position t receives a distinct choice
 * among the n - t remaining elements at each step), so all n! orderings are
 * equally likely; tests/unit/test_shuffle.c checks this by exact enumeration.
 *
 * The built-in generators with 4-, 8- and 16-byte elements take the fused
 * path (shuffle_fused.c).  Everything else -- caller sources, other sizes,
 * the callback form -- draws in chunks from rfi_draw_steps
 * (src/uniform/draws.c) and applies them in a second loop per element
 * width, prefetching the element a few steps ahead: beyond the caches
 * Fisher-Yates is bound by the latency of the random a[j] access, and
 * knowing j early overlaps those misses.  Both make the same draws from the
 * same words. */
#include "uniform/bounded_internal.h"
#include "shuffle_internal.h"

#include <string.h>

#define CHUNK 256                     /* draws per chunk: 2 KiB on the stack */
#define PREFETCH_AHEAD 8              /* steps between prefetch and swap */
/* Below this array size the data sits in L2 and prefetching only costs. */
#define PREFETCH_MIN_BYTES (UINT64_C(1) << 20)

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p, 1, 0)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* Draw up to min(CHUNK, limit - t) steps starting at step t; returns how many
 * of the drawn steps to apply (the batch may draw a few more: they are the
 * same draws the full shuffle makes, so a partial shuffle stays the head of
 * the full one). */
static size_t next_chunk(rf_rng *g, size_t n, size_t t, size_t limit, uint64_t *d)
{
    size_t want = limit - t < CHUNK ? limit - t : CHUNK;
    size_t m = rfi_draw_steps(g, n, t, want, d);
    return m < limit - t ? m : limit - t;
}

/* One chunk-driven loop per element width W (4, 8, 16): elements are moved
 * with fixed-size memcpy, which compiles to plain (unaligned) loads and stores
 * and is valid for any element type.  `limit` is the number of steps to apply
 * (n - 1 for a full shuffle, k for a partial one). */
#define SHUFFLE_WIDTH(W)                                                           \
    static void shuffle_w##W(rf_rng *g, unsigned char *a, size_t n, size_t limit)  \
    {                                                                              \
        uint64_t d[CHUNK + RFI_BATCH_STEPS_MAX];                                   \
        const int far = n * W > PREFETCH_MIN_BYTES;                                \
        for (size_t t = 0; t < limit;) {                                           \
            const size_t m = next_chunk(g, n, t, limit, d);                        \
            for (size_t i = 0; i < m; i++) {                                       \
                if (far && i + PREFETCH_AHEAD < m)                                 \
                    PREFETCH(a + (t + i + PREFETCH_AHEAD + d[i + PREFETCH_AHEAD]) * W); \
                unsigned char *x = a + (t + i) * W, *y = a + (t + i + d[i]) * W;  \
                unsigned char tmp[W];                                              \
                memcpy(tmp, x, W);                                                 \
                memcpy(x, y, W);                                                   \
                memcpy(y, tmp, W);                                                 \
            }                                                                      \
            t += m;                                                                \
        }                                                                          \
    }
SHUFFLE_WIDTH(4)
SHUFFLE_WIDTH(8)
SHUFFLE_WIDTH(16)

/* Any other size: swap through a small buffer, 64 bytes at a time. */
void rfi_swap_bytes(unsigned char *x, unsigned char *y, size_t size)
{
    unsigned char tmp[64];
    while (size > 0) {
        size_t c = size < sizeof tmp ? size : sizeof tmp;
        memcpy(tmp, x, c);
        memcpy(x, y, c);
        memcpy(y, tmp, c);
        x += c;
        y += c;
        size -= c;
    }
}

static void shuffle_any(rf_rng *g, unsigned char *a, size_t n, size_t size, size_t limit)
{
    uint64_t d[CHUNK + RFI_BATCH_STEPS_MAX];
    for (size_t t = 0; t < limit;) {
        const size_t m = next_chunk(g, n, t, limit, d);
        for (size_t i = 0; i < m; i++)
            if (d[i] != 0)
                rfi_swap_bytes(a + (t + i) * size, a + (t + i + d[i]) * size, size);
        t += m;
    }
}

static size_t full_steps(size_t n)
{
    return n < 2 ? 0 : n - 1;
}

static void shuffle_limited(rf_rng *g, void *base, size_t n, size_t size, size_t limit)
{
    if (size == 0 || limit == 0)
        return;
    if (rfi_shuffle_fused(g, base, n, size, limit))
        return;
    switch (size) {
    case 4:
        shuffle_w4(g, base, n, limit);
        break;
    case 8:
        shuffle_w8(g, base, n, limit);
        break;
    case 16:
        shuffle_w16(g, base, n, limit);
        break;
    default:
        shuffle_any(g, base, n, size, limit);
    }
}

void rf_shuffle(rf_rng *g, void *base, size_t n, size_t size)
{
    shuffle_limited(g, base, n, size, full_steps(n));
}

void rf_shuffle_u32(rf_rng *g, uint32_t *a, size_t n)
{
    shuffle_limited(g, a, n, sizeof *a, full_steps(n));
}

void rf_shuffle_u64(rf_rng *g, uint64_t *a, size_t n)
{
    shuffle_limited(g, a, n, sizeof *a, full_steps(n));
}

void rf_shuffle_ptr(rf_rng *g, void **a, size_t n)
{
    shuffle_limited(g, a, n, sizeof *a, full_steps(n));
}

void rf_shuffle_partial(rf_rng *g, void *base, size_t n, size_t k, size_t size)
{
    /* Step n-1 would draw from a bound of 1: the last position is forced. */
    size_t limit = k < full_steps(n) ? k : full_steps(n);
    shuffle_limited(g, base, n, size, limit);
}

void rf_shuffle_swap(rf_rng *g, size_t n, rf_swap_fn swap, void *ctx)
{
    uint64_t d[CHUNK + RFI_BATCH_STEPS_MAX];
    const size_t limit = full_steps(n);
    for (size_t t = 0; t < limit;) {
        const size_t m = next_chunk(g, n, t, limit, d);
        for (size_t i = 0; i < m; i++)
            if (d[i] != 0)
                swap(ctx, t + i, t + i + (size_t)d[i]);
        t += m;
    }
}
