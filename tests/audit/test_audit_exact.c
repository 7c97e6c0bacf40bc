/*
 * test_audit_exact.c -- exact mode of `riffle audit` (audit/audit_exact.c) on the
 * zoo (audit/audit_zoo.c): the classic results, and the three methods (odometer
 * over every draw path, dynamic programme over orderings, dynamic programme
 * over positions) checked against each other.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "audit_internal.h"

static const audit_algo *algo(const char *name)
{
    const audit_algo *al = audit_zoo_find(name);
    assert_non_null(al);
    return al;
}

static void run(const char *name, size_t n, unsigned param, int walk, audit_exact *e)
{
    const audit_algo *al = algo(name);
    audit_exact_init(e);
    if (audit_exact_run(al, n, audit_param(al, n, param), walk, e) != 0)
        fail_msg("%s n=%zu: %s", name, n, e->error);
}

/* prob[rank] == want_num / want_den? */
static int prob_is(const audit_exact *e, uint64_t rank, unsigned long num,
                   unsigned long den)
{
    mpz_t a, b;
    mpz_inits(a, b, NULL);
    mpz_mul_ui(a, e->num[rank], den);
    mpz_mul_ui(b, e->den, num);
    const int eq = mpz_cmp(a, b) == 0;
    mpz_clears(a, b, NULL);
    return eq;
}

/* Naive swap, n = 3: 27 paths; 1 3 2, 2 1 3 and 2 3 1 (ranks 1, 2, 3) come
 * out 5 times, 1 2 3, 3 1 2 and 3 2 1 (ranks 0, 4, 5) 4 times. */
static void naive_three(void **state)
{
    (void)state;
    for (int walk = 0; walk <= 1; walk++) {
        audit_exact e;
        run("naive", 3, 0, walk, &e);
        for (uint64_t r = 0; r < 6; r++)
            assert_true(prob_is(&e, r, (r >= 1 && r <= 3) ? 5 : 4, 27));
        if (walk)
            assert_int_equal(e.paths, 27);
        audit_exact_clear(&e);
    }
}

/* Sattolo: exactly the (n-1)! cyclic permutations, each with 1/(n-1)!. */
static void sattolo_cycles_only(void **state)
{
    (void)state;
    for (size_t n = 2; n <= 7; n++) {
        for (int walk = 0; walk <= 1; walk++) {
            audit_exact e;
            run("sattolo", n, 0, walk, &e);
            uint32_t a[7];
            unsigned char seen[7];
            const unsigned long cyc = (unsigned long)audit_factorial_u64(n - 1);
            for (uint64_t r = 0; r < e.nperm; r++) {
                audit_unrank(r, n, a);
                assert_true(prob_is(&e, r, audit_is_cycle(a, n, seen) ? 1 : 0, cyc));
            }
            audit_exact_clear(&e);
        }
    }
    /* {1,2} always becomes {2,1}. */
    audit_exact e;
    run("sattolo", 2, 0, 1, &e);
    assert_true(prob_is(&e, 1, 1, 1));
    audit_exact_clear(&e);
}

/* The library's shuffles and the fair references: every ordering exactly
 * 1/n!, walked over every draw path. */
static void fair_ones_uniform(void **state)
{
    (void)state;
    static const char *const fair[] = {"fisher-yates", "shuffle-bytes", "partial",
                                       "deck", "swap-callback", "fy-textbook", "splice"};
    for (size_t i = 0; i < sizeof fair / sizeof fair[0]; i++) {
        for (size_t n = 1; n <= 6; n++) {
            audit_exact e;
            run(fair[i], n, 0, 1, &e);
            audit_exact_summary s;
            audit_exact_summarize(&e, &s);
            if (!s.uniform || !s.matrix_uniform || mpq_cmp_ui(s.fixed, 1, 1) != 0)
                fail_msg("%s is not uniform at n = %zu", fair[i], n);
            assert_int_equal(s.support, e.nperm);
            audit_exact_summary_clear(&s);
            audit_exact_clear(&e);
        }
    }
}

static void assert_same_distribution(const audit_exact *x, const audit_exact *y)
{
    assert_int_equal(x->nperm, y->nperm);
    mpz_t a, b;
    mpz_inits(a, b, NULL);
    for (uint64_t r = 0; r < x->nperm; r++) {
        mpz_mul(a, x->num[r], y->den);
        mpz_mul(b, y->num[r], x->den);
        assert_true(mpz_cmp(a, b) == 0);
    }
    mpz_clears(a, b, NULL);
}

/* Each swap programme describes its shuffle function exactly: the dynamic
 * programme over orderings equals the odometer over every path. */
static void programmes_match_walks(void **state)
{
    (void)state;
    static const char *const prog[] = {"naive", "sattolo", "except-last", "fy-textbook",
                                       "transpositions"};
    for (size_t i = 0; i < sizeof prog / sizeof prog[0]; i++) {
        for (size_t n = 1; n <= 5; n++) {
            audit_exact dp, walk;
            run(prog[i], n, 0, 0, &dp);
            run(prog[i], n, 0, 1, &walk);
            assert_string_equal(dp.method, "dynamic programme over orderings");
            assert_string_equal(walk.method, "odometer over every draw path");
            assert_same_distribution(&dp, &walk);
            audit_exact_clear(&dp);
            audit_exact_clear(&walk);
        }
    }
    /* The 15-bit rand() % m model: 32768 paths at n = 2 (32768 % 2 == 0, so
     * fair there) and 32768^2 at n = 3 are too many to walk in a unit test;
     * n = 2 must agree. */
    audit_exact dp, walk;
    run("rand15-mod", 2, 0, 0, &dp);
    run("rand15-mod", 2, 0, 1, &walk);
    assert_int_equal(walk.paths, 32768);
    assert_same_distribution(&dp, &walk);
    audit_exact_clear(&dp);
    audit_exact_clear(&walk);
}

/* rand() % 3 on 15 bits: remainders 0 and 1 have 10923 chances, 2 has 10922,
 * so at n = 3 the first step already differs from 1/3. */
static void rand15_bias(void **state)
{
    (void)state;
    audit_exact e;
    run("rand15-mod", 3, 0, 0, &e);
    audit_exact_summary s;
    audit_exact_summarize(&e, &s);
    assert_false(s.uniform);
    /* Item 1 stays first with probability 10923/32768 (j = 0 on step 0). */
    mpz_t want;
    mpz_init(want);
    mpz_mul_ui(want, e.pos_den, 10923);
    mpz_mul_ui(e.pos_num[0], e.pos_num[0], 32768);
    assert_true(mpz_cmp(e.pos_num[0], want) == 0);
    mpz_clear(want);
    audit_exact_summary_clear(&s);
    audit_exact_clear(&e);
}

/* The dynamic programme over positions equals the matrix of the full
 * distribution. */
static void position_chain_matches(void **state)
{
    (void)state;
    static const char *const prog[] = {"naive", "sattolo", "except-last", "fy-textbook",
                                       "transpositions", "rand15-mod"};
    for (size_t i = 0; i < sizeof prog / sizeof prog[0]; i++) {
        for (size_t n = 2; n <= 6; n++) {
            audit_exact full, chain;
            run(prog[i], n, 0, 0, &full);
            audit_exact_init(&chain);
            chain.n = n;
            size_t steps;
            const audit_algo *al = algo(prog[i]);
            audit_step *st = audit_exact_program(al, n, audit_param(al, n, 0), &steps, &chain);
            assert_non_null(st);
            assert_int_equal(audit_exact_positions(st, steps, &chain), 0);
            free(st);
            mpz_t a, b;
            mpz_inits(a, b, NULL);
            for (size_t k = 0; k < n * n; k++) {
                mpz_mul(a, full.pos_num[k], chain.pos_den);
                mpz_mul(b, chain.pos_num[k], full.pos_den);
                assert_true(mpz_cmp(a, b) == 0);
            }
            mpz_clears(a, b, NULL);
            audit_exact_clear(&full);
            audit_exact_clear(&chain);
        }
    }
}

/* Dr. Dobb's, n = 8 (all 8^8 paths): the first item's row and the last
 * position's column are uniform, the rest of the matrix is not, and the
 * distribution sums to 1 over 8^8. */
static void naive_eight(void **state)
{
    (void)state;
    audit_exact e;
    run("naive", 8, 0, 0, &e);
    assert_true(mpz_cmp_ui(e.den, 16777216) == 0);
    mpz_t sum, t;
    mpz_inits(sum, t, NULL);
    for (uint64_t r = 0; r < e.nperm; r++)
        mpz_add(sum, sum, e.num[r]);
    assert_true(mpz_cmp(sum, e.den) == 0);
    int other_uniform = 0;
    for (size_t i = 0; i < 8; i++) {
        for (size_t p = 0; p < 8; p++) {
            mpz_mul_ui(t, e.pos_num[i * 8 + p], 8);
            const int uniform = mpz_cmp(t, e.pos_den) == 0;
            if (i == 0 || p == 7)
                assert_true(uniform);
            else
                other_uniform += uniform;
        }
    }
    assert_int_equal(other_uniform, 0);
    mpz_clears(sum, t, NULL);
    audit_exact_clear(&e);
}

/* 52 cards: naive leaves about 0.90 cards in place on average, Fisher-Yates
 * exactly 1, and the denominators are 52^52 and 52!. */
static void fifty_two(void **state)
{
    (void)state;
    audit_exact e;
    run("naive", 52, 0, 0, &e);
    audit_exact_summary s;
    audit_exact_summarize(&e, &s);
    assert_false(s.full);
    assert_false(s.matrix_uniform);
    const double fixed = mpq_get_d(s.fixed);
    assert_true(fixed > 0.895 && fixed < 0.905);
    mpz_t p;
    mpz_init(p);
    mpz_ui_pow_ui(p, 52, 52);
    assert_true(mpz_cmp(e.pos_den, p) == 0);
    audit_exact_summary_clear(&s);
    audit_exact_clear(&e);

    run("fy-textbook", 52, 0, 0, &e);
    audit_exact_summarize(&e, &s);
    assert_true(s.matrix_uniform);
    assert_true(mpq_cmp_ui(s.fixed, 1, 1) == 0);
    mpz_fac_ui(p, 52);
    assert_true(mpz_cmp(e.pos_den, p) == 0);
    mpz_clear(p);
    audit_exact_summary_clear(&s);
    audit_exact_clear(&e);
}

/* One GSR riffle (Bayer & Diaconis 1992, Theorem 1 with a = 2): an ordering
 * with r rising sequences has probability C(n + 2 - r, n) / 2^n. */
static void gsr_one_riffle(void **state)
{
    (void)state;
    const size_t n = 5;
    audit_exact e;
    run("gsr", n, 1, 0, &e);
    uint32_t a[5], pos[5];
    mpz_t c;
    mpz_init(c);
    for (uint64_t r = 0; r < e.nperm; r++) {
        audit_unrank(r, n, a);
        const size_t rs = audit_rising_sequences(a, n, pos);
        if (rs > 2)
            mpz_set_ui(c, 0);
        else
            mpz_bin_uiui(c, n + 2 - rs, n);
        assert_true(prob_is(&e, r, mpz_get_ui(c), 32));
    }
    mpz_clear(c);
    audit_exact_clear(&e);
}

/* Random comparators: probabilities are multiples of 1/2^c, never 1/3!. */
static void random_comparators(void **state)
{
    (void)state;
    static const char *const sorts[] = {"insertion-cmp", "merge-cmp"};
    for (size_t i = 0; i < 2; i++) {
        audit_exact e;
        run(sorts[i], 3, 0, 0, &e);
        audit_exact_summary s;
        audit_exact_summarize(&e, &s);
        assert_false(s.uniform);
        assert_int_equal(mpz_scan1(e.den, 0), mpz_sizeinbase(e.den, 2) - 1);
        audit_exact_summary_clear(&s);
        audit_exact_clear(&e);
    }
}

/* Naive swap at n = 3: TV = 1/2 (3 |5/27 - 1/6| + 3 |4/27 - 1/6|) = 1/18,
 * median 1/6, two distinct values; expected fixed points 26/27. */
static void summary_fields(void **state)
{
    (void)state;
    audit_exact e;
    run("naive", 3, 0, 0, &e);
    audit_exact_summary s;
    audit_exact_summarize(&e, &s);
    assert_true(mpq_cmp_ui(s.tv, 1, 18) == 0);
    assert_true(mpq_cmp_ui(s.median, 1, 6) == 0);
    assert_true(mpq_cmp_ui(s.min, 4, 27) == 0);
    assert_true(mpq_cmp_ui(s.max, 5, 27) == 0);
    assert_true(mpq_cmp_ui(s.fixed, 26, 27) == 0);
    assert_int_equal(s.distinct, 2);
    assert_int_equal(s.support, 6);
    audit_exact_summary_clear(&s);
    audit_exact_clear(&e);
}

static void refusals(void **state)
{
    (void)state;
    audit_exact e;
    audit_exact_init(&e);
    assert_int_equal(audit_exact_run(algo("pick-unused"), 4, 0, 0, &e), -1);
    audit_exact_clear(&e);
    audit_exact_init(&e);
    assert_int_equal(audit_exact_run(algo("fisher-yates"), 12, 0, 0, &e), -1);
    audit_exact_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(naive_three),
        cmocka_unit_test(sattolo_cycles_only),
        cmocka_unit_test(fair_ones_uniform),
        cmocka_unit_test(programmes_match_walks),
        cmocka_unit_test(rand15_bias),
        cmocka_unit_test(position_chain_matches),
        cmocka_unit_test(naive_eight),
        cmocka_unit_test(fifty_two),
        cmocka_unit_test(gsr_one_riffle),
        cmocka_unit_test(random_comparators),
        cmocka_unit_test(summary_fields),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
