/* Casino shoe: a deck whose items are card values, each value in it once
 * per deck.  The deals are the deck's, so the dealt items are a uniform
 * permutation of the shoe's decks * per_deck items (deck.c), and the values
 * a uniformly random arrangement of the multiset: every arrangement comes
 * from the same number (decks!^per_deck) of item orders.  The cut card is
 * only a count: it changes when a game stops, never what is dealt. */
#include "riffle.h"

void rf_shoe_init(rf_shoe *s, size_t *cards, size_t decks, size_t per_deck)
{
    const size_t n = decks * per_deck;
    for (size_t i = 0; i < n; i++)
        cards[i] = i % per_deck;
    rf_deck_init_items(&s->deck, cards, n, sizeof *cards);
    s->cut = 0;
}

rf_status rf_shoe_set_cut(rf_shoe *s, size_t cut)
{
    if (cut > s->deck.n)
        return RF_EINVAL;
    s->cut = cut;
    return RF_OK;
}

rf_status rf_shoe_deal(rf_shoe *s, rf_rng *g, size_t *card)
{
    return rf_deck_deal(&s->deck, g, card);
}

int rf_shoe_cut_out(const rf_shoe *s)
{
    return rf_deck_remaining(&s->deck) <= s->cut;
}

size_t rf_shoe_remaining(const rf_shoe *s)
{
    return rf_deck_remaining(&s->deck);
}

void rf_shoe_refill(rf_shoe *s)
{
    rf_deck_reset(&s->deck);
}
