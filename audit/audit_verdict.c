/*
 * audit_verdict.c -- the verdict of a statistical audit (audit_verdict.h).
 *
 * Every applicable test of every deck size is one family: Holm's step-down
 * adjustment (Holm, Scand. J. Statist. 6, 1979) keeps its family-wise error at
 * the level of the look.  A look that finds nothing is "fair" only if every
 * deck size had a test able to find, with probability AUDIT_POWER at the
 * level of one test, a deviation of Cohen's w = AUDIT_PROMISED_W (the power
 * computation is audit_power.c's); else it is "inconclusive", with the trials
 * per size that would decide.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "audit_verdict.h"

#define AUDIT_POWER 0.9
#define AUDIT_PROMISED_W 0.25
#define MIN_EXPECTED 5.0 /* Cochran's rule, as the tests apply it */

/* Holm-adjust every applicable test of every size; the smallest adjusted
 * p-value is returned with its test and size. */
static double adjust_all(audit_result *r, const audit_test **worst, size_t *worst_n)
{
    double p[AUDIT_MAX_SIZES * AUDIT_T_COUNT] = {0}, adj[AUDIT_MAX_SIZES * AUDIT_T_COUNT];
    audit_test *ref[AUDIT_MAX_SIZES * AUDIT_T_COUNT];
    size_t m = 0, sz[AUDIT_MAX_SIZES * AUDIT_T_COUNT];
    for (size_t s = 0; s < r->nsizes; s++)
        for (int t = 0; t < AUDIT_T_COUNT; t++)
            if (r->sizes[s].tests[t].applicable) {
                ref[m] = &r->sizes[s].tests[t];
                sz[m] = r->sizes[s].n;
                p[m] = ref[m]->pvalue;
                m++;
            }
    audit_holm(p, m, adj);
    double best = 1.0;
    *worst = NULL;
    for (size_t i = 0; i < m; i++) {
        ref[i]->adjusted = adj[i];
        if (*worst == NULL || adj[i] < best) {
            best = adj[i];
            *worst = ref[i];
            *worst_n = sz[i];
        }
    }
    return best;
}


/* Trials per size that would give the best test of sz a detectable effect of
 * promised_w: w shrinks as 1/sqrt(trials) at a fixed df and level.  When no
 * test ran, the item-position test's needs: every cell expecting
 * MIN_EXPECTED, and the noncentrality of its df. */
static uint64_t trials_needed(const audit_size_result *sz, double level, double w)
{
    double best = INFINITY;
    for (int t = 0; t < AUDIT_T_COUNT; t++) {
        const audit_test *x = &sz->tests[t];
        if (x->applicable && isfinite(x->detectable_w))
            best = fmin(best, (double)sz->trials * (x->detectable_w / w) *
                                  (x->detectable_w / w));
    }
    if (!isfinite(best)) {
        const size_t n = sz->n, b = n <= 32 ? n : 16;
        const double cell = (double)(n / b), df = (double)((b - 1) * (b - 1));
        const double by_cells = MIN_EXPECTED * (double)n / (cell * cell);
        const double by_power =
            audit_detectable_lambda(df, level, AUDIT_POWER) / (w * w * (double)(n - 1));
        best = fmax(by_cells, by_power);
    }
    best = ceil(best);
    return best > (double)sz->trials ? (uint64_t)best : sz->trials + 1;
}

/* The effect each applicable chi-square test could have found (at the
 * Bonferroni level of one test, the strictest Holm applies), and whether
 * every deck size had a test able to see promised_w.  Sets
 * r->trials_to_decide when not. */
static int powerful_enough(audit_result *r, double level, size_t m)
{
    const double test_level = level / (double)(m ? m : AUDIT_T_COUNT);
    int enough = 1;
    r->stat_known = 1;
    r->power = AUDIT_POWER;
    r->promised_w = AUDIT_PROMISED_W;
    r->test_level = test_level;
    r->trials_to_decide = 0;
    for (size_t s = 0; s < r->nsizes; s++) {
        audit_size_result *sz = &r->sizes[s];
        double best = INFINITY;
        for (int t = 0; t < AUDIT_T_COUNT; t++) {
            audit_test *x = &sz->tests[t];
            x->detectable_w = NAN;
            if (!x->applicable || !(x->df > 0.0) || !(x->nobs > 0.0))
                continue;
            x->detectable_w =
                sqrt(audit_detectable_lambda(x->df, test_level, AUDIT_POWER) / x->nobs);
            best = fmin(best, x->detectable_w);
        }
        if (sz->n < 2) {
            enough = 0; /* one ordering: every trial the same, nothing to test */
            continue;
        }
        if (best <= AUDIT_PROMISED_W)
            continue;
        enough = 0;
        const uint64_t need = trials_needed(sz, test_level, AUDIT_PROMISED_W);
        if (need > r->trials_to_decide)
            r->trials_to_decide = need;
    }
    return enough;
}

/* A size whose every trial gave the same ordering, and the probability of
 * that under a uniform shuffle, (1/n!)^(trials-1), as a natural logarithm. */
static const audit_size_result *degenerate(const audit_result *r, double *log_p)
{
    for (size_t s = 0; s < r->nsizes; s++) {
        const audit_size_result *sz = &r->sizes[s];
        if (sz->n >= 2 && sz->acc != NULL && audit_acc_degenerate(sz->acc)) {
            *log_p = -(double)(sz->trials - 1) * audit_lgamma((double)sz->n + 1.0);
            return sz;
        }
    }
    return NULL;
}

/* A deck size of 1 (the smallest such n), or 0. */
static size_t single_size(const audit_result *r)
{
    for (size_t s = 0; s < r->nsizes; s++)
        if (r->sizes[s].n < 2)
            return r->sizes[s].n ? r->sizes[s].n : 1;
    return 0;
}


int audit_verdict(audit_result *r, size_t looks)
{
    int stop = 0;
    const audit_test *worst;
    size_t worst_n = 0, m = 0;
    const double level = r->alpha / (double)looks;
    const double best = adjust_all(r, &worst, &worst_n);
    for (size_t s = 0; s < r->nsizes; s++)
        for (int t = 0; t < AUDIT_T_COUNT; t++)
            m += r->sizes[s].tests[t].applicable != 0;
    const int enough = powerful_enough(r, level, m);
    double log_p = 0.0;
    const audit_size_result *same = degenerate(r, &log_p);
    if (r->broken) {
        r->verdict = "broken";
        snprintf(r->reason, sizeof r->reason,
                 "%llu outputs were not permutations of their input (%llu killed at "
                 "the timeout, %llu over the output limit)",
                 (unsigned long long)r->broken, (unsigned long long)r->timed_out,
                 (unsigned long long)r->over_output);
        stop = 1;
    } else if (worst != NULL && best < level) {
        r->verdict = "biased";
        char pv[32];
        if (best < 1e-300)
            snprintf(pv, sizeof pv, "< 1e-300");
        else
            snprintf(pv, sizeof pv, "= %.3g", best);
        snprintf(r->reason, sizeof r->reason,
                 "%s at n = %zu rejects uniformity: adjusted p %s, below %.3g "
                 "(alpha %g over %zu look%s)", worst->name, worst_n, pv, level,
                 r->alpha, looks, looks > 1 ? "s" : "");
        stop = 1;
    } else if (same != NULL && log_p < log(level / (double)(m + 1))) {
        /* One more test beside the m others, Bonferroni-corrected. */
        r->verdict = "biased";
        snprintf(r->reason, sizeof r->reason,
                 "all %llu trials at n = %zu gave the same ordering (probability "
                 "1e%.0f for a uniform shuffle, below %.3g)",
                 (unsigned long long)same->trials, same->n, floor(log_p / log(10.0)),
                 level / (double)(m + 1));
        stop = 1;
    } else if (same != NULL || !enough) {
        r->verdict = "inconclusive";
        char why[128];
        const size_t single = single_size(r);
        if (single != 0 && r->trials_to_decide == 0) {
            snprintf(r->reason, sizeof r->reason,
                     "n = %zu has a single ordering: every trial is the same and no "
                     "test can tell a fair shuffler from any other (use n >= 2)", single);
            return stop;
        }
        if (same != NULL)
            snprintf(why, sizeof why, "all %llu trials at n = %zu gave the same ordering",
                     (unsigned long long)same->trials, same->n);
        else if (worst == NULL)
            snprintf(why, sizeof why, "no test could run (too few trials)");
        else
            snprintf(why, sizeof why,
                     "no test rejects uniformity, but none could have seen a "
                     "deviation of w = %g with %g%% power", AUDIT_PROMISED_W,
                     100.0 * AUDIT_POWER);
        if (r->trials_to_decide == 0)
            for (size_t s = 0; s < r->nsizes; s++)
                if (r->sizes[s].trials + 1 > r->trials_to_decide)
                    r->trials_to_decide = r->sizes[s].trials + 1;
        snprintf(r->reason, sizeof r->reason, "%s%s; about --trials=%llu per size would decide",
                 why, r->time_limited ? " (the time limit stopped the trials)" : "",
                 (unsigned long long)r->trials_to_decide);
    } else {
        r->verdict = "fair";
        snprintf(r->reason, sizeof r->reason,
                 "no test rejects uniformity (smallest adjusted p = %.3g, level %.3g); "
                 "each size had a test able to see w = %g with %g%% power",
                 best, level, AUDIT_PROMISED_W, 100.0 * AUDIT_POWER);
    }
    return stop;
}
