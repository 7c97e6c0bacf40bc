/* The chi-square tail and Pearson's statistic of the audit library
 * (audit/audit_stats.c), for the library's statistical tests. */
#include "perm_stats.h"

#include "audit.h"

double rf_test_chisq_pvalue(double x, double df)
{
    return audit_chi2_sf(x, df);
}

double rf_test_pearson(const uint64_t *obs, const double *prob, size_t n, uint64_t total)
{
    double df;
    /* A minimum expectation of 0 pools no cells: the plain statistic. */
    return audit_chi2_pooled(obs, prob, n, total, 0.0, &df);
}
