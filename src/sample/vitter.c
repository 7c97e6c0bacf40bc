/* rf_seqsample: sequential random sampling, J. S. Vitter, "An efficient
 * algorithm for sequential random sampling", ACM TOMS 13(1):58-67, 1987.
 *
 * To select n of N records in order, it suffices to draw the skip S (records
 * passed over before the next selection), whose law is
 *     P(S > s) = prod_{i=0..s} (N - n - i) / (N - i),
 * then recurse on N - S - 1 records and n - 1 selections.  Algorithm D draws S
 * by rejection from a continuous envelope in O(1) expected time (steps D2-D4
 * below, in the paper's notation: n selections left, N records left, V' the
 * reusable variate distributed as U^(1/n)); Algorithm A inverts the law above
 * by a product loop in O(S) time, which is cheaper while n >= N / 13 (the
 * paper's alpha).  Both are real valued; the last selection is the exact
 * rf_below(N). */
#include "riffle_perm.h"

#include <math.h>

/* Vitter's 1/alpha: Algorithm A is used while 13 n >= N (sec. 5). */
#define ALPHA_INV 13

rf_status rf_seqsample_init(rf_seqsample *s, uint64_t n, uint64_t k)
{
    if (k > n)
        return RF_EINVAL;
    s->pos = 0;
    s->left = n;
    s->want = k;
    s->vprime = 0.0;
    s->have_vprime = 0;
    return RF_OK;
}

uint64_t rf_seqsample_remaining(const rf_seqsample *s)
{
    return s->want;
}

/* Uniform in (0, 1], so that its logarithm is finite. */
static double unit_open0(rf_rng *g)
{
    return 1.0 - rf_double(g);
}

/* Algorithm A: the least S with V >= P(skip > S). */
static uint64_t skip_a(rf_rng *g, uint64_t n, uint64_t N)
{
    const double v = rf_double(g);
    double top = (double)(N - n), nreal = (double)N;
    double quot = top / nreal;
    uint64_t s = 0;
    while (quot > v) {
        s++;
        top -= 1.0;
        nreal -= 1.0;
        quot = quot * top / nreal;
    }
    return s;
}

/* Step D4's exact ratio y2 = prod (N-1-i)/(bottom-i) over the terms that
 * differ between f(S) and the envelope. */
static double d4_ratio(uint64_t n, uint64_t N, uint64_t s, double nreal, double Nreal)
{
    double y2 = 1.0, top = Nreal - 1.0, bottom;
    uint64_t limit;
    if (n - 1 > s) {
        bottom = Nreal - nreal;
        limit = N - s;
    } else {
        bottom = Nreal - (double)s - 1.0;
        limit = N - n + 1;
    }
    for (uint64_t t = N - 1; t >= limit; t--) {
        y2 = y2 * top / bottom;
        top -= 1.0;
        bottom -= 1.0;
    }
    return y2;
}

/* Algorithm D, one skip, for n >= 2 selections among N records. */
static uint64_t skip_d(rf_seqsample *st, rf_rng *g, uint64_t n, uint64_t N)
{
    const double nreal = (double)n, Nreal = (double)N;
    const double ninv = 1.0 / nreal, nmin1inv = 1.0 / (nreal - 1.0);
    const uint64_t qu1 = N - n + 1;
    const double qu1real = Nreal - nreal + 1.0;
    double vprime = st->have_vprime ? st->vprime : exp(log(unit_open0(g)) * ninv);
    for (;;) {
        double x;
        uint64_t s;
        for (;;) { /* D2: S = floor(N (1 - V')), retried until S <= N - n */
            x = Nreal * (1.0 - vprime);
            if (x < qu1real) {
                s = (uint64_t)x;
                if (s < qu1)
                    break;
            }
            vprime = exp(log(unit_open0(g)) * ninv);
        }
        /* D3: accept quickly if U <= h(S) / (c g(S)); the accepted ratio is a
         * fresh U^(1/(n-1)) for the next call (the paper's reuse of V'). */
        const double u = unit_open0(g);
        const double y1 = exp(log(u * Nreal / qu1real) * nmin1inv);
        vprime = y1 * (1.0 - x / Nreal) * (qu1real / (qu1real - (double)s));
        if (vprime <= 1.0) {
            st->vprime = vprime;
            st->have_vprime = 1;
            return s;
        }
        /* D4: the exact test U <= f(S) / (c g(S)). */
        const double y2 = d4_ratio(n, N, s, nreal, Nreal);
        if (Nreal / (Nreal - x) >= y1 * exp(log(y2) * nmin1inv)) {
            st->vprime = exp(log(unit_open0(g)) * nmin1inv);
            st->have_vprime = 1;
            return s;
        }
        vprime = exp(log(unit_open0(g)) * ninv);
    }
}

rf_status rf_seqsample_next(rf_seqsample *s, rf_rng *g, uint64_t *index)
{
    if (s->want == 0)
        return RF_EEMPTY;
    uint64_t skip;
    if (s->want == 1) {
        skip = rf_below(g, s->left);
        s->have_vprime = 0;
    } else if (s->left / ALPHA_INV > s->want) {
        skip = skip_d(s, g, s->want, s->left);
    } else {
        s->have_vprime = 0;
        skip = skip_a(g, s->want, s->left);
    }
    *index = s->pos + skip;
    s->pos = *index + 1;
    s->left -= skip + 1;
    s->want--;
    return RF_OK;
}
