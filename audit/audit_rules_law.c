/*
 * audit_rules_law.c -- the exact laws of the rules' tests (audit_rules.h).
 *
 * Poker: the hands of each category are counted over the multisets of five
 * ranks, each weighted by the ways to choose its suits (C(4, m) for a rank
 * held m times); five distinct ranks take 4^5 suit choices, of which 4 are a
 * flush.  On 52 cards this gives the classic counts (e.g. Feller, An
 * Introduction to Probability Theory, vol. 1, II.5), which the unit tests
 * check, and enumeration of every hand for smaller decks.
 *
 * Gap and coupon-collector laws as in Knuth, TAOCP vol. 2, 3rd ed., 3.3.2 C
 * and D; the coupon law by the recurrence on the number of classes seen
 * rather than Stirling numbers, so that no term overflows.
 */
#include <math.h>
#include <string.h>

#include "audit_rules.h"

static const char *const poker_names[AUDIT_POKER_HANDS] = {
    "high card", "pair", "two pair", "three of a kind", "straight", "flush",
    "full house", "four of a kind", "straight flush"};

const char *audit_poker_name(int hand)
{
    return hand >= 0 && hand < AUDIT_POKER_HANDS ? poker_names[hand] : "?";
}

size_t audit_poker_ranks(size_t n)
{
    /* At most 13 ranks: real decks, and the count below enumerates the
     * C(ranks + 4, 5) multisets of ranks (6188 at 13) at every look. */
    return n % 4 == 0 && n / 4 >= 5 && n / 4 <= 13 ? n / 4 : 0;
}

/* Five distinct ranks sorted ascending: a run of five, the ace (rank 0) low
 * or above the highest rank. */
static int is_straight(const size_t *r, size_t ranks)
{
    if (r[4] - r[0] == 4)
        return 1;
    return r[0] == 0 && r[1] == ranks - 4 && r[4] == ranks - 1;
}

/* The category of a hand from its sorted ranks, given whether it is a flush
 * (which only five distinct ranks can be). */
static int category(const size_t *r, size_t ranks, int flush)
{
    size_t mult[5] = {0}, groups = 0, top = 0;
    for (size_t i = 0; i < 5; i++) {
        if (i == 0 || r[i] != r[i - 1])
            groups++;
        mult[groups - 1]++;
    }
    for (size_t g = 0; g < groups; g++)
        top = mult[g] > top ? mult[g] : top;
    if (groups == 5) {
        const int straight = is_straight(r, ranks);
        return straight && flush ? AUDIT_POKER_STRAIGHT_FLUSH
               : straight        ? AUDIT_POKER_STRAIGHT
               : flush           ? AUDIT_POKER_FLUSH
                                 : AUDIT_POKER_HIGH_CARD;
    }
    if (top == 4)
        return AUDIT_POKER_FOUR;
    if (top == 3)
        return groups == 2 ? AUDIT_POKER_FULL_HOUSE : AUDIT_POKER_THREE;
    return groups == 3 ? AUDIT_POKER_TWO_PAIR : AUDIT_POKER_PAIR;
}

/* The ranks as a mask and as counts, not sorted: each hand of a trial is
 * classified this way, and the exact counts above sort a multiset of ranks
 * (category), so the enumeration in the unit tests checks one against the
 * other. */
int audit_poker_category(const size_t *r, int flush, size_t ranks)
{
    unsigned mask = 0, repeats = 0;
    unsigned char count[16] = {0};
    unsigned top = 1;
    for (size_t i = 0; i < 5; i++) {
        repeats += (mask >> r[i]) & 1u;
        mask |= 1u << r[i];
        const unsigned m = ++count[r[i]];
        top = m > top ? m : top;
    }
    if (repeats == 0) {
        const unsigned low = mask & -mask;
        const int straight = mask == 0x1fu * low ||
                             mask == (1u | 0xfu << (ranks - 4));
        return straight && flush ? AUDIT_POKER_STRAIGHT_FLUSH
               : straight        ? AUDIT_POKER_STRAIGHT
               : flush           ? AUDIT_POKER_FLUSH
                                 : AUDIT_POKER_HIGH_CARD;
    }
    if (top == 4)
        return AUDIT_POKER_FOUR;
    if (top == 3)
        return repeats == 3 ? AUDIT_POKER_FULL_HOUSE : AUDIT_POKER_THREE;
    return repeats == 2 ? AUDIT_POKER_TWO_PAIR : AUDIT_POKER_PAIR;
}

int audit_poker_hand(const uint32_t *c, size_t ranks)
{
    size_t r[5];
    int flush = 1;
    for (size_t i = 0; i < 5; i++) {
        r[i] = c[i] % ranks;
        flush &= c[i] / ranks == c[0] / ranks;
    }
    return audit_poker_category(r, flush, ranks);
}

static uint64_t choose4(size_t m)
{
    static const uint64_t c[5] = {1, 4, 6, 4, 1};
    return m <= 4 ? c[m] : 0;
}

/* The hands of one multiset of ranks r[0] <= ... <= r[4]. */
static void count_multiset(const size_t *r, size_t ranks, uint64_t *counts)
{
    uint64_t ways = 1;
    size_t run = 1;
    for (size_t i = 1; i <= 5; i++) {
        if (i < 5 && r[i] == r[i - 1]) {
            run++;
            continue;
        }
        ways *= choose4(run);
        run = 1;
    }
    if (ways == 0)
        return;
    if (ways == 1024) { /* five distinct ranks: 4 flushes among 4^5 */
        counts[category(r, ranks, 1)] += 4;
        counts[category(r, ranks, 0)] += 1020;
    } else {
        counts[category(r, ranks, 0)] += ways;
    }
}

void audit_poker_counts(size_t ranks, uint64_t counts[AUDIT_POKER_HANDS])
{
    memset(counts, 0, AUDIT_POKER_HANDS * sizeof *counts);
    size_t r[5];
    for (r[0] = 0; r[0] < ranks; r[0]++)
        for (r[1] = r[0]; r[1] < ranks; r[1]++)
            for (r[2] = r[1]; r[2] < ranks; r[2]++)
                for (r[3] = r[2]; r[3] < ranks; r[3]++)
                    for (r[4] = r[3]; r[4] < ranks; r[4]++)
                        count_multiset(r, ranks, counts);
}

void audit_law_poker(size_t ranks, double p[AUDIT_POKER_HANDS])
{
    uint64_t counts[AUDIT_POKER_HANDS], total = 0;
    audit_poker_counts(ranks, counts);
    for (int i = 0; i < AUDIT_POKER_HANDS; i++)
        total += counts[i];
    for (int i = 0; i < AUDIT_POKER_HANDS; i++)
        p[i] = (double)counts[i] / (double)total;
}

static double log_choose(size_t n, size_t k)
{
    return audit_lgamma((double)n + 1.0) - audit_lgamma((double)k + 1.0) -
           audit_lgamma((double)(n - k) + 1.0);
}

void audit_law_runs(size_t n, double *p)
{
    const size_t h = n / 2;
    const double all = log_choose(n, h);
    for (size_t j = 0; j <= h; j++)
        p[j] = exp(log_choose(h, j) + log_choose(n - h, j) - all);
}

void audit_law_gap(double hit, size_t cells, double *p)
{
    double miss = 1.0; /* (1 - hit)^k */
    for (size_t k = 0; k + 1 < cells; k++) {
        p[k] = hit * miss;
        miss *= 1.0 - hit;
    }
    p[cells - 1] = miss;
}

size_t audit_coupon_classes(size_t n)
{
    size_t d = n < 64 ? n : 64;
    while (d > 1 && n % d != 0)
        d--;
    return d;
}

void audit_law_coupon(size_t d, size_t cells, double *p)
{
    /* seen[k]: Pr[k classes seen, not all] after the draws so far; a
     * segment's first draw always shows one class. */
    double seen[65] = {0};
    seen[1] = 1.0;
    for (size_t r = 2; r < d; r++) /* lengths below d are impossible */
        for (size_t k = r < d - 1 ? r : d - 1; k >= 1; k--)
            seen[k] = seen[k] * (double)k / (double)d +
                      seen[k - 1] * (double)(d - k + 1) / (double)d;
    for (size_t k = 0; k + 1 < cells; k++) {
        /* length d + k: the last draw of the segment shows the last class */
        p[k] = seen[d - 1] / (double)d;
        for (size_t j = d - 1; j >= 1; j--)
            seen[j] = seen[j] * (double)j / (double)d +
                      seen[j - 1] * (double)(d - j + 1) / (double)d;
    }
    double rest = 0.0;
    for (size_t j = 1; j < d; j++)
        rest += seen[j];
    p[cells - 1] = rest;
}
