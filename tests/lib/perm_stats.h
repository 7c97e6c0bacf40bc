/* Chi-square p-values for the statistical tests of the real-valued samplers
 * and the cipher permutations (tests/unit/test_perm.c, tests/unit/test_sample.c,
 * tests/unit/test_bucket.c): the audit library's functions (audit/audit.h)
 * under the names those tests use. */
#ifndef RF_TEST_PERM_STATS_H
#define RF_TEST_PERM_STATS_H

#include <stddef.h>
#include <stdint.h>

/* P(X >= x) for X chi-square with df degrees of freedom (df > 0): the
 * regularized upper incomplete gamma function Q(df/2, x/2). */
double rf_test_chisq_pvalue(double x, double df);

/* Pearson's statistic sum (obs - exp)^2 / exp over n cells with expected
 * counts total * prob[i]. */
double rf_test_pearson(const uint64_t *obs, const double *prob, size_t n, uint64_t total);

#endif
