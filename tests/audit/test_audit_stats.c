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
        cmocka_unit_test(rank_is_lexicographic),
        cmocka_unit_test(pooled_chi2),
        cmocka_unit_test(holm_example),
        cmocka_unit_test(cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
