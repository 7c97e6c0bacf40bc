/* Golden outputs: the stream contract pinned (riffle.h, "Stream contract").
 * For each generator: the first words after rf_rng_seed_u64(2026), the 52-card
 * shuffle of 0..51 from that seed, the 52-card deck deal after
 * rf_rng_seed_string("riffle"), and bounded draws rf_below(1000000007) after
 * rf_rng_seed_u64(7).  Any change here changes every seeded output of riffle:
 * that is a new major version, not a test to update. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "riffle.h"

struct golden {
    rf_rng_kind kind;
    uint64_t words[3];
    unsigned shuffle[52];
    unsigned deal[52];
    uint64_t below[4];
};

static const struct golden golden[] = {
    {RF_RNG_CHACHA20,
     {0xfb59d894fcf26b65ULL, 0x1cb62fcd120236bdULL, 0xef54ff23adf744fdULL},
     {
        51, 3, 43, 49, 14, 12, 11, 4, 15, 5, 8, 25, 1, 28, 30, 26, 46, 16, 48, 10, 2, 32,
        36, 33, 35, 20, 17, 31, 13, 45, 50, 18, 21, 42, 40, 38, 47, 24, 6, 39, 27, 19, 22,
        34, 23, 7, 44, 0, 9, 41, 37, 29},
     {
        17, 45, 25, 40, 21, 11, 8, 29, 1, 3, 47, 2, 10, 6, 30, 27, 16, 0, 46, 9, 51, 41,
        13, 34, 15, 37, 5, 7, 22, 4, 28, 12, 43, 42, 36, 48, 18, 44, 49, 23, 31, 26, 19,
        20, 33, 39, 32, 14, 38, 24, 35, 50},
     {862496479ULL, 804799465ULL, 742200865ULL, 761001737ULL}},
    {RF_RNG_XOSHIRO256PP,
     {0xca60efaa8061eb05ULL, 0x1dfef0826fe69998ULL, 0xbbc58d892f2cf863ULL},
     {
        41, 6, 27, 43, 12, 35, 11, 24, 31, 50, 28, 7, 0, 26, 22, 47, 39, 19, 34, 9, 38, 40,
        16, 4, 48, 10, 25, 23, 46, 32, 18, 5, 1, 13, 29, 51, 3, 37, 8, 20, 30, 17, 33, 42,
        49, 36, 15, 21, 14, 2, 45, 44},
     {
        20, 42, 29, 14, 38, 12, 50, 48, 10, 18, 13, 23, 34, 19, 39, 36, 3, 9, 22, 21, 4,
        43, 30, 15, 24, 40, 51, 28, 5, 7, 25, 47, 32, 8, 0, 33, 17, 44, 11, 26, 41, 1, 37,
        2, 27, 49, 45, 31, 16, 35, 46, 6},
     {902762690ULL, 465904056ULL, 513830637ULL, 125578041ULL}},
    {RF_RNG_PCG64,
     {0xc2052c65dbc769c6ULL, 0xf646be29dc1e3c51ULL, 0x1d2e8b0e366112eaULL},
     {
        39, 21, 48, 22, 44, 29, 50, 18, 24, 30, 37, 45, 16, 34, 11, 9, 25, 43, 41, 40, 5,
        10, 2, 42, 14, 7, 33, 28, 13, 4, 46, 8, 36, 51, 49, 15, 27, 38, 19, 26, 0, 3, 23,
        6, 47, 31, 12, 20, 35, 1, 17, 32},
     {
        8, 0, 37, 33, 4, 12, 25, 32, 22, 6, 28, 7, 43, 46, 51, 39, 19, 11, 34, 14, 10, 9,
        29, 38, 44, 26, 24, 1, 13, 30, 27, 5, 47, 35, 2, 18, 41, 49, 40, 36, 21, 15, 16,
        50, 23, 48, 3, 45, 17, 42, 31, 20},
     {531197227ULL, 29343089ULL, 883700317ULL, 669829002ULL}},
};

static void pinned_streams(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof golden / sizeof golden[0]; k++) {
        const struct golden *w = &golden[k];
        rf_rng g;
        assert_int_equal(rf_rng_seed_u64(&g, w->kind, 2026), RF_OK);
        for (int i = 0; i < 3; i++)
            assert_true(rf_rng_next64(&g) == w->words[i]);

        uint32_t a[52];
        for (unsigned i = 0; i < 52; i++)
            a[i] = i;
        assert_int_equal(rf_rng_seed_u64(&g, w->kind, 2026), RF_OK);
        rf_shuffle_u32(&g, a, 52);
        for (int i = 0; i < 52; i++)
            assert_int_equal(a[i], w->shuffle[i]);

        size_t cards[52], c;
        rf_deck d;
        assert_int_equal(rf_rng_seed_string(&g, w->kind, "riffle", 6), RF_OK);
        rf_deck_init(&d, cards, 52);
        for (int i = 0; i < 52; i++) {
            assert_int_equal(rf_deck_deal(&d, &g, &c), RF_OK);
            assert_int_equal(c, w->deal[i]);
        }

        assert_int_equal(rf_rng_seed_u64(&g, w->kind, 7), RF_OK);
        for (int i = 0; i < 4; i++)
            assert_true(rf_below(&g, 1000000007ULL) == w->below[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pinned_streams),
    };
    return cmocka_run_group_tests_name("golden", tests, NULL, NULL);
}
