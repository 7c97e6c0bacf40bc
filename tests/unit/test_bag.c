/* Shuffle bags: exact fairness over two bags in a row (every pair of orders
 * equally often, so each bag is uniform and independent of the one before),
 * after an early refill, each item once per bag, the draws being the deck's,
 * and the empty bag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "riffle.h"
#include "scripted.h"

/* Draw `first` items, refill when `first` < n (an early new bag), then two
 * whole bags; over every draw sequence each pair (order of bag 1, order of
 * bag 2) must come out exactly once per (n!)^2 equally likely runs. */
static void enumerate_bags(size_t n, size_t first)
{
    const uint64_t nf = rf_test_factorial((unsigned)n);
    uint64_t *count = calloc(nf * nf, sizeof *count);
    assert_non_null(count);
    rf_script s;
    uint64_t runs = 0;
    rf_script_init(&s);
    do {
        rf_rng g;
        size_t storage[6], bag1[6], bag2[6], skip;
        rf_bag b;
        rf_script_rng(&s, &g);
        rf_bag_init(&b, storage, n);
        for (size_t i = 0; i < first; i++)
            assert_int_equal(rf_bag_draw(&b, &g, &skip), RF_OK);
        if (first < n)
            rf_bag_refill(&b);
        assert_int_equal(rf_bag_left(&b), first == n ? 0 : n); /* empty: the next draw refills */
        for (size_t i = 0; i < n; i++)
            assert_int_equal(rf_bag_draw(&b, &g, &bag1[i]), RF_OK);
        assert_int_equal(rf_bag_left(&b), 0);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(rf_bag_draw(&b, &g, &bag2[i]), RF_OK);
        count[rf_test_perm_rank(bag1, n) * nf + rf_test_perm_rank(bag2, n)]++;
        runs++;
    } while (rf_script_next(&s));
    assert_false(s.error);
    /* Every run is one draw sequence of probability 1 / (n!)^2 after the
     * first items: all of them seen, each pair once per first-items path. */
    assert_int_equal(runs % (nf * nf), 0);
    for (uint64_t r = 0; r < nf * nf; r++)
        assert_int_equal(count[r], runs / (nf * nf));
    free(count);
}

static void exact_two_bags(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 5; n++)
        enumerate_bags(n, n); /* the first bag drawn whole: two bags after it */
    for (size_t n = 1; n <= 5; n++)
        enumerate_bags(n, 0);
}

static void exact_after_early_refill(void **state)
{
    (void)state;
    for (size_t n = 2; n <= 4; n++)
        for (size_t first = 1; first < n; first++)
            enumerate_bags(n, first);
}

/* The probability of each run: the bounds drawn are n, n-1, ..., 2 per bag. */
static void draws_per_bag(void **state)
{
    (void)state;
    rf_script s;
    rf_script_init(&s);
    do {
        rf_rng g;
        size_t storage[4], item;
        rf_bag b;
        rf_script_rng(&s, &g);
        rf_bag_init(&b, storage, 4);
        for (size_t i = 0; i < 8; i++)
            assert_int_equal(rf_bag_draw(&b, &g, &item), RF_OK);
        assert_int_equal(rf_script_den(&s), 24 * 24);
    } while (rf_script_next(&s));
    assert_false(s.error);
}

/* With a real generator: every bag of many holds each item exactly once, and
 * the draws are exactly a deck's deals reset when empty. */
static void each_item_once_per_bag(void **state)
{
    (void)state;
    enum { N = 11, BAGS = 200 };
    rf_rng g1, g2;
    assert_int_equal(rf_rng_seed_u64(&g1, RF_RNG_XOSHIRO256PP, 17), RF_OK);
    assert_int_equal(rf_rng_seed_u64(&g2, RF_RNG_XOSHIRO256PP, 17), RF_OK);
    size_t items[N], cards[N], dealt[N];
    rf_bag b;
    rf_deck d;
    rf_bag_init(&b, items, N);
    rf_deck_init(&d, cards, N);
    for (int bag = 0; bag < BAGS; bag++) {
        int seen[N] = {0};
        rf_deck_reset(&d);
        assert_int_equal(rf_deck_deal_n(&d, &g2, N, dealt), RF_OK);
        for (size_t i = 0; i < N; i++) {
            size_t x = N;
            assert_int_equal(rf_bag_left(&b), bag == 0 || i > 0 ? N - i : 0);
            assert_int_equal(rf_bag_draw(&b, &g1, &x), RF_OK);
            assert_true(x < N);
            assert_int_equal(seen[x]++, 0);
            assert_int_equal(x, dealt[i]);
        }
    }
}

/* Items of any size are drawn whole. */
static void items_of_any_size(void **state)
{
    (void)state;
    char words[5][3] = {"ab", "cd", "ef", "gh", "ij"};
    rf_rng g;
    rf_bag b;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_CHACHA20, 3), RF_OK);
    rf_bag_init_items(&b, words, 5, sizeof words[0]);
    unsigned mask = 0;
    for (int i = 0; i < 5; i++) {
        char w[3];
        assert_int_equal(rf_bag_draw(&b, &g, w), RF_OK);
        assert_int_equal(w[2], '\0');
        assert_true(w[0] >= 'a' && w[0] <= 'i' && w[1] == w[0] + 1);
        mask |= 1u << ((w[0] - 'a') / 2);
    }
    assert_int_equal(mask, 0x1f);
}

static void empty_bag(void **state)
{
    (void)state;
    rf_rng g;
    rf_bag b;
    size_t storage[1] = {42}, item = 7;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_PCG64, 1), RF_OK);
    rf_bag_init(&b, storage, 0);
    assert_int_equal(rf_bag_left(&b), 0);
    assert_int_equal(rf_bag_draw(&b, &g, &item), RF_EEMPTY);
    assert_int_equal(item, 7);
    rf_bag_refill(&b);
    assert_int_equal(rf_bag_draw(&b, &g, &item), RF_EEMPTY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_two_bags),       cmocka_unit_test(exact_after_early_refill),
        cmocka_unit_test(draws_per_bag),        cmocka_unit_test(each_item_once_per_bag),
        cmocka_unit_test(items_of_any_size),    cmocka_unit_test(empty_bag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
