/*
 * test_audit_trials.c -- statistical mode of `riffle audit`
 * (audit/audit_trials.c) and the output checks of --cmd (audit/audit_output.c).
 * Every run uses a fixed seed, so each assertion is deterministic.
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

static void run(const char *name, size_t n, uint64_t trials, uint64_t seed,
                unsigned threads, audit_acc *acc)
{
    const audit_algo *al = audit_zoo_find(name);
    assert_non_null(al);
    assert_int_equal(audit_acc_init(acc, n, trials), 0);
    assert_int_equal(
        audit_run_builtin(al, audit_param(al, n, 0), seed, 0, trials, threads, acc), 0);
    assert_int_equal(acc->trials, trials);
}

/* The result depends on the seed, never on the number of threads. */
static void threads_do_not_matter(void **state)
{
    (void)state;
    audit_acc one, three;
    run("fisher-yates", 5, 200000, 7, 1, &one);
    run("fisher-yates", 5, 200000, 7, 3, &three);
    assert_memory_equal(one.order, three.order, one.nperm * sizeof *one.order);
    assert_memory_equal(one.pos, three.pos, 25 * sizeof *one.pos);
    assert_memory_equal(one.rising, three.rising, 6 * sizeof *one.rising);
    audit_acc_free(&one);
    audit_acc_free(&three);
}

static void fair_passes_naive_fails(void **state)
{
    (void)state;
    audit_acc acc;
    audit_test t[AUDIT_T_COUNT];
    run("fisher-yates", 6, 100000, 11, 2, &acc);
    audit_acc_tests(&acc, t);
    for (int i = 0; i < AUDIT_T_COUNT; i++)
        if (t[i].applicable && t[i].pvalue < 1e-4)
            fail_msg("fisher-yates: %s p = %g", t[i].name, t[i].pvalue);
    assert_true(t[AUDIT_T_ORDER].applicable && t[AUDIT_T_POSITION].applicable);
    audit_acc_free(&acc);

    run("naive", 6, 100000, 11, 2, &acc);
    audit_acc_tests(&acc, t);
    assert_true(t[AUDIT_T_ORDER].pvalue < 1e-20);
    assert_true(t[AUDIT_T_POSITION].pvalue < 1e-20);
    audit_acc_free(&acc);

    run("sattolo", 6, 10000, 11, 2, &acc); /* never a fixed point */
    assert_int_equal(acc.fixed[0], 10000);
    audit_acc_tests(&acc, t);
    assert_true(t[AUDIT_T_FIXED].pvalue < 1e-20);
    audit_acc_free(&acc);
}

/* The (n-1)/n correction: for a fair shuffle the corrected item-position
 * statistic averages (n-1)^2 = 16 at n = 5 over replicates (uncorrected it
 * would average n(n-1) = 20).  200 replicates: standard error about 0.4. */
static void position_correction(void **state)
{
    (void)state;
    double sum = 0.0;
    const int reps = 200;
    for (int k = 0; k < reps; k++) {
        audit_acc acc;
        audit_test t[AUDIT_T_COUNT];
        run("fisher-yates", 5, 2000, 1000 + (uint64_t)k, 1, &acc);
        audit_acc_tests(&acc, t);
        assert_true(t[AUDIT_T_POSITION].df == 16.0);
        sum += t[AUDIT_T_POSITION].stat;
        audit_acc_free(&acc);
    }
    const double mean = sum / reps;
    if (!(mean > 14.8 && mean < 17.2))
        fail_msg("mean corrected statistic %g, expected about 16", mean);
}

/* A 32-bit seed per shuffle repeats decks of 52: 2^18 trials expect about
 * 2^36 / 2^33 = 8 repeats, against 1e-56 for a fair shuffle. */
static void birthday_catches_small_seeds(void **state)
{
    (void)state;
    audit_acc acc;
    audit_test t[AUDIT_T_COUNT];
    run("seed32", 52, 1 << 18, 5, 2, &acc);
    audit_acc_tests(&acc, t);
    assert_true(t[AUDIT_T_BIRTHDAY].applicable);
    assert_true(t[AUDIT_T_BIRTHDAY].stat >= 1);
    assert_true(t[AUDIT_T_BIRTHDAY].pvalue < 1e-10);
    audit_acc_free(&acc);
    run("fisher-yates", 52, 1 << 18, 5, 2, &acc);
    audit_acc_tests(&acc, t);
    assert_true(t[AUDIT_T_BIRTHDAY].stat == 0);
    assert_true(t[AUDIT_T_BIRTHDAY].pvalue == 1.0);
    assert_true(t[AUDIT_T_POSITION].applicable);
    assert_true(strstr(t[AUDIT_T_POSITION].note, "16x16 blocks") != NULL);
    audit_acc_free(&acc);
}

/* Blocks must cover 0..n-1 exactly. */
static void block_sizes(void **state)
{
    (void)state;
    static const size_t ns[] = {33, 52, 100, 40000, 16, 17};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        const size_t n = ns[i], b = 16;
        double total = 0.0;
        for (size_t k = 0; k < b; k++) {
            size_t count = 0;
            for (size_t x = 0; x < n; x++)
                count += x * b / n == k;
            assert_true(audit_block_size(k, b, n) == (double)count);
            total += (double)count;
        }
        assert_true(total == (double)n);
    }
}

static void parse_outputs(void **state)
{
    (void)state;
    uint32_t a[4];
    unsigned char seen[4];
    char why[160];
    static const char ok[] = "3\n1\n4\n2\n", no_nl[] = "3\n1\n4\n2";
    assert_int_equal(audit_parse_output(ok, strlen(ok), 4, a, seen, why, sizeof why), 0);
    assert_true(a[0] == 2 && a[1] == 0 && a[2] == 3 && a[3] == 1);
    assert_int_equal(audit_parse_output(no_nl, strlen(no_nl), 4, a, seen, why, sizeof why),
                     0);
    static const struct { const char *out, *why; } bad[] = {
        {"3\n1\n4\n", "3 lines out for 4 in; line '2' is missing"},
        {"3\n1\n4\n2\n2\n", "line '2' appears twice"},
        {"3\n1\n4\n 2\n", "altered or unexpected line ' 2'"},
        {"3\n1\n5\n2\n", "altered or unexpected line '5'"},
        {"3\n1\n4\n2\n\n", "altered or unexpected line ''"},
        {"", "0 lines out for 4 in; line '1' is missing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(audit_parse_output(bad[i].out, strlen(bad[i].out), 4, a, seen, why,
                                            sizeof why), -1);
        assert_string_equal(why, bad[i].why);
    }
}

static void shell_detection(void **state)
{
    (void)state;
    assert_false(audit_command_needs_shell("shuf"));
    assert_false(audit_command_needs_shell("riffle --seed=3 -n 5"));
    assert_true(audit_command_needs_shell("shuf | head"));
    assert_true(audit_command_needs_shell("sort -R 'x'"));
    assert_true(audit_command_needs_shell("LC_ALL=C sort -R"));
    assert_true(audit_command_needs_shell("python3 -c \"print(1)\""));
    assert_true(audit_command_needs_shell("shuf $FLAGS"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_do_not_matter),
        cmocka_unit_test(fair_passes_naive_fails),
        cmocka_unit_test(position_correction),
        cmocka_unit_test(birthday_catches_small_seeds),
        cmocka_unit_test(block_sizes),
        cmocka_unit_test(parse_outputs),
        cmocka_unit_test(shell_detection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
