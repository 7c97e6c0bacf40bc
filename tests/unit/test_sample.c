/* Sampling: exact enumeration of every draw sequence for the integer
 * algorithms (sparse and dense Fisher-Yates, Floyd, the exact last step of
 * Vitter's D); fixed-seed chi-square tests, with the right degrees of
 * freedom, for the real-valued ones (Vitter's D, Li's L, A-ExpJ), which draw
 * doubles from raw 64-bit words and so cannot be enumerated through
 * rf_source.below; exact weighted draw probabilities compared statistically;
 * API contracts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perm_stats.h"
#include "riffle_perm.h"
#include "sample/sample_internal.h"
#include "sample/sample_map.h"
#include "scripted.h"

#define P_MIN 1e-4 /* fixed seeds: a failure is reproducible, never flaky */

static void rng(rf_rng *g, uint64_t seed)
{
    assert_int_equal(rf_rng_seed_u64(g, RF_RNG_XOSHIRO256PP, seed), RF_OK);
}

static uint64_t falling(uint64_t n, uint64_t k)
{
    uint64_t f = 1;
    for (uint64_t i = 0; i < k; i++)
        f *= n - i;
    return f;
}

/* ---- exact enumeration ---- */

enum method { M_DENSE, M_SPARSE, M_PUBLIC, M_FLOYD };

static void run_method(enum method m, rf_rng *g, uint64_t n, size_t k, uint64_t *out)
{
    uint64_t mem[64];
    switch (m) {
    case M_DENSE:
        rfi_sample_dense(g, n, k, out, mem);
        break;
    case M_SPARSE:
        rfi_sample_sparse(g, n, k, out, mem, rfi_map_capacity(k, 2));
        break;
    case M_PUBLIC:
        assert_int_equal(rf_sample(g, n, k, out, NULL, 0), RF_OK);
        break;
    case M_FLOYD:
        assert_int_equal(rf_sample_subset(g, n, k, out, mem, sizeof mem), RF_OK);
        break;
    }
}

/* Run every draw sequence; each outcome (the k values as a base-n number) must
 * have total probability exactly 1 / (number of outcomes): every k-permutation
 * for the ordered samplers, every k-subset for Floyd. */
static void enumerate(enum method m, uint64_t n, size_t k)
{
    size_t cells = 1;
    for (size_t i = 0; i < k; i++)
        cells *= n;
    uint64_t *count = calloc(cells, sizeof *count);
    assert_non_null(count);
    const uint64_t paths = falling(n, k);
    rf_script s;
    rf_rng g;
    uint64_t runs = 0;
    rf_script_init(&s);
    do {
        uint64_t out[8];
        rf_script_rng(&s, &g);
        run_method(m, &g, n, k, out);
        assert_true(rf_script_den(&s) == paths); /* every sequence equally likely */
        size_t cell = 0;
        for (size_t i = 0; i < k; i++) {
            assert_true(out[i] < n);
            for (size_t j = 0; j < i; j++)
                assert_true(out[i] != out[j]);
            if (m == M_FLOYD && i > 0)
                assert_true(out[i - 1] < out[i]);
            cell = cell * n + out[i];
        }
        count[cell]++;
        runs++;
    } while (rf_script_next(&s));
    assert_int_equal(s.error, 0);
    assert_true(runs == paths);
    /* ordered: each k-permutation once; Floyd: each subset k! times */
    const uint64_t each = m == M_FLOYD ? falling(k, k) : 1;
    uint64_t outcomes = 0;
    for (size_t c = 0; c < cells; c++) {
        if (count[c] == 0)
            continue;
        assert_true(count[c] == each);
        outcomes++;
    }
    assert_true(outcomes * each == paths);
    free(count);
}

static const struct {
    uint64_t n;
    size_t k;
} cases[] = {{1, 1}, {2, 1}, {2, 2}, {3, 2}, {4, 4}, {5, 3}, {6, 2}, {7, 3}, {8, 4}, {9, 1}};

static void test_enumerate_fisher_yates(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        enumerate(M_DENSE, cases[c].n, cases[c].k);
        enumerate(M_SPARSE, cases[c].n, cases[c].k);
        enumerate(M_PUBLIC, cases[c].n, cases[c].k);
    }
}

static void test_enumerate_floyd(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        enumerate(M_FLOYD, cases[c].n, cases[c].k);
}

/* The last selection of Vitter's D is the exact rf_below: with k = 1 the
 * sampler draws nothing real-valued and can be enumerated. */
static void test_enumerate_seqsample_k1(void **state)
{
    (void)state;
    for (uint64_t n = 1; n <= 30; n++) {
        uint64_t count[30] = {0};
        rf_script s;
        rf_rng g;
        rf_script_init(&s);
        do {
            rf_seqsample q;
            uint64_t idx;
            rf_script_rng(&s, &g);
            assert_int_equal(rf_seqsample_init(&q, n, 1), RF_OK);
            assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_OK);
            assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_EEMPTY);
            assert_true(rf_script_den(&s) == n);
            count[idx]++;
        } while (rf_script_next(&s));
        assert_int_equal(s.error, 0);
        for (uint64_t i = 0; i < n; i++)
            assert_true(count[i] == 1);
    }
}

/* ---- rf_sample contracts ---- */

static void test_sample_dense_equals_sparse(void **state)
{
    (void)state;
    static uint64_t mem[20000], a[300], b[300];
    for (uint64_t seed = 0; seed < 20; seed++) {
        rf_rng g, h;
        rng(&g, seed);
        rng(&h, seed);
        rfi_sample_dense(&g, 10000, 300, a, mem);
        rfi_sample_sparse(&h, 10000, 300, b, mem, rfi_map_capacity(300, 2));
        assert_memory_equal(a, b, sizeof a);
    }
}

static void test_sample_contract(void **state)
{
    (void)state;
    uint64_t out[1000], head[1000];
    rf_rng g, h;
    /* head property */
    rng(&g, 5);
    rng(&h, 5);
    assert_int_equal(rf_sample(&g, 1000000, 1000, out, NULL, 0), RF_OK);
    assert_int_equal(rf_sample(&h, 1000000, 10, head, NULL, 0), RF_OK);
    assert_memory_equal(out, head, 10 * sizeof *out);
    /* huge n: distinct, in range */
    assert_int_equal(rf_sample(&g, UINT64_MAX, 1000, out, NULL, 0), RF_OK);
    for (size_t i = 0; i < 1000; i++)
        for (size_t j = 0; j < i; j++)
            assert_true(out[i] != out[j]);
    /* caller scratch */
    const size_t need = rf_sample_scratch_size((uint64_t)1 << 40, 100);
    assert_true(need > 0 && need <= 256 * 16);
    uint64_t *scratch = malloc(need);
    assert_int_equal(rf_sample(&g, (uint64_t)1 << 40, 100, out, scratch, need), RF_OK);
    assert_int_equal(rf_sample(&g, (uint64_t)1 << 40, 100, out, scratch, need - 8), RF_EINVAL);
    free(scratch);
    assert_int_equal(rf_sample_scratch_size(10, 10), 80);
    assert_int_equal(rf_sample_scratch_size(10, 0), 0);
    assert_int_equal(rf_sample(&g, 3, 4, out, NULL, 0), RF_EINVAL);
    assert_int_equal(rf_sample(&g, 3, 0, out, NULL, 0), RF_OK);
    assert_int_equal(rf_sample_subset(&g, 3, 4, out, NULL, 0), RF_EINVAL);
    assert_int_equal(rf_sample_subset(&g, UINT64_MAX, 1000, out, NULL, 0), RF_OK);
    for (size_t i = 1; i < 1000; i++)
        assert_true(out[i - 1] < out[i]);
    assert_int_equal(rf_sample_subset(&g, 1000, 1000, out, NULL, 0), RF_OK);
    for (size_t i = 0; i < 1000; i++)
        assert_true(out[i] == i);
}

/* ---- Vitter's D: statistics ---- */

/* All k-subsets of [0, n) counted over S samples: C(n, k) cells, df C - 1. */
static void seq_subset_test(uint64_t n, uint64_t k, uint64_t samples, uint64_t seed)
{
    /* cell = sum of C(idx_j, j + 1): the combinatorial number system */
    uint64_t binom[128][4] = {{0}};
    for (uint64_t i = 0; i < 128; i++) {
        binom[i][0] = 1;
        for (uint64_t j = 1; j < 4; j++)
            binom[i][j] = i == 0 ? 0 : binom[i - 1][j - 1] + binom[i - 1][j];
    }
    const uint64_t cells = binom[n][k];
    uint64_t *obs = calloc(cells, sizeof *obs);
    double *prob = malloc(cells * sizeof *prob);
    for (uint64_t c = 0; c < cells; c++)
        prob[c] = 1.0 / (double)cells;
    rf_rng g;
    rng(&g, seed);
    for (uint64_t t = 0; t < samples; t++) {
        rf_seqsample q;
        uint64_t idx, prev = 0, cell = 0;
        assert_int_equal(rf_seqsample_init(&q, n, k), RF_OK);
        for (uint64_t j = 0; j < k; j++) {
            assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_OK);
            assert_true(idx < n && (j == 0 || idx > prev));
            cell += binom[idx][j + 1];
            prev = idx;
        }
        assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_EEMPTY);
        obs[cell]++;
    }
    const double x = rf_test_pearson(obs, prob, cells, samples);
    const double pv = rf_test_chisq_pvalue(x, (double)(cells - 1));
    print_message("# seqsample %llu of %llu: chi2 = %.1f, df %llu, p = %.4f\n",
                  (unsigned long long)k, (unsigned long long)n, x,
                  (unsigned long long)(cells - 1), pv);
    assert_true(pv > P_MIN);
    free(obs);
    free(prob);
}

/* Inclusion counts of each of n indices over S samples of k: the indicator
 * vector has covariance k(n-k)/(n(n-1)) (I - J/n), so Pearson's X^2 against
 * S k/n is (n-k)/(n-1) times a chi-square with n - 1 degrees of freedom. */
static double inclusion_pvalue(const uint64_t *obs, uint64_t n, uint64_t k, uint64_t samples)
{
    double x = 0.0;
    const double e = (double)samples * (double)k / (double)n;
    for (uint64_t i = 0; i < n; i++)
        x += ((double)obs[i] - e) * ((double)obs[i] - e) / e;
    x *= (double)(n - 1) / (double)(n - k);
    return rf_test_chisq_pvalue(x, (double)(n - 1));
}

static void test_seqsample_statistics(void **state)
{
    (void)state;
    seq_subset_test(10, 3, 60000, 1);   /* Algorithm A, then the exact last step */
    seq_subset_test(40, 2, 78000, 2);   /* Algorithm D (40 / 13 > 2) */
    seq_subset_test(100, 2, 198000, 3); /* Algorithm D */
    seq_subset_test(60, 3, 171100, 4);  /* D, then A as n / N grows */
    enum { N = 2000, K = 40, S = 20000 };
    static uint64_t obs[N];
    rf_rng g;
    rng(&g, 6);
    for (int t = 0; t < S; t++) {
        rf_seqsample q;
        uint64_t idx;
        assert_int_equal(rf_seqsample_init(&q, N, K), RF_OK);
        while (rf_seqsample_next(&q, &g, &idx) == RF_OK)
            obs[idx]++;
    }
    const double pv = inclusion_pvalue(obs, N, K, S);
    print_message("# seqsample 40 of 2000 inclusion: p = %.4f\n", pv);
    assert_true(pv > P_MIN);
}

static void test_seqsample_contract(void **state)
{
    (void)state;
    rf_seqsample q;
    rf_rng g;
    uint64_t idx, prev = 0;
    rng(&g, 9);
    assert_int_equal(rf_seqsample_init(&q, 3, 4), RF_EINVAL);
    assert_int_equal(rf_seqsample_init(&q, 0, 0), RF_OK);
    assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_EEMPTY);
    /* k = n selects everything */
    assert_int_equal(rf_seqsample_init(&q, 50, 50), RF_OK);
    for (uint64_t i = 0; i < 50; i++) {
        assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_OK);
        assert_true(idx == i);
    }
    assert_int_equal(rf_seqsample_remaining(&q), 0);
    /* huge n: increasing, in range, k results */
    const uint64_t n = UINT64_MAX - 10;
    assert_int_equal(rf_seqsample_init(&q, n, 10000), RF_OK);
    for (int i = 0; i < 10000; i++) {
        assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_OK);
        assert_true(idx < n && (i == 0 || idx > prev));
        prev = idx;
    }
    assert_int_equal(rf_seqsample_next(&q, &g, &idx), RF_EEMPTY);
}

/* ---- Li's L: statistics and the skip API ---- */

/* Feed a stream of n items into a reservoir of k; the subset kept. */
static void reservoir_run(rf_rng *g, uint64_t n, size_t k, uint64_t *slot, int use_skip)
{
    rf_reservoir r;
    assert_int_equal(rf_reservoir_init(&r, k), RF_OK);
    uint64_t i = 0;
    while (i < n) {
        if (use_skip) {
            uint64_t s = rf_reservoir_skip(&r);
            if (s > n - i)
                s = n - i;
            rf_reservoir_pass(&r, s);
            i += s;
            if (i == n)
                break;
        }
        const size_t at = rf_reservoir_offer(&r, g);
        if (at != RF_RESERVOIR_DISCARD) {
            assert_true(at < k);
            slot[at] = i;
        }
        i++;
    }
    assert_true(rf_reservoir_seen(&r) == n);
    assert_true(rf_reservoir_size(&r) == (n < k ? n : k));
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void reservoir_subset_test(uint64_t n, size_t k, uint64_t samples, uint64_t seed)
{
    /* cells: the k-subsets in the combinatorial number system */
    uint64_t binom[64][4] = {{0}};
    for (uint64_t i = 0; i < 64; i++) {
        binom[i][0] = 1;
        for (uint64_t j = 1; j < 4; j++)
            binom[i][j] = i == 0 ? 0 : binom[i - 1][j - 1] + binom[i - 1][j];
    }
    const uint64_t cells = binom[n][k];
    uint64_t *obs = calloc(cells, sizeof *obs);
    double *prob = malloc(cells * sizeof *prob);
    for (uint64_t c = 0; c < cells; c++)
        prob[c] = 1.0 / (double)cells;
    rf_rng g;
    rng(&g, seed);
    for (uint64_t t = 0; t < samples; t++) {
        uint64_t slot[4];
        reservoir_run(&g, n, k, slot, (int)(t & 1));
        qsort(slot, k, sizeof *slot, cmp_u64);
        uint64_t cell = 0;
        for (size_t j = 0; j < k; j++) {
            assert_true(j == 0 || slot[j] > slot[j - 1]);
            cell += binom[slot[j]][j + 1];
        }
        obs[cell]++;
    }
    const double x = rf_test_pearson(obs, prob, cells, samples);
    const double pv = rf_test_chisq_pvalue(x, (double)(cells - 1));
    print_message("# reservoir %zu of %llu: chi2 = %.1f, df %llu, p = %.4f\n", k,
                  (unsigned long long)n, x, (unsigned long long)(cells - 1), pv);
    assert_true(pv > P_MIN);
    free(obs);
    free(prob);
}

static void test_reservoir_statistics(void **state)
{
    (void)state;
    reservoir_subset_test(8, 3, 56000, 11);
    reservoir_subset_test(30, 2, 87000, 12);
    reservoir_subset_test(60, 1, 30000, 13);
    enum { N = 3000, K = 30, S = 20000 };
    static uint64_t obs[N];
    rf_rng g;
    rng(&g, 15);
    for (int t = 0; t < S; t++) {
        uint64_t slot[K];
        reservoir_run(&g, N, K, slot, t & 1);
        for (int j = 0; j < K; j++)
            obs[slot[j]]++;
    }
    const double pv = inclusion_pvalue(obs, N, K, S);
    print_message("# reservoir 30 of 3000 inclusion: p = %.4f\n", pv);
    assert_true(pv > P_MIN);
}

static void test_reservoir_contract(void **state)
{
    (void)state;
    rf_reservoir r;
    rf_rng g, h;
    assert_int_equal(rf_reservoir_init(&r, 0), RF_EINVAL);
    /* skipping unseen items gives the same sample as offering each */
    for (uint64_t seed = 0; seed < 20; seed++) {
        uint64_t a[16], b[16];
        rng(&g, seed);
        rng(&h, seed);
        reservoir_run(&g, 100000, 16, a, 0);
        reservoir_run(&h, 100000, 16, b, 1);
        assert_memory_equal(a, b, sizeof a);
    }
    /* a short stream keeps everything, in order, without a draw */
    assert_int_equal(rf_reservoir_init(&r, 5), RF_OK);
    for (size_t i = 0; i < 3; i++) {
        assert_true(rf_reservoir_skip(&r) == 0);
        assert_true(rf_reservoir_offer(&r, NULL) == i);
    }
    /* the skips are geometric: a long stream costs O(k log(n/k)) keeps */
    rng(&g, 77);
    assert_int_equal(rf_reservoir_init(&r, 10), RF_OK);
    uint64_t kept = 0;
    while (rf_reservoir_seen(&r) < 100000000) {
        uint64_t s = rf_reservoir_skip(&r);
        if (s > 100000000 - rf_reservoir_seen(&r))
            s = 100000000 - rf_reservoir_seen(&r);
        rf_reservoir_pass(&r, s);
        if (rf_reservoir_seen(&r) < 100000000)
            kept += rf_reservoir_offer(&r, &g) != RF_RESERVOIR_DISCARD;
    }
    /* expected about k (1 + ln(n/k)) = 10 (1 + 16.1) = 171 */
    print_message("# reservoir 10 of 10^8: %llu items kept\n", (unsigned long long)kept);
    assert_true(kept > 100 && kept < 300);
}

/* ---- weighted: A-ExpJ ---- */

/* Ordered pairs (first, second) of k = 2 draws from weights w: exact
 * probability w_a / W * w_b / (W - w_a). */
static void test_weighted_pairs(void **state)
{
    (void)state;
    static const double w[5] = {1, 2, 0, 3, 4};
    enum { N = 5, S = 40000 };
    uint64_t obs[N * N] = {0};
    double prob[N * N], total = 0;
    for (int i = 0; i < N; i++)
        total += w[i];
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++)
            prob[a * N + b] = a == b ? 0.0 : w[a] / total * w[b] / (total - w[a]);
    rf_rng g;
    rng(&g, 21);
    for (int t = 0; t < S; t++) {
        size_t out[2], count;
        assert_int_equal(rf_sample_weighted(&g, w, N, 2, out, &count), RF_OK);
        assert_int_equal(count, 2);
        obs[out[0] * N + out[1]]++;
    }
    double x = 0.0;
    int cells = 0;
    for (int c = 0; c < N * N; c++) {
        if (prob[c] == 0.0) {
            assert_true(obs[c] == 0); /* zero weight and repeats never */
            continue;
        }
        const double e = S * prob[c];
        x += ((double)obs[c] - e) * ((double)obs[c] - e) / e;
        cells++;
    }
    const double pv = rf_test_chisq_pvalue(x, cells - 1);
    print_message("# weighted ordered pairs: chi2 = %.1f, df %d, p = %.4f\n", x, cells - 1, pv);
    assert_true(pv > P_MIN);
}

/* Long stream, small k, so the exponential jumps do the work.  The j-th item
 * in sample order is a single categorical variable per sample whose exact law
 * follows from successive draws (P(a, b, c) = w_a/W w_b/(W - w_a) w_c/(W -
 * w_a - w_b), summed over the other two positions): one multinomial
 * chi-square test per position j = 1, 2, 3. */
static void weighted_jumps_at(int scale, uint64_t seed)
{
    enum { N = 60, K = 3, S = 30000 };
    double w[N], total = 0;
    for (int i = 0; i < N; i++) {
        w[i] = i % 7 == 3 ? 0.0 : 0.5 + (i * 37 % 11);
        total += w[i];
    }
    static double law[K][N];
    memset(law, 0, sizeof law);
    for (int a = 0; a < N; a++) {
        for (int b = 0; b < N; b++) {
            if (b == a)
                continue;
            const double pab = w[a] / total * w[b] / (total - w[a]);
            for (int c = 0; c < N; c++) {
                if (c == a || c == b)
                    continue;
                const double p = pab * w[c] / (total - w[a] - w[b]);
                law[0][a] += p;
                law[1][b] += p;
                law[2][c] += p;
            }
        }
    }
    static uint64_t obs[K][N];
    memset(obs, 0, sizeof obs);
    rf_wsample *s = NULL;
    rf_rng g;
    rng(&g, seed);
    for (int t = 0; t < S; t++) {
        size_t item[K], slots[K], slot;
        rf_wsample_free(s);
        s = rf_wsample_new(K);
        assert_non_null(s);
        for (int i = 0; i < N; i++) {
            /* scaled by a power of two, exactly: the law is the same */
            assert_int_equal(rf_wsample_offer(s, &g, ldexp(w[i], scale), &slot), RF_OK);
            if (slot != RF_RESERVOIR_DISCARD)
                item[slot] = (size_t)i;
        }
        assert_int_equal(rf_wsample_result(s, slots), K);
        for (int j = 0; j < K; j++)
            obs[j][item[slots[j]]]++;
    }
    rf_wsample_free(s);
    for (int j = 0; j < K; j++) {
        double x = 0.0;
        int cells = 0;
        for (int i = 0; i < N; i++) {
            if (w[i] == 0.0) {
                assert_true(obs[j][i] == 0);
                continue;
            }
            const double e = S * law[j][i];
            x += ((double)obs[j][i] - e) * ((double)obs[j][i] - e) / e;
            cells++;
        }
        const double pv = rf_test_chisq_pvalue(x, cells - 1);
        print_message("# weighted draw %d of 3 (60 items, weights x 2^%d): chi2 = %.1f, "
                      "df %d, p = %.4f\n", j + 1, scale, x, cells - 1, pv);
        assert_true(pv > P_MIN);
    }
}

static void test_weighted_jumps(void **state)
{
    (void)state;
    weighted_jumps_at(0, 22);
}

/* The same stream with every weight subnormal (x 2^-1064: 0.5 becomes
 * 2^-1065, and all of them keep their few bits exactly) or huge (x 2^1010,
 * up to 1.1e305): a key log(u)/w overflowed or lost its bits there. */
static void test_weighted_jumps_extreme(void **state)
{
    (void)state;
    weighted_jumps_at(-1064, 24);
    weighted_jumps_at(1010, 25);
}

/* Ordered pairs (first, second) of k = 2 draws from 3 or 4 weights at the
 * ends of the double range, against P(a, b) = w_a / W * w_b / (W - w_a),
 * with W - w_a summed from the others (no cancellation).  A cell of
 * probability below 1e-12 must stay empty. */
/* w[x] / the sum of the w[i], i != skip, each scaled by the power of two
 * that brings the largest of them to [1, 2): exact, and no sum overflows. */
static double share(const double *w, int n, int skip, int x)
{
    double top = 0.0, sum = 0.0;
    for (int i = 0; i < n; i++)
        top = i != skip && w[i] > top ? w[i] : top;
    const int down = -ilogb(top);
    for (int i = 0; i < n; i++)
        sum += i == skip ? 0.0 : ldexp(w[i], down);
    return ldexp(w[x], down) / sum;
}

static void weighted_pairs_at(const char *name, const double *w, int n, uint64_t seed)
{
    enum { S = 20000, NMAX = 4 };
    uint64_t obs[NMAX * NMAX] = {0};
    rf_rng g;
    rng(&g, seed);
    for (int t = 0; t < S; t++) {
        size_t out[2], count;
        assert_int_equal(rf_sample_weighted(&g, w, (size_t)n, 2, out, &count), RF_OK);
        assert_int_equal(count, 2);
        obs[out[0] * NMAX + out[1]]++;
    }
    double x = 0.0;
    int cells = 0;
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            const double p = a == b ? 0.0 : share(w, n, -1, a) * share(w, n, a, b);
            const uint64_t o = obs[a * NMAX + b];
            if (p < 1e-12) {
                assert_true(o == 0);
                continue;
            }
            const double e = S * p;
            x += ((double)o - e) * ((double)o - e) / e;
            cells++;
        }
    }
    const double pv = cells > 1 ? rf_test_chisq_pvalue(x, cells - 1) : 1.0;
    print_message("# weighted pairs, %s: chi2 = %.1f, df %d, p = %.4f\n", name, x, cells - 1,
                  pv);
    assert_true(pv > P_MIN);
}

static void test_weighted_extreme(void **state)
{
    (void)state;
    const double d = 0x1p-1074; /* the smallest subnormal */
    const double equal_subnormal[2] = {1e-310, 1e-310};
    const double subnormal[4] = {1e-310, 1e-310, 3e-310, 2e-310};
    const double smallest[4] = {d, 2 * d, 3 * d, 4 * d};
    const double huge[4] = {1e308, 1e308, 5e307, 1.5e308};
    const double ratios[3] = {1e308, 1e-310, 2e-310};
    const double with_one[4] = {1e308, 1e-310, 2e-310, 1.0};
    const double huge_then_tiny[3] = {2 * d, 1e308, d};
    weighted_pairs_at("two equal subnormal", equal_subnormal, 2, 31);
    weighted_pairs_at("subnormal", subnormal, 4, 32);
    weighted_pairs_at("smallest subnormals 1:2:3:4", smallest, 4, 33);
    weighted_pairs_at("huge", huge, 4, 34);
    weighted_pairs_at("1e308, 1e-310, 2e-310", ratios, 3, 35);
    weighted_pairs_at("1e308, 1e-310, 2e-310, 1", with_one, 4, 37);
    weighted_pairs_at("2^-1073, 1e308, 2^-1074", huge_then_tiny, 3, 36);
}

static void test_weighted_contract(void **state)
{
    (void)state;
    rf_rng g;
    rng(&g, 23);
    size_t out[8], count = 99, slot;
    const double bad[3][3] = {{1, -1, 2}, {1, 2, NAN}, {INFINITY, 1, 1}};
    const size_t where[3] = {1, 2, 0};
    for (int b = 0; b < 3; b++) {
        assert_int_equal(rf_sample_weighted(&g, bad[b], 3, 2, out, &count), RF_EINVAL);
        assert_int_equal(count, where[b]);
    }
    /* fewer positive weights than k: all of them, never a zero */
    const double w[6] = {0, 5, 0, 0, 1, 0};
    assert_int_equal(rf_sample_weighted(&g, w, 6, 4, out, &count), RF_OK);
    assert_int_equal(count, 2);
    assert_true((out[0] == 1 && out[1] == 4) || (out[0] == 4 && out[1] == 1));
    assert_int_equal(rf_sample_weighted(&g, w, 6, 0, out, &count), RF_OK);
    assert_int_equal(count, 0);
    /* streaming: rejections leave the state alone; no offers after the end */
    rf_wsample s;
    rf_wsample_entry heap[2];
    assert_int_equal(rf_wsample_init(&s, 0, heap, sizeof heap), RF_EINVAL);
    assert_int_equal(rf_wsample_init(&s, 3, heap, sizeof heap), RF_EINVAL);
    assert_int_equal(rf_wsample_init(&s, 2, heap, sizeof heap), RF_OK);
    assert_int_equal(rf_wsample_offer(&s, &g, -0.5, &slot), RF_EINVAL);
    assert_true(slot == RF_RESERVOIR_DISCARD);
    assert_int_equal(rf_wsample_offer(&s, &g, 0.0, &slot), RF_OK);
    assert_true(slot == RF_RESERVOIR_DISCARD);
    assert_int_equal(rf_wsample_offer(&s, &g, 1.0, &slot), RF_OK);
    assert_true(slot == 0);
    assert_int_equal(rf_wsample_result(&s, out), 1);
    assert_int_equal(out[0], 0);
    assert_int_equal(rf_wsample_offer(&s, &g, 1.0, &slot), RF_EINVAL);
    /* huge and tiny weights together */
    const double extreme[4] = {1e-300, 1e300, 5e-324, 1.0};
    assert_int_equal(rf_sample_weighted(&g, extreme, 4, 2, out, &count), RF_OK);
    assert_int_equal(count, 2);
    assert_true(out[0] == 1);
    rf_wsample_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_enumerate_fisher_yates),
        cmocka_unit_test(test_enumerate_floyd),
        cmocka_unit_test(test_enumerate_seqsample_k1),
        cmocka_unit_test(test_sample_dense_equals_sparse),
        cmocka_unit_test(test_sample_contract),
        cmocka_unit_test(test_seqsample_statistics),
        cmocka_unit_test(test_seqsample_contract),
        cmocka_unit_test(test_reservoir_statistics),
        cmocka_unit_test(test_reservoir_contract),
        cmocka_unit_test(test_weighted_pairs),
        cmocka_unit_test(test_weighted_jumps),
        cmocka_unit_test(test_weighted_jumps_extreme),
        cmocka_unit_test(test_weighted_extreme),
        cmocka_unit_test(test_weighted_contract),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
