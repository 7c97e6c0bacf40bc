/*
 * test_audit_stats.c -- the distribution functions of `riffle audit`
 * (audit/audit_stats.c) against independent reference values, and the exact laws
 * of a uniform permutation against brute-force enumeration.
 *
 * Reference values: computed with mpmath 1.3.0 at 40 digits,
 *   chi-square tail  = gammainc(df/2, x/2, inf, regularized=True),
 *   P(a, x)          = gammainc(a, 0, x, regularized=True),
 *   Poisson tail     = 1 - sum_{j<k} e^-l l^j / j!,
 * and the classic table points chi2(1) = 3.841459 and chi2(10) = 18.307038 at
 * the 5% level (NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

static void assert_rel(double got, double want, double tol)
{
    const double err = fabs(got - want) / fabs(want);
    if (!(err <= tol))
        fail_msg("got %.17g, want %.17g (relative error %.3g > %.3g)", got, want, err, tol);
}

static void chi2_reference(void **state)
{
    (void)state;
    static const struct { double x, df, p; } ref[] = {
        {3.841458820694124, 1, 0.050000000000000057},
        {18.307038053275146, 10, 0.050000000000000007},
        {0.5, 3, 0.91889141165467586},
        {100, 80, 0.064570368921132976},
        {10000, 9999, 0.4952983945386835},
        {41125.38, 40319, 0.0023765035505233324},
        {50, 10, 2.6690834249044956e-7},
        {1000, 10, 1.8702907209159497e-208},
        {0.001, 2, 0.99950012497916927},
        {7, 7, 0.42887985755305472},
        {400, 225, 6.0787438635587871e-12},
        {0.1, 0.5, 0.48344467916953437},
    };
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++)
        assert_rel(audit_chi2_sf(ref[i].x, ref[i].df), ref[i].p, 1e-8);
    assert_true(audit_chi2_sf(INFINITY, 5) == 0.0);
    assert_true(audit_chi2_sf(0.0, 5) == 1.0);
}

static void gamma_reference(void **state)
{
    (void)state;
    static const struct { double a, x, p; } ref[] = {
        {0.5, 0.2, 0.47291074313446193}, {3, 2.5, 0.45618688411667048},
        {10, 20, 0.99500458769169241},  {100, 90, 0.15822098918643017},
        {1, 1e-08, 9.9999999500000004e-9}, {50.5, 60, 0.90445936992974658},
    };
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) {
        assert_rel(audit_gamma_p(ref[i].a, ref[i].x), ref[i].p, 1e-9);
        assert_rel(audit_gamma_q(ref[i].a, ref[i].x), 1.0 - ref[i].p, 1e-7);
    }
}

static void poisson_reference(void **state)
{
    (void)state;
    static const struct { uint64_t k; double l, p; } ref[] = {
        {1, 0.5, 0.39346934028736658}, {5, 1.16, 0.006752691749844647},
        {100, 80, 0.017108313035133114}, {3, 1e-06, 1.6666654166671664e-19},
        {10, 10, 0.54207028552814779},
    };
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++)
        assert_rel(audit_poisson_sf(ref[i].k, ref[i].l), ref[i].p, 1e-9);
    assert_true(audit_poisson_sf(0, 3.0) == 1.0);
}

/* Every law, for n = 1..8, equals the count over all n! orderings. */
static void laws_match_enumeration(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 8; n++) {
        uint64_t fixed[9] = {0}, rising[9] = {0}, succ[9] = {0};
        uint32_t a[8], pos[8];
        const uint64_t nf = audit_factorial_u64(n);
        for (uint64_t r = 0; r < nf; r++) {
            audit_unrank(r, n, a);
            fixed[audit_fixed_points(a, n)]++;
            rising[audit_rising_sequences(a, n, pos)]++;
            succ[audit_successions(a, n)]++;
        }
        double pf[9], pr[9], ps[9];
        audit_law_fixed_points(n, pf);
        audit_law_rising(n, pr);
        audit_law_successions(n, ps);
        for (size_t k = 0; k <= n; k++) {
            assert_true(fabs(pf[k] * (double)nf - (double)fixed[k]) < 1e-9);
            assert_true(fabs(pr[k] * (double)nf - (double)rising[k]) < 1e-9);
            assert_true(fabs(ps[k] * (double)nf - (double)succ[k]) < 1e-9);
        }
    }
}

/* Eulerian numbers A(4, k) = 1, 11, 11, 1 (OEIS A008292). */
static void eulerian_row(void **state)
{
    (void)state;
    double p[5];
    audit_law_rising(4, p);
    const double want[5] = {0, 1, 11, 11, 1};
    for (int k = 0; k <= 4; k++)
        assert_true(fabs(p[k] * 24.0 - want[k]) < 1e-12);
}

/* ---- the laws at scale against the quadratic formulas they replace ----- */

/* The rencontres law summed afresh for every k: O(n^2), as audit_stats.c
 * computed it before the partial sums were shared. */
static void fixed_points_quadratic(size_t n, double *p)
{
    double inv_kfact = 1.0;
    for (size_t k = 0; k <= n; k++) {
        if (k > 0)
            inv_kfact /= (double)k;
        double sum = 0.0, term = 1.0;
        for (size_t j = 0; j + k <= n; j++) {
            if (j > 0)
                term /= -(double)j;
            sum += term;
        }
        p[k] = inv_kfact * sum;
    }
}

/* The O(n) rencontres law gives the very same doubles. */
static void fixed_points_law_is_unchanged(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 3, 7, 52, 170, 171, 1000, 5000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        double *fast = malloc((n + 1) * sizeof *fast);
        double *slow = malloc((n + 1) * sizeof *slow);
        assert_non_null(fast);
        assert_non_null(slow);
        audit_law_fixed_points(n, fast);
        fixed_points_quadratic(n, slow);
        for (size_t k = 0; k <= n; k++)
            if (fast[k] != slow[k])
                fail_msg("n = %zu, k = %zu: %.17g != %.17g", n, k, fast[k], slow[k]);
        free(fast);
        free(slow);
    }
}

/* Up to AUDIT_RISING_EXACT_MAX_N the law is the Eulerian recurrence itself. */
static void rising_law_exact_range(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 9, 64, 500, AUDIT_RISING_EXACT_MAX_N};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        assert_non_null(a);
        assert_non_null(b);
        audit_law_rising(n, a);
        audit_law_rising_exact(n, b);
        assert_memory_equal(a, b, (n + 1) * sizeof *a);
        free(a);
        free(b);
    }
}

/* The Edgeworth form agrees with the exact recurrence within the documented
 * 0.01 / n^3 per cell wherever both can be computed (n = 64 .. 4096; the
 * plain normal approximation with the same mean and variance misses by
 * 3.5e-4 at n = 64 down to 8e-7 at 4096, thousands of times the tolerance,
 * so this separates them), and its cells sum to one. */
static void rising_edgeworth_matches_exact(void **state)
{
    (void)state;
    for (size_t n = 64; n <= 4096; n = n * 3 / 2) {
        double *ex = malloc((n + 1) * sizeof *ex), *ew = malloc((n + 1) * sizeof *ew);
        assert_non_null(ex);
        assert_non_null(ew);
        audit_law_rising_exact(n, ex);
        audit_law_rising_edgeworth(n, ew);
        const double tol = 0.01 / ((double)n * (double)n * (double)n);
        double total = 0.0;
        for (size_t k = 0; k <= n; k++) {
            if (!(fabs(ew[k] - ex[k]) <= tol))
                fail_msg("n = %zu, k = %zu: Edgeworth %.17g, exact %.17g (|diff| > %.3g)",
                         n, k, ew[k], ex[k], tol);
            total += ew[k];
        }
        assert_true(fabs(total - 1.0) < 1e-12);
        free(ex);
        free(ew);
    }
}

/* At n = 10^6: a law (sum 1), centred on (n+1)/2 with variance (n+1)/12, the
 * mean and variance of the number of rising sequences, and symmetric. */
static void rising_law_large_n(void **state)
{
    (void)state;
    const size_t n = 1000000;
    double *p = malloc((n + 1) * sizeof *p);
    assert_non_null(p);
    audit_law_rising(n, p);
    double total = 0.0, mean = 0.0, second = 0.0;
    for (size_t k = 0; k <= n; k++) {
        assert_true(p[k] >= 0.0);
        total += p[k];
        mean += (double)k * p[k];
        second += (double)k * (double)k * p[k];
    }
    const double var = second - mean * mean;
    /* Symmetric like the Eulerian numbers, down to the far tails (which a
     * difference of two values near 1 would lose). */
    for (size_t k = 1; k <= n; k++)
        if (p[k] != p[n + 1 - k])
            fail_msg("Pr[%zu] = %.17g but Pr[%zu] = %.17g", k, p[k], n + 1 - k,
                     p[n + 1 - k]);
    assert_true(p[n / 2 - 5000] > 0.0 && p[n / 2 - 5000] < 1e-20);
    assert_true(fabs(total - 1.0) < 1e-12);
    assert_rel(mean, (double)(n + 1) / 2.0, 1e-12);
    assert_rel(var, (double)(n + 1) / 12.0, 1e-6);
    free(p);
}

/* ---- the per-trial statistics against their definitions -------------- */

/* Rising sequences by Bayer and Diaconis's definition: read the deck left to
 * right collecting 0, 1, 2, ... while they come in order; each new pass is a
 * new sequence.  O(n^2) in the worst case. */
static size_t rising_by_passes(const uint32_t *a, size_t n)
{
    size_t runs = 0;
    uint32_t next = 0;
    while (next < n) {
        runs++;
        for (size_t p = 0; p < n; p++)
            if (a[p] == next)
                next++;
    }
    return runs;
}

static size_t successions_by_search(const uint32_t *a, size_t n)
{
    size_t k = 0;
    for (size_t x = 0; x + 1 < n; x++)
        for (size_t p = 0; p + 1 < n; p++)
            if (a[p] == x && a[p + 1] == x + 1)
                k++;
    return k;
}

static uint64_t next_random(uint64_t *s)
{
    /* splitmix64 (Steele, Lea & Flood, OOPSLA 2014): test data only. */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Orderings of n items: random ones and the extremes of each statistic --
 * identity, reversal, a rotation, interleaved halves (one riffle), blocks
 * reversed (successions kept inside each block). */
static void make_ordering(int kind, size_t n, uint64_t *seed, uint32_t *a)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    if (kind == 1) {
        for (size_t i = 0; i < n; i++)
            a[i] = (uint32_t)(n - 1 - i);
    } else if (kind == 2) {
        for (size_t i = 0; i < n; i++)
            a[i] = (uint32_t)((i + 1) % n);
    } else if (kind == 3) {
        for (size_t i = 0; i < n; i++)
            a[i] = (uint32_t)(i % 2 == 0 ? i / 2 : (n + 1) / 2 + i / 2);
    } else if (kind == 4) {
        const size_t block = 5;
        for (size_t i = 0; i < n; i++) {
            const size_t b = i / block, blocks = (n + block - 1) / block;
            const size_t start = (blocks - 1 - b) * block;
            a[i] = (uint32_t)(start + i % block);
        }
        /* the last block may be short: keep it a permutation by renumbering */
        uint32_t *pos = malloc(n * sizeof *pos);
        assert_non_null(pos);
        size_t rank = 0;
        for (uint32_t v = 0; rank < n; v++)
            for (size_t i = 0; i < n; i++)
                if (a[i] == v)
                    pos[i] = (uint32_t)rank++;
        memcpy(a, pos, n * sizeof *a);
        free(pos);
    } else if (kind >= 5) {
        for (size_t i = n; i > 1; i--) {
            const size_t j = (size_t)(next_random(seed) % i);
            const uint32_t t = a[i - 1];
            a[i - 1] = a[j];
            a[j] = t;
        }
    }
}

/* What the accumulator records for each trial (both its small-deck and its
 * large-deck paths) equals the statistics computed from their definitions. */
static void trial_statistics_match_definitions(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 3, 8, 32, 33, 100, 1001};
    uint64_t seed = 42;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        uint32_t *a = malloc(n * sizeof *a);
        assert_non_null(a);
        for (int kind = 0; kind < 10; kind++) {
            make_ordering(kind, n, &seed, a);
            audit_acc acc;
            assert_int_equal(audit_acc_init(&acc, n, 1), 0);
            audit_acc_add(&acc, a);
            size_t fixed = 0;
            for (size_t p = 0; p < n; p++)
                fixed += a[p] == p;
            assert_int_equal(acc.fixed[fixed], 1);
            assert_int_equal(acc.rising[rising_by_passes(a, n)], 1);
            assert_int_equal(acc.succ[successions_by_search(a, n)], 1);
            audit_acc_free(&acc);
        }
        free(a);
    }
}

static void rank_is_lexicographic(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 7; n++) {
        uint32_t prev[7], a[7];
        const uint64_t nf = audit_factorial_u64(n);
        for (uint64_t r = 0; r < nf; r++) {
            audit_unrank(r, n, a);
            assert_int_equal(audit_rank(a, n), r);
            if (r > 0) { /* strictly increasing in lexicographic order */
                size_t i = 0;
                while (a[i] == prev[i])
                    i++;
                assert_true(a[i] > prev[i]);
            }
            memcpy(prev, a, sizeof a);
        }
        for (size_t i = 0; i < n; i++)
            a[i] = (uint32_t)(n - 1 - i);
        assert_int_equal(audit_rank(a, n), nf - 1);
    }
    uint32_t big[20];
    for (size_t i = 0; i < 20; i++)
        big[i] = (uint32_t)(19 - i);
    assert_true(audit_rank(big, 20) == audit_factorial_u64(20) - 1);
}

static void pooled_chi2(void **state)
{
    (void)state;
    /* Four equal cells, 100 trials: (30-25)^2/25 * 2 + 0 + 0 = 2, df 3. */
    const uint64_t obs[4] = {30, 20, 25, 25};
    const double prob[4] = {0.25, 0.25, 0.25, 0.25};
    double df;
    assert_true(fabs(audit_chi2_pooled(obs, prob, 4, 100, 5.0, &df) - 2.0) < 1e-12);
    assert_true(df == 3.0);
    /* With 5 expected per pool needed and 2.5 per cell, cells pair up. */
    const uint64_t obs2[4] = {3, 2, 4, 1};
    assert_true(fabs(audit_chi2_pooled(obs2, prob, 4, 10, 5.0, &df) - 0.0) < 1e-12);
    assert_true(df == 1.0);
    /* An impossible outcome that occurs refutes the law. */
    const double zero[4] = {0.5, 0.5, 0.0, 0.0};
    const uint64_t obs3[4] = {50, 49, 1, 0};
    assert_true(isinf(audit_chi2_pooled(obs3, zero, 4, 100, 5.0, &df)));
}

/* Holm (1979): sorted p (0.005, 0.01, 0.03, 0.04) times (4, 3, 2, 1), then
 * made monotone: 0.02, 0.03, 0.06, 0.06. */
static void holm_example(void **state)
{
    (void)state;
    const double p[4] = {0.01, 0.04, 0.03, 0.005};
    double adj[4];
    audit_holm(p, 4, adj);
    const double want[4] = {0.03, 0.06, 0.06, 0.02};
    for (int i = 0; i < 4; i++)
        assert_true(fabs(adj[i] - want[i]) < 1e-15);
}

static void cycles(void **state)
{
    (void)state;
    unsigned char seen[5];
    const uint32_t cyc[5] = {1, 2, 3, 4, 0}, two[5] = {1, 0, 3, 4, 2};
    assert_true(audit_is_cycle(cyc, 5, seen));
    assert_false(audit_is_cycle(two, 5, seen));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chi2_reference),
        cmocka_unit_test(gamma_reference),
        cmocka_unit_test(poisson_reference),
        cmocka_unit_test(laws_match_enumeration),
        cmocka_unit_test(eulerian_row),
        cmocka_unit_test(fixed_points_law_is_unchanged),
        cmocka_unit_test(rising_law_exact_range),
        cmocka_unit_test(rising_edgeworth_matches_exact),
        cmocka_unit_test(rising_law_large_n),
        cmocka_unit_test(trial_statistics_match_definitions),
        cmocka_unit_test(rank_is_lexicographic),
        cmocka_unit_test(pooled_chi2),
        cmocka_unit_test(holm_example),
        cmocka_unit_test(cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
