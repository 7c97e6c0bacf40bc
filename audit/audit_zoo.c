/*
 * audit_zoo.c -- the algorithms `riffle audit NAME` knows: the library's own
 * shuffles, a textbook Fisher-Yates, and the classic mistakes.
 *
 * Every entry marked DELIBERATELY WRONG is a reference implementation of a
 * known-biased shuffle, kept here (and only here) so that the audit can show
 * what bias looks like.  Never use them to shuffle anything.
 *
 * All of them draw only bounded integers through the rf_rng they are given, so
 * that exact mode can drive them with a source whose `below` callback walks
 * every draw sequence.  The 15-bit rand() is modelled as rf_below(g, 32768),
 * with the `%` reduction done here: that reduction is the bias being modelled.
 */
#include <string.h>

#include "audit.h"

static void swap32(uint32_t *a, size_t i, size_t j)
{
    const uint32_t t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* ---- the library's shuffles (fair) -------------------------------------- */

static void lib_shuffle(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    rf_shuffle_u32(g, a, n);
}

static void lib_shuffle_bytes(rf_rng *g, uint32_t *a, size_t n, unsigned param,
                              uint32_t *s)
{
    (void)param, (void)s;
    rf_shuffle(g, a, n, sizeof *a);
}

static void lib_partial(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    /* With k = n - 1 the last place is forced, so the whole ordering is a
     * uniform permutation exactly when the partial shuffle is correct. */
    rf_shuffle_partial(g, a, n, n > 0 ? n - 1 : 0, sizeof *a);
}

static void lib_deck(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param;
    rf_deck d;
    rf_deck_init_items(&d, a, n, sizeof *a);
    if (rf_deck_deal_n(&d, g, n, s) != RF_OK)
        return;
    memcpy(a, s, n * sizeof *a);
}

static void swap_cb(void *ctx, size_t i, size_t j)
{
    swap32(ctx, i, j);
}

static void lib_swapfn(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    rf_shuffle_swap(g, n, swap_cb, a);
}

/* ---- textbook Fisher-Yates (fair) --------------------------------------- */

/* Durstenfeld, CACM 7(7) 1964, Algorithm 235: back to front, j in [0, i]. */
static void fy_textbook(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    for (size_t i = n; i-- > 1;)
        swap32(a, i, (size_t)rf_below(g, i + 1));
}

static size_t fy_textbook_prog(size_t n, unsigned param, audit_step *st, size_t max)
{
    (void)param;
    size_t k = 0;
    for (size_t i = n; i-- > 1; k++) {
        if (k >= max)
            return SIZE_MAX;
        st[k] = (audit_step){AUDIT_STEP_FIXED, i, 0, i + 1, 0};
    }
    return k;
}

/* ---- pick until unused, splice extraction (fair but slow) --------------- */

/* Draw a position until one not taken yet comes up: exact (rejection), but the
 * draw tree is infinite and the expected cost O(n log n) draws. */
static void pick_unused(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param;
    unsigned char *used = (unsigned char *)(s + n);
    memset(used, 0, n);
    for (size_t p = 0; p < n; p++) {
        size_t x;
        do
            x = (size_t)rf_below(g, n);
        while (used[x]);
        used[x] = 1;
        s[p] = a[x];
    }
    memcpy(a, s, n * sizeof *a);
}

/* Take a uniformly chosen item out of the remaining list and close the gap
 * (the "splice" idiom of scripting languages): fair, O(n^2) moves. */
static void splice_extract(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param;
    uint32_t *rest = s + n;
    memcpy(rest, a, n * sizeof *a);
    for (size_t p = 0, len = n; p < n; p++, len--) {
        const size_t x = (size_t)rf_below(g, len);
        s[p] = rest[x];
        memmove(rest + x, rest + x + 1, (len - x - 1) * sizeof *rest);
    }
    memcpy(a, s, n * sizeof *a);
}

/* ---- DELIBERATELY WRONG: the classic mistakes ---------------------------- */

/* DELIBERATELY WRONG.  Naive swap: for i = 0..n-1 swap a[i] with a[j], j
 * uniform in [0, n): n^n equally likely paths cannot cover n! orderings evenly
 * (Deitel & Deitel; Dr. Dobb's "Algorithm Alley", Jan 2000). */
static void naive(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    for (size_t i = 0; i < n; i++)
        swap32(a, i, (size_t)rf_below(g, n));
}

static size_t naive_prog(size_t n, unsigned param, audit_step *st, size_t max)
{
    (void)param;
    if (n > max)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        st[i] = (audit_step){AUDIT_STEP_FIXED, i, 0, n, 0};
    return n;
}

/* DELIBERATELY WRONG (as a shuffle).  Sattolo's algorithm (IPL 1986), which is
 * what an off-by-one in Fisher-Yates gives (j in [0, i) instead of [0, i]; the
 * behaviour reported for MSVC 6's random_shuffle): only the (n-1)! cyclic
 * permutations come out, so no item ever stays in place. */
static void sattolo(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    for (size_t i = n; i-- > 1;)
        swap32(a, i, (size_t)rf_below(g, i));
}

static size_t sattolo_prog(size_t n, unsigned param, audit_step *st, size_t max)
{
    (void)param;
    size_t k = 0;
    for (size_t i = n; i-- > 1; k++) {
        if (k >= max)
            return SIZE_MAX;
        st[k] = (audit_step){AUDIT_STEP_FIXED, i, 0, i, 0};
    }
    return k;
}

/* DELIBERATELY WRONG.  Naive swap with "a random card except the last":
 * j uniform in [0, n-1). */
static void except_last(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    if (n < 2)
        return;
    for (size_t i = 0; i < n; i++)
        swap32(a, i, (size_t)rf_below(g, n - 1));
}

static size_t except_last_prog(size_t n, unsigned param, audit_step *st, size_t max)
{
    (void)param;
    if (n < 2)
        return 0;
    if (n > max)
        return SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        st[i] = (audit_step){AUDIT_STEP_FIXED, i, 0, n - 1, 0};
    return n;
}

/* DELIBERATELY WRONG.  Fisher-Yates over a 15-bit rand() reduced with `%`:
 * j = t + rand() % (n - t).  Small remainders are favoured whenever n - t does
 * not divide 32768, and positions beyond t + 32767 are never chosen. */
#define RAND15 32768u
static void rand15_mod(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    for (size_t t = 0; t + 1 < n; t++)
        swap32(a, t, t + (size_t)(rf_below(g, RAND15) % (n - t)));
}

static size_t rand15_prog(size_t n, unsigned param, audit_step *st, size_t max)
{
    (void)param;
    size_t k = 0;
    for (size_t t = 0; t + 1 < n; t++, k++) {
        if (k >= max)
            return SIZE_MAX;
        st[k] = (audit_step){AUDIT_STEP_FIXED, t, t, n, RAND15};
    }
    return k;
}

/* DELIBERATELY WRONG (for k below about n log n / 2).  k random
 * transpositions, each of two positions drawn independently (Diaconis &
 * Shahshahani, Z. Wahrsch. 1981: mixing needs (1/2) n log n of them). */
static void transpositions(rf_rng *g, uint32_t *a, size_t n, unsigned param,
                           uint32_t *s)
{
    (void)s;
    if (n == 0)
        return;
    for (unsigned k = 0; k < param; k++) {
        const size_t i = (size_t)rf_below(g, n);
        swap32(a, i, (size_t)rf_below(g, n));
    }
}

static size_t transpositions_prog(size_t n, unsigned param, audit_step *st, size_t max)
{
    if (param > max)
        return SIZE_MAX;
    for (unsigned k = 0; k < param; k++)
        st[k] = (audit_step){AUDIT_STEP_TRANSPOSE, 0, 0, n, 0};
    return param;
}

/* The random comparator of the two sorts below: "a > b" with probability 1/2. */
static int coin(rf_rng *g)
{
    return (int)rf_below(g, 2);
}

/* DELIBERATELY WRONG.  Insertion sort with a comparator that answers at random
 * (the "sort(compare: random)" idiom): items rarely travel far. */
static void insertion_cmp(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && coin(g); j--)
            swap32(a, j - 1, j);
}

static void merge_rec(rf_rng *g, uint32_t *a, size_t n, uint32_t *tmp)
{
    if (n < 2)
        return;
    const size_t h = n / 2;
    merge_rec(g, a, h, tmp);
    merge_rec(g, a + h, n - h, tmp);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = coin(g) ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

/* DELIBERATELY WRONG.  Top-down merge sort with a random comparator: each
 * ordering has probability a multiple of 1/2^c, which cannot equal 1/n! when n!
 * has an odd factor (n >= 3). */
static void merge_cmp(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param;
    merge_rec(g, a, n, s);
}

/* DELIBERATELY WRONG.  Sort by random keys of `bits` bits with a stable sort:
 * equal keys keep the input order, so the identity is favoured (a real risk
 * with small keys, e.g. rand() on 15 bits, or many items). */
static void sort_keys(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    const uint64_t range = (uint64_t)1 << (param > 32 ? 32 : param);
    uint32_t *key = s;
    for (size_t i = 0; i < n; i++)
        key[i] = (uint32_t)rf_below(g, range);
    for (size_t i = 1; i < n; i++) { /* stable insertion sort by key */
        const uint32_t k = key[i], v = a[i];
        size_t j = i;
        for (; j > 0 && key[j - 1] > k; j--) {
            key[j] = key[j - 1];
            a[j] = a[j - 1];
        }
        key[j] = k;
        a[j] = v;
    }
}

/* DELIBERATELY WRONG (for few repetitions).  The Gilbert-Shannon-Reeds riffle
 * (Bayer & Diaconis, Ann. Appl. Probab. 2(2) 1992): cut after Binomial(n, 1/2)
 * cards (n fair coins), then drop from the left packet with probability
 * left/(left + right).  k riffles leave a permutation whose probability
 * depends only on its number of rising sequences; 52 cards need about 7. */
static void gsr_once(rf_rng *g, uint32_t *a, size_t n, uint32_t *out)
{
    size_t cut = 0;
    for (size_t i = 0; i < n; i++)
        cut += (size_t)coin(g);
    size_t l = 0, r = cut, k = 0;
    while (l < cut || r < n) {
        const size_t left = cut - l, right = n - r;
        out[k++] = rf_below(g, left + right) < left ? a[l++] : a[r++];
    }
    memcpy(a, out, n * sizeof *a);
}

static void gsr(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    for (unsigned k = 0; k < param; k++)
        gsr_once(g, a, n, s);
}

/* DELIBERATELY WRONG.  A correct Fisher-Yates whose generator is seeded from
 * 32 bits per shuffle (srand(time) / a 32-bit seed): at most 2^32 of the n!
 * orderings can ever appear, which the duplicate-ordering test exposes. */
static void seed32(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param, (void)s;
    rf_rng h;
    if (rf_rng_seed_u64(&h, RF_RNG_XOSHIRO256PP, rf_below(g, (uint64_t)1 << 32)) != RF_OK)
        return;
    rf_shuffle_u32(&h, a, n);
}

/* DELIBERATELY WRONG.  A "sweetened" first hand: a fair shuffle, then one
 * time in ODDS, when the first two cards differ in rank, the second card is
 * swapped with one of the other cards of the first card's rank (a card being
 * suit c / r and rank c % r, r = n / 4), so the first hand holds a pair more
 * often than chance.  The change commutes with relabelling suits and ranks,
 * which moves any card to any other: every card is still equally likely at
 * every position, and only the hand's make-up shows it.  Decks not of four
 * suits are left fair. */
static void sweetened(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)s;
    rf_shuffle_u32(g, a, n);
    const size_t r = n / 4;
    if (n % 4 != 0 || r < 2 || rf_below(g, param ? param : 1) != 0 || a[1] % r == a[0] % r)
        return;
    size_t pick = (size_t)rf_below(g, 3), q = 2;
    for (;; q++)
        if (a[q] % r == a[0] % r && pick-- == 0)
            break;
    swap32(a, 1, q);
}

/* The memory of the entries below lives in the scratch (audit.h): zero
 * before a stream's first game, kept between its games. */
#define MEMORY_FLAG(s, n) ((s)[4 * (n) + 3])
#define MEMORY_COUNT(s, n) ((s)[4 * (n) + 2])
#define MEMORY_AT(s, n) ((s)[4 * (n) + 1])
#define MEMORY(s, n) ((s) + 2 * (n))

/* DELIBERATELY WRONG.  A fair shuffle, except that with probability 1/ODDS
 * the previous game's deck is dealt again (a generator whose state was not
 * advanced, a retried deal that resends the last deck).  Every deck on its
 * own is exactly uniform, so only tests across games can see it. */
static void repeat_deck(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    uint32_t *prev = MEMORY(s, n);
    if (MEMORY_FLAG(s, n) && rf_below(g, param ? param : 1) == 0)
        memcpy(a, prev, n * sizeof *a);
    else
        rf_shuffle_u32(g, a, n);
    memcpy(prev, a, n * sizeof *a);
    MEMORY_FLAG(s, n) = 1;
}

/* DELIBERATELY WRONG.  "Every card gets its turn on top": the top card comes
 * from a bag holding each card once, refilled when empty, and the rest is
 * shuffled fairly.  At any one game the top card is uniform, but no card is
 * on top twice before every other card has been. */
static void top_bag(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    (void)param;
    uint32_t *bag = MEMORY(s, n);
    if (n == 0)
        return;
    if (MEMORY_COUNT(s, n) == 0) {
        for (size_t i = 0; i < n; i++)
            bag[i] = (uint32_t)i;
        MEMORY_COUNT(s, n) = (uint32_t)n;
    }
    const size_t left = MEMORY_COUNT(s, n), x = (size_t)rf_below(g, left);
    const uint32_t top = bag[x];
    bag[x] = bag[left - 1];
    MEMORY_COUNT(s, n) = (uint32_t)(left - 1);
    swap32(a, 0, top);
    rf_shuffle_u32(g, a + 1, n - 1);
}

/* DELIBERATELY WRONG.  "No card on top twice within K games": reshuffle
 * until the top card is none of the last K games' top cards (K < n). */
static void top_no_repeat(rf_rng *g, uint32_t *a, size_t n, unsigned param, uint32_t *s)
{
    uint32_t *recent = MEMORY(s, n);
    const size_t k = param < n ? param : n ? n - 1 : 0;
    if (n == 0)
        return;
    for (int again = 1; again;) {
        rf_shuffle_u32(g, a, n);
        again = 0;
        for (size_t i = 0; i < MEMORY_COUNT(s, n); i++)
            again |= recent[i] == a[0];
    }
    if (k == 0)
        return;
    recent[MEMORY_AT(s, n)] = a[0];
    MEMORY_AT(s, n) = (uint32_t)((MEMORY_AT(s, n) + 1) % k);
    if (MEMORY_COUNT(s, n) < k)
        MEMORY_COUNT(s, n)++;
}

/* ---- the table ---------------------------------------------------------- */

/* The statistical self-check budget of every entry (the deck size and trials
 * at which --cmd calls each wrong one biased and each fair one fair) is
 * stated in scripts/audit-selfcheck.sh and docs/BENCHMARKS_AUDIT.md. */
static const audit_algo zoo[] = {
    {"fisher-yates", "riffle's rf_shuffle_u32 (batched Fisher-Yates)", 1, 1, NULL, 0,
     lib_shuffle, NULL},
    {"shuffle-bytes", "riffle's generic rf_shuffle on 4-byte elements", 1, 1, NULL, 0,
     lib_shuffle_bytes, NULL},
    {"partial", "riffle's rf_shuffle_partial with k = n-1", 1, 1, NULL, 0, lib_partial,
     NULL},
    {"deck", "riffle's rf_deck: deal all n cards", 1, 1, NULL, 0, lib_deck, NULL},
    {"swap-callback", "riffle's rf_shuffle_swap (callback form)", 1, 1, NULL, 0,
     lib_swapfn, NULL},
    {"fy-textbook", "textbook Fisher-Yates (Durstenfeld 1964), back to front", 1, 1,
     NULL, 0, fy_textbook, fy_textbook_prog},
    {"pick-unused", "draw positions until an unused one comes up (fair, slow)", 1, 0,
     NULL, 0, pick_unused, NULL},
    {"splice", "remove a random item from a list and close the gap (fair, O(n^2))", 1,
     1, NULL, 0, splice_extract, NULL},
    {"naive", "WRONG: swap each a[i] with any a[j], j in [0,n) (n^n paths)", 0, 1, NULL,
     0, naive, naive_prog},
    {"sattolo", "WRONG: j in [0,i) off-by-one (MSVC6 random_shuffle): cycles only", 0, 1,
     NULL, 0, sattolo, sattolo_prog},
    {"except-last", "WRONG: naive swap with a random card except the last", 0, 1, NULL,
     0, except_last, except_last_prog},
    {"insertion-cmp", "WRONG: insertion sort with a random comparator", 0, 1, NULL, 0,
     insertion_cmp, NULL},
    {"merge-cmp", "WRONG: merge sort with a random comparator", 0, 1, NULL, 0, merge_cmp,
     NULL},
    {"sort-keys", "WRONG: stable sort by random BITS-bit keys (ties keep order)", 0, 1,
     "bits", 8, sort_keys, NULL},
    {"transpositions", "WRONG: K random transpositions (default K = n)", 0, 1, "k", 0,
     transpositions, transpositions_prog},
    {"rand15-mod", "WRONG: Fisher-Yates with rand() % m on a 15-bit rand()", 0, 1, NULL,
     0, rand15_mod, rand15_prog},
    {"gsr", "WRONG: K Gilbert-Shannon-Reeds riffles (default K = 7)", 0, 1, "k", 7, gsr,
     NULL},
    {"seed32", "WRONG: Fisher-Yates reseeded from 32 bits every shuffle", 0, 0, NULL, 0,
     seed32, NULL},
    {"sweetened", "WRONG: gives the first hand a pair, 1 time in ODDS (default 20)", 0, 1,
     "odds", 20, sweetened, NULL},
    {"repeat-deck", "WRONG: deals the previous game's deck again, 1 time in ODDS (50)",
     0, 0, "odds", 50, repeat_deck, NULL},
    {"top-bag", "WRONG: top card from a bag (each card on top once per n games)", 0, 0,
     NULL, 0, top_bag, NULL},
    {"top-no-repeat", "WRONG: reshuffle until the top card is new in K games (K = 3)", 0,
     0, "k", 3, top_no_repeat, NULL},
};

const audit_algo *audit_zoo(size_t *count)
{
    *count = sizeof zoo / sizeof zoo[0];
    return zoo;
}

const audit_algo *audit_zoo_find(const char *name)
{
    for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++)
        if (strcmp(zoo[i].name, name) == 0)
            return &zoo[i];
    return NULL;
}

unsigned audit_param(const audit_algo *al, size_t n, unsigned param)
{
    if (al->param_name == NULL)
        return 0;
    if (param != 0)
        return param;
    return al->param_default != 0 ? al->param_default : (unsigned)n;
}
