/*
 * nums_cards.c -- card names for `riffle rank` and `riffle unrank`, numbered
 * as `riffle deal` numbers its deck (cli/cmd_deal.c): spades, hearts,
 * diamonds, clubs, each A 2 .. 10 J Q K, then the black and the red joker.
 * So the rank of a deck in deal's order (AS 2S .. KC) is 0, and a whole deal
 * of one hand (`riffle deal -H 1`) can be ranked as it is printed.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cmd_numbers.h"

static const char *const rank_names[13] = {"A", "2", "3", "4", "5", "6", "7",
                                           "8", "9", "10", "J", "Q", "K"};
static const char suit_letters[4] = {'S', 'H', 'D', 'C'};
/* U+2660 BLACK SPADE, U+2665 BLACK HEART, U+2666 BLACK DIAMOND, U+2663 BLACK
 * CLUB (what `riffle deal -u` prints), then the white forms U+2664, U+2661,
 * U+2662, U+2667, accepted too. */
static const char *const suit_symbols[8] = {"\u2660", "\u2665", "\u2666", "\u2663",
                                            "\u2664", "\u2661", "\u2662", "\u2667"};
/* U+1F0CF PLAYING CARD BLACK JOKER, U+1F0BF PLAYING CARD RED JOKER (deal -u). */
static const char *const joker_symbols[2] = {"\U0001F0CF", "\U0001F0BF"};
static const char *const joker_names[2] = {"BJ", "RJ"};

/* The rank part at the front of s: its index 0..12 and length, or -1. */
static int parse_rank(const char *s, size_t *len)
{
    if (s[0] == '1' && s[1] == '0') {
        *len = 2;
        return 9;
    }
    *len = 1;
    const int c = toupper((unsigned char)s[0]);
    if (c >= '2' && c <= '9')
        return c - '1';
    static const char letters[] = "AJQKT";
    static const int values[] = {0, 10, 11, 12, 9};
    const char *p = c ? strchr(letters, c) : NULL;
    return p ? values[p - letters] : -1;
}

/* The suit of the whole string s: 0..3, or -1. */
static int parse_suit(const char *s)
{
    if (s[0] && !s[1]) {
        const char *p = strchr("SHDC", toupper((unsigned char)s[0]));
        return p && *p ? (int)(p - "SHDC") : -1;
    }
    for (int i = 0; i < 8; i++)
        if (strcmp(s, suit_symbols[i]) == 0)
            return i % 4;
    return -1;
}

int nums_card_parse(const char *s, size_t *card)
{
    for (size_t j = 0; j < 2; j++) {
        if (strcmp(s, joker_symbols[j]) == 0 ||
            (toupper((unsigned char)s[0]) == joker_names[j][0] &&
             toupper((unsigned char)s[1]) == 'J' && !s[2])) {
            *card = NUMS_DECK + j;
            return 0;
        }
    }
    size_t len;
    const int rank = parse_rank(s, &len);
    const int suit = rank < 0 ? -1 : parse_suit(s + len);
    if (suit < 0)
        return -1;
    *card = (size_t)(suit * 13 + rank);
    return 0;
}

void nums_card_name(size_t card, int unicode, char *buf)
{
    if (card >= NUMS_DECK)
        snprintf(buf, NUMS_CARD_NAME, "%s",
                 unicode ? joker_symbols[card - NUMS_DECK] : joker_names[card - NUMS_DECK]);
    else if (unicode)
        snprintf(buf, NUMS_CARD_NAME, "%s%s", rank_names[card % 13], suit_symbols[card / 13]);
    else
        snprintf(buf, NUMS_CARD_NAME, "%s%c", rank_names[card % 13], suit_letters[card / 13]);
}
