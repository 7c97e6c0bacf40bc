/*
 * test_audit_rules.c -- the laws of the rules' tests (audit/audit_rules_law.c)
 * against enumeration, the classic poker counts, the accumulator on decks
 * built to pass and to fail, and the certification helpers.
 *
 * Poker counts on 52 cards: 1302540 high card, 1098240 pair, 123552 two pair,
 * 54912 three of a kind, 10200 straight, 5108 flush, 3744 full house, 624 four
 * of a kind, 40 straight flush, of C(52, 5) = 2598960 (Feller, vol. 1, II.5).
 * SHA-256("abc") from FIPS 180-2, appendix B.1.  log2(52!) = 225.581003123...
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "audit_cert.h"
#include "audit_rules.h"

static void assert_close(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fmax(fabs(want), 1e-300)))
        fail_msg("got %.17g, want %.17g (tolerance %.3g)", got, want, tol);
}

static double sum(const double *p, size_t cells)
{
    double s = 0.0;
    for (size_t i = 0; i < cells; i++)
        s += p[i];
    return s;
}

static void poker_classic_counts(void **state)
{
    (void)state;
    static const uint64_t want[AUDIT_POKER_HANDS] = {1302540, 1098240, 123552, 54912, 10200,
                                                     5108, 3744, 624, 40};
    uint64_t got[AUDIT_POKER_HANDS], total = 0;
    audit_poker_counts(13, got);
    for (int i = 0; i < AUDIT_POKER_HANDS; i++) {
        assert_int_equal(got[i], want[i]);
        total += got[i];
    }
    assert_int_equal(total, 2598960);
    double p[AUDIT_POKER_HANDS];
    audit_law_poker(13, p);
    assert_close(sum(p, AUDIT_POKER_HANDS), 1.0, 1e-15);
    assert_close(p[AUDIT_POKER_PAIR], 1098240.0 / 2598960.0, 1e-15);
    assert_string_equal(audit_poker_name(AUDIT_POKER_TWO_PAIR), "two pair");
}

/* Every hand of 4 x ranks cards, classified one by one. */
static void poker_enumerated(size_t ranks)
{
    const uint32_t n = (uint32_t)(4 * ranks);
    uint64_t got[AUDIT_POKER_HANDS] = {0}, want[AUDIT_POKER_HANDS];
    uint32_t c[5];
    for (c[0] = 0; c[0] < n; c[0]++)
        for (c[1] = c[0] + 1; c[1] < n; c[1]++)
            for (c[2] = c[1] + 1; c[2] < n; c[2]++)
                for (c[3] = c[2] + 1; c[3] < n; c[3]++)
                    for (c[4] = c[3] + 1; c[4] < n; c[4]++)
                        got[audit_poker_hand(c, ranks)]++;
    audit_poker_counts(ranks, want);
    for (int i = 0; i < AUDIT_POKER_HANDS; i++)
        if (got[i] != want[i])
            fail_msg("%zu ranks, %s: enumerated %llu, counted %llu", ranks,
                     audit_poker_name(i), (unsigned long long)got[i],
                     (unsigned long long)want[i]);
}

static void poker_matches_enumeration(void **state)
{
    (void)state;
    for (size_t r = 5; r <= 9; r++)
        poker_enumerated(r);
    poker_enumerated(13);
    assert_int_equal(audit_poker_ranks(52), 13);
    assert_int_equal(audit_poker_ranks(16), 0); /* 4 ranks: no straight possible */
    assert_int_equal(audit_poker_ranks(50), 0);
    assert_int_equal(audit_poker_ranks(56), 0); /* 14 ranks: no such deck */
    assert_int_equal(audit_poker_ranks(20), 5);
}

/* The order of cards does not matter, and the ace plays low and high. */
static void poker_hands_by_example(void **state)
{
    (void)state;
    const uint32_t royal[5] = {12, 0, 11, 9, 10};      /* 10 J Q K A of spades */
    const uint32_t wheel[5] = {0, 14, 28, 42, 4};      /* A 2 3 4 5, mixed suits */
    const uint32_t around[5] = {11, 12, 0, 14, 15};    /* Q K A 2 3: no straight */
    const uint32_t boat[5] = {0, 13, 26, 1, 14};       /* A A A 2 2 */
    assert_int_equal(audit_poker_hand(royal, 13), AUDIT_POKER_STRAIGHT_FLUSH);
    assert_int_equal(audit_poker_hand(wheel, 13), AUDIT_POKER_STRAIGHT);
    assert_int_equal(audit_poker_hand(around, 13), AUDIT_POKER_HIGH_CARD);
    assert_int_equal(audit_poker_hand(boat, 13), AUDIT_POKER_FULL_HOUSE);
}

static void next_perm(uint32_t *a, size_t n)
{
    size_t i = n - 1;
    while (i > 0 && a[i - 1] > a[i])
        i--;
    if (i == 0) {
        for (size_t k = 0; k < n; k++)
            a[k] = (uint32_t)k;
        return;
    }
    size_t j = n - 1;
    while (a[j] < a[i - 1])
        j--;
    uint32_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
    for (size_t l = i, r = n - 1; l < r; l++, r--)
        t = a[l], a[l] = a[r], a[r] = t;
}

/* Every pair of orderings of n cards: the runs law, and the second moments
 * behind the serial statistic (E[x_p x'_p x_q x'_q] = v^2 at p = q and
 * (v / (n - 1))^2 otherwise). */
static void runs_and_serial_enumerated(void **state)
{
    (void)state;
    for (size_t n = 2; n <= 6; n++) {
        const size_t h = n / 2;
        const uint64_t perms = audit_factorial_u64(n);
        uint32_t a[8], b[8];
        uint64_t count[8] = {0};
        double m_same = 0.0, m_cross = 0.0;
        const double c = (double)n - 1.0, v = ((double)n * (double)n - 1.0) / 3.0;
        for (size_t k = 0; k < n; k++)
            a[k] = (uint32_t)k;
        for (uint64_t i = 0; i < perms; i++, next_perm(a, n)) {
            for (size_t k = 0; k < n; k++)
                b[k] = (uint32_t)k;
            for (uint64_t j = 0; j < perms; j++, next_perm(b, n)) {
                size_t up = 0;
                for (size_t p = 0; p < n; p++)
                    up += a[p] < h && b[p] >= h;
                count[up]++;
                const double x0 = (2.0 * a[0] - c) * (2.0 * b[0] - c);
                const double x1 = (2.0 * a[1] - c) * (2.0 * b[1] - c);
                m_same += x0 * x0;
                m_cross += x0 * x1;
            }
        }
        double p[8];
        audit_law_runs(n, p);
        assert_close(sum(p, h + 1), 1.0, 1e-14);
        for (size_t j = 0; j <= h; j++)
            assert_close(p[j], (double)count[j] / ((double)perms * (double)perms), 1e-12);
        const double pairs = (double)perms * (double)perms;
        assert_close(m_same / pairs, v * v, 1e-12);
        assert_close(m_cross / pairs, v * v / (c * c), 1e-12);
    }
}

/* Every sequence of first cards of 4 games after a hit (n = 4, one hit
 * card): the gap law with its tail. */
static void gap_enumerated(void **state)
{
    (void)state;
    enum { N = 4, L = 5 }; /* gaps 0..L-1, tail >= L */
    uint64_t count[L + 1] = {0}, seqs = 1;
    for (int i = 0; i < L; i++)
        seqs *= N;
    for (uint64_t s = 0; s < seqs; s++) {
        uint64_t x = s;
        size_t gap = L;
        for (size_t k = 0; k < L; k++, x /= N)
            if (x % N == 0) {
                gap = k;
                break;
            }
        count[gap]++;
    }
    double p[L + 1];
    audit_law_gap(1.0 / N, L + 1, p);
    assert_close(sum(p, L + 1), 1.0, 1e-15);
    for (size_t k = 0; k <= L; k++)
        assert_close(p[k], (double)count[k] / (double)seqs, 1e-14);
    assert_int_equal(AUDIT_GAP_HITS(52), 6);
    assert_int_equal(AUDIT_GAP_HITS(8), 1);
}

/* Every sequence of L first-card classes (d classes): the coupon law, its
 * lengths d..L and tail beyond L. */
static void coupon_enumerated(void **state)
{
    (void)state;
    for (size_t d = 2; d <= 5; d++) {
        const size_t L = 11 - d; /* d^L sequences, at most 5^6 * ... small */
        uint64_t seqs = 1, count[16] = {0};
        for (size_t i = 0; i < L; i++)
            seqs *= d;
        for (uint64_t s = 0; s < seqs; s++) {
            uint64_t x = s;
            unsigned seen = 0;
            size_t len = L + 1;
            for (size_t k = 0; k < L; k++, x /= d) {
                seen |= 1u << (x % d);
                if (seen == (1u << d) - 1) {
                    len = k + 1;
                    break;
                }
            }
            count[len - d]++;
        }
        const size_t cells = L + 2 - d;
        double p[16];
        audit_law_coupon(d, cells, p);
        assert_close(sum(p, cells), 1.0, 1e-14);
        for (size_t k = 0; k < cells; k++)
            assert_close(p[k], (double)count[k] / (double)seqs, 1e-12);
    }
    /* The mean segment, d H_d (Knuth 3.3.2 C), from a law whose tail is nil. */
    double p[4096], mean = 0.0, harmonic = 0.0;
    audit_law_coupon(52, 4096, p);
    for (size_t k = 0; k + 1 < 4096; k++)
        mean += (double)(52 + k) * p[k];
    for (int i = 1; i <= 52; i++)
        harmonic += 1.0 / i;
    assert_close(mean, 52.0 * harmonic, 1e-9);
    assert_int_equal(audit_coupon_classes(52), 52);
    assert_int_equal(audit_coupon_classes(1000), 50);
    assert_int_equal(audit_coupon_classes(67), 1);
}

/* Trials of a shuffle through the accumulator, on one stream. */
static void run_stream(audit_rules_acc *r, size_t n, uint64_t trials, int repeat_every)
{
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 20261128), RF_OK);
    uint32_t a[64];
    for (uint64_t t = 0; t < trials; t++) {
        if (repeat_every == 0 || t % (uint64_t)repeat_every != 1) {
            for (size_t i = 0; i < n; i++)
                a[i] = (uint32_t)i;
            rf_shuffle_u32(&g, a, n);
        }
        audit_rules_add(r, a);
    }
}

static void tests_of(const audit_rules_acc *r, audit_test *t)
{
    memset(t, 0, AUDIT_RULES_TESTS * sizeof *t);
    audit_rules_tests(r, t);
}

/* The accumulator's counts of runs and serial sums against a direct
 * computation, for sizes that fill whole groups of four positions and sizes
 * that leave one to three over (the vectorised and the plain loop). */
static void counts_match_direct(void **state)
{
    (void)state;
    static const size_t sizes[] = {2, 3, 4, 5, 6, 7, 8, 9, 13, 52, 61};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s], h = n / 2, games = 300;
        audit_rules_acc *r = audit_rules_new(n);
        assert_non_null(r);
        rf_rng g;
        assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 7 + n), RF_OK);
        uint32_t a[64], last[64];
        uint64_t runs[33] = {0};
        double serial[64] = {0};
        const double c = (double)n - 1.0;
        for (size_t t = 0; t < games; t++) {
            for (size_t i = 0; i < n; i++)
                a[i] = (uint32_t)i;
            rf_shuffle_u32(&g, a, n);
            audit_rules_add(r, a);
            if (t > 0) {
                size_t up = 0;
                for (size_t p = 0; p < n; p++) {
                    up += last[p] < h && a[p] >= h;
                    serial[p] += (2.0 * last[p] - c) * (2.0 * a[p] - c);
                }
                runs[up]++;
            }
            memcpy(last, a, n * sizeof *a);
        }
        audit_rules_counts k;
        audit_rules_get_counts(r, &k);
        assert_int_equal(k.pairs, games - 1);
        assert_int_equal(k.runs_cells, h + 1);
        for (size_t j = 0; j <= h; j++)
            assert_int_equal(k.runs[j], runs[j]);
        double z[64];
        audit_rules_serial_z(r, z);
        const double scale = (((double)n * (double)n - 1.0) / 3.0) * sqrt((double)(games - 1));
        for (size_t p = 0; p < n; p++)
            assert_true(z[p] == serial[p] / scale);
        audit_rules_free(r);
    }
}

/* Decks of n = 8 whose first cards follow a script: the gaps between the
 * games whose first card is 0 (the one hit card at n = 8) and the coupon
 * segments, counted by hand; a restart forgets the open gap and segment. */
static void add_first(audit_rules_acc *r, uint32_t first)
{
    uint32_t a[8];
    for (uint32_t i = 0; i < 8; i++)
        a[i] = (first + i) % 8;
    audit_rules_add(r, a);
}

static void gap_and_coupon_counted(void **state)
{
    (void)state;
    audit_rules_acc *r = audit_rules_new(8);
    assert_non_null(r);
    /* hits at games 2, 5, 6 and 14: gaps of 2, 0 and 7 misses; the first
     * 12 games show all 8 classes, a segment of 8 + 4 */
    static const uint32_t script[] = {3, 0, 5, 5, 0, 0, 1, 2, 3, 4, 6, 7, 5, 0};
    for (size_t i = 0; i < sizeof script / sizeof script[0]; i++)
        add_first(r, script[i]);
    audit_rules_restart(r);
    /* after the restart: a gap of 1 from the next hit; the 5 0 of the open
     * segment and the 7 misses before it are forgotten */
    static const uint32_t after[] = {4, 4, 0, 6, 0, 1, 2, 3, 5, 6, 7, 1, 4};
    for (size_t i = 0; i < sizeof after / sizeof after[0]; i++)
        add_first(r, after[i]);
    audit_rules_counts c;
    audit_rules_get_counts(r, &c);
    assert_int_equal(c.coupon_classes, 8);
    assert_true(c.gap_cells > 8 && c.coupon_cells > 8);
    uint64_t gaps = 0, segments = 0;
    for (size_t k = 0; k < c.gap_cells; k++)
        gaps += c.gaps[k];
    for (size_t k = 0; k < c.coupon_cells; k++)
        segments += c.coupon[k];
    assert_int_equal(gaps, 4);
    assert_int_equal(c.gaps[0], 1);
    assert_int_equal(c.gaps[1], 1);
    assert_int_equal(c.gaps[2], 1);
    assert_int_equal(c.gaps[7], 1);
    /* the second segment: 4 4 0 6 0 1 2 3 5 6 7 is 11 games, 8 + 3 */
    assert_int_equal(segments, 2);
    assert_int_equal(c.coupon[4], 1);
    assert_int_equal(c.coupon[3], 1);
    assert_int_equal(c.pairs, sizeof script / sizeof script[0] - 1 +
                                  sizeof after / sizeof after[0] - 1);
    audit_rules_free(r);
}

/* The serial statistic is z' S^-1 z with S = (1 - b) I + b J, b = 1/(n - 1)^2:
 * the closed form against S solved by Gaussian elimination. */
static double quadratic_form(const double *z, size_t n)
{
    double m[16][17];
    const double b = 1.0 / (((double)n - 1.0) * ((double)n - 1.0));
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            m[i][j] = i == j ? 1.0 : b;
        m[i][n] = z[i];
    }
    for (size_t k = 0; k < n; k++)
        for (size_t i = k + 1; i < n; i++) {
            const double f = m[i][k] / m[k][k];
            for (size_t j = k; j <= n; j++)
                m[i][j] -= f * m[k][j];
        }
    double w[16], q = 0.0;
    for (size_t i = n; i-- > 0;) {
        double v = m[i][n];
        for (size_t j = i + 1; j < n; j++)
            v -= m[i][j] * w[j];
        w[i] = v / m[i][i];
        q += z[i] * w[i];
    }
    return q;
}

static void serial_statistic_is_the_quadratic_form(void **state)
{
    (void)state;
    static const size_t sizes[] = {3, 5, 8, 13};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        audit_rules_acc *r = audit_rules_new(n);
        assert_non_null(r);
        run_stream(r, n, 400, 7); /* a repeat now and then: z far from 0 */
        double z[16];
        audit_rules_serial_z(r, z);
        audit_test t[AUDIT_RULES_TESTS];
        tests_of(r, t);
        assert_true(t[1].applicable);
        assert_close(t[1].df, (double)n, 0.0);
        assert_close(t[1].stat, quadratic_form(z, n), 1e-9);
        audit_rules_free(r);
    }
}

static void fair_stream_passes(void **state)
{
    (void)state;
    audit_rules_acc *r = audit_rules_new(52);
    assert_non_null(r);
    run_stream(r, 52, 20000, 0);
    audit_test t[AUDIT_RULES_TESTS];
    tests_of(r, t);
    for (int i = 0; i < AUDIT_RULES_TESTS; i++) {
        if (!t[i].applicable)
            fail_msg("test %d did not run: %s", i, t[i].note);
        if (!(t[i].pvalue > 1e-4))
            fail_msg("test %d rejects a fair stream: p = %g (%s)", i, t[i].pvalue, t[i].note);
    }
    audit_rules_free(r);
}

/* One deck in 10 repeated: both tests across games see it; a restart between
 * two halves pairs nothing across it. */
static void repeats_are_caught(void **state)
{
    (void)state;
    audit_rules_acc *r = audit_rules_new(8), *half = audit_rules_new(8);
    assert_non_null(r);
    assert_non_null(half);
    run_stream(r, 8, 5000, 10);
    audit_test t[AUDIT_RULES_TESTS];
    tests_of(r, t);
    assert_true(t[0].applicable && t[0].pvalue < 1e-6);
    assert_true(t[1].applicable && t[1].pvalue < 1e-6);
    run_stream(half, 8, 100, 0);
    audit_rules_restart(half);
    run_stream(half, 8, 100, 0);
    audit_rules_counts c;
    audit_rules_get_counts(half, &c);
    assert_int_equal(c.pairs, 198);
    audit_rules_merge(r, half);
    audit_rules_get_counts(r, &c);
    assert_int_equal(c.pairs, 4999 + 198);
    audit_rules_free(r);
    audit_rules_free(half);
    audit_rules_free(NULL);
}

static void level_and_key_bits(void **state)
{
    (void)state;
    audit_test t = {.applicable = 1, .pvalue = 0.0099};
    assert_false(audit_level_pass(&t));
    t.pvalue = 0.01;
    assert_true(audit_level_pass(&t));
    assert_close(audit_log2_factorial(52), 225.58100312370276, 1e-12);
    assert_true(audit_log2_factorial(57) < 256.0 && audit_log2_factorial(58) > 256.0);
}

static void sha256_of_a_file(void **state)
{
    (void)state;
    char path[] = "/tmp/riffle-sha256-XXXXXX", hex[AUDIT_SHA256_HEX];
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    const int wrote = write(fd, "abc", 3) == 3;
    close(fd);
    const int ok = audit_sha256_file(path, hex);
    unlink(path);
    assert_true(wrote);
    assert_int_equal(ok, 0);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_int_equal(audit_sha256_file("/nonexistent/riffle", hex), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(poker_classic_counts),
        cmocka_unit_test(poker_matches_enumeration),
        cmocka_unit_test(poker_hands_by_example),
        cmocka_unit_test(runs_and_serial_enumerated),
        cmocka_unit_test(gap_enumerated),
        cmocka_unit_test(coupon_enumerated),
        cmocka_unit_test(counts_match_direct),
        cmocka_unit_test(gap_and_coupon_counted),
        cmocka_unit_test(serial_statistic_is_the_quadratic_form),
        cmocka_unit_test(fair_stream_passes),
        cmocka_unit_test(repeats_are_caught),
        cmocka_unit_test(level_and_key_bits),
        cmocka_unit_test(sha256_of_a_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
