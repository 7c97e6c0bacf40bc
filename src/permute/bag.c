/* Shuffle bag: a deck dealt one card at a time and reset when empty.
 * Within a bag the draws are a deal, so its order is a uniform permutation;
 * the reset is O(1) and the next bag's deal does not depend on how the items
 * were left (see deck.c), so successive bags are independent and uniform. */
#include "riffle.h"

void rf_bag_init(rf_bag *b, size_t *items, size_t n)
{
    rf_deck_init(&b->deck, items, n);
}

void rf_bag_init_items(rf_bag *b, void *items, size_t n, size_t size)
{
    rf_deck_init_items(&b->deck, items, n, size);
}

size_t rf_bag_left(const rf_bag *b)
{
    return rf_deck_remaining(&b->deck);
}

void rf_bag_refill(rf_bag *b)
{
    rf_deck_reset(&b->deck);
}

rf_status rf_bag_draw(rf_bag *b, rf_rng *g, void *item)
{
    if (b->deck.n == 0)
        return RF_EEMPTY;
    if (rf_deck_remaining(&b->deck) == 0)
        rf_deck_reset(&b->deck);
    return rf_deck_deal(&b->deck, g, item);
}
