/* deal.h -- what `riffle deal` (cmd_deal.c) shares with its two dealing
 * modes in their own files: many whole-deck deals in a row for a test lab's
 * data set (deal_count.c: --count with --csv or --json lines) and casino
 * shoes (deal_shoe.c: --preset=blackjack or baccarat, --decks, --cut).
 * Their options are parsed there, so that cmd_deal.c only lists them. */
#ifndef RIFFLE_DEAL_H
#define RIFFLE_DEAL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* The getopt codes of the options below: numbered well clear of
 * cmd_deal.c's own long-only options, which count up from
 * CLI_OPT_FIRST_FREE. */
enum deal_more_code {
    DEAL_OPT_COUNT = CLI_OPT_FIRST_FREE + 64,
    DEAL_OPT_CSV,
    DEAL_OPT_HEADER,
    DEAL_OPT_DECKS,
    DEAL_OPT_CUT
};

/* The entries of deal's getopt_long table for them. */
#define DEAL_MORE_LONGOPTS                                                                     \
    {"count", required_argument, NULL, DEAL_OPT_COUNT},                                        \
        {"csv", no_argument, NULL, DEAL_OPT_CSV},                                              \
        {"header", no_argument, NULL, DEAL_OPT_HEADER},                                        \
        {"decks", required_argument, NULL, DEAL_OPT_DECKS},                                    \
        {"cut", required_argument, NULL, DEAL_OPT_CUT}

struct deal_more {
    const char *count_arg; /* --count as given, or NULL */
    uint64_t count;
    int csv, header;
    const char *decks_arg, *cut_arg;
    uint64_t decks, cut;
};

/* Returned by deal_more_option for an option that is not one of these. */
#define DEAL_NOT_MORE (-2)

/* Take getopt's `opt` into m if it is --count, --csv or --header
 * (deal_count_option) or --decks or --cut (deal_shoe_option): returns
 * CLI_CONTINUE, CLI_FAIL after a usage message, or DEAL_NOT_MORE. */
int deal_count_option(struct deal_more *m, int opt, const char *arg);
int deal_shoe_option(struct deal_more *m, int opt, const char *arg);

/* A JSON string of str on f, always valid UTF-8 (cmd_deal.c). */
void json_string(FILE *f, const char *str);

/* ---- --count (deal_count.c) ---- */

/* Whether the options ask for the --count mode (--count, --csv or
 * --header given). */
int deal_count_wanted(const struct deal_more *m);
/* --csv and --header need --count; --header needs --csv.  Returns
 * CLI_CONTINUE or CLI_FAIL after a usage message. */
int deal_count_check(const struct deal_more *m);
/* Deal the whole deck of the n cards names[0..n) (n >= 1) m->count times
 * from g, one deal a line: text (cards separated by spaces), --csv or --json
 * (json nonzero).  A reader that goes away ends the output quietly.  Returns
 * the exit status, after a message on failure. */
int deal_count_run(char *const *names, size_t n, const struct deal_more *m, int json,
                   rf_rng *g);

/* ---- casino shoes (deal_shoe.c) ---- */

/* Whether preset names a shoe game ("blackjack", "baccarat"); NULL: no. */
int deal_shoe_preset(const char *preset);
/* The shoe options against each other and against the mode: --decks and
 * --cut only with a shoe preset, --count never with one.  Returns
 * CLI_CONTINUE or CLI_FAIL after a usage message. */
int deal_shoe_check(struct deal_more *m, const char *preset);
/* Shuffle a shoe of m->decks copies of the 52 cards names[0..52) and deal it
 * by the game's rules (burn, then up to the cut card, then the cards behind
 * it), printed as text or JSON.  Returns the exit status. */
int deal_shoe_run(char *const *names, const struct deal_more *m, const char *preset, int json,
                  rf_rng *g);

#endif /* RIFFLE_DEAL_H */
