/*
 * audit_rules.h -- the tests that gaming rules and test labs name for a card
 * shuffler, beside the permutation tests of audit.h: runs and serial
 * correlation between consecutive games (independence from the previous
 * game, per card position), the poker test on the first five cards, and the
 * gap and coupon-collector tests on the first card.  Each has an exact law,
 * computed here by counting or by an exact recurrence.
 *
 * The accumulator sees the decks of a trial stream in the order they were
 * dealt; pairs of consecutive decks, gaps and coupon segments never cross a
 * restart (audit_rules_restart), so that decks drawn on independent generator
 * streams are never paired.
 */
#ifndef RIFFLE_AUDIT_RULES_H
#define RIFFLE_AUDIT_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "audit.h"

/* ---- the exact laws ------------------------------------------------------ */

/* Poker hand categories, from the most to the least likely on 52 cards. */
enum audit_poker_hand {
    AUDIT_POKER_HIGH_CARD = 0, AUDIT_POKER_PAIR, AUDIT_POKER_TWO_PAIR,
    AUDIT_POKER_THREE, AUDIT_POKER_STRAIGHT, AUDIT_POKER_FLUSH,
    AUDIT_POKER_FULL_HOUSE, AUDIT_POKER_FOUR, AUDIT_POKER_STRAIGHT_FLUSH,
    AUDIT_POKER_HANDS
};
/* The category's name ("two pair"). */
const char *audit_poker_name(int hand);
/* The ranks of the deck of n cards read as 4 suits of n / 4 ranks (card c:
 * suit c / ranks, rank c % ranks, rank 0 the ace, which also plays high): n / 4
 * when n is a multiple of 4 with 5 to 13 ranks (20 to 52 cards), else 0 (no
 * poker test). */
size_t audit_poker_ranks(size_t n);
/* The category of the five distinct cards c[0..5) of such a deck. */
int audit_poker_hand(const uint32_t *c, size_t ranks);
/* The category of five cards given by their ranks r[0..5) (any order) and
 * whether they share a suit: the accumulator looks both up in a table of the
 * deck's cards rather than dividing each card. */
int audit_poker_category(const size_t *r, int flush, size_t ranks);
/* The number of five-card hands of each category, counted over the multisets
 * of ranks (ranks >= 5); they add up to C(4 ranks, 5). */
void audit_poker_counts(size_t ranks, uint64_t counts[AUDIT_POKER_HANDS]);
/* The same as probabilities. */
void audit_law_poker(size_t ranks, double p[AUDIT_POKER_HANDS]);

/* Runs: a card position's runs are the stretches of consecutive games in
 * which the card there is from the low half of the deck (the n / 2 lowest
 * cards) or from the high half.  Between two independent uniform decks the
 * number j of positions that go from low to high (as many go from high to
 * low, so 2 j runs begin) is hypergeometric:  p[j] = C(h, j) C(n - h, j) /
 * C(n, h), h = n / 2, j = 0..h.  n >= 2. */
void audit_law_runs(size_t n, double *p);

/* Gap test (Knuth, TAOCP vol. 2, 3.3.2 D): the games between two games whose
 * first card is a hit (one of the AUDIT_GAP_HITS(n) lowest cards).  p[k] =
 * hit (1 - hit)^k for k < cells - 1, and the tail Pr[gap >= cells - 1] in
 * p[cells - 1]. */
#define AUDIT_GAP_HITS(n) ((n) >= 16 ? (n) / 8 : 1)
void audit_law_gap(double hit, size_t cells, double *p);

/* Coupon collector (Knuth, TAOCP vol. 2, 3.3.2 C): the first card's class
 * (the d classes of n / d consecutive cards, d = audit_coupon_classes(n)) until
 * every class has been seen.  p[k] = Pr[length = d + k] for k < cells - 1 and
 * the tail Pr[length >= d + cells - 1] in p[cells - 1], by the exact
 * recurrence on the number of classes seen.  d >= 2. */
size_t audit_coupon_classes(size_t n);
void audit_law_coupon(size_t d, size_t cells, double *p);

/* ---- the accumulator ------------------------------------------------------ */

typedef struct audit_rules_acc audit_rules_acc;

/* Counters for decks of n cards; NULL if out of memory. */
audit_rules_acc *audit_rules_new(size_t n);
void audit_rules_free(audit_rules_acc *r);
/* Forget the last deck, and the open gap and coupon segment: the next deck
 * starts a new stream. */
void audit_rules_restart(audit_rules_acc *r);
/* One more deck a[0..n) (a[p] = the card at position p, 0-based). */
void audit_rules_add(audit_rules_acc *r, const uint32_t *a);
/* Add src's counts to dst's (same n); dst's stream state is left as it was. */
void audit_rules_merge(audit_rules_acc *dst, const audit_rules_acc *src);

/* The tests of these counts into t[0..AUDIT_RULES_TESTS), in the order runs,
 * serial-correlation, poker, gap, coupon-collector (audit.h's AUDIT_T_RUNS
 * onwards); `adjusted` is left to the verdict. */
#define AUDIT_RULES_TESTS 5
void audit_rules_tests(const audit_rules_acc *r, audit_test *t);

/* The counts behind the tests, for the reports: runs[0..n/2], poker[0..9),
 * gaps[0..gap_cells), coupon[0..coupon_cells); pairs of consecutive decks. */
typedef struct audit_rules_counts {
    const uint64_t *runs, *poker, *gaps, *coupon;
    size_t runs_cells, poker_cells, gap_cells, coupon_cells, coupon_classes;
    size_t n, ranks;
    uint64_t pairs;
} audit_rules_counts;
void audit_rules_get_counts(const audit_rules_acc *r, audit_rules_counts *c);
/* The serial statistic's z of each position into z[0..n) (NAN before two
 * games). */
void audit_rules_serial_z(const audit_rules_acc *r, double *z);

/* The counts in the reports (audit_rules_report.c): fields of a size's
 * `statistical` JSON object (each starting ", "), and the first hands'
 * table in HTML (nothing when there is no poker test). */
void audit_rules_json(FILE *f, const audit_rules_acc *r);
void audit_rules_html(FILE *f, const audit_rules_acc *r);

/* The level at which each test is reported passed or failed for the
 * regulators (a 99 % confidence level), beside the audit's own adjusted
 * verdict. */
#define AUDIT_RULES_LEVEL 0.01

#endif /* RIFFLE_AUDIT_RULES_H */
