/*
 * audit_rules.c -- the rules' tests over a stream of decks (audit_rules.h).
 *
 * Independence from the previous game, per card position:
 *  - runs: the chi-square of the number of positions whose card goes from
 *    the deck's low half to its high half between two games, against its
 *    hypergeometric law.  Given the set of low positions of one game, the
 *    next game's set is independent of it and of every earlier one, so the
 *    counts of successive pairs are independent and identically distributed:
 *    Pearson's statistic applies to them as to independent trials.
 *  - serial correlation (the serial test of Knuth, TAOCP vol. 2, 3.3.2 K,
 *    across games): with x = 2 c - (n - 1) the centred card at a position,
 *    z_p = sum over pairs of x x' / (v sqrt(pairs)), v = E[x^2] = (n^2 - 1)/3,
 *    is asymptotically standard normal at each position p, and two positions'
 *    z are correlated by exactly b = 1/(n - 1)^2 (a uniform deck's cards at
 *    two positions have covariance -v/(n - 1), squared by the two games).  The
 *    statistic z' S^-1 z, with S = (1 - b) I + b J inverted in closed form, is
 *    chi-square with n degrees of freedom (n = 2: the two positions carry one
 *    z, chi-square with 1).
 * The first card's sequence: the gap and coupon-collector tests; the first
 * hand: the poker test.  Laws in audit_rules_law.c.
 */
#include <math.h>
#include <stdlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "audit_rules.h"

#define MIN_EXPECTED 5.0     /* Cochran's rule, as the other tests */
#define TAIL_CUT 1e-7        /* gap and coupon cells end where the tail is this */
#define MAX_CELLS 65536
#define SERIAL_MIN_PAIRS 50  /* the normal approximation of each z_p */

struct audit_rules_acc {
    size_t n, h, ranks, classes, class_size, hits, gap_cells, coupon_cells;
    uint64_t decks, pairs;
    int32_t *prev;           /* the last deck's centred cards x, when have_prev */
    int have_prev;
    /* n sums of x x': exact in 64-bit integers between flushes into the
     * doubles, every flush_every pairs (|x x'| < n^2, so no overflow) */
    int64_t *serial_part;
    double *serial;
    uint64_t unflushed, flush_every;
    uint64_t *runs;          /* h + 1 counts */
    uint64_t poker[AUDIT_POKER_HANDS];
    uint64_t *gaps;          /* gap_cells counts */
    uint64_t gap_open;       /* misses since the last hit */
    int gap_started;
    uint64_t *coupon;        /* coupon_cells counts */
    uint64_t seen, all_seen; /* the classes seen in the open segment; all of them */
    uint64_t segment;        /* games in the open coupon segment */
    /* each card's rank and suit when there is a poker test (n <= 52): two
     * table reads instead of two divisions per card of the hand */
    unsigned char rank_of[64], suit_of[64];
};

static size_t gap_cells(size_t n)
{
    const double hit = (double)AUDIT_GAP_HITS(n) / (double)n;
    if (hit >= 1.0)
        return 1;
    const double k = ceil(log(TAIL_CUT) / log1p(-hit));
    return k >= MAX_CELLS ? MAX_CELLS : (size_t)k + 1;
}

/* Enough cells that the tail beyond them is below TAIL_CUT. */
static size_t coupon_cells(size_t d)
{
    if (d < 2)
        return 1;
    size_t cells = 64;
    double *p = malloc(MAX_CELLS * sizeof *p);
    if (p == NULL)
        return cells;
    for (; cells < MAX_CELLS; cells *= 2) {
        audit_law_coupon(d, cells, p);
        if (p[cells - 1] < TAIL_CUT)
            break;
    }
    free(p);
    return cells;
}

audit_rules_acc *audit_rules_new(size_t n)
{
    audit_rules_acc *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->n = n;
    r->h = n / 2;
    r->ranks = audit_poker_ranks(n);
    r->classes = audit_coupon_classes(n);
    r->class_size = r->classes ? n / r->classes : 1;
    r->all_seen = r->classes >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << r->classes) - 1;
    for (size_t c = 0; r->ranks && c < n; c++) {
        r->rank_of[c] = (unsigned char)(c % r->ranks);
        r->suit_of[c] = (unsigned char)(c / r->ranks);
    }
    r->hits = AUDIT_GAP_HITS(n);
    r->gap_cells = n ? gap_cells(n) : 1;
    r->coupon_cells = coupon_cells(r->classes);
    r->prev = calloc(n + 1, sizeof *r->prev);
    r->serial = calloc(n + 1, sizeof *r->serial);
    r->serial_part = calloc(n + 1, sizeof *r->serial_part);
    r->flush_every = ((uint64_t)1 << 62) / ((uint64_t)n * n + 1);
    r->runs = calloc(r->h + 1, sizeof *r->runs);
    r->gaps = calloc(r->gap_cells, sizeof *r->gaps);
    r->coupon = calloc(r->coupon_cells, sizeof *r->coupon);
    if (!r->prev || !r->serial || !r->serial_part || !r->runs || !r->gaps || !r->coupon ||
        n > ((size_t)1 << 30)) {
        audit_rules_free(r);
        return NULL;
    }
    return r;
}

void audit_rules_free(audit_rules_acc *r)
{
    if (r == NULL)
        return;
    free(r->prev);
    free(r->serial);
    free(r->serial_part);
    free(r->runs);
    free(r->gaps);
    free(r->coupon);
    free(r);
}

void audit_rules_restart(audit_rules_acc *r)
{
    r->have_prev = 0;
    r->gap_started = 0;
    r->gap_open = 0;
    r->seen = 0;
    r->segment = 0;
}

/* The centred card x = 2 c - (n - 1) is below 0 exactly for the low half
 * (c < n / 2), for n even and odd. */
/* Positions [from, n) of a pair, one at a time; the count of positions
 * going from the low half to the high half. */
static size_t pair_scalar(const uint32_t *restrict a, int32_t *restrict prev,
                          int64_t *restrict part, size_t from, size_t n)
{
    const int32_t centre = (int32_t)n - 1;
    size_t up = 0;
    for (size_t p = from; p < n; p++) {
        const int32_t x = 2 * (int32_t)a[p] - centre, y = prev[p];
        up += (y < 0) & (x >= 0);
        part[p] += (int64_t)x * y;
        prev[p] = x;
    }
    return up;
}

#if defined(__SSE2__)
/* Four positions at a time with SSE2 (the x86-64 baseline), the same integer
 * arithmetic as pair_scalar: |x|, |y| <= n - 1 < 2^15 fit 16 bits, so
 * pmaddwd of x with y's low 16 bits (its high 16 cleared) is x y exactly,
 * widened to 64 bits by its sign before it is added.  Returns the positions
 * done; *up gets their count. */
#define PAIR_VECTOR_MAX_N 32768
static size_t pair_sse2(const uint32_t *a, int32_t *prev, int64_t *part, size_t n,
                        size_t *up)
{
    const __m128i centre = _mm_set1_epi32((int32_t)n - 1);
    const __m128i low16 = _mm_set1_epi32(0xffff);
    __m128i ups = _mm_setzero_si128();
    size_t p = 0;
    for (; p + 4 <= n; p += 4) {
        const __m128i cards = _mm_loadu_si128((const __m128i *)(const void *)(a + p));
        const __m128i x = _mm_sub_epi32(_mm_slli_epi32(cards, 1), centre);
        const __m128i y = _mm_loadu_si128((const __m128i *)(void *)(prev + p));
        ups = _mm_add_epi32(ups, _mm_srli_epi32(_mm_andnot_si128(x, y), 31));
        const __m128i xy = _mm_madd_epi16(x, _mm_and_si128(y, low16));
        const __m128i sign = _mm_srai_epi32(xy, 31);
        __m128i *const sums = (__m128i *)(void *)(part + p);
        _mm_storeu_si128(sums, _mm_add_epi64(_mm_loadu_si128(sums),
                                             _mm_unpacklo_epi32(xy, sign)));
        _mm_storeu_si128(sums + 1, _mm_add_epi64(_mm_loadu_si128(sums + 1),
                                                 _mm_unpackhi_epi32(xy, sign)));
        _mm_storeu_si128((__m128i *)(void *)(prev + p), x);
    }
    int32_t lanes[4];
    _mm_storeu_si128((__m128i *)(void *)lanes, ups);
    *up = (size_t)lanes[0] + (size_t)lanes[1] + (size_t)lanes[2] + (size_t)lanes[3];
    return p;
}
#endif

static void add_pair(audit_rules_acc *r, const uint32_t *a)
{
    const size_t n = r->n;
    size_t up = 0, done = 0;
#if defined(__SSE2__)
    if (n <= PAIR_VECTOR_MAX_N)
        done = pair_sse2(a, r->prev, r->serial_part, n, &up);
#endif
    up += pair_scalar(a, r->prev, r->serial_part, done, n);
    r->runs[up]++;
    r->pairs++;
    if (++r->unflushed == r->flush_every) {
        for (size_t p = 0; p < n; p++) {
            r->serial[p] += (double)r->serial_part[p];
            r->serial_part[p] = 0;
        }
        r->unflushed = 0;
    }
}

static void keep_first(audit_rules_acc *r, const uint32_t *a)
{
    const int32_t centre = (int32_t)r->n - 1;
    for (size_t p = 0; p < r->n; p++)
        r->prev[p] = 2 * (int32_t)a[p] - centre;
    r->have_prev = 1;
}

static void add_gap(audit_rules_acc *r, uint32_t first)
{
    if (first >= r->hits) {
        r->gap_open += r->gap_started;
        return;
    }
    if (r->gap_started)
        r->gaps[r->gap_open < r->gap_cells - 1 ? r->gap_open : r->gap_cells - 1]++;
    r->gap_started = 1;
    r->gap_open = 0;
}

static void add_coupon(audit_rules_acc *r, uint32_t first)
{
    const size_t c = r->class_size == 1 ? first : first / r->class_size;
    r->segment++;
    /* a mask, not a branch on whether the class is new: that branch is
     * taken at random */
    r->seen |= (uint64_t)1 << c;
    if (r->seen != r->all_seen)
        return;
    const uint64_t k = r->segment - r->classes;
    r->coupon[k < r->coupon_cells - 1 ? k : r->coupon_cells - 1]++;
    r->seen = 0;
    r->segment = 0;
}

static void add_poker(audit_rules_acc *r, const uint32_t *a)
{
    size_t rank[5];
    int flush = 1;
    for (size_t i = 0; i < 5; i++) {
        rank[i] = r->rank_of[a[i]];
        flush &= r->suit_of[a[i]] == r->suit_of[a[0]];
    }
    r->poker[audit_poker_category(rank, flush, r->ranks)]++;
}

void audit_rules_add(audit_rules_acc *r, const uint32_t *a)
{
    const size_t n = r->n;
    r->decks++;
    if (n == 0)
        return;
    if (r->have_prev)
        add_pair(r, a);
    else
        keep_first(r, a);
    if (r->ranks)
        add_poker(r, a);
    add_gap(r, a[0]);
    if (r->classes >= 2)
        add_coupon(r, a[0]);
}

void audit_rules_merge(audit_rules_acc *dst, const audit_rules_acc *src)
{
    for (size_t p = 0; p < dst->n; p++)
        dst->serial[p] += src->serial[p] + (double)src->serial_part[p];
    for (size_t j = 0; j <= dst->h; j++)
        dst->runs[j] += src->runs[j];
    for (int i = 0; i < AUDIT_POKER_HANDS; i++)
        dst->poker[i] += src->poker[i];
    for (size_t k = 0; k < dst->gap_cells; k++)
        dst->gaps[k] += src->gaps[k];
    for (size_t k = 0; k < dst->coupon_cells; k++)
        dst->coupon[k] += src->coupon[k];
    dst->decks += src->decks;
    dst->pairs += src->pairs;
}

void audit_rules_get_counts(const audit_rules_acc *r, audit_rules_counts *c)
{
    *c = (audit_rules_counts){.runs = r->runs, .poker = r->poker, .gaps = r->gaps,
                              .coupon = r->coupon, .runs_cells = r->h + 1,
                              .poker_cells = r->ranks ? AUDIT_POKER_HANDS : 0,
                              .gap_cells = r->gap_cells,
                              .coupon_cells = r->classes >= 2 ? r->coupon_cells : 0,
                              .coupon_classes = r->classes, .n = r->n,
                              .ranks = r->ranks, .pairs = r->pairs};
}

/* ---- the tests ------------------------------------------------------------ */

static void set_result(audit_test *t, double stat, double df, double nobs)
{
    t->applicable = df > 0.0;
    t->stat = stat;
    t->df = df;
    t->nobs = t->applicable ? nobs : 0.0;
    t->pvalue = t->applicable ? audit_chi2_sf(stat, df) : 1.0;
}

static uint64_t total(const uint64_t *c, size_t cells)
{
    uint64_t s = 0;
    for (size_t i = 0; i < cells; i++)
        s += c[i];
    return s;
}

/* Pearson's chi-square of counts against the law p[0..cells). */
static void chi2_test(audit_test *t, const uint64_t *obs, const double *p, size_t cells)
{
    const uint64_t m = total(obs, cells);
    double df = 0.0;
    const double stat = audit_chi2_pooled(obs, p, cells, m, MIN_EXPECTED, &df);
    set_result(t, stat, df, (double)m);
}

static void test_runs(const audit_rules_acc *r, audit_test *t)
{
    if (r->n < 2 || r->pairs == 0) {
        snprintf(t->note, sizeof t->note, "needs n >= 2 and two games");
        return;
    }
    double *p = malloc((r->h + 1) * sizeof *p);
    if (p == NULL)
        return;
    audit_law_runs(r->n, p);
    chi2_test(t, r->runs, p, r->h + 1);
    free(p);
    double up = 0.0;
    for (size_t j = 0; j <= r->h; j++)
        up += (double)j * (double)r->runs[j];
    const double want = (double)r->h * (double)(r->n - r->h) / (double)r->n;
    snprintf(t->note, sizeof t->note, "%llu pairs of games; %.4g runs begin per game "
             "(expected %.4g)", (unsigned long long)r->pairs,
             2.0 * up / (double)r->pairs, 2.0 * want);
    if (!t->applicable)
        snprintf(t->note, sizeof t->note, "too few pairs of games (%llu)",
                 (unsigned long long)r->pairs);
}

static double serial_sum(const audit_rules_acc *r, size_t p)
{
    return r->serial[p] + (double)r->serial_part[p];
}

void audit_rules_serial_z(const audit_rules_acc *r, double *z)
{
    const double v = ((double)r->n * (double)r->n - 1.0) / 3.0;
    const double scale = v * sqrt((double)r->pairs);
    for (size_t p = 0; p < r->n; p++)
        z[p] = r->pairs > 0 && scale > 0.0 ? serial_sum(r, p) / scale : NAN;
}

static void test_serial(const audit_rules_acc *r, audit_test *t)
{
    const size_t n = r->n;
    if (n < 2 || r->pairs < SERIAL_MIN_PAIRS) {
        snprintf(t->note, sizeof t->note, "needs n >= 2 and %d pairs of games",
                 SERIAL_MIN_PAIRS);
        return;
    }
    const double v = ((double)n * (double)n - 1.0) / 3.0;
    const double scale = v * sqrt((double)r->pairs);
    double sum = 0.0, sum2 = 0.0, worst = 0.0;
    size_t at = 0;
    for (size_t p = 0; p < n; p++) {
        const double z = serial_sum(r, p) / scale;
        sum += z;
        sum2 += z * z;
        if (fabs(z) > worst)
            worst = fabs(z), at = p;
    }
    double stat, df;
    if (n == 2) {
        stat = serial_sum(r, 0) / scale * (serial_sum(r, 0) / scale);
        df = 1.0;
    } else {
        const double b = 1.0 / (((double)n - 1.0) * ((double)n - 1.0)), a = 1.0 - b;
        stat = (sum2 - b / (a + (double)n * b) * sum * sum) / a;
        df = (double)n;
    }
    set_result(t, stat, df, 0.0);
    snprintf(t->note, sizeof t->note, "%llu pairs; largest |z| %.3g at position %zu",
             (unsigned long long)r->pairs, worst, at + 1);
}

static void test_poker(const audit_rules_acc *r, audit_test *t)
{
    if (r->ranks == 0) {
        snprintf(t->note, sizeof t->note, "needs n = 4 suits x 5 to 13 ranks");
        return;
    }
    double p[AUDIT_POKER_HANDS];
    audit_law_poker(r->ranks, p);
    chi2_test(t, r->poker, p, AUDIT_POKER_HANDS);
    snprintf(t->note, sizeof t->note, "first 5 cards, 4 suits x %zu ranks; %llu pairs "
             "(expected %.4g)", r->ranks, (unsigned long long)r->poker[AUDIT_POKER_PAIR],
             p[AUDIT_POKER_PAIR] * (double)r->decks);
}

static void test_gap(const audit_rules_acc *r, audit_test *t)
{
    const uint64_t gaps = total(r->gaps, r->gap_cells);
    if (r->gap_cells < 2 || gaps == 0) {
        snprintf(t->note, sizeof t->note, "no gap yet (first card among the %zu lowest)",
                 r->hits);
        return;
    }
    double *p = malloc(r->gap_cells * sizeof *p);
    if (p == NULL)
        return;
    const double hit = (double)r->hits / (double)r->n;
    audit_law_gap(hit, r->gap_cells, p);
    chi2_test(t, r->gaps, p, r->gap_cells);
    free(p);
    snprintf(t->note, sizeof t->note, "%llu gaps between first cards among the %zu "
             "lowest", (unsigned long long)gaps, r->hits);
}

static void test_coupon(const audit_rules_acc *r, audit_test *t)
{
    const uint64_t segs = r->classes >= 2 ? total(r->coupon, r->coupon_cells) : 0;
    if (segs == 0) {
        snprintf(t->note, sizeof t->note, r->classes >= 2 ? "no complete segment yet"
                 : "n has no divisor from 2 to 64 to make classes");
        return;
    }
    double *p = malloc(r->coupon_cells * sizeof *p);
    if (p == NULL)
        return;
    audit_law_coupon(r->classes, r->coupon_cells, p);
    chi2_test(t, r->coupon, p, r->coupon_cells);
    free(p);
    snprintf(t->note, sizeof t->note, "%llu segments collecting %zu classes of the first "
             "card", (unsigned long long)segs, r->classes);
}

void audit_rules_tests(const audit_rules_acc *r, audit_test *t)
{
    if (r == NULL || r->decks == 0)
        return;
    test_runs(r, &t[0]);
    test_serial(r, &t[1]);
    test_poker(r, &t[2]);
    test_gap(r, &t[3]);
    test_coupon(r, &t[4]);
}

int audit_level_pass(const audit_test *t)
{
    return !t->applicable || t->pvalue >= AUDIT_RULES_LEVEL;
}
