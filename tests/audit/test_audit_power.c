/*
 * test_audit_power.c -- the power computation behind "inconclusive"
 * (audit/audit_power.c): the noncentrality a chi-square test needs to detect
 * an effect, against published values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>

#include "audit.h"

/* Upper quantiles of chi-square: 3.841 (df 1, 5%), 9.488 (df 4, 5%), 23.209
 * (df 10, 1%) -- any table, e.g. Abramowitz & Stegun, table 26.8. */
static void quantiles(void **state)
{
    (void)state;
    assert_true(fabs(audit_chi2_isf(0.05, 1) - 3.8415) < 1e-3);
    assert_true(fabs(audit_chi2_isf(0.05, 4) - 9.4877) < 1e-3);
    assert_true(fabs(audit_chi2_isf(0.01, 10) - 23.2093) < 1e-3);
}

/* With lambda = 0 the noncentral law is the central one; the tail grows with
 * lambda. */
static void noncentral_tail(void **state)
{
    (void)state;
    assert_true(fabs(audit_ncx2_sf(5.0, 3, 0.0) - audit_chi2_sf(5.0, 3)) < 1e-12);
    double last = 0.0;
    for (double l = 0.0; l <= 64.0; l += 4.0) {
        const double p = audit_ncx2_sf(20.0, 6, l);
        assert_true(p >= last);
        last = p;
    }
    /* df 1: X' = (Z + sqrt(lambda))^2, so Pr[X' > 3.8415] at lambda = 7.849 is
     * Phi(sqrt(7.849) - 1.96) + Phi(-sqrt(7.849) - 1.96) = 0.8000 + 0.00000. */
    assert_true(fabs(audit_ncx2_sf(3.8415, 1, 7.849) - 0.8) < 1e-3);
}

/* Cohen (1988), table 7.4.15: lambda for power 0.80 at alpha 0.05 is 7.85
 * (df 1), 9.64 (df 2), 11.94 (df 4). */
static void detectable_lambda(void **state)
{
    (void)state;
    assert_true(fabs(audit_detectable_lambda(1, 0.05, 0.8) - 7.85) < 0.02);
    assert_true(fabs(audit_detectable_lambda(2, 0.05, 0.8) - 9.64) < 0.02);
    assert_true(fabs(audit_detectable_lambda(4, 0.05, 0.8) - 11.94) < 0.02);
    /* The normal approximation takes over above df 1000 without a jump. */
    const double a = audit_detectable_lambda(1000, 1e-4, 0.9);
    const double b = audit_detectable_lambda(1001, 1e-4, 0.9);
    assert_true(fabs(a - b) / a < 0.03);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantiles),
        cmocka_unit_test(noncentral_tail),
        cmocka_unit_test(detectable_lambda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
