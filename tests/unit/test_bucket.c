/* The bucket shuffle and its parallel form (src/permute/bucket.c,
 * src/permute/parallel.c): exact fairness by enumeration of every draw
 * sequence with tiny buckets; equality with an independent implementation of
 * the documented stream layout; multiset preservation at large n for several
 * element sizes and scratch alignments; identical output for every thread
 * count and for both flush paths; statistics last. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perm_stats.h"
#include "riffle.h"
#include "scripted.h"
#include "permute/bucket_internal.h"

static const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};

/* Element i of `size` bytes: its index in the first bytes (little-endian, as
 * many as fit), then a pattern derived from the index, so that a torn or
 * misplaced byte is caught. */
static void fill_elements(unsigned char *a, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < size; b++)
            a[i * size + b] = b < 4 ? (unsigned char)(i >> (8 * b))
                                    : (unsigned char)(i * 131 + b * 7);
}

/* The index stored in an element (size >= 4 carries 32 bits; less, fewer). */
static size_t element_index(const unsigned char *e, size_t size)
{
    size_t v = 0;
    for (size_t b = 0; b < size && b < 4; b++)
        v |= (size_t)e[b] << (8 * b);
    return v;
}

/* Every element intact and each index exactly once (n < 2^32, size >= 4). */
static void assert_permutation(const unsigned char *a, size_t n, size_t size)
{
    unsigned char *seen = calloc(n, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *e = a + i * size;
        const size_t v = element_index(e, size);
        assert_true(v < n);
        assert_false(seen[v]);
        seen[v] = 1;
        for (size_t b = 4; b < size; b++)
            assert_int_equal(e[b], (unsigned char)(v * 131 + b * 7));
    }
    free(seen);
}

static unsigned char *xmalloc(size_t bytes)
{
    unsigned char *p = malloc(bytes ? bytes : 1);
    assert_non_null(p);
    return p;
}

/* ------------------------------------------------------------------------ */
/* Exact fairness                                                           */
/* ------------------------------------------------------------------------ */

/* Over every draw sequence of the scripted generator (B^n bucket draws, then
 * each bucket's Fisher-Yates draws), each of the n! orders has probability
 * exactly 1/n!.  Sequences are not equally likely here (a sequence has
 * probability 1/(B^n * prod c_j!)), so each run is weighted by
 * L / den with L = B^n * n!, an integer; every order must total B^n. */
static void enumerate(size_t n, size_t nbuckets, size_t size, unsigned flags, unsigned threads)
{
    const uint64_t nf = rf_test_factorial((unsigned)n);
    uint64_t bn = 1;
    for (size_t i = 0; i < n; i++)
        bn *= nbuckets;
    const uint64_t L = bn * nf;
    uint64_t *weight = calloc(nf, sizeof *weight);
    unsigned char a[6 * 16];
    unsigned char *scratch = xmalloc(rfi_bucket_scratch_size(6, 16, nbuckets) + 1);
    uint64_t total = 0, runs = 0;
    rf_script s;
    assert_non_null(weight);
    rf_script_init(&s);
    do {
        rf_rng g;
        size_t out[6];
        rf_script_rng(&s, &g);
        for (size_t i = 0; i < n; i++)
            memset(a + i * size, (int)i, size);
        /* scratch + 1: the line logic must not depend on alignment */
        assert_int_equal(
            rfi_shuffle_buckets(&g, a, n, size, scratch + 1, nbuckets, threads, flags), RF_OK);
        for (size_t i = 0; i < n; i++) {
            out[i] = a[i * size];
            for (size_t b = 1; b < size; b++)
                assert_int_equal(a[i * size + b], out[i]);
        }
        const uint64_t den = rf_script_den(&s);
        assert_int_equal(L % den, 0);
        weight[rf_test_perm_rank(out, n)] += L / den;
        total += L / den;
        runs++;
    } while (rf_script_next(&s));
    assert_false(s.error);
    assert_int_equal(total, L);
    /* paths: n! * C(n + B - 1, B - 1) when n >= 2 (one per count vector and order) */
    if (n >= 2) {
        uint64_t comps = 1;
        for (size_t i = 1; i < nbuckets; i++)
            comps = comps * (n + i) / i;
        assert_int_equal(runs, nbuckets == 1 ? nf : nf * comps);
    }
    for (uint64_t r = 0; r < nf; r++)
        assert_int_equal(weight[r], bn);
    free(weight);
    free(scratch);
}

static void exact_tiny_buckets(void **state)
{
    (void)state;
    for (size_t nb = 1; nb <= 4; nb++)
        for (size_t n = 0; n <= 6; n++) {
            enumerate(n, nb, 8, 0, 1);
            enumerate(n, nb, 3, 0, 1);
            enumerate(n, nb, 16, RFI_FLUSH_PORTABLE, 1);
            enumerate(n, nb, 4, 0, 3); /* a source runs on one thread anyway */
        }
}

/* ------------------------------------------------------------------------ */
/* The documented stream layout, implemented independently                  */
/* ------------------------------------------------------------------------ */

/* Straight from include/riffle.h: key from rf_rng_fill; bucket of element i =
 * digit (i mod 2^16) of block i >> 16's substream (digit d of a word: bits
 * 64 - k(d+1) .. 64 - kd); buckets in input order, each rf_shuffle'd with
 * substream 2^63 + j. */
static void reference(rf_rng *g, unsigned char *a, size_t n, size_t size, size_t nbuckets)
{
    uint8_t key[RF_KEY_BYTES];
    unsigned k = 0;
    while (((size_t)1 << k) < nbuckets)
        k++;
    rf_rng_fill(g, key, sizeof key);
    uint16_t *id = calloc(n, sizeof *id);
    size_t *start = calloc(nbuckets + 1, sizeof *start);
    unsigned char *tmp = xmalloc(n * size);
    assert_true(id && start);
    const size_t per = k ? 64 / k : 1;
    rf_rng sub;
    uint64_t word = 0;
    for (size_t i = 0; k > 0 && i < n; i++) {
        const size_t in_block = i & 0xffff, d = in_block % per;
        if (in_block == 0)
            assert_int_equal(rf_rng_init(&sub, g->kind, key, i >> 16), RF_OK);
        if (d == 0)
            word = rf_rng_next64(&sub);
        id[i] = (uint16_t)((word >> (64 - k * (d + 1))) & (nbuckets - 1));
    }
    for (size_t i = 0; i < n; i++)
        start[id[i] + 1]++;
    for (size_t j = 0; j < nbuckets; j++)
        start[j + 1] += start[j];
    size_t *at = calloc(nbuckets, sizeof *at);
    assert_non_null(at);
    memcpy(at, start, nbuckets * sizeof *at);
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + at[id[i]]++ * size, a + i * size, size);
    for (size_t j = 0; j < nbuckets; j++) {
        assert_int_equal(rf_rng_init(&sub, g->kind, key, (UINT64_C(1) << 63) + j), RF_OK);
        rf_shuffle(&sub, tmp + start[j] * size, start[j + 1] - start[j], size);
    }
    memcpy(a, tmp, n * size);
    free(id);
    free(start);
    free(at);
    free(tmp);
}

/* Through the internal entry (any bucket count) and the public one, for each
 * generator; and the caller's generator advances by exactly 4 words. */
static void check_against_reference(rf_rng_kind kind, size_t n, size_t size, size_t nbuckets,
                                    int public_entry)
{
    unsigned char *a = xmalloc(n * size), *b = xmalloc(n * size);
    const size_t need = public_entry ? rf_shuffle_bucket_scratch_size(n, size)
                                     : rfi_bucket_scratch_size(n, size, nbuckets);
    unsigned char *scratch = xmalloc(need);
    rf_rng g, h;
    assert_int_equal(rf_rng_seed_u64(&g, kind, 1000 + n + size), RF_OK);
    h = g;
    fill_elements(a, n, size);
    memcpy(b, a, n * size);
    if (public_entry)
        assert_int_equal(rf_shuffle_bucket(&g, a, n, size, scratch), RF_OK);
    else
        assert_int_equal(rfi_shuffle_buckets(&g, a, n, size, scratch, nbuckets, 1, 0), RF_OK);
    reference(&h, b, n, size, nbuckets);
    assert_memory_equal(a, b, n * size);
    assert_int_equal(rf_rng_next64(&g), rf_rng_next64(&h)); /* same position */
    free(a);
    free(b);
    free(scratch);
}

static void equals_documented_layout(void **state)
{
    (void)state;
    for (size_t k = 0; k < 3; k++) {
        /* crossing block boundaries, a partial last block, many buckets */
        check_against_reference(kinds[k], 3 * 65536 + 1234, 8, 64, 0);
        check_against_reference(kinds[k], 70001, 12, 4096, 0);
        check_against_reference(kinds[k], 5000, 5, 2, 0);
        check_against_reference(kinds[k], 5000, 8, 1, 0);
        /* the fused loops (k >= 8 for the scatter, > 6 for the count; the
         * built-in generators; widths 4, 8, 16), with a partly used last word
         * in every block (2^16 mod 64/k != 0 for k = 7, 10, 11, 12) and an odd
         * number of blocks, the last one partial */
        check_against_reference(kinds[k], 2 * 65536 + 777, 4, 256, 0);
        check_against_reference(kinds[k], 65536 + 999, 12, 128, 0);
        check_against_reference(kinds[k], 2 * 65536 + 777, 8, 1024, 0);
        check_against_reference(kinds[k], 65536 + 5, 16, 4096, 0);
        check_against_reference(kinds[k], 100003, 8, 2048, 0);
        /* public bucket counts: B = 1, 2 and 8 */
        check_against_reference(kinds[k], 1000, 8, 1, 1);
        check_against_reference(kinds[k], (1u << 17) + 1, 4, 2, 1);
    }
    check_against_reference(RF_RNG_XOSHIRO256PP, 1000000, 8, 8, 1);
}

/* A source without below(): bounded draws come from its words, in the
 * documented order -- every element's rf_below(g, B) in input order, then
 * each bucket's rf_shuffle in bucket order -- with no key drawn. */
static uint64_t words_next(void *ctx)
{
    return rf_rng_next64(ctx);
}

static void source_reference(rf_rng *g, unsigned char *a, size_t n, size_t size, size_t nb)
{
    uint16_t *id = calloc(n, sizeof *id);
    size_t *start = calloc(nb + 1, sizeof *start), *at = calloc(nb, sizeof *at);
    unsigned char *tmp = xmalloc(n * size);
    assert_true(id && start && at);
    for (size_t i = 0; i < n; i++)
        id[i] = (uint16_t)rf_below(g, nb);
    for (size_t i = 0; i < n; i++)
        start[id[i] + 1]++;
    for (size_t j = 0; j < nb; j++)
        start[j + 1] += start[j];
    memcpy(at, start, nb * sizeof *at);
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + at[id[i]]++ * size, a + i * size, size);
    for (size_t j = 0; j < nb; j++)
        rf_shuffle(g, tmp + start[j] * size, start[j + 1] - start[j], size);
    memcpy(a, tmp, n * size);
    free(id);
    free(start);
    free(at);
    free(tmp);
}

static void source_follows_documented_order(void **state)
{
    (void)state;
    const size_t nbs[] = {3, 64, 4096};
    for (size_t t = 0; t < 3; t++) {
        const size_t n = 150000, size = 12, nb = nbs[t];
        rf_rng inner1, inner2, g1, g2;
        assert_int_equal(rf_rng_seed_u64(&inner1, RF_RNG_PCG64, t), RF_OK);
        inner2 = inner1;
        rf_source s1 = {words_next, NULL, &inner1}, s2 = {words_next, NULL, &inner2};
        assert_int_equal(rf_rng_from_source(&g1, &s1), RF_OK);
        assert_int_equal(rf_rng_from_source(&g2, &s2), RF_OK);
        unsigned char *a = xmalloc(n * size), *b = xmalloc(n * size);
        unsigned char *scratch = xmalloc(rfi_bucket_scratch_size(n, size, nb));
        fill_elements(a, n, size);
        memcpy(b, a, n * size);
        assert_int_equal(rfi_shuffle_buckets(&g1, a, n, size, scratch, nb, 2, 0), RF_OK);
        source_reference(&g2, b, n, size, nb);
        assert_memory_equal(a, b, n * size);
        assert_int_equal(rf_rng_next64(&inner1), rf_rng_next64(&inner2));
        assert_permutation(a, n, size);
        free(a);
        free(b);
        free(scratch);
    }
}

/* Golden values: the stream contract of rf_shuffle_bucket, pinned against
 * any change here or below (rf_rng_init, rf_shuffle).  Recorded from this
 * implementation on 2026-11-21 (n = 2^18 + 3: 4 buckets, 5 blocks; seed
 * rf_rng_seed_u64(42)); FNV-1a-64 over the output values in order. */
static void golden_streams(void **state)
{
    (void)state;
    static const struct {
        rf_rng_kind kind;
        uint64_t first[3], last, fnv, next;
    } gold[] = {
        {RF_RNG_CHACHA20, {7486, 81455, 220582}, 125815, 0x3556a6c922c5a7e8ULL,
         0xff86ff25f7323717ULL},
        {RF_RNG_XOSHIRO256PP, {145657, 74054, 92672}, 161580, 0x48f36196f1aa03beULL,
         0x24a35ec0517f62f1ULL},
    };
    const size_t n = (1u << 18) + 3;
    uint64_t *a = malloc(n * 8);
    void *scratch = malloc(rf_shuffle_bucket_scratch_size(n, 8));
    assert_true(a && scratch);
    for (size_t k = 0; k < 2; k++) {
        rf_rng g;
        uint64_t h = 14695981039346656037ULL;
        assert_int_equal(rf_rng_seed_u64(&g, gold[k].kind, 42), RF_OK);
        for (size_t i = 0; i < n; i++)
            a[i] = i;
        assert_int_equal(rf_shuffle_bucket(&g, a, n, 8, scratch), RF_OK);
        for (size_t i = 0; i < n; i++)
            h = (h ^ a[i]) * 1099511628211ULL;
        assert_int_equal(a[0], gold[k].first[0]);
        assert_int_equal(a[1], gold[k].first[1]);
        assert_int_equal(a[2], gold[k].first[2]);
        assert_int_equal(a[n - 1], gold[k].last);
        assert_int_equal(h, gold[k].fnv);
        assert_int_equal(rf_rng_next64(&g), gold[k].next);
    }
    free(a);
    free(scratch);
}

static void public_bucket_count(void **state)
{
    (void)state;
    assert_int_equal(rfi_bucket_shift(0), 0);
    assert_int_equal(rfi_bucket_shift(1u << 17), 0);
    assert_int_equal(rfi_bucket_shift((1u << 17) + 1), 1);
    assert_int_equal(rfi_bucket_shift(1u << 18), 1);
    assert_int_equal(rfi_bucket_shift(100000000), 10);
    assert_int_equal(rfi_bucket_shift((size_t)1 << 29), 12);
    assert_int_equal(rfi_bucket_shift(((size_t)1 << 29) + 1), 12); /* capped */
    assert_int_equal(rf_shuffle_bucket_scratch_size(1u << 17, 8), 0);
    assert_true(rf_shuffle_bucket_scratch_size(1u << 18, 8) >= (1u << 18) * 8);
    assert_int_equal(rf_shuffle_bucket_scratch_size(SIZE_MAX / 2, 4), SIZE_MAX);
}

/* ------------------------------------------------------------------------ */
/* Multiset, threads, flush paths                                           */
/* ------------------------------------------------------------------------ */

/* Shuffle with the given threads/flags/scratch offset; returns the array. */
static unsigned char *run(rf_rng_kind kind, uint64_t seed, size_t n, size_t size,
                          size_t nbuckets, unsigned threads, unsigned flags, size_t offset)
{
    unsigned char *a = xmalloc(n * size);
    unsigned char *scratch = xmalloc(rfi_bucket_scratch_size(n, size, nbuckets) + offset);
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, kind, seed), RF_OK);
    fill_elements(a, n, size);
    assert_int_equal(rfi_shuffle_buckets(&g, a, n, size, scratch + offset, nbuckets, threads,
                                         flags),
                     RF_OK);
    free(scratch);
    return a;
}

static void multiset_large(void **state)
{
    (void)state;
    const size_t sizes[] = {4, 8, 12, 16, 24, 100};
    for (size_t s = 0; s < 6; s++) {
        const size_t n = sizes[s] <= 16 ? 1000000 : 200000;
        const size_t nb = (size_t)1 << rfi_bucket_shift(n);
        unsigned char *a = run(RF_RNG_CHACHA20, 7 + s, n, sizes[s], nb, 1, 0, s);
        assert_permutation(a, n, sizes[s]);
        size_t fixed = 0;
        for (size_t i = 0; i < n; i++)
            fixed += element_index(a + i * sizes[s], sizes[s]) == i;
        assert_true(fixed < 20); /* expected 1; 20 has probability ~ 1/20! */
        free(a);
    }
}

/* The public entry with its own mapped scratch (NULL) and with the caller's. */
static void public_entries_agree(void **state)
{
    (void)state;
    const size_t n = 600000;
    uint64_t *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8);
    void *scratch = malloc(rf_shuffle_bucket_scratch_size(n, 8));
    assert_true(a && b && c && scratch);
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] = c[i] = i;
    rf_rng g0, g;
    assert_int_equal(rf_rng_seed_string(&g0, RF_RNG_CHACHA20, "big", 3), RF_OK);
    g = g0;
    assert_int_equal(rf_shuffle_bucket(&g, a, n, 8, scratch), RF_OK);
    g = g0;
    assert_int_equal(rf_shuffle_bucket(&g, b, n, 8, NULL), RF_OK);
    g = g0;
    assert_int_equal(rf_shuffle_parallel(&g, c, n, 8, 0, NULL), RF_OK);
    assert_memory_equal(a, b, n * 8);
    assert_memory_equal(a, c, n * 8);
    /* no-ops draw nothing; an impossible scratch size draws nothing */
    g = g0;
    assert_int_equal(rf_shuffle_bucket(&g, a, 1, 8, NULL), RF_OK);
    assert_int_equal(rf_shuffle_bucket(&g, a, n, 0, NULL), RF_OK);
    assert_int_equal(rf_shuffle_parallel(&g, a, SIZE_MAX / 2, 4, 2, NULL), RF_ERANGE);
    rf_rng h = g0;
    assert_int_equal(rf_rng_next64(&g), rf_rng_next64(&h));
    free(a);
    free(b);
    free(c);
    free(scratch);
}

/* Same generator state, threads 1, 2, 3, 7: the same bytes; several sizes,
 * bucket counts that leave many partial lines between workers, every kind. */
static void threads_do_not_matter(void **state)
{
    (void)state;
    const struct {
        size_t n, size, nb;
    } cases[] = {
        {1000000, 8, 8}, {300000, 12, 4096}, {200000, 4, 256}, {150000, 16, 2}, {131073, 3, 64},
        {(1u << 21) + 4321, 8, 1024}, /* 3 chunks of work, fused loops */
    };
    const unsigned threads[] = {2, 3, 7, 64};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t n = cases[c].n, size = cases[c].size, nb = cases[c].nb;
        const rf_rng_kind kind = kinds[c % 3];
        unsigned char *ref = run(kind, 31 + c, n, size, nb, 1, 0, 0);
        for (size_t t = 0; t < 4; t++) {
            unsigned char *a = run(kind, 31 + c, n, size, nb, threads[t], 0, c);
            assert_memory_equal(a, ref, n * size);
            free(a);
        }
        if (size >= 4)
            assert_permutation(ref, n, size);
        free(ref);
    }
}

/* Non-temporal (SSE2) and portable flushes write the same bytes, at every
 * scratch alignment modulo 64 that matters for the line logic. */
static void flush_paths_agree(void **state)
{
    (void)state;
    const size_t sizes[] = {4, 8, 16, 12, 1};
    const size_t offsets[] = {0, 1, 8, 60};
    for (size_t s = 0; s < 5; s++)
        for (size_t o = 0; o < 4; o++) {
            const size_t n = 140000, size = sizes[s];
            unsigned char *a = run(RF_RNG_XOSHIRO256PP, 5 + s, n, size, 512, 2, 0, offsets[o]);
            unsigned char *b = run(RF_RNG_XOSHIRO256PP, 5 + s, n, size, 512, 2,
                                   RFI_FLUSH_PORTABLE, offsets[3 - o]);
            assert_memory_equal(a, b, n * size);
            free(a);
            free(b);
        }
}

/* ------------------------------------------------------------------------ */
/* Statistics (second to the enumeration)                                   */
/* ------------------------------------------------------------------------ */

/* n = 8 in 4 buckets, many fixed-seed runs: Pearson's chi-square on the 8x8
 * table of (element, position) counts.  Both margins are fixed (each run puts
 * every element somewhere and fills every position), so df = 7 * 7 = 49.
 * The seed is fixed, so the test is deterministic; p must not be tiny. */
static void position_chi_square(void **state)
{
    (void)state;
    enum { N = 8, RUNS = 40000 };
    uint64_t obs[N * N] = {0};
    double prob[N * N];
    unsigned char scratch[4096];
    rf_rng g;
    assert_true(rfi_bucket_scratch_size(N, 1, 4) <= sizeof scratch);
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 8), RF_OK);
    for (int r = 0; r < RUNS; r++) {
        unsigned char a[N];
        for (int i = 0; i < N; i++)
            a[i] = (unsigned char)i;
        assert_int_equal(rfi_shuffle_buckets(&g, a, N, 1, scratch, 4, 1, 0), RF_OK);
        for (int p = 0; p < N; p++)
            obs[a[p] * N + p]++;
    }
    for (int c = 0; c < N * N; c++)
        prob[c] = 1.0 / (N * N);
    const double x = rf_test_pearson(obs, prob, N * N, (uint64_t)RUNS * N);
    const double p = rf_test_chisq_pvalue(x, 49);
    print_message("position chi-square, n = 8, 4 buckets, %d runs: X2 = %.1f, df = 49, "
                  "p = %.3f\n",
                  RUNS, x, p);
    assert_true(p > 1e-4);
    assert_true(p < 1.0 - 1e-9); /* a too-perfect fit would mean no randomness */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_tiny_buckets),
        cmocka_unit_test(equals_documented_layout),
        cmocka_unit_test(source_follows_documented_order),
        cmocka_unit_test(golden_streams),
        cmocka_unit_test(public_bucket_count),
        cmocka_unit_test(multiset_large),
        cmocka_unit_test(public_entries_agree),
        cmocka_unit_test(threads_do_not_matter),
        cmocka_unit_test(flush_paths_agree),
        cmocka_unit_test(position_chi_square),
    };
    return cmocka_run_group_tests_name("bucket", tests, NULL, NULL);
}
