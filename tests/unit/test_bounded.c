/* Unbiased bounded integers: exhaustive proofs at reduced word width, and the
 * public functions' contracts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "uniform/bounded_internal.h"

/* The library's batched Lemire draw, instantiated from the same source text at
 * 8 and 16 bits so that every possible word can be tried. */
static inline uint8_t mulhi8(uint8_t a, uint8_t b, uint8_t *lo)
{
    unsigned p = (unsigned)a * b;
    *lo = (uint8_t)p;
    return (uint8_t)(p >> 8);
}
static inline uint16_t mulhi16(uint16_t a, uint16_t b, uint16_t *lo)
{
    uint32_t p = (uint32_t)a * b;
    *lo = (uint16_t)p;
    return (uint16_t)(p >> 16);
}
#define LT_WORD uint8_t
#define LT_MULHI mulhi8
#define LT_NAME(x) w8_##x
#include "riffle_lemire.h"
#undef LT_WORD
#undef LT_MULHI
#undef LT_NAME
#define LT_WORD uint16_t
#define LT_MULHI mulhi16
#define LT_NAME(x) w16_##x
#include "riffle_lemire.h"
#undef LT_WORD
#undef LT_MULHI
#undef LT_NAME

/* A word source that gives `first`, then -- if the draw rejects it -- counts
 * down from the largest word until one is accepted (one always is). */
struct one_word {
    unsigned first, fallback;
    int calls;
};
static uint8_t next8(void *ctx)
{
    struct one_word *w = ctx;
    return (uint8_t)(w->calls++ == 0 ? w->first : w->fallback--);
}
static uint16_t next16(void *ctx)
{
    struct one_word *w = ctx;
    return (uint16_t)(w->calls++ == 0 ? w->first : w->fallback--);
}

/* For bounds b[0..k) with product P <= 2^W: every accepted first word yields
 * one digit tuple; check each of the P tuples is produced by exactly
 * floor(2^W / P) words and that exactly 2^W mod P words are rejected. */
static void check_batch(unsigned W, const unsigned *b, size_t k)
{
    const unsigned words = 1u << W;
    unsigned P = 1;
    for (size_t i = 0; i < k; i++)
        P *= b[i];
    assert_true(P <= words);
    unsigned *count = calloc(P, sizeof *count);
    unsigned rejected = 0;
    assert_non_null(count);
    for (unsigned x = 0; x < words; x++) {
        struct one_word w = {x, words - 1, 0};
        unsigned idx = 0;
        if (W == 8) {
            uint8_t bb[8], out[8];
            for (size_t i = 0; i < k; i++)
                bb[i] = (uint8_t)b[i]; /* every bound < 256 */
            w8_batch(next8, &w, bb, k, out);
            for (size_t i = 0; i < k; i++) {
                assert_true(out[i] < b[i]);
                idx = idx * b[i] + out[i];
            }
        } else {
            uint16_t bb[8], out[8];
            for (size_t i = 0; i < k; i++)
                bb[i] = (uint16_t)b[i];
            w16_batch(next16, &w, bb, k, out);
            for (size_t i = 0; i < k; i++) {
                assert_true(out[i] < b[i]);
                idx = idx * b[i] + out[i];
            }
        }
        if (w.calls == 1)
            count[idx]++;
        else
            rejected++;
    }
    for (unsigned i = 0; i < P; i++)
        assert_int_equal(count[i], words / P);
    assert_int_equal(rejected, words % P);
    free(count);
}

static void single_8bit_every_bound(void **state)
{
    (void)state;
    for (unsigned n = 1; n <= 255; n++)
        check_batch(8, &n, 1);
}

/* Every tuple of 2..8 bounds (each >= 2) whose product fits 8 bits. */
static void batch_tuples(unsigned *b, size_t k, size_t want, unsigned prod)
{
    if (k == want) {
        check_batch(8, b, k);
        return;
    }
    for (unsigned x = 2; prod * x <= 256; x++) {
        b[k] = x;
        batch_tuples(b, k + 1, want, prod * x);
    }
}

static void batch_8bit_every_tuple(void **state)
{
    (void)state;
    unsigned b[8];
    for (size_t k = 2; k <= 8; k++)
        batch_tuples(b, 0, k, 1);
}

/* The falling form at 8 bits: for every b and k whose falling product P fits,
 * and upper bounds U = P, P + 1 and 255, every tuple comes from exactly
 * floor(256 / P) words and 256 mod P words are rejected -- the same words as
 * the general form (checked word by word). */
static void falling_8bit_every_case(void **state)
{
    (void)state;
    for (unsigned b = 2; b <= 255; b++) {
        unsigned P = 1;
        for (size_t k = 1; k <= 8 && k < b; k++) {
            P *= b - (unsigned)(k - 1);
            if (P > 255)
                break;
            const unsigned Us[3] = {P, P + 1 <= 255 ? P + 1 : P, 255};
            for (int u = 0; u < 3; u++) {
                unsigned count[256] = {0}, rejected = 0;
                for (unsigned x = 0; x < 256; x++) {
                    struct one_word w = {x, 255, 0}, v = {x, 255, 0};
                    uint8_t out[8], ref[8], bb[8];
                    for (size_t i = 0; i < k; i++)
                        bb[i] = (uint8_t)(b - i);
                    w8_falling(next8, &w, (uint8_t)b, k, (uint8_t)Us[u], out);
                    w8_batch(next8, &v, bb, k, ref);
                    assert_int_equal(w.calls, v.calls);
                    assert_memory_equal(out, ref, k);
                    unsigned idx = 0;
                    for (size_t i = 0; i < k; i++)
                        idx = idx * (b - (unsigned)i) + out[i];
                    if (w.calls == 1)
                        count[idx]++;
                    else
                        rejected++;
                }
                for (unsigned i = 0; i < P; i++)
                    assert_int_equal(count[i], 256 / P);
                assert_int_equal(rejected, 256 % P);
            }
        }
    }
}

static void single_16bit_bounds(void **state)
{
    (void)state;
    /* All small bounds, all large ones (where rejection is most frequent), and
     * each power of two with its neighbours. */
    for (unsigned n = 1; n <= 600; n++)
        check_batch(16, &n, 1);
    for (unsigned n = 65535 - 300; n <= 65535; n++)
        check_batch(16, &n, 1);
    for (unsigned s = 2; s < 16; s++)
        for (unsigned n = (1u << s) - 1; n <= (1u << s) + 1; n++)
            check_batch(16, &n, 1);
}

static void batch_16bit_pairs(void **state)
{
    (void)state;
    const unsigned pairs[][2] = {{255, 257}, {256, 256}, {2, 32768}, {3, 21845},
                                 {181, 362}, {1000, 65}, {7, 9000}, {256, 255}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        check_batch(16, pairs[i], 2);
    const unsigned triple[3] = {40, 41, 39};
    check_batch(16, triple, 3);
}

/* The 64-bit draw, checked against a direct definition with 128-bit numbers:
 * D = floor(x*P / 2^64) in mixed radix, accepted iff x*P mod 2^64 >= 2^64 mod P. */
struct words {
    const uint64_t *w;
    size_t i;
};
static uint64_t next_word(void *ctx)
{
    struct words *s = ctx;
    return s->w[s->i++];
}

static void batch64_matches_definition(void **state)
{
    (void)state;
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 7), RF_OK);
    const uint64_t firsts[] = {(UINT64_C(1) << 30) + 5, (UINT64_C(1) << 19) + 1, 20000, 3000,
                               700, 200, 7, UINT64_C(1) << 40};
    for (size_t f = 0; f < sizeof firsts / sizeof firsts[0]; f++) {
        const uint64_t b0 = firsts[f];
        uint64_t U;
        const size_t k = rfi_batch_len(b0, &U);
        uint64_t bounds[6];
        unsigned __int128 P = 1;
        for (size_t i = 0; i < k; i++) {
            bounds[i] = b0 - i;
            P *= bounds[i];
        }
        for (int rep = 0; rep < 2000; rep++) {
            uint64_t ws[64];
            for (size_t i = 0; i < 64; i++)
                ws[i] = rf_rng_next64(&g);
            struct words src = {ws, 0};
            uint64_t out[6];
            rfi_lemire64_batch(next_word, &src, bounds, k, out);
            /* the falling form with its schedule bound gives the same draws */
            struct words src2 = {ws, 0};
            uint64_t out2[6];
            rfi_lemire64_falling(next_word, &src2, b0, k, U, out2);
            assert_int_equal(src2.i, src.i);
            assert_memory_equal(out2, out, k * sizeof out[0]);
            /* the definition: first accepted word */
            const unsigned __int128 two64 = (unsigned __int128)1 << 64;
            const unsigned __int128 t = two64 % P;
            size_t i = 0;
            unsigned __int128 D;
            for (;; i++) {
                unsigned __int128 xp = (unsigned __int128)ws[i] * P; /* < 2^128 */
                if ((uint64_t)xp >= t)
                    break;
            }
            assert_int_equal(src.i, i + 1);
            /* D = floor(x*P / 2^64): compute via two 64x64 products */
            {
                uint64_t x = ws[i];
                unsigned __int128 lo = (unsigned __int128)x * (uint64_t)P;
                unsigned __int128 hi = (unsigned __int128)x * (uint64_t)(P >> 64);
                D = hi + (lo >> 64);
            }
            for (size_t j = k; j-- > 0;) {
                assert_true(out[j] < bounds[j]);
                assert_true((uint64_t)(D % bounds[j]) == out[j]);
                D /= bounds[j];
            }
        }
    }
}

static void public_contracts(void **state)
{
    (void)state;
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_CHACHA20, 1), RF_OK);
    for (int i = 0; i < 10000; i++) {
        assert_true(rf_below(&g, 7) < 7);
        assert_true(rf_below32(&g, 1000) < 1000);
        assert_int_equal(rf_below(&g, 1), 0);
        uint64_t r = rf_range(&g, 10, 12);
        assert_true(r >= 10 && r <= 12);
        double u = rf_double(&g);
        assert_true(u >= 0.0 && u < 1.0);
    }
    assert_int_equal(rf_range(&g, 5, 5), 5);
    assert_true(rf_below(&g, UINT64_MAX) < UINT64_MAX);
    (void)rf_range(&g, 0, UINT64_MAX);
    /* rf_range's full span is one raw word: same stream position as next64 */
    rf_rng a, b;
    assert_int_equal(rf_rng_seed_u64(&a, RF_RNG_PCG64, 3), RF_OK);
    b = a;
    assert_true(rf_range(&a, 0, UINT64_MAX) == rf_rng_next64(&b));

    uint64_t bounds[8] = {6, 6, 6, 6, 6, 6, 6, 6}, out[8];
    assert_int_equal(rf_below_batch(&g, bounds, 8, out), RF_OK);
    for (int i = 0; i < 8; i++)
        assert_true(out[i] < 6);
    assert_int_equal(rf_below_batch(&g, bounds, 0, out), RF_ERANGE);
    assert_int_equal(rf_below_batch(&g, bounds, 9, out), RF_ERANGE);
    const uint64_t exact[2] = {UINT64_C(1) << 32, UINT64_C(1) << 32};
    assert_int_equal(rf_below_batch(&g, exact, 2, out), RF_OK);
    const uint64_t over[2] = {(UINT64_C(1) << 32) + 1, UINT64_C(1) << 32};
    assert_int_equal(rf_below_batch(&g, over, 2, out), RF_ERANGE);
    const uint64_t zero[2] = {0, 5};
    assert_int_equal(rf_below_batch(&g, zero, 2, out), RF_EINVAL);
}

/* The typed draws equal rf_below through the handle, word for word. */
static void typed_draws_match_handle(void **state)
{
    (void)state;
    const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    const uint64_t bounds[] = {1, 2, 3, 6, 52, 1000000007, UINT64_C(1) << 63,
                               UINT64_MAX, (UINT64_C(1) << 63) + 1};
    for (size_t k = 0; k < 3; k++) {
        rf_rng a, b;
        assert_int_equal(rf_rng_seed_u64(&a, kinds[k], 314), RF_OK);
        b = a;
        for (int rep = 0; rep < 200; rep++)
            for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
                uint64_t want = rf_below(&a, bounds[i]), got;
                if (kinds[k] == RF_RNG_XOSHIRO256PP)
                    got = rf_xoshiro_below(&b.u.xoshiro, bounds[i]);
                else if (kinds[k] == RF_RNG_PCG64)
                    got = rf_pcg64_below(&b.u.pcg, bounds[i]);
                else
                    got = rf_chacha_below(&b.u.chacha, bounds[i]);
                assert_true(got == want);
            }
        assert_true(rf_rng_next64(&a) == rf_rng_next64(&b));
    }
}

/* Statistics come second: a fixed-seed chi-square on rf_below(10) per
 * generator (deterministic, so it cannot flake). 99.9% critical value of
 * chi-square with 9 degrees of freedom: 27.877. */
static void chi_square_smoke(void **state)
{
    (void)state;
    const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    for (size_t k = 0; k < 3; k++) {
        rf_rng g;
        assert_int_equal(rf_rng_seed_u64(&g, kinds[k], 2024), RF_OK);
        unsigned c[10] = {0};
        const unsigned N = 200000;
        for (unsigned i = 0; i < N; i++)
            c[rf_below(&g, 10)]++;
        double chi = 0;
        for (int i = 0; i < 10; i++) {
            double e = N / 10.0, d = c[i] - e;
            chi += d * d / e;
        }
        assert_true(chi < 27.877);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_8bit_every_bound),
        cmocka_unit_test(batch_8bit_every_tuple),
        cmocka_unit_test(falling_8bit_every_case),
        cmocka_unit_test(single_16bit_bounds),
        cmocka_unit_test(batch_16bit_pairs),
        cmocka_unit_test(batch64_matches_definition),
        cmocka_unit_test(public_contracts),
        cmocka_unit_test(typed_draws_match_handle),
        cmocka_unit_test(chi_square_smoke),
    };
    return cmocka_run_group_tests_name("bounded", tests, NULL, NULL);
}
