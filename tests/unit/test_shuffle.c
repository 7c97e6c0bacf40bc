/* Fisher-Yates: exact fairness by enumeration of every draw sequence, for every
 * element-width path, the partial shuffle and the callback form; equivalence
 * with the textbook loop at sizes that exercise every batch length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "riffle.h"
#include "scripted.h"

enum path { P_U32, P_U64, P_PTR, P_W4, P_W8, P_W16, P_ANY3, P_ANY100, P_SWAP, P_COUNT };

struct swap_ctx {
    size_t *a;
};
static void swap_cb(void *ctx, size_t i, size_t j)
{
    struct swap_ctx *s = ctx;
    assert_true(i < j);
    size_t t = s->a[i];
    s->a[i] = s->a[j];
    s->a[j] = t;
}

/* Shuffle 0..n-1 through one path and return the permutation in out. */
static void shuffle_path(enum path p, rf_rng *g, size_t n, size_t *out)
{
    static const size_t item[P_COUNT] = {4, 8, sizeof(void *), 4, 8, 16, 3, 100, 0};
    unsigned char buf[8 * 100];
    uint32_t a32[8];
    uint64_t a64[8];
    void *ap[8];
    size_t as[8];
    static char base[8];
    for (size_t i = 0; i < n; i++) {
        a32[i] = (uint32_t)i;
        a64[i] = i;
        ap[i] = &base[i];
        as[i] = i;
    }
    switch (p) {
    case P_U32:
        rf_shuffle_u32(g, a32, n);
        for (size_t i = 0; i < n; i++)
            out[i] = a32[i];
        return;
    case P_U64:
        rf_shuffle_u64(g, a64, n);
        for (size_t i = 0; i < n; i++)
            out[i] = (size_t)a64[i];
        return;
    case P_PTR:
        rf_shuffle_ptr(g, ap, n);
        for (size_t i = 0; i < n; i++)
            out[i] = (size_t)((char *)ap[i] - base);
        return;
    case P_SWAP: {
        struct swap_ctx c = {as};
        rf_shuffle_swap(g, n, swap_cb, &c);
        memcpy(out, as, n * sizeof *out);
        return;
    }
    default: {
        /* Byte-addressed elements of `size` bytes; the first byte names the
         * element, the rest repeat it so that torn swaps are caught. */
        const size_t size = item[p];
        for (size_t i = 0; i < n; i++)
            memset(buf + i * size, (int)i, size);
        rf_shuffle(g, buf, n, size);
        for (size_t i = 0; i < n; i++) {
            out[i] = buf[i * size];
            for (size_t b = 1; b < size; b++)
                assert_int_equal(buf[i * size + b], out[i]);
        }
    }
    }
}

/* Run `p` over every draw sequence for n items: all n! orderings must occur,
 * each exactly once (each sequence has probability 1/n!). */
static void enumerate_path(enum path p, size_t n)
{
    const uint64_t nf = rf_test_factorial((unsigned)n);
    unsigned *count = calloc(nf, sizeof *count);
    rf_script s;
    uint64_t runs = 0;
    assert_non_null(count);
    rf_script_init(&s);
    do {
        rf_rng g;
        size_t out[8];
        rf_script_rng(&s, &g);
        shuffle_path(p, &g, n, out);
        assert_int_equal(rf_script_den(&s), nf);
        count[rf_test_perm_rank(out, n)]++;
        runs++;
    } while (rf_script_next(&s));
    assert_false(s.error);
    assert_int_equal(runs, nf);
    for (uint64_t r = 0; r < nf; r++)
        assert_int_equal(count[r], 1);
    free(count);
}

static void exact_every_path(void **state)
{
    (void)state;
    for (int p = 0; p < P_COUNT; p++)
        for (size_t n = 0; n <= 7; n++)
            enumerate_path((enum path)p, n);
}

/* Partial shuffle: over all draw sequences, each k-permutation (the first k
 * positions) comes out equally often -- for every n <= 7 and k <= n + 1. */
static void exact_partial(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 7; n++) {
        for (size_t k = 0; k <= n + 1; k++) {
            const size_t kk = k < n ? k : n;
            /* index the k-prefix as a base-n number */
            size_t cells = 1;
            for (size_t i = 0; i < kk; i++)
                cells *= n;
            uint64_t *count = calloc(cells, sizeof *count);
            assert_non_null(count);
            rf_script s;
            uint64_t den = 0;
            rf_script_init(&s);
            do {
                rf_rng g;
                uint64_t a[8];
                for (size_t i = 0; i < n; i++)
                    a[i] = i;
                rf_script_rng(&s, &g);
                rf_shuffle_partial(&g, a, n, k, sizeof a[0]);
                if (den == 0)
                    den = rf_script_den(&s);
                assert_int_equal(rf_script_den(&s), den); /* all sequences equally likely */
                size_t idx = 0;
                for (size_t i = 0; i < kk; i++)
                    idx = idx * n + a[i];
                count[idx]++;
                /* still a permutation */
                unsigned seen = 0;
                for (size_t i = 0; i < n; i++)
                    seen |= 1u << a[i];
                assert_int_equal(seen, (1u << n) - 1);
            } while (rf_script_next(&s));
            assert_false(s.error);
            /* every k-permutation, equally often; nothing else */
            uint64_t nonzero = 0, value = 0;
            for (size_t c = 0; c < cells; c++) {
                if (count[c] == 0)
                    continue;
                if (value == 0)
                    value = count[c];
                assert_int_equal(count[c], value);
                nonzero++;
            }
            assert_int_equal(nonzero, rf_test_factorial((unsigned)n) /
                                          rf_test_factorial((unsigned)(n - kk)));
            free(count);
        }
    }
}

/* A replay source: pseudo-random draws (quality irrelevant) that records the
 * bound of every draw, to compare against the textbook loop. */
struct replay {
    uint64_t x;
    uint64_t *bounds, *draws;
    size_t len, cap;
};
static uint64_t replay_below(void *ctx, uint64_t n)
{
    struct replay *r = ctx;
    r->x = r->x * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t d = (r->x >> 20) % n;
    assert_true(r->len < r->cap);
    r->bounds[r->len] = n;
    r->draws[r->len++] = d;
    return d;
}

/* At sizes crossing every batch length (6, 5, 4, 3 and 2 steps per word), the
 * batched shuffle applies exactly the textbook swaps for its draws, and asks
 * for the bounds n, n-1, ..., 2 in order. */
static void equals_textbook_loop(void **state)
{
    (void)state;
    const size_t sizes[] = {2, 3, 8, 600, 3000, 20000, 600000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
        struct replay r = {12345, malloc((n + 8) * 8), malloc((n + 8) * 8), 0, n + 8};
        assert_true(a && b && r.bounds && r.draws);
        for (size_t i = 0; i < n; i++)
            a[i] = b[i] = (uint32_t)i;
        rf_rng g;
        rf_source src = {NULL, replay_below, &r};
        assert_int_equal(rf_rng_from_source(&g, &src), RF_OK);
        rf_shuffle_u32(&g, a, n);
        assert_int_equal(r.len, n - 1);
        for (size_t t = 0; t + 1 < n; t++) {
            assert_int_equal(r.bounds[t], n - t);
            size_t j = t + (size_t)r.draws[t];
            uint32_t tmp = b[t];
            b[t] = b[j];
            b[j] = tmp;
        }
        assert_memory_equal(a, b, n * sizeof *a);
        free(a);
        free(b);
        free(r.bounds);
        free(r.draws);
    }
}

/* The same generator state gives the same permutation through every path
 * (element size never changes the stream), and a partial shuffle is the head
 * of the full one, for each real generator. */
static void paths_agree_and_partial_is_head(void **state)
{
    (void)state;
    const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    for (size_t k = 0; k < 3; k++) {
        for (size_t n = 0; n <= 7; n++) {
            rf_rng g0;
            size_t ref[8], out[8];
            assert_int_equal(rf_rng_seed_u64(&g0, kinds[k], 99 + n), RF_OK);
            rf_rng g = g0;
            shuffle_path(P_U64, &g, n, ref);
            for (int p = 0; p < P_COUNT; p++) {
                g = g0;
                shuffle_path((enum path)p, &g, n, out);
                assert_memory_equal(out, ref, n * sizeof *out);
            }
        }
        const size_t n = 100000;
        uint64_t *full = malloc(n * 8), *part = malloc(n * 8);
        assert_true(full && part);
        for (size_t i = 0; i < n; i++)
            full[i] = part[i] = i;
        rf_rng a, b;
        assert_int_equal(rf_rng_seed_u64(&a, kinds[k], 5), RF_OK);
        b = a;
        rf_shuffle_u64(&a, full, n);
        const size_t heads[] = {0, 1, 7, 1000, 77777};
        for (size_t h = 0; h < 5; h++) {
            rf_rng c = b;
            for (size_t i = 0; i < n; i++)
                part[i] = i;
            rf_shuffle_partial(&c, part, n, heads[h], 8);
            assert_memory_equal(part, full, heads[h] * 8);
        }
        free(full);
        free(part);
    }
}

/* The fused fast path (built-in generators, 4/8/16-byte elements) against the
 * generic path on the same words: a caller source whose next64 forwards the
 * generator's words takes the generic path, whose draws are the ones the
 * enumeration and the textbook comparison above prove.  Same permutation, same
 * number of words consumed, for full and partial shuffles at sizes that use
 * every batch length. */
static uint64_t forward_word(void *ctx)
{
    return rf_rng_next64(ctx);
}

static void fused_equals_generic(void **state)
{
    (void)state;
    const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    const size_t sizes[] = {2, 3, 7, 8, 13, 600, 3000, 20000, 70000, 600000};
    const size_t widths[] = {4, 8, 16};
    for (size_t k = 0; k < 3; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (size_t w = 0; w < 3; w++) {
                const size_t n = sizes[s], W = widths[w];
                unsigned char *a = malloc(n * W), *b = malloc(n * W);
                assert_true(a && b);
                const size_t limits[] = {n, n / 2, 5};
                for (size_t l = 0; l < 3; l++) {
                    for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j < W; j++)
                            a[i * W + j] = b[i * W + j] = (unsigned char)(i >> (8 * (j % 4)));
                    rf_rng g, inner, wrapped;
                    assert_int_equal(rf_rng_seed_u64(&g, kinds[k], 1000 + s), RF_OK);
                    inner = g;
                    rf_source src = {forward_word, NULL, &inner};
                    assert_int_equal(rf_rng_from_source(&wrapped, &src), RF_OK);
                    rf_shuffle_partial(&g, a, n, limits[l], W);
                    rf_shuffle_partial(&wrapped, b, n, limits[l], W);
                    assert_memory_equal(a, b, n * W);
                    assert_true(rf_rng_next64(&g) == rf_rng_next64(&inner));
                }
                free(a);
                free(b);
            }
}

/* Output is always a permutation (multiset preserved) at a larger size, with
 * each real generator; and a shuffle changes something. */
static void permutation_preserved(void **state)
{
    (void)state;
    const size_t n = 1u << 16;
    uint32_t *a = malloc(n * 4);
    unsigned char *seen = calloc(n, 1);
    assert_true(a && seen);
    rf_rng g;
    assert_int_equal(rf_rng_seed_string(&g, RF_RNG_CHACHA20, "perm", 4), RF_OK);
    for (size_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    rf_shuffle_u32(&g, a, n);
    size_t fixed = 0;
    for (size_t i = 0; i < n; i++) {
        assert_true(a[i] < n);
        assert_false(seen[a[i]]);
        seen[a[i]] = 1;
        fixed += a[i] == i;
    }
    assert_true(fixed < 20); /* expected 1 fixed point; 20 has probability ~1e-18 */
    free(a);
    free(seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_every_path),
        cmocka_unit_test(exact_partial),
        cmocka_unit_test(equals_textbook_loop),
        cmocka_unit_test(paths_agree_and_partial_is_head),
        cmocka_unit_test(fused_equals_generic),
        cmocka_unit_test(permutation_preserved),
    };
    return cmocka_run_group_tests_name("shuffle", tests, NULL, NULL);
}
