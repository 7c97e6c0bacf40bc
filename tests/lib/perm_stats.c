/* The regularized incomplete gamma function by its two classical expansions
 * (Abramowitz & Stegun 6.5.29 series for x < a + 1, where it converges fast;
 * the continued fraction 6.5.31, evaluated by the modified Lentz method,
 * otherwise), which is all a chi-square p-value needs. */
#include "perm_stats.h"

#include <math.h>

#define EPS 1e-15
#define TINY 1e-300
#define MAX_ITER 100000

/* P(a, x) by the series e^-x x^a / Gamma(a+1) * sum x^n / ((a+1)...(a+n)). */
static double lower_series(double a, double x)
{
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < MAX_ITER; n++) {
        term *= x / (a + n);
        sum += term;
        if (fabs(term) < fabs(sum) * EPS)
            break;
    }
    return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Q(a, x) by the continued fraction e^-x x^a / Gamma(a) * 1/(x+1-a- 1(1-a)/(x+3-a- ...)). */
static double upper_fraction(double a, double x)
{
    double b = x + 1.0 - a, c = 1.0 / TINY, d = 1.0 / b, h = d;
    for (int i = 1; i < MAX_ITER; i++) {
        const double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < TINY)
            d = TINY;
        c = b + an / c;
        if (fabs(c) < TINY)
            c = TINY;
        d = 1.0 / d;
        const double delta = d * c;
        h *= delta;
        if (fabs(delta - 1.0) < EPS)
            break;
    }
    return h * exp(-x + a * log(x) - lgamma(a));
}

double rf_test_chisq_pvalue(double x, double df)
{
    const double a = df / 2.0, h = x / 2.0;
    if (h <= 0.0)
        return 1.0;
    if (h < a + 1.0)
        return 1.0 - lower_series(a, h);
    return upper_fraction(a, h);
}

double rf_test_pearson(const uint64_t *obs, const double *prob, size_t n, uint64_t total)
{
    double x = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double e = (double)total * prob[i];
        const double d = (double)obs[i] - e;
        x += d * d / e;
    }
    return x;
}
