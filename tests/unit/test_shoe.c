/* Casino shoes: exact fairness of the dealt values (every arrangement of the
 * multiset equally often, also after a refill mid-shoe), the cut card's
 * count, the one-deck shoe against the deck, and the error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "riffle.h"
#include "scripted.h"

#define MAX_CARDS 8

/* The dealt values as one number in base per_deck. */
static uint64_t code_of(const size_t *v, size_t n, size_t per_deck)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c = c * per_deck + v[i];
    return c;
}

/* Whether v holds each value 0 .. per_deck - 1 exactly `decks` times. */
static int is_shoe(const size_t *v, size_t decks, size_t per_deck)
{
    size_t seen[MAX_CARDS] = {0};
    for (size_t i = 0; i < decks * per_deck; i++) {
        if (v[i] >= per_deck)
            return 0;
        seen[v[i]]++;
    }
    for (size_t c = 0; c < per_deck; c++)
        if (seen[c] != decks)
            return 0;
    return 1;
}

/* Deal `first` cards, refill, then the whole shoe; over every draw sequence
 * each arrangement of the values must come out equally often, and there are
 * (D * P)! / (D!)^P of them. */
static void enumerate_shoes(size_t decks, size_t per_deck, size_t first)
{
    const size_t n = decks * per_deck;
    uint64_t codes = 1;
    for (size_t i = 0; i < n; i++)
        codes *= per_deck;
    uint64_t *count = calloc(codes, sizeof *count);
    assert_non_null(count);
    rf_script s;
    rf_script_init(&s);
    do {
        rf_rng g;
        size_t cards[MAX_CARDS], dealt[MAX_CARDS], skip;
        rf_shoe shoe;
        rf_script_rng(&s, &g);
        rf_shoe_init(&shoe, cards, decks, per_deck);
        for (size_t i = 0; i < first; i++)
            assert_int_equal(rf_shoe_deal(&shoe, &g, &skip), RF_OK);
        rf_shoe_refill(&shoe);
        assert_int_equal(rf_shoe_remaining(&shoe), n);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(rf_shoe_deal(&shoe, &g, &dealt[i]), RF_OK);
        assert_true(is_shoe(dealt, decks, per_deck));
        count[code_of(dealt, n, per_deck)]++;
    } while (rf_script_next(&s));
    assert_false(s.error);
    /* (D * P)! / (D!)^P arrangements, each seen equally often */
    uint64_t want = rf_test_factorial((unsigned)n), seen = 0, each = 0;
    for (size_t c = 0; c < per_deck; c++)
        want /= rf_test_factorial((unsigned)decks);
    for (uint64_t c = 0; c < codes; c++) {
        if (count[c] == 0)
            continue;
        if (each == 0)
            each = count[c];
        assert_int_equal(count[c], each);
        seen++;
    }
    assert_int_equal(seen, want);
    free(count);
}

static void exact_shoes(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{1, 1}, {2, 1}, {1, 4}, {2, 2}, {3, 2},
                                       {2, 3}, {4, 2}, {2, 4}, {8, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        enumerate_shoes(shapes[i][0], shapes[i][1], 0);
}

static void exact_shoes_after_refill(void **state)
{
    (void)state;
    for (size_t first = 1; first <= 6; first++) {
        enumerate_shoes(2, 3, first);
        enumerate_shoes(3, 2, first);
    }
}

/* The cut card comes out after all but `cut` cards, whatever is dealt. */
static void cut_card(void **state)
{
    (void)state;
    size_t cards[6 * 52], v;
    rf_shoe shoe;
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_CHACHA20, 5), RF_OK);
    rf_shoe_init(&shoe, cards, 6, 52);
    assert_int_equal(rf_shoe_remaining(&shoe), 312);
    assert_int_equal(rf_shoe_set_cut(&shoe, 313), RF_EINVAL);
    assert_int_equal(rf_shoe_set_cut(&shoe, 78), RF_OK);
    for (int round = 0; round < 2; round++) {
        size_t dealt = 0;
        while (!rf_shoe_cut_out(&shoe)) {
            assert_int_equal(rf_shoe_deal(&shoe, &g, &v), RF_OK);
            assert_true(v < 52);
            dealt++;
        }
        assert_int_equal(dealt, 312 - 78);
        /* the cards behind the cut card are dealt too, then none */
        while (rf_shoe_remaining(&shoe) > 0)
            assert_int_equal(rf_shoe_deal(&shoe, &g, &v), RF_OK);
        assert_int_equal(rf_shoe_deal(&shoe, &g, &v), RF_EEMPTY);
        assert_true(rf_shoe_cut_out(&shoe));
        rf_shoe_refill(&shoe); /* the cut stays */
        assert_false(rf_shoe_cut_out(&shoe));
    }
    /* cut 0 (the default): out only when the shoe is empty; the whole shoe */
    assert_int_equal(rf_shoe_set_cut(&shoe, 312), RF_OK);
    assert_true(rf_shoe_cut_out(&shoe));
    rf_shoe_init(&shoe, cards, 1, 3);
    assert_false(rf_shoe_cut_out(&shoe));
    for (int i = 0; i < 3; i++)
        assert_int_equal(rf_shoe_deal(&shoe, &g, &v), RF_OK);
    assert_true(rf_shoe_cut_out(&shoe));
    /* an empty shoe deals nothing */
    rf_shoe_init(&shoe, cards, 0, 52);
    assert_int_equal(rf_shoe_deal(&shoe, &g, &v), RF_EEMPTY);
}

/* A one-deck shoe deals the values a deck of the same cards deals. */
static void one_deck_is_a_deck(void **state)
{
    (void)state;
    size_t a[52], b[52], x, y;
    rf_shoe shoe;
    rf_deck deck;
    rf_rng g1, g2;
    assert_int_equal(rf_rng_seed_u64(&g1, RF_RNG_PCG64, 2026), RF_OK);
    assert_int_equal(rf_rng_seed_u64(&g2, RF_RNG_PCG64, 2026), RF_OK);
    rf_shoe_init(&shoe, a, 1, 52);
    rf_deck_init(&deck, b, 52);
    for (int i = 0; i < 52; i++) {
        assert_int_equal(rf_shoe_deal(&shoe, &g1, &x), RF_OK);
        assert_int_equal(rf_deck_deal(&deck, &g2, &y), RF_OK);
        assert_int_equal(x, y);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_shoes),
        cmocka_unit_test(exact_shoes_after_refill),
        cmocka_unit_test(cut_card),
        cmocka_unit_test(one_deck_is_a_deck),
    };
    return cmocka_run_group_tests_name("shoe", tests, NULL, NULL);
}
