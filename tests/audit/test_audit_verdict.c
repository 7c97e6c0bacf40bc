/*
 * test_audit_verdict.c -- the verdict of the audit library
 * (audit/audit_verdict.c): the sequential design keeps its false-alarm rate
 * below alpha however many looks it takes, where judging every look at the
 * full alpha does not; what a verdict says it ruled out; the level series.
 * Every simulation has fixed seeds, so each assertion is deterministic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "audit_verdict.h"

#define NULL_RUNS 500
#define LOOKS 8
#define FIRST_LOOK 64

/* One audit of a fair shuffler on n = 4: looks after 64, 128, ... trials,
 * LOOKS of them (a deviation too small to ever be ruled out keeps it going),
 * judged as the sequential design does, or (naive) every look at the full
 * alpha.  Returns 1 if some look called it biased. */
static int null_run_rejects(uint64_t seed, double alpha, int naive)
{
    const audit_algo *fy = audit_zoo_find("fisher-yates");
    assert_non_null(fy);
    audit_acc acc;
    assert_int_equal(audit_acc_init(&acc, 4, FIRST_LOOK << (LOOKS - 1)), 0);
    audit_size_result sz[1];
    audit_result r = {.subject = "fisher-yates", .kind = "builtin", .mode = "statistical",
                      .algo = fy, .alpha = alpha, .sizes = sz, .nsizes = 1,
                      .sequential = !naive, .nlooks = 1, .deviation = 1e-9};
    int rejected = 0;
    for (size_t k = 1; k <= LOOKS && !rejected; k++) {
        const uint64_t target = (uint64_t)FIRST_LOOK << (k - 1);
        assert_int_equal(audit_run_builtin(fy, 0, seed, k - 1, target - acc.trials, 1, &acc),
                         0);
        sz[0] = (audit_size_result){.n = 4, .trials = acc.trials, .acc = &acc};
        audit_acc_tests(&acc, sz[0].tests);
        r.look = k;
        const int final = audit_verdict(&r);
        rejected = strcmp(r.verdict, "biased") == 0;
        assert_true(final == rejected);
    }
    audit_acc_free(&acc);
    return rejected;
}

static double null_rejection_rate(double alpha, int naive)
{
    int rejected = 0;
    for (uint64_t seed = 1; seed <= NULL_RUNS; seed++)
        rejected += null_run_rejects(seed * 7919, alpha, naive);
    return (double)rejected / NULL_RUNS;
}

/* 500 fair audits of 8 looks at alpha = 0.05: the sequential design rejects
 * at most alpha plus three standard errors of a binomial proportion
 * (0.05 + 3 x 0.0097); judging each look at the full alpha rejects beyond
 * that bound (about 0.2), which shows the simulation can see an inflated
 * false-alarm rate. */
static void sequential_keeps_alpha(void **state)
{
    (void)state;
    const double alpha = 0.05, margin = 3.0 * sqrt(alpha * (1.0 - alpha) / NULL_RUNS);
    const double seq = null_rejection_rate(alpha, 0);
    const double naive = null_rejection_rate(alpha, 1);
    printf("# null rejections over %d audits of %d looks: sequential %.3f, naive %.3f\n",
           NULL_RUNS, LOOKS, seq, naive);
    assert_true(seq <= alpha + margin);
    assert_true(naive > alpha + margin);
}

/* The levels sum to alpha: k = 1..K gives alpha (1 - 1 / (K + 1)). */
static void look_levels_sum_to_alpha(void **state)
{
    (void)state;
    double sum = 0.0;
    for (size_t k = 1; k <= 1000; k++)
        sum += audit_look_level(0.01, k);
    assert_true(fabs(sum - 0.01 * (1.0 - 1.0 / 1001.0)) < 1e-12);
    assert_true(fabs(audit_look_level(0.01, 1) - 0.005) < 1e-15);
    assert_true(fabs(audit_look_level(0.01, 4) - 0.0005) < 1e-15);
}

/* What a sequential verdict rules out follows from the tests' power: the
 * item-position bias (b - 1) w of the position test, the total variation w / 2
 * of the orderings test run on every ordering; once the stated deviation is
 * ruled out the verdict is fair and final, and says so. */
static void ruled_out_follows_power(void **state)
{
    (void)state;
    const audit_algo *fy = audit_zoo_find("fisher-yates");
    audit_acc acc;
    assert_int_equal(audit_acc_init(&acc, 4, 200000), 0);
    assert_int_equal(audit_run_builtin(fy, 0, 11, 0, 200000, 2, &acc), 0);
    audit_size_result sz[1] = {{.n = 4, .trials = acc.trials, .acc = &acc}};
    audit_acc_tests(&acc, sz[0].tests);
    audit_result r = {.subject = "fisher-yates", .kind = "builtin", .mode = "statistical",
                      .algo = fy, .alpha = 0.001, .sizes = sz, .nsizes = 1,
                      .sequential = 1, .look = 3, .nlooks = 1, .deviation = 0.05};
    assert_int_equal(audit_verdict(&r), 1);
    assert_string_equal(r.verdict, "fair");
    const audit_test *pos = &sz[0].tests[AUDIT_T_POSITION], *ord = &sz[0].tests[AUDIT_T_ORDER];
    assert_true(fabs(sz[0].ruled_out_bias - 3.0 * pos->detectable_w) < 1e-12);
    assert_true(fabs(sz[0].ruled_out_tv - ord->detectable_w / 2.0) < 1e-12);
    assert_true(sz[0].ruled_out_bias < 0.05);
    assert_non_null(strstr(r.reason, "ruled out with 90% power at every size: an "
                                     "item-position bias of "));
    assert_true(fabs(r.look_level - 0.001 / 12.0) < 1e-15);
    /* A stricter deviation than these trials can rule out: not final. */
    r.deviation = sz[0].ruled_out_bias / 2.0;
    assert_int_equal(audit_verdict(&r), 0);
    assert_string_equal(r.verdict, "inconclusive");
    assert_non_null(strstr(r.reason, "the budget ended before a bias of"));
    assert_true(r.trials_to_decide > acc.trials);
    audit_acc_free(&acc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(look_levels_sum_to_alpha),
        cmocka_unit_test(ruled_out_follows_power),
        cmocka_unit_test(sequential_keeps_alpha),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
