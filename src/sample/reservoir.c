/* rf_reservoir: Li's Algorithm L (K.-H. Li, ACM TOMS 20(4):481-493, 1994).
 *
 * Give every item an independent uniform key and keep the k smallest: that
 * is a uniform k-subset.  W, the largest key inside the reservoir, is the
 * largest of k uniforms when it is full (W = U^(1/k)), and after each
 * replacement the largest of k uniforms below the old W (W <- W U^(1/k)).
 * The next item with a key below W comes after a geometric number of items,
 * floor(log U / log(1 - W)), and evicts the item holding the largest key --
 * by symmetry a uniformly chosen slot -- so the keys never need storing.
 * Only the kept items cost draws: three each (slot, new W, next skip). */
#include "riffle_perm.h"

#include <assert.h>
#include <math.h>

rf_status rf_reservoir_init(rf_reservoir *r, size_t k)
{
    if (k == 0)
        return RF_EINVAL;
    r->k = k;
    r->seen = 0;
    r->next = 0;
    r->w = 0.0;
    return RF_OK;
}

/* Uniform in (0, 1], so that its logarithm is finite. */
static double unit_open0(rf_rng *g)
{
    return 1.0 - rf_double(g);
}

/* Items to pass before the next one kept: geometric with success
 * probability W, saturated at UINT64_MAX. */
static uint64_t draw_skip(rf_rng *g, double w)
{
    const double s = floor(log(unit_open0(g)) / log1p(-w));
    if (!(s < 18446744073709551616.0)) /* also NaN */
        return UINT64_MAX;
    return s > 0.0 ? (uint64_t)s : 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* W <- W U^(1/k) (W = U^(1/k) at the start, from W = 1), then the next index
 * to keep after item i. */
static void advance(rf_reservoir *r, rf_rng *g, uint64_t i)
{
    r->w *= exp(log(unit_open0(g)) / (double)r->k);
    r->next = sat_add(i, sat_add(1, draw_skip(g, r->w)));
}

size_t rf_reservoir_offer(rf_reservoir *r, rf_rng *g)
{
    const uint64_t i = r->seen++;
    if (i < r->k) {
        if (i == r->k - 1) {
            r->w = 1.0;
            advance(r, g, i);
        }
        return (size_t)i;
    }
    if (i != r->next)
        return RF_RESERVOIR_DISCARD;
    const size_t slot = (size_t)rf_below(g, r->k);
    advance(r, g, i);
    return slot;
}

uint64_t rf_reservoir_skip(const rf_reservoir *r)
{
    if (r->seen < r->k)
        return 0;
    return r->next - r->seen;
}

void rf_reservoir_pass(rf_reservoir *r, uint64_t count)
{
    assert(count <= rf_reservoir_skip(r));
    r->seen += count;
}

uint64_t rf_reservoir_seen(const rf_reservoir *r)
{
    return r->seen;
}

size_t rf_reservoir_size(const rf_reservoir *r)
{
    return r->seen < r->k ? (size_t)r->seen : r->k;
}
