/*
 * audit_stats.c -- the probability laws and tail functions of `riffle audit`.
 *
 * Incomplete gamma: series for x < a + 1, Lentz's continued fraction otherwise
 * (Abramowitz & Stegun 6.5.29 and 6.5.31; the split as in Press et al.,
 * Numerical Recipes 3rd ed., section 6.2).  The chi-square and Poisson tails
 * follow from it:  Pr[chi2_df >= x] = Q(df/2, x/2),  Pr[Pois(l) >= k] = P(k, l).
 * Reference values for the tests were computed independently with mpmath.
 *
 * The laws of a uniform permutation cost O(n) for large n (one trial of a deck
 * of 10^6 must not wait on them): the rencontres and succession laws exactly,
 * the rising-sequence law exactly up to AUDIT_RISING_EXACT_MAX_N and by an
 * Edgeworth expansion beyond.
 */
#include <math.h>
#include <stdlib.h>

#include "audit.h"

#define GAMMA_EPS 1e-15
#define GAMMA_TINY 1e-300
#define INV_SQRT_2PI 0.39894228040143267794 /* 1/sqrt(2 pi) */
#define INV_SQRT_2 0.70710678118654752440

double audit_lgamma(double x)
{
    return lgamma(x);
}

/* exp(-x + a log x - lgamma(a)): the common prefactor of both expansions. */
static double gamma_prefactor(double a, double x)
{
    return exp(-x + a * log(x) - audit_lgamma(a));
}

static double gamma_p_series(double a, double x)
{
    double ap = a, del = 1.0 / a, sum = del;
    /* Terms shrink once ap > x; about a + 10 sqrt(a) + 100 terms suffice. */
    long limit = (long)(x + 20.0 * sqrt(a + 1.0)) + 1000;
    for (long i = 0; i < limit; i++) {
        ap += 1.0;
        del *= x / ap;
        sum += del;
        if (fabs(del) < fabs(sum) * GAMMA_EPS)
            break;
    }
    return sum * gamma_prefactor(a, x);
}

static double gamma_q_fraction(double a, double x)
{
    double b = x + 1.0 - a, c = 1.0 / GAMMA_TINY, d = 1.0 / b, h = d;
    long limit = (long)(20.0 * sqrt(a + 1.0)) + 100000;
    for (long i = 1; i < limit; i++) {
        const double an = -(double)i * ((double)i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < GAMMA_TINY)
            d = GAMMA_TINY;
        c = b + an / c;
        if (fabs(c) < GAMMA_TINY)
            c = GAMMA_TINY;
        d = 1.0 / d;
        const double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < GAMMA_EPS)
            break;
    }
    return h * gamma_prefactor(a, x);
}

double audit_gamma_p(double a, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (isinf(x))
        return 1.0;
    if (x < a + 1.0)
        return gamma_p_series(a, x);
    return 1.0 - gamma_q_fraction(a, x);
}

double audit_gamma_q(double a, double x)
{
    if (x <= 0.0)
        return 1.0;
    if (isinf(x))
        return 0.0;
    if (x < a + 1.0)
        return 1.0 - gamma_p_series(a, x);
    return gamma_q_fraction(a, x);
}

double audit_chi2_sf(double x, double df)
{
    if (!(df > 0.0))
        return 1.0;
    return audit_gamma_q(df / 2.0, x / 2.0);
}

double audit_poisson_sf(uint64_t k, double lambda)
{
    if (k == 0)
        return 1.0;
    if (lambda <= 0.0)
        return 0.0;
    return audit_gamma_p((double)k, lambda);
}

/* Rencontres law: Pr[k fixed points] = (1/k!) sum_{j=0}^{n-k} (-1)^j / j!
 * (Riordan, An Introduction to Combinatorial Analysis, 1958, ch. 3).  The
 * inner sums are the partial sums of one series, so they are kept in a table:
 * O(n), and the same additions in the same order as summing each one afresh,
 * hence the same doubles. */
void audit_law_fixed_points(size_t n, double *p)
{
    /* p[n - m] holds the partial sum up to j = m until it is scaled below. */
    double sum = 0.0, term = 1.0;
    for (size_t j = 0; j <= n; j++) {
        if (j > 0)
            term /= -(double)j;
        sum += term;
        p[n - j] = sum;
    }
    double inv_kfact = 1.0;
    for (size_t k = 0; k <= n; k++) {
        if (k > 0)
            inv_kfact /= (double)k;
        p[k] *= inv_kfact;
    }
}

/* The number of rising sequences of a permutation is the number of ascending
 * runs of its inverse (Bayer & Diaconis, Ann. Appl. Probab. 1992), so it follows
 * the Eulerian numbers: A(m,k) = k A(m-1,k) + (m-k+1) A(m-1,k-1), here divided
 * by m! at every step to stay in range.  O(n^2): used up to
 * AUDIT_RISING_EXACT_MAX_N. */
void audit_law_rising_exact(size_t n, double *p)
{
    for (size_t k = 0; k <= n; k++)
        p[k] = 0.0;
    p[1] = 1.0;
    for (size_t m = 2; m <= n; m++) {
        for (size_t k = m; k >= 1; k--) {
            const double stay = (double)k * p[k];
            const double grow = (double)(m - k + 1) * p[k - 1];
            p[k] = (stay + grow) / (double)m;
        }
    }
}

/* Pr[S_n >= x] for S_n the sum of n independent uniforms on [0, 1] (the
 * Irwin-Hall law), by its Edgeworth expansion to order 1/n^2.  The uniform's
 * cumulants are k2 = 1/12, k4 = -1/120, k6 = 1/252 and its odd ones above the
 * first vanish, so with z = (x - n/2) / sqrt(n/12) and the standardised
 * cumulants l4 = k4 / (n k2^2) = -6/(5n), l6 = k6 / (n^2 k2^3) = 48/(7n^2):
 *   Pr[S_n >= x] = Q(z) + phi(z) (l4/24 He3(z) + l6/720 He5(z)
 *                                 + l4^2/1152 He7(z)) + O(n^-3)
 * (He_k the probabilists' Hermite polynomials; the expansion as in P. Hall,
 * The Bootstrap and Edgeworth Expansion, 1992, section 2.3 -- the terms of
 * order n^-1/2 and n^-3/2 carry odd cumulants and vanish here).  Q through
 * erfc keeps the relative precision of the upper tail; callers use x >= n/2
 * less a little, the lower tail following by symmetry. */
static double irwin_hall_sf(size_t n, double x)
{
    const double nd = (double)n;
    const double z = (x - nd / 2.0) / sqrt(nd / 12.0), z2 = z * z;
    const double l4 = -1.2 / nd, l6 = 48.0 / (7.0 * nd * nd);
    const double he3 = z * (z2 - 3.0);
    const double he5 = z * ((z2 - 10.0) * z2 + 15.0);
    const double he7 = z * (((z2 - 21.0) * z2 + 105.0) * z2 - 105.0);
    const double phi = INV_SQRT_2PI * exp(-0.5 * z2);
    const double tail = 0.5 * erfc(z * INV_SQRT_2);
    return tail + phi * (l4 / 24.0 * he3 + l6 / 720.0 * he5 + l4 * l4 / 1152.0 * he7);
}

/* Rising sequences of a uniform permutation minus one are the descents of
 * another uniform permutation, and Pr[k - 1 descents] = A(n,k)/n! is the
 * volume of the slab k - 1 <= x_1 + ... + x_n < k of the unit cube (R. P.
 * Stanley, "Eulerian partitions of a unit hypercube", in Higher Combinatorics,
 * 1977; S. Tanny, Duke Math. J. 40, 1973): Pr[k rising sequences] =
 * Pr[k - 1 <= S_n < k].  The law is symmetric (A(n,k) = A(n,n+1-k)), and the
 * cells below the middle are taken from their mirror images so that both
 * tails are differences of small upper-tail values, not of values near 1.
 * The expansion above gives each cell within 0.01 / n^3 of the exact law for
 * n >= 64 (tests/audit/test_audit_stats.c checks it over n = 64 .. 4096); a
 * cell whose expansion is negative, far in a tail where the true value is
 * below that error, is set to zero.  O(n). */
void audit_law_rising_edgeworth(size_t n, double *p)
{
    p[0] = 0.0;
    const size_t half = n / 2 + 1; /* the first k with 2k > n */
    double above = irwin_hall_sf(n, (double)n);
    for (size_t k = n; k >= half; k--) {
        const double at = irwin_hall_sf(n, (double)(k - 1));
        const double cell = at - above;
        p[k] = cell > 0.0 ? cell : 0.0;
        above = at;
    }
    for (size_t k = 1; k < half; k++)
        p[k] = p[n + 1 - k];
}

void audit_law_rising(size_t n, double *p)
{
    if (n <= AUDIT_RISING_EXACT_MAX_N)
        audit_law_rising_exact(n, p);
    else
        audit_law_rising_edgeworth(n, p);
}

/* Successions (positions with a[i+1] == a[i] + 1): the number of permutations
 * of n with k of them is C(n-1,k) S(n-k), where S(m) counts those with none,
 * S(m) = (m-1) S(m-1) + (m-2) S(m-2), S(1) = S(2) = 1 (OEIS A000255 shifted;
 * Kaplansky 1944).  With s(m) = S(m)/m!:  Pr[k] = s(n-k) (n-k) / (n k!). */
void audit_law_successions(size_t n, double *p)
{
    double *s = calloc(n + 2, sizeof *s);
    if (s == NULL) {
        for (size_t k = 0; k <= n; k++)
            p[k] = 0.0;
        return;
    }
    s[0] = 1.0;
    s[1] = 1.0;
    if (n >= 2)
        s[2] = 0.5;
    for (size_t m = 3; m <= n; m++)
        s[m] = ((double)(m - 1) / (double)m) * s[m - 1] +
               ((double)(m - 2) / ((double)m * (double)(m - 1))) * s[m - 2];
    double inv_kfact = 1.0;
    for (size_t k = 0; k <= n; k++) {
        if (k > 0)
            inv_kfact /= (double)k;
        p[k] = k < n ? s[n - k] * (double)(n - k) / (double)n * inv_kfact : 0.0;
    }
    free(s);
}

double audit_chi2_pooled(const uint64_t *obs, const double *prob, size_t cells,
                         uint64_t total, double min_expected, double *df)
{
    const double t = (double)total;
    /* An outcome of probability zero that occurred refutes the law outright. */
    for (size_t i = 0; i < cells; i++) {
        if (prob[i] <= 0.0 && obs[i] > 0) {
            *df = (double)(cells > 1 ? cells - 1 : 1);
            return INFINITY;
        }
    }
    double stat = 0.0, e = 0.0, o = 0.0, last_e = 0.0, last_o = 0.0;
    size_t pools = 0;
    for (size_t i = 0; i < cells; i++) {
        e += prob[i] * t;
        o += (double)obs[i];
        if (e >= min_expected) {
            if (pools > 0)
                stat += (last_o - last_e) * (last_o - last_e) / last_e;
            last_e = e;
            last_o = o;
            pools++;
            e = o = 0.0;
        }
    }
    /* Leftover cells join the last pool. */
    last_e += e;
    last_o += o;
    if (pools == 0 && last_e > 0.0)
        pools = 1;
    if (last_e > 0.0)
        stat += (last_o - last_e) * (last_o - last_e) / last_e;
    *df = pools > 1 ? (double)(pools - 1) : 0.0;
    return stat;
}

void audit_holm(const double *p, size_t m, double *adj)
{
    size_t *idx = malloc((m ? m : 1) * sizeof *idx);
    if (idx == NULL) { /* fall back to Bonferroni, which Holm never exceeds */
        for (size_t i = 0; i < m; i++)
            adj[i] = fmin(1.0, p[i] * (double)m);
        return;
    }
    /* Insertion sort by p-value: m is a handful of tests. */
    for (size_t i = 0; i < m; i++) {
        size_t j = i;
        for (; j > 0 && p[idx[j - 1]] > p[i]; j--)
            idx[j] = idx[j - 1];
        idx[j] = i;
    }
    double run = 0.0;
    for (size_t j = 0; j < m; j++) {
        const double v = fmin(1.0, (double)(m - j) * p[idx[j]]);
        run = fmax(run, v);
        adj[idx[j]] = run;
    }
    free(idx);
}
