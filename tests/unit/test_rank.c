/* Permutation numbers: lexicographic order checked by enumeration, round
 * trips on 64 bits and through GMP and decimal strings, the identity and the
 * reversed permutation at every size, the 52-card deck against 52!, and every
 * kind of invalid input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "riffle_gmp.h"
#include "scripted.h"

/* 52!, written out; the reversed deck's rank is this minus one. */
static const char FACT52[] =
    "80658175170943878571660636856403766975289505440883277824000000000000";

static void identity(size_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = i;
}

static void reversed(size_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = n - 1 - i;
}

static int lex_less(const size_t *a, const size_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

static void test_factorial(void **state)
{
    (void)state;
    assert_true(rf_factorial_u64(0) == 1);
    assert_true(rf_factorial_u64(5) == 120);
    assert_true(rf_factorial_u64(20) == 2432902008176640000ULL);
    assert_true(rf_factorial_u64(21) == 0);
}

/* Unranking 0, 1, ..., n!-1 lists every permutation once in increasing
 * lexicographic order, and ranking gives the numbers back. */
static void test_lexicographic_enumeration(void **state)
{
    (void)state;
    for (size_t n = 0; n <= 8; n++) {
        size_t prev[8], p[8];
        const uint64_t f = rf_factorial_u64((unsigned)n);
        uint64_t rank;
        for (uint64_t r = 0; r < f; r++) {
            assert_int_equal(rf_unrank_u64(r, n, p), RF_OK);
            if (r > 0)
                assert_true(lex_less(prev, p, n));
            assert_int_equal(rf_rank_u64(p, n, &rank, NULL), RF_OK);
            assert_true(rank == r);
            assert_true(rf_test_perm_rank(p, n) == r); /* tests/lib/scripted.c's count */
            memcpy(prev, p, sizeof p);
        }
        assert_int_equal(rf_unrank_u64(f, n, p), RF_ERANGE);
    }
}

static void test_identity_and_reversed(void **state)
{
    (void)state;
    size_t p[300];
    uint64_t r;
    char buf[1000];
    mpz_t m, f;
    mpz_inits(m, f, NULL);
    for (size_t n = 0; n <= 300; n++) {
        identity(p, n);
        if (n <= RF_RANK_U64_MAX_N) {
            assert_int_equal(rf_rank_u64(p, n, &r, NULL), RF_OK);
            assert_true(r == 0);
        }
        assert_int_equal(rf_rank_string(p, n, buf, sizeof buf, NULL, NULL, 0), RF_OK);
        assert_string_equal(buf, "0");
        reversed(p, n);
        mpz_fac_ui(f, n);
        mpz_sub_ui(f, f, 1);
        if (n <= RF_RANK_U64_MAX_N) {
            assert_int_equal(rf_rank_u64(p, n, &r, NULL), RF_OK);
            assert_true(r == rf_factorial_u64((unsigned)n) - 1);
        }
        assert_int_equal(rf_rank_mpz(m, p, n, NULL, NULL, 0), RF_OK);
        assert_int_equal(mpz_cmp(m, f), 0);
        assert_true(rf_rank_string_size(n) >= mpz_sizeinbase(f, 10) + 2);
    }
    mpz_clears(m, f, NULL);
}

static void test_deck_of_52(void **state)
{
    (void)state;
    size_t deck[52], back[52];
    char buf[100], expect[100];
    mpz_t f;
    mpz_init_set_str(f, FACT52, 10);
    mpz_t g;
    mpz_init(g);
    mpz_fac_ui(g, 52);
    assert_int_equal(mpz_cmp(f, g), 0); /* the written-out constant is 52! */
    mpz_sub_ui(f, f, 1);
    mpz_get_str(expect, 10, f);
    assert_string_equal(expect,
                        "80658175170943878571660636856403766975289505440883277823999999999999");
    assert_true(rf_rank_string_size(52) <= sizeof buf);
    reversed(deck, 52);
    assert_int_equal(rf_rank_string(deck, 52, buf, sizeof buf, NULL, NULL, 0), RF_OK);
    assert_string_equal(buf, expect);
    assert_int_equal(rf_unrank_string(expect, 52, back, NULL, 0), RF_OK);
    assert_memory_equal(back, deck, sizeof deck);
    /* 52! itself is out of range; 52! - 1 with leading zeros is fine */
    assert_int_equal(rf_unrank_string(FACT52, 52, back, NULL, 0), RF_ERANGE);
    char padded[120] = "000";
    strcat(padded, expect);
    assert_int_equal(rf_unrank_string(padded, 52, back, NULL, 0), RF_OK);
    assert_memory_equal(back, deck, sizeof deck);
    /* 226 bits */
    assert_int_equal(mpz_sizeinbase(f, 2), 226);
    mpz_clears(f, g, NULL);
}

/* Random permutations of many sizes: rank -> unrank is the identity, and the
 * 64-bit, mpz and string forms agree where they overlap. */
static void test_round_trips(void **state)
{
    (void)state;
    static size_t p[2000], q[2000];
    static char buf[20000];
    size_t scratch[2001];
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 1), RF_OK);
    const size_t sizes[] = {1, 2, 3, 19, 20, 21, 52, 100, 1000, 2000};
    mpz_t m;
    mpz_init(m);
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const size_t n = sizes[c];
        for (int t = 0; t < 20; t++) {
            identity(p, n);
            rf_shuffle(&g, p, n, sizeof *p);
            assert_int_equal(rf_rank_mpz(m, p, n, NULL, scratch, sizeof scratch), RF_OK);
            assert_int_equal(rf_unrank_mpz(m, n, q, scratch, sizeof scratch), RF_OK);
            assert_memory_equal(p, q, n * sizeof *p);
            assert_int_equal(rf_rank_string(p, n, buf, sizeof buf, NULL, NULL, 0), RF_OK);
            assert_int_equal(rf_unrank_string(buf, n, q, NULL, 0), RF_OK);
            assert_memory_equal(p, q, n * sizeof *p);
            if (n <= RF_RANK_U64_MAX_N) {
                uint64_t r;
                assert_int_equal(rf_rank_u64(p, n, &r, NULL), RF_OK);
                assert_true(mpz_cmp_ui(m, r) == 0);
                assert_int_equal(rf_unrank_u64(r, n, q), RF_OK);
                assert_memory_equal(p, q, n * sizeof *p);
            }
        }
    }
    /* the largest 64-bit rank */
    uint64_t r;
    assert_int_equal(rf_unrank_u64(rf_factorial_u64(20) - 1, 20, q), RF_OK);
    reversed(p, 20);
    assert_memory_equal(p, q, 20 * sizeof *p);
    assert_int_equal(rf_rank_u64(q, 20, &r, NULL), RF_OK);
    assert_true(r == rf_factorial_u64(20) - 1);
    mpz_clear(m);
}

static void test_invalid(void **state)
{
    (void)state;
    size_t where = 99, out[60];
    uint64_t r;
    char buf[200];
    mpz_t m;
    mpz_init(m);
    const size_t repeat[5] = {0, 3, 2, 3, 1};  /* 3 again at position 3 */
    const size_t range[5] = {0, 1, 5, 2, 3};   /* 5 >= n at position 2 */
    const size_t both[5] = {4, 4, 9, 0, 1};    /* the repeat comes first */
    assert_int_equal(rf_rank_u64(repeat, 5, &r, &where), RF_EINVAL);
    assert_int_equal(where, 3);
    assert_int_equal(rf_rank_u64(range, 5, &r, &where), RF_EINVAL);
    assert_int_equal(where, 2);
    assert_int_equal(rf_rank_u64(both, 5, &r, &where), RF_EINVAL);
    assert_int_equal(where, 1);
    assert_int_equal(rf_rank_u64(repeat, 5, &r, NULL), RF_EINVAL);
    assert_int_equal(rf_rank_mpz(m, repeat, 5, &where, NULL, 0), RF_EINVAL);
    assert_int_equal(where, 3);
    assert_int_equal(rf_rank_mpz(m, range, 5, &where, NULL, 0), RF_EINVAL);
    assert_int_equal(where, 2);
    assert_int_equal(rf_rank_string(both, 5, buf, sizeof buf, &where, NULL, 0), RF_EINVAL);
    assert_int_equal(where, 1);
    /* sizes and buffers */
    size_t big[21];
    identity(big, 21);
    assert_int_equal(rf_rank_u64(big, 21, &r, NULL), RF_ERANGE);
    assert_int_equal(rf_unrank_u64(0, 21, out), RF_ERANGE);
    assert_int_equal(rf_unrank_u64(120, 5, out), RF_ERANGE);
    identity(out, 5);
    assert_int_equal(rf_rank_string(out, 5, buf, 2, NULL, NULL, 0), RF_EINVAL);
    size_t tiny[2];
    assert_int_equal(rf_rank_mpz(m, out, 5, NULL, tiny, sizeof tiny), RF_EINVAL);
    /* rank strings */
    const char *bad[] = {"", "12a", "-1", " 1", "+1", "1 ", "0x10", "1e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(rf_unrank_string(bad[i], 5, out, NULL, 0), RF_EINVAL);
    assert_int_equal(rf_unrank_string("120", 5, out, NULL, 0), RF_ERANGE);
    assert_int_equal(rf_unrank_string("119", 5, out, NULL, 0), RF_OK);
    assert_int_equal(rf_unrank_string("1", 0, out, NULL, 0), RF_ERANGE);
    assert_int_equal(rf_unrank_string("0", 0, out, NULL, 0), RF_OK);
    mpz_set_si(m, -1);
    assert_int_equal(rf_unrank_mpz(m, 5, out, NULL, 0), RF_ERANGE);
    mpz_clear(m);
}

/* ---- the subquadratic code against the quadratic definitions ------------ */

/* Rank by the definitions: d_i = #{ j > i : p[j] < p[i] } counted pairwise,
 * accumulated by Horner's rule -- O(n^2), for tests only. */
static void rank_quadratic(mpz_t r, const size_t *p, size_t n)
{
    mpz_set_ui(r, 0);
    for (size_t i = 0; i < n; i++) {
        size_t d = 0;
        for (size_t j = i + 1; j < n; j++)
            d += p[j] < p[i];
        mpz_mul_ui(r, r, (unsigned long)(n - i));
        mpz_add_ui(r, r, (unsigned long)d);
    }
}

/* Unrank by the definitions: digits by repeated division, then the d-th
 * smallest unused value found by scanning -- O(n^2). */
static int unrank_quadratic(const mpz_t rank, size_t n, size_t *p)
{
    mpz_t r;
    mpz_init_set(r, rank);
    for (size_t m = 1; m <= n; m++)
        p[n - m] = (size_t)mpz_fdiv_q_ui(r, r, (unsigned long)m);
    const int ok = mpz_sgn(r) == 0;
    mpz_clear(r);
    unsigned char *used = calloc(n + 1, 1);
    assert_non_null(used);
    for (size_t i = 0; ok && i < n; i++) {
        size_t d = p[i], v = 0;
        for (;; v++) {
            if (used[v])
                continue;
            if (d-- == 0)
                break;
        }
        p[i] = v;
        used[v] = 1;
    }
    free(used);
    return ok;
}

/* Sizes around the segment length (32) and its powers, and larger. */
static const size_t big_sizes[] = {31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129,
                                   200, 1000, 1023, 1025, 3001, 4096, 9999};

/* Random permutations, the identity, the reversal and a rotation: the rank is
 * the quadratic one, and unrank gives the permutation back. */
static void test_against_quadratic(void **state)
{
    (void)state;
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 7), RF_OK);
    mpz_t fast, slow;
    mpz_inits(fast, slow, NULL);
    for (size_t c = 0; c < sizeof big_sizes / sizeof big_sizes[0]; c++) {
        const size_t n = big_sizes[c];
        size_t *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
        assert_non_null(p);
        assert_non_null(q);
        for (int t = 0; t < 6; t++) {
            identity(p, n);
            if (t == 1)
                reversed(p, n);
            else if (t == 2)
                for (size_t i = 0; i < n; i++)
                    p[i] = (i + 1) % n;
            else if (t >= 3)
                rf_shuffle(&g, p, n, sizeof *p);
            assert_int_equal(rf_rank_mpz(fast, p, n, NULL, NULL, 0), RF_OK);
            rank_quadratic(slow, p, n);
            assert_true(mpz_cmp(fast, slow) == 0);
            assert_int_equal(rf_unrank_mpz(fast, n, q, NULL, 0), RF_OK);
            assert_memory_equal(p, q, n * sizeof *p);
        }
        free(p);
        free(q);
    }
    mpz_clears(fast, slow, NULL);
}

/* Random ranks below n! (and the extremes): the same permutation as the
 * quadratic unrank; n! itself and beyond are out of range. */
static void test_unrank_against_quadratic(void **state)
{
    (void)state;
    gmp_randstate_t rs;
    gmp_randinit_default(rs);
    gmp_randseed_ui(rs, 11);
    mpz_t f, r;
    mpz_inits(f, r, NULL);
    for (size_t c = 0; c < sizeof big_sizes / sizeof big_sizes[0]; c++) {
        const size_t n = big_sizes[c];
        size_t *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
        assert_non_null(p);
        assert_non_null(q);
        mpz_fac_ui(f, (unsigned long)n);
        for (int t = 0; t < 5; t++) {
            if (t == 0)
                mpz_set_ui(r, 0);
            else if (t == 1)
                mpz_sub_ui(r, f, 1);
            else
                mpz_urandomm(r, rs, f);
            assert_int_equal(rf_unrank_mpz(r, n, p, NULL, 0), RF_OK);
            assert_true(unrank_quadratic(r, n, q));
            assert_memory_equal(p, q, n * sizeof *p);
        }
        assert_int_equal(rf_unrank_mpz(f, n, p, NULL, 0), RF_ERANGE);
        mpz_add_ui(r, f, 12345);
        assert_int_equal(rf_unrank_mpz(r, n, p, NULL, 0), RF_ERANGE);
        mpz_mul(r, f, f);
        assert_int_equal(rf_unrank_mpz(r, n, p, NULL, 0), RF_ERANGE);
        free(p);
        free(q);
    }
    mpz_clears(f, r, NULL);
    gmp_randclear(rs);
}

/* Invalid permutations of many sizes: the first bad position is reported
 * wherever it falls relative to the segments already combined. */
static void test_invalid_large(void **state)
{
    (void)state;
    mpz_t m;
    mpz_init(m);
    for (size_t c = 0; c < sizeof big_sizes / sizeof big_sizes[0]; c++) {
        const size_t n = big_sizes[c];
        size_t *p = malloc(n * sizeof *p);
        assert_non_null(p);
        const size_t spots[] = {1, n / 2, n - 1, 32, 33, 64};
        for (size_t s = 0; s < sizeof spots / sizeof spots[0]; s++) {
            const size_t at = spots[s];
            if (at >= n)
                continue;
            size_t where = SIZE_MAX;
            identity(p, n);
            p[at] = p[at - 1]; /* a repeat */
            assert_int_equal(rf_rank_mpz(m, p, n, &where, NULL, 0), RF_EINVAL);
            assert_int_equal(where, at);
            identity(p, n);
            p[at] = n + at; /* out of range */
            assert_int_equal(rf_rank_mpz(m, p, n, &where, NULL, 0), RF_EINVAL);
            assert_int_equal(where, at);
        }
        free(p);
    }
    mpz_clear(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_factorial),
        cmocka_unit_test(test_lexicographic_enumeration),
        cmocka_unit_test(test_identity_and_reversed),
        cmocka_unit_test(test_deck_of_52),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_against_quadratic),
        cmocka_unit_test(test_unrank_against_quadratic),
        cmocka_unit_test(test_invalid_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
