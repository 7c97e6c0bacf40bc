/* Decks: exact fairness of dealing (also after a reset mid-deal), the O(1)
 * contract's observable parts, and the error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "riffle.h"
#include "scripted.h"

/* Deal `first` cards, reset, then deal the whole deck; over every draw
 * sequence each of the n! final deal orders must occur equally often. */
static void enumerate_deals(size_t n, size_t first)
{
    const uint64_t nf = rf_test_factorial((unsigned)n);
    uint64_t *count = calloc(nf, sizeof *count);
    assert_non_null(count);
    rf_script s;
    uint64_t den = 0;
    rf_script_init(&s);
    do {
        rf_rng g;
        size_t storage[8], dealt[8];
        rf_deck d;
        rf_script_rng(&s, &g);
        rf_deck_init(&d, storage, n);
        assert_int_equal(rf_deck_deal_n(&d, &g, first, dealt), RF_OK);
        rf_deck_reset(&d);
        assert_int_equal(rf_deck_remaining(&d), n);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(rf_deck_deal(&d, &g, &dealt[i]), RF_OK);
        assert_int_equal(rf_deck_remaining(&d), 0);
        if (den == 0)
            den = rf_script_den(&s);
        assert_int_equal(rf_script_den(&s), den);
        count[rf_test_perm_rank(dealt, n)]++;
    } while (rf_script_next(&s));
    assert_false(s.error);
    for (uint64_t r = 0; r < nf; r++)
        assert_int_equal(count[r], count[0]);
    assert_true(count[0] > 0);
    free(count);
}

static void exact_dealing(void **state)
{
    (void)state;
    for (size_t n = 0; n <= 7; n++)
        enumerate_deals(n, 0);
}

static void exact_dealing_after_reset(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 6; n++)
        for (size_t first = 1; first <= n; first++)
            enumerate_deals(n, first);
}

/* Each prefix of a deal is uniform too: the first k cards dealt from a deck of
 * n are a uniform k-permutation (the lottery case). */
static void exact_partial_deal(void **state)
{
    (void)state;
    const size_t n = 7, k = 3;
    unsigned count[7 * 7 * 7] = {0};
    rf_script s;
    rf_script_init(&s);
    do {
        rf_rng g;
        size_t storage[7], out[3];
        rf_deck d;
        rf_script_rng(&s, &g);
        rf_deck_init(&d, storage, n);
        assert_int_equal(rf_deck_deal_n(&d, &g, k, out), RF_OK);
        count[(out[0] * 7 + out[1]) * 7 + out[2]]++;
    } while (rf_script_next(&s));
    unsigned distinct = 0;
    for (size_t i = 0; i < 343; i++)
        if (count[i]) {
            assert_int_equal(count[i], 1);
            distinct++;
        }
    assert_int_equal(distinct, 7 * 6 * 5);
}

static void empty_and_all_or_nothing(void **state)
{
    (void)state;
    rf_rng g;
    size_t storage[5], out[6], c;
    rf_deck d;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 1), RF_OK);
    rf_deck_init(&d, storage, 5);
    assert_int_equal(rf_deck_deal_n(&d, &g, 6, out), RF_EEMPTY);
    assert_int_equal(rf_deck_remaining(&d), 5); /* nothing dealt */
    assert_int_equal(rf_deck_deal_n(&d, &g, 3, out), RF_OK);
    assert_int_equal(rf_deck_deal_n(&d, &g, 3, out + 3), RF_EEMPTY);
    assert_int_equal(rf_deck_deal_n(&d, &g, 2, out + 3), RF_OK);
    assert_int_equal(rf_deck_deal(&d, &g, &c), RF_EEMPTY);
    assert_int_equal(rf_deck_deal_n(&d, &g, 0, out), RF_OK);
    /* dealt() lists the deal order */
    size_t count;
    const size_t *dealt = rf_deck_dealt(&d, &count);
    assert_int_equal(count, 5);
    assert_memory_equal(dealt, out, 5 * sizeof *out);
    unsigned seen = 0;
    for (int i = 0; i < 5; i++)
        seen |= 1u << out[i];
    assert_int_equal(seen, 31);
    /* an empty deck deals nothing */
    rf_deck e;
    rf_deck_init(&e, storage, 0);
    assert_int_equal(rf_deck_deal(&e, &g, &c), RF_EEMPTY);
}

/* A deck of caller items of any size (here 12-byte structs, and strings). */
struct card {
    char rank, suit;
    int value;
    float weight;
};
static void item_decks(void **state)
{
    (void)state;
    rf_rng g;
    struct card cards[52], hand[13];
    const char *ranks = "23456789TJQKA", *suits = "CDHS";
    for (int i = 0; i < 52; i++)
        cards[i] = (struct card){ranks[i % 13], suits[i / 13], i, 1.0f};
    rf_deck d;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_PCG64, 77), RF_OK);
    rf_deck_init_items(&d, cards, 52, sizeof cards[0]);
    int seen[52] = {0};
    for (int h = 0; h < 4; h++) {
        assert_int_equal(rf_deck_deal_n(&d, &g, 13, hand), RF_OK);
        for (int i = 0; i < 13; i++) {
            assert_int_equal(hand[i].rank, ranks[hand[i].value % 13]);
            assert_int_equal(hand[i].suit, suits[hand[i].value / 13]);
            seen[hand[i].value]++;
        }
    }
    for (int i = 0; i < 52; i++)
        assert_int_equal(seen[i], 1);
    rf_deck_reset(&d);
    assert_int_equal(rf_deck_remaining(&d), 52);

    rf_deck *nd = rf_deck_new(1000);
    assert_non_null(nd);
    size_t x;
    for (int i = 0; i < 1000; i++)
        assert_int_equal(rf_deck_deal(nd, &g, &x), RF_OK);
    assert_int_equal(rf_deck_deal(nd, &g, &x), RF_EEMPTY);
    rf_deck_free(nd);
    rf_deck_free(NULL);
}

/* Items that are not 8 bytes wide are swapped byte by byte, 8-byte ones as
 * words: over every draw sequence a deck of 4-byte items deals each order
 * equally often too. */
static void exact_dealing_narrow_items(void **state)
{
    (void)state;
    for (size_t n = 1; n <= 6; n++) {
        const uint64_t nf = rf_test_factorial((unsigned)n);
        uint64_t *count = calloc(nf, sizeof *count);
        assert_non_null(count);
        rf_script s;
        rf_script_init(&s);
        do {
            rf_rng g;
            uint32_t items[6];
            size_t order[6];
            rf_deck d;
            rf_script_rng(&s, &g);
            for (size_t i = 0; i < n; i++)
                items[i] = (uint32_t)i;
            rf_deck_init_items(&d, items, n, sizeof items[0]);
            for (size_t i = 0; i < n; i++) {
                uint32_t c;
                assert_int_equal(rf_deck_deal(&d, &g, &c), RF_OK);
                order[i] = c;
            }
            count[rf_test_perm_rank(order, n)]++;
        } while (rf_script_next(&s));
        assert_false(s.error);
        for (uint64_t r = 0; r < nf; r++)
            assert_int_equal(count[r], count[0]);
        assert_true(count[0] > 0);
        free(count);
    }
}

/* The word swap of 8-byte items and the byte swap of wider ones make the
 * same deal from the same draws: a size_t deck and a deck of 16-byte items
 * carrying the same numbers deal the same order. */
static void word_and_byte_swaps_agree(void **state)
{
    (void)state;
    struct wide {
        size_t card;
        char pad[16 - sizeof(size_t)];
    } wide[52], w;
    size_t cards[52], c;
    for (size_t i = 0; i < 52; i++)
        wide[i] = (struct wide){.card = i};
    rf_rng g1, g2;
    assert_int_equal(rf_rng_seed_u64(&g1, RF_RNG_CHACHA20, 2026), RF_OK);
    assert_int_equal(rf_rng_seed_u64(&g2, RF_RNG_CHACHA20, 2026), RF_OK);
    rf_deck a, b;
    rf_deck_init(&a, cards, 52);
    rf_deck_init_items(&b, wide, 52, sizeof wide[0]);
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < 52; i++) {
            assert_int_equal(rf_deck_deal(&a, &g1, &c), RF_OK);
            assert_int_equal(rf_deck_deal(&b, &g2, &w), RF_OK);
            assert_int_equal(c, w.card);
        }
        rf_deck_reset(&a);
        rf_deck_reset(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_dealing),
        cmocka_unit_test(exact_dealing_after_reset),
        cmocka_unit_test(exact_partial_deal),
        cmocka_unit_test(empty_and_all_or_nothing),
        cmocka_unit_test(item_decks),
        cmocka_unit_test(exact_dealing_narrow_items),
        cmocka_unit_test(word_and_byte_swaps_agree),
    };
    return cmocka_run_group_tests_name("deck", tests, NULL, NULL);
}
