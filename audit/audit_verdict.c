/*
 * audit_verdict.c -- the verdict of a statistical audit (audit_verdict.h).
 *
 * Every applicable test of every deck size is one family: Holm's step-down
 * adjustment (Holm, Scand. J. Statist. 6, 1979) keeps its family-wise error at
 * the level of the look.
 *
 * Looks.  A fixed design (a trial count given) shares alpha equally among its
 * looks (Bonferroni).  The sequential design looks after T1, 2 T1, 4 T1, ...
 * trials and spends alpha / (k (k + 1)) at look k: the union bound over every
 * look, however many, keeps the probability that a fair shuffler is ever
 * called biased below sum_k alpha / (k (k + 1)) = alpha, at any stopping time
 * -- the alpha-spending idea of Lan & DeMets (Biometrika 70, 1983) with a
 * spending series that never runs out, over geometrically spaced looks, as in
 * the "stitching" of Howard, Ramdas, McAuliffe & Sekhon (Ann. Statist. 49,
 * 2021, sec. 3).  Geometric spacing makes the price of looking logarithmic:
 * after T trials the level is about alpha / log2(T / T1)^2.
 *
 * What was ruled out.  A chi-square test at level a with N observations
 * finds, with probability AUDIT_POWER, any deviation of Cohen's w >= w_a =
 * sqrt(lambda / N) (audit_power.c).  Two deviations a reader can picture
 * follow from w_a:
 *  - item-position bias: some item (block) lands in some position (block)
 *    with probability off by a fraction delta of its fair value.  With the
 *    b x b matrix's margins fixed (every trial places every item once), the
 *    least visible such deviation is the doubly-centred one, whose w is
 *    delta / (b - 1) (the projection of one cell onto the matrices with zero
 *    row and column sums); so the test rules out delta >= (b - 1) w_a.
 *  - total variation among the n! orderings: TV = (1/2) sum |p1 - p0| <=
 *    (1/2) w (Cauchy-Schwarz), so the orderings test, run on every ordering,
 *    rules out TV >= w_a / 2.
 * A fixed design calls a shuffler "fair" when every size had a test able to
 * see w = AUDIT_PROMISED_W (the promise of a given trial count); the
 * sequential design (and a fixed one judged by its deviation, as a game's
 * log is) when every size has ruled out the stated item-position bias, and
 * otherwise the report says which bias it did rule out.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "audit_verdict.h"

#define AUDIT_PROMISED_W 0.25
#define MIN_EXPECTED 5.0 /* Cochran's rule, as the tests apply it */

double audit_look_level(double alpha, size_t look)
{
    const double k = (double)(look ? look : 1);
    return alpha / (k * (k + 1.0));
}

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
 * w: w shrinks as 1/sqrt(trials) at a fixed df and level.  When no test ran,
 * the item-position test's needs: every cell expecting MIN_EXPECTED, and the
 * noncentrality of its df. */
static uint64_t trials_needed(const audit_size_result *sz, double level, double w,
                              int position_only)
{
    double best = INFINITY;
    for (int t = 0; t < AUDIT_T_COUNT; t++) {
        const audit_test *x = &sz->tests[t];
        if (position_only && t != AUDIT_T_POSITION)
            continue;
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
    best = ceil(fmin(best, 1e18)); /* beyond any budget; and a uint64_t */
    return best > (double)sz->trials ? (uint64_t)best : sz->trials + 1;
}

/* Side of the item-position matrix the test of sz used. */
static size_t blocks_of(const audit_size_result *sz)
{
    return sz->acc != NULL ? sz->acc->blocks : sz->n;
}

/* The detectable effect of each applicable chi-square test of sz at
 * test_level, and the deviations they rule out (see the top of the file). */
static void rule_out(audit_size_result *sz, double test_level)
{
    sz->ruled_out_bias = INFINITY;
    sz->ruled_out_tv = NAN;
    for (int t = 0; t < AUDIT_T_COUNT; t++) {
        audit_test *x = &sz->tests[t];
        x->detectable_w = NAN;
        if (!x->applicable || !(x->df > 0.0) || !(x->nobs > 0.0))
            continue;
        x->detectable_w =
            sqrt(audit_detectable_lambda(x->df, test_level, AUDIT_POWER) / x->nobs);
    }
    const audit_test *pos = &sz->tests[AUDIT_T_POSITION], *ord = &sz->tests[AUDIT_T_ORDER];
    if (sz->n >= 2 && isfinite(pos->detectable_w))
        sz->ruled_out_bias = pos->detectable_w * (double)(blocks_of(sz) - 1);
    if (sz->acc != NULL && sz->acc->nperm > 0 && isfinite(ord->detectable_w) &&
        ord->df + 1.0 == (double)sz->acc->nperm)
        sz->ruled_out_tv = ord->detectable_w / 2.0;
}

/* Whether the power asked for is the stated deviation ruled out (the
 * sequential design, or a fixed one told so), else w = AUDIT_PROMISED_W. */
static int judged_by_deviation(const audit_result *r)
{
    return r->sequential || r->by_deviation;
}

/* The level of one test (Bonferroni over the m applicable ones, the
 * strictest Holm applies), the deviations each size ruled out, and whether
 * the design's requirement holds at every size: w <= AUDIT_PROMISED_W for a
 * fixed design, the item-position bias r->deviation ruled out for a
 * sequential one.  Sets r->trials_to_decide when not. */
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
        rule_out(sz, test_level);
        double best = INFINITY;
        for (int t = 0; t < AUDIT_T_COUNT; t++)
            best = fmin(best, isfinite(sz->tests[t].detectable_w) ? sz->tests[t].detectable_w
                                                                   : INFINITY);
        if (sz->n < 2) {
            enough = 0; /* one ordering: every trial the same, nothing to test */
            continue;
        }
        uint64_t need = 0;
        if (judged_by_deviation(r) && !(sz->ruled_out_bias <= r->deviation))
            need = trials_needed(sz, test_level,
                                 r->deviation / (double)(blocks_of(sz) - 1), 1);
        else if (!judged_by_deviation(r) && !(best <= AUDIT_PROMISED_W))
            need = trials_needed(sz, test_level, AUDIT_PROMISED_W, 0);
        if (need == 0)
            continue;
        enough = 0;
        if (need > r->trials_to_decide)
            r->trials_to_decide = need;
    }
    return enough;
}

/* The deviation ruled out at every size, in words: the largest (weakest)
 * over the sizes, as "an item-position bias of 0.8% or more". */
static void ruled_out_words(const audit_result *r, char *buf, size_t len)
{
    double worst = 0.0;
    for (size_t s = 0; s < r->nsizes; s++)
        if (r->sizes[s].n >= 2)
            worst = fmax(worst, r->sizes[s].ruled_out_bias);
    if (isfinite(worst))
        snprintf(buf, len, "an item-position bias of %.2g%% or more", 100.0 * worst);
    else
        snprintf(buf, len, "no item-position bias yet (too few trials)");
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


/* The level of this look, and how it came about, for the reasons. */
static double look_level(const audit_result *r, char *how, size_t len)
{
    if (r->sequential) {
        snprintf(how, len, "alpha %g spent as alpha / (k (k + 1)) at look k = %zu", r->alpha,
                 r->look);
        return audit_look_level(r->alpha, r->look);
    }
    const size_t looks = r->nlooks ? r->nlooks : 1;
    snprintf(how, len, "alpha %g over %zu look%s", r->alpha, looks, looks > 1 ? "s" : "");
    return r->alpha / (double)looks;
}

static void say_broken(audit_result *r)
{
    r->verdict = "broken";
    snprintf(r->reason, sizeof r->reason,
             "%llu outputs were not permutations of their input (%llu killed at "
             "the timeout, %llu over the output limit)",
             (unsigned long long)r->broken, (unsigned long long)r->timed_out,
             (unsigned long long)r->over_output);
}

static void say_rejected(audit_result *r, const audit_test *worst, size_t worst_n,
                         double best, double level, const char *how)
{
    char pv[32];
    r->verdict = "biased";
    if (best < 1e-300)
        snprintf(pv, sizeof pv, "< 1e-300");
    else
        snprintf(pv, sizeof pv, "= %.3g", best);
    snprintf(r->reason, sizeof r->reason,
             "%s at n = %zu rejects uniformity: adjusted p %s, below %.3g (%s)", worst->name,
             worst_n, pv, level, how);
}

/* No rejection, and the requirement of the design not met (or every trial
 * of a size the same): inconclusive, saying why and what would decide. */
static void say_inconclusive(audit_result *r, const audit_test *worst,
                             const audit_size_result *same)
{
    char why[256];
    r->verdict = "inconclusive";
    const size_t single = single_size(r);
    if (single != 0 && r->trials_to_decide == 0) {
        snprintf(r->reason, sizeof r->reason,
                 "n = %zu has a single ordering: every trial is the same and no "
                 "test can tell a fair shuffler from any other (use n >= 2)", single);
        return;
    }
    if (same != NULL) {
        snprintf(why, sizeof why, "all %llu trials at n = %zu gave the same ordering",
                 (unsigned long long)same->trials, same->n);
    } else if (worst == NULL) {
        snprintf(why, sizeof why, "no test could run (too few trials)");
    } else if (judged_by_deviation(r)) {
        char ruled[64];
        ruled_out_words(r, ruled, sizeof ruled);
        snprintf(why, sizeof why,
                 "no test rejects uniformity; %s before a bias of %g%% was ruled out; "
                 "ruled out with %g%% power: %s",
                 r->sequential                 ? "the budget ended"
                 : strcmp(r->kind, "log") == 0 ? "the log ended"
                                               : "the trials ended",
                 100.0 * r->deviation, 100.0 * AUDIT_POWER, ruled);
    } else {
        snprintf(why, sizeof why,
                 "no test rejects uniformity, but none could have seen a "
                 "deviation of w = %g with %g%% power", AUDIT_PROMISED_W,
                 100.0 * AUDIT_POWER);
    }
    if (r->trials_to_decide == 0)
        for (size_t s = 0; s < r->nsizes; s++)
            if (r->sizes[s].trials + 1 > r->trials_to_decide)
                r->trials_to_decide = r->sizes[s].trials + 1;
    snprintf(r->reason, sizeof r->reason, "%s%s; about --trials=%llu per size would decide", why,
             r->time_limited ? " (the time limit stopped the trials)" : "",
             (unsigned long long)r->trials_to_decide);
}

static void say_fair(audit_result *r, double best, double level)
{
    r->verdict = "fair";
    if (judged_by_deviation(r)) {
        char ruled[64];
        ruled_out_words(r, ruled, sizeof ruled);
        snprintf(r->reason, sizeof r->reason,
                 "no test rejects uniformity (smallest adjusted p = %.3g, level %.3g); "
                 "ruled out with %g%% power at every size: %s", best, level,
                 100.0 * AUDIT_POWER, ruled);
    } else {
        snprintf(r->reason, sizeof r->reason,
                 "no test rejects uniformity (smallest adjusted p = %.3g, level %.3g); "
                 "each size had a test able to see w = %g with %g%% power",
                 best, level, AUDIT_PROMISED_W, 100.0 * AUDIT_POWER);
    }
}

int audit_verdict(audit_result *r)
{
    const audit_test *worst;
    size_t worst_n = 0, m = 0;
    char how[96];
    const double level = look_level(r, how, sizeof how);
    r->look_level = level;
    const double best = adjust_all(r, &worst, &worst_n);
    for (size_t s = 0; s < r->nsizes; s++)
        for (int t = 0; t < AUDIT_T_COUNT; t++)
            m += r->sizes[s].tests[t].applicable != 0;
    const int enough = powerful_enough(r, level, m);
    double log_p = 0.0;
    const audit_size_result *same = degenerate(r, &log_p);
    if (r->broken) {
        say_broken(r);
        return 1;
    }
    if (worst != NULL && best < level) {
        say_rejected(r, worst, worst_n, best, level, how);
        return 1;
    }
    if (same != NULL && log_p < log(level / (double)(m + 1))) {
        /* One more test beside the m others, Bonferroni-corrected. */
        r->verdict = "biased";
        snprintf(r->reason, sizeof r->reason,
                 "all %llu trials at n = %zu gave the same ordering (probability "
                 "1e%.0f for a uniform shuffle, below %.3g)",
                 (unsigned long long)same->trials, same->n, floor(log_p / log(10.0)),
                 level / (double)(m + 1));
        return 1;
    }
    if (same != NULL || !enough) {
        say_inconclusive(r, worst, same);
        /* Sizes of one ordering never gain power: final once the others have. */
        return r->sequential && same == NULL && r->trials_to_decide == 0;
    }
    say_fair(r, best, level);
    return r->sequential;
}
