/*
 * deal_shoe.c -- casino shoes: `riffle deal --preset=blackjack` or
 * `--preset=baccarat`, with --decks=N and --cut=N.
 *
 * The shoe is the library's rf_shoe (a deck of the 52 D card values, each
 * value D times), dealt on demand: one uniform draw per card as it comes out
 * of the shoe, so the dealt order is a uniform arrangement of the shoe and
 * baccarat's burn, which the first card decides, is known before the next
 * card is drawn.  A shoe of one deck deals the order of a single deal.
 *
 * The rules, as casinos deal them:
 *   blackjack  one card burned face down; the cut card goes --cut cards
 *              from the end (default: a quarter of the shoe, which is 75 %
 *              penetration);
 *   baccarat   the first card is turned face up and burned with as many more
 *              as its value (ace 1, two to nine their pips, tens and faces
 *              10); the cut card goes 16 cards from the end by default.
 * Printed: the burned cards, the cards dealt before the cut card comes out
 * ("play"), and the --cut cards behind the cut card ("after cut"), from which
 * the round in progress when the cut card appears is finished.  All three in
 * dealt order: together the whole shoe.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deal.h"

#define STD_CARDS 52
#define MAX_DECKS 8
/* The most cards a game burns: baccarat's first card and ten more. */
#define MAX_BURN 11

enum shoe_game { BLACKJACK, BACCARAT };

/* The dealt shoe: the values dealt[0..n), cut into burn, play (until the
 * cut card came out) and after cut. */
struct shoe_deal {
    size_t *dealt;
    size_t n, burn, play, cut;
};

int deal_shoe_preset(const char *preset)
{
    return preset && (strcmp(preset, "blackjack") == 0 || strcmp(preset, "baccarat") == 0);
}

static enum shoe_game game_of(const char *preset)
{
    return strcmp(preset, "baccarat") == 0 ? BACCARAT : BLACKJACK;
}

static int number(const char *arg, const char *what, uint64_t *v)
{
    int over;
    if (cli_parse_u64(arg, v, &over) != 0 || over)
        return cli_usage("deal", "invalid %s: %s", what, cli_quote(arg));
    return CLI_CONTINUE;
}

int deal_shoe_option(struct deal_more *m, int opt, const char *arg)
{
    switch (opt) {
    case DEAL_OPT_DECKS:
        if (cli_set_once(&m->decks_arg, arg, "deck counts") != CLI_CONTINUE ||
            number(arg, "number of decks", &m->decks) != CLI_CONTINUE)
            return CLI_FAIL;
        if (m->decks < 1 || m->decks > MAX_DECKS)
            return cli_usage("deal", "invalid number of decks: %s (1 to %d)", cli_quote(arg),
                             MAX_DECKS);
        return CLI_CONTINUE;
    case DEAL_OPT_CUT:
        if (cli_set_once(&m->cut_arg, arg, "cut card positions") != CLI_CONTINUE)
            return CLI_FAIL;
        return number(arg, "cut", &m->cut);
    default:
        return DEAL_NOT_MORE;
    }
}

/* Defaults: blackjack 6 decks, cut a quarter of the shoe from the end;
 * baccarat 8 decks, cut 16 cards from the end. */
static int shoe_defaults(struct deal_more *m, enum shoe_game game)
{
    if (!m->decks_arg)
        m->decks = game == BACCARAT ? 8 : 6;
    const uint64_t cards = STD_CARDS * m->decks;
    const uint64_t burn = game == BACCARAT ? MAX_BURN : 1;
    if (!m->cut_arg)
        m->cut = game == BACCARAT ? 16 : cards / 4;
    if (m->cut > cards - burn)
        return cli_usage("deal", "invalid cut: %s (at most %llu cards from the end of %llu)",
                         m->cut_arg ? cli_quote(m->cut_arg) : "default",
                         (unsigned long long)(cards - burn), (unsigned long long)cards);
    return CLI_CONTINUE;
}

int deal_shoe_check(struct deal_more *m, const char *preset)
{
    if (!deal_shoe_preset(preset)) {
        if (m->decks_arg || m->cut_arg)
            return cli_usage("deal", "--%s needs --preset=blackjack or --preset=baccarat",
                             m->decks_arg ? "decks" : "cut");
        return CLI_CONTINUE;
    }
    if (deal_count_wanted(m))
        return cli_usage("deal", "--%s cannot be combined with --preset=%s",
                         m->count_arg ? "count" : m->csv ? "csv" : "header", preset);
    return shoe_defaults(m, game_of(preset));
}

/* Baccarat's value of a card: ace 1, two to nine their pips, the rest 10. */
static size_t burn_value(size_t card)
{
    const size_t rank = card % 13; /* 0: ace .. 12: king */
    return rank < 9 ? rank + 1 : 10;
}

/* Deal the whole shoe as the game does: the burn (decided by the first card
 * in baccarat), the cards until the cut card comes out, the rest. */
static rf_status deal_shoe_cards(rf_shoe *shoe, rf_rng *g, enum shoe_game game,
                                 struct shoe_deal *s)
{
    size_t k = 0;
    rf_status st = rf_shoe_deal(shoe, g, &s->dealt[k++]);
    s->burn = game == BACCARAT ? 1 + burn_value(s->dealt[0]) : 1;
    while (st == RF_OK && k < s->burn)
        st = rf_shoe_deal(shoe, g, &s->dealt[k++]);
    while (st == RF_OK && !rf_shoe_cut_out(shoe))
        st = rf_shoe_deal(shoe, g, &s->dealt[k++]);
    s->play = k - s->burn;
    while (st == RF_OK && rf_shoe_remaining(shoe) > 0)
        st = rf_shoe_deal(shoe, g, &s->dealt[k++]);
    return st;
}

static void text_section(const char *label, char *const *names, const size_t *cards,
                         size_t count)
{
    fputs(label, stdout);
    for (size_t i = 0; i < count; i++)
        printf("%*s%s", i == 0 ? 11 - (int)strlen(label) : 1, "",
               names[cards[i]]);
    putchar('\n');
}

static void json_section(const char *key, char *const *names, const size_t *cards,
                         size_t count, const char *end)
{
    printf("  \"%s\": [", key);
    for (size_t i = 0; i < count; i++) {
        if (i)
            fputs(", ", stdout);
        json_string(stdout, names[cards[i]]);
    }
    printf("]%s\n", end);
}

static void print_shoe(char *const *names, const struct shoe_deal *s, const char *preset,
                       uint64_t decks, int json)
{
    const size_t play = s->play;
    const size_t *after = s->dealt + s->burn + play;
    if (!json) {
        text_section("burn:", names, s->dealt, s->burn);
        text_section("play:", names, s->dealt + s->burn, play);
        text_section("after cut:", names, after, s->cut);
        return;
    }
    printf("{\n  \"game\": \"%s\",\n  \"decks\": %llu,\n  \"cut\": %zu,\n", preset,
           (unsigned long long)decks, s->cut);
    json_section("burn", names, s->dealt, s->burn, ",");
    json_section("play", names, s->dealt + s->burn, play, ",");
    json_section("after_cut", names, after, s->cut, "");
    printf("}\n");
}

int deal_shoe_run(char *const *names, const struct deal_more *m, const char *preset, int json,
                  rf_rng *g)
{
    struct shoe_deal s = {.n = (size_t)(STD_CARDS * m->decks), .cut = (size_t)m->cut};
    size_t *cards = malloc(s.n * sizeof *cards);
    int status = CLI_FAIL;
    if (!cards || !(s.dealt = malloc(s.n * sizeof *s.dealt))) {
        cli_error("memory exhausted");
        goto done;
    }
    rf_shoe shoe;
    rf_shoe_init(&shoe, cards, (size_t)m->decks, STD_CARDS);
    rf_status st = rf_shoe_set_cut(&shoe, s.cut);
    if (st == RF_OK)
        st = deal_shoe_cards(&shoe, g, game_of(preset), &s);
    if (st != RF_OK) {
        cli_error("%s", rf_strerror(st));
        goto done;
    }
    print_shoe(names, &s, preset, m->decks, json);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("write error: %s", strerror(errno));
        goto done;
    }
    status = CLI_OK;
done:
    free(cards);
    free(s.dealt);
    return status;
}
