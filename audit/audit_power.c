/*
 * audit_power.c -- what a chi-square test that found nothing could have found.
 *
 * A test of T trials whose statistic follows chi-square(df) under uniformity
 * follows, under an alternative of effect size w (Cohen's w: w^2 =
 * sum (p1 - p0)^2 / p0 over the test's cells), approximately the noncentral
 * chi-square(df, lambda) with lambda = N w^2, N the number of observations in
 * the statistic (Cohen, Statistical Power Analysis for the Behavioral
 * Sciences, 2nd ed., 1988, ch. 7; Patnaik, Biometrika 36, 1949).  The
 * smallest lambda that the test, at level a, rejects with probability `power`
 * solves  Pr[X'(df, lambda) > c] = power  with c the upper a quantile of
 * chi-square(df); the detectable effect is w = sqrt(lambda / N).
 *
 * The noncentral tail is the Poisson mixture
 *   Pr[X' > x] = sum_j e^{-lambda/2} (lambda/2)^j / j!  Pr[chi2(df + 2j) > x]
 * (Johnson, Kotz & Balakrishnan, Continuous Univariate Distributions vol. 2,
 * 2nd ed., eq. 29.2), summed over the Poisson terms within 10 standard
 * deviations of the mean; for df > 1000 or lambda > 4000 its normal
 * approximation (mean df + lambda, variance 2 (df + 2 lambda)) is used.
 */
#include <math.h>

#include "audit.h"

#define NORMAL_DF 1000.0
#define NORMAL_LAMBDA 4000.0

/* Upper a-quantile of chi-square(df): bisection on the tail (monotone). */
double audit_chi2_isf(double a, double df)
{
    double lo = 0.0, hi = df + 10.0;
    while (audit_chi2_sf(hi, df) > a && hi < 1e12)
        hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
        const double mid = 0.5 * (lo + hi);
        if (audit_chi2_sf(mid, df) > a)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double audit_ncx2_sf(double x, double df, double lambda)
{
    if (lambda <= 0.0)
        return audit_chi2_sf(x, df);
    if (df > NORMAL_DF || lambda > NORMAL_LAMBDA)
        return 0.5 * erfc((x - df - lambda) / sqrt(2.0 * (df + 2.0 * lambda)) / sqrt(2.0));
    const double mu = lambda / 2.0, sd = sqrt(mu);
    const double jlo = fmax(0.0, floor(mu - 10.0 * sd - 10.0));
    const double jhi = ceil(mu + 10.0 * sd + 10.0);
    double sum = 0.0;
    for (double j = jlo; j <= jhi; j++) {
        const double logw = -mu + j * log(mu) - audit_lgamma(j + 1.0);
        sum += exp(logw) * audit_chi2_sf(x, df + 2.0 * j);
    }
    return fmin(1.0, sum);
}

double audit_detectable_lambda(double df, double level, double power)
{
    if (!(df > 0.0) || !(level > 0.0 && level < 1.0))
        return NAN;
    const double c = audit_chi2_isf(level, df);
    double lo = 0.0, hi = 16.0;
    while (audit_ncx2_sf(c, df, hi) < power && hi < 1e9)
        hi *= 2.0;
    for (int i = 0; i < 60 && hi - lo > 1e-4 * hi; i++) {
        const double mid = 0.5 * (lo + hi);
        if (audit_ncx2_sf(c, df, mid) < power)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}
