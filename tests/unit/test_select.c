/* Selections by key, group and probability (riffle_sample.h), and the part
 * of a key (rf_split_part_of_unit): the geometric skip's law counted exactly
 * over every 53-bit uniform; the Bernoulli stream's walk enumerated over
 * every class of its draws on a short ladder, each class weighted by its
 * exact count of words (every record selected with probability P, every
 * pair with P^2); its values against their definition (a selection is
 * exactly { i : u_i < P }, nested in P, each u_i in the band of its level);
 * fixed-seed statistics on the library's own ladder (each record's
 * probability, independence, the per-group reservoirs); unit values and
 * part cuts exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "riffle_engine.h"
#include "riffle_sample.h"
#include "sample/bernoulli_internal.h"

static void key_of(uint8_t key[RF_KEY_BYTES], uint64_t seed)
{
    assert_int_equal(rf_seed_u64(key, seed), RF_OK);
}

/* ---- the geometric skip, counted over every uniform ---- */

/* The first j in [0, 2^53) whose uniform 1 - j 2^-53 skips at least g
 * (2^53 if none): the skip grows with j, so bisection finds the edge. */
static uint64_t first_reaching(double log1m, uint64_t g)
{
    uint64_t lo = 0, hi = UINT64_C(1) << 53;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (rfi_geometric_skip(1.0 - (double)mid * 0x1.0p-53, log1m) >= g)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* P(skip >= g) must be (1 - r)^g: the uniforms reaching g, counted exactly,
 * against the law, to within 2^-40 (the rounding of log and the division). */
static void check_geometric_law(double r)
{
    const double log1m = log1p(-r);
    uint64_t prev = 0;
    for (uint64_t g = 1; g < 200000; g = g * 3 + 1) {
        const uint64_t j = first_reaching(log1m, g);
        assert_true(j >= prev); /* monotone in g */
        prev = j;
        const double counted = (double)((UINT64_C(1) << 53) - j) * 0x1.0p-53;
        const double law = exp((double)g * log1p(-r));
        assert_true(fabs(counted - law) <= 0x1.0p-40);
    }
    /* the extreme uniforms */
    assert_int_equal(rfi_geometric_skip(1.0, log1m), 0);
    const double far = floor(log(0x1.0p-53) / log1m); /* the longest skip */
    if (far < 0x1.0p63)
        assert_int_equal(rfi_geometric_skip(0x1.0p-53, log1m), (uint64_t)far);
    else
        assert_true(rfi_geometric_skip(0x1.0p-53, log1m) >= UINT64_C(1) << 63);
}

static void test_geometric_law(void **state)
{
    (void)state;
    for (unsigned m = 1; m < 62; m += 6)
        check_geometric_law(1.0 / (ldexp(1.0, (int)m + 1) - 1.0));
    check_geometric_law(0.3);
    check_geometric_law(ldexp(1.0, -62));
    assert_int_equal(rfi_geometric_skip(0.5, -INFINITY), 0); /* r = 1 */
    assert_int_equal(rfi_geometric_skip(0x1.0p-53, log1p(-ldexp(1.0, -62))), UINT64_MAX);
}

/* ---- the Bernoulli stream ---- */

#define N_REC 200000

/* The selection of p among records [0, N_REC): count, numbers, values. */
static size_t select_all(uint64_t seed, double p, uint64_t *idx, uint64_t *u)
{
    uint8_t key[RF_KEY_BYTES];
    key_of(key, seed);
    rf_status st;
    rf_bernoulli *b = rf_bernoulli_new(key, p, &st);
    assert_non_null(b);
    size_t n = 0;
    uint64_t prev = 0;
    for (uint64_t i; (i = rf_bernoulli_next(b)) < N_REC; n++) {
        assert_true(n == 0 || i > prev);
        prev = i;
        idx[n] = i;
        if (u)
            u[n] = rf_bernoulli_unit(b);
    }
    rf_bernoulli_free(b);
    return n;
}

/* P = 1 walks level 0: every record, each with its value.  Any P selects
 * exactly the records whose value is below its threshold: the skips of the
 * levels above give the same values as the walk of every record. */
static void test_bernoulli_definition(void **state)
{
    (void)state;
    uint64_t *all = malloc(N_REC * sizeof *all), *u = malloc(N_REC * sizeof *u);
    uint64_t *sel = malloc(N_REC * sizeof *sel), *su = malloc(N_REC * sizeof *su);
    assert_true(all && u && sel && su);
    const uint64_t seeds[] = {1, 42};
    const double ps[] = {0.9, 0.5, 0.3, 0.1, 1e-2, 1e-3, 2.5e-4, ldexp(1.0, -10), 0.0};
    for (size_t s = 0; s < 2; s++) {
        assert_int_equal(select_all(seeds[s], 1.0, all, u), N_REC);
        for (size_t i = 0; i < N_REC; i++)
            assert_int_equal(all[i], i);
        for (size_t q = 0; q < sizeof ps / sizeof *ps; q++) {
            uint64_t t;
            int every;
            assert_int_equal(rf_unit_threshold(ps[q], &t, &every), RF_OK);
            const size_t n = select_all(seeds[s], ps[q], sel, su);
            size_t j = 0;
            for (size_t i = 0; i < N_REC; i++) {
                if (u[i] >= t)
                    continue;
                assert_true(j < n);
                assert_int_equal(sel[j], i);
                assert_int_equal(su[j], u[i]);
                j++;
            }
            assert_int_equal(j, n);
        }
    }
    free(all), free(u), free(sel), free(su);
}

/* A larger P contains a smaller one's selection, for P not on the ladder's
 * rungs and across rungs; and the same seed gives the same selection. */
static void test_bernoulli_nested(void **state)
{
    (void)state;
    uint64_t *a = malloc(N_REC * sizeof *a), *b = malloc(N_REC * sizeof *b);
    assert_true(a && b);
    const double ps[] = {1e-4, 3e-4, 0.001, 0.0123, 0.05, 0.0625, 0.07, 0.2, 0.25, 0.26, 0.6, 0.99, 1.0};
    for (uint64_t seed = 0; seed < 3; seed++) {
        for (size_t q = 0; q + 1 < sizeof ps / sizeof *ps; q++) {
            const size_t na = select_all(seed, ps[q], a, NULL);
            const size_t nb = select_all(seed, ps[q + 1], b, NULL);
            assert_true(na <= nb);
            size_t j = 0;
            for (size_t i = 0; i < na; i++) {
                while (j < nb && b[j] < a[i])
                    j++;
                assert_true(j < nb && b[j] == a[i]);
            }
        }
        assert_int_equal(select_all(seed, 0.3, a, NULL), select_all(seed, 0.3, b, NULL));
        assert_memory_equal(a, b, 1000 * sizeof *a);
    }
    free(a), free(b);
}

/* Each value lies in the band of a level: below 2^-62, or in
 * [2^-(m+1), 2^-m).  And level 0 draws the top bit: u_i >= 1/2 for half of
 * the records (fixed seed; 5 standard deviations). */
static void test_bernoulli_levels(void **state)
{
    (void)state;
    uint64_t *idx = malloc(N_REC * sizeof *idx), *u = malloc(N_REC * sizeof *u);
    assert_true(idx && u);
    assert_int_equal(select_all(7, 1.0, idx, u), N_REC);
    for (unsigned m = 0; m <= 16; m++) {
        size_t below = 0;
        for (size_t i = 0; i < N_REC; i++)
            below += u[i] < (UINT64_C(1) << (63 - m));
        const double p = ldexp(1.0, -(int)m - 1), mean = p * N_REC;
        assert_true(fabs((double)below - mean) <= 5.0 * sqrt(mean * (1 - p)) + 1);
    }
    free(idx), free(u);
}

/* Each of the first 40 records is selected with probability P, pairs of
 * them independently: over 4000 seeds (fixed), every count within 5
 * standard deviations, and the pair counts of neighbours too. */
static void test_bernoulli_each_record(void **state)
{
    (void)state;
    const double ps[] = {0.3, 0.05};
    enum { R = 40, SEEDS = 4000 };
    for (size_t q = 0; q < 2; q++) {
        unsigned hits[R] = {0}, pairs[R] = {0};
        for (uint64_t seed = 0; seed < SEEDS; seed++) {
            uint8_t key[RF_KEY_BYTES];
            key_of(key, 1000 + seed);
            rf_status st;
            rf_bernoulli *b = rf_bernoulli_new(key, ps[q], &st);
            assert_non_null(b);
            int in[R + 1] = {0};
            for (uint64_t i; (i = rf_bernoulli_next(b)) < R;)
                in[i] = 1;
            rf_bernoulli_free(b);
            for (int i = 0; i < R; i++) {
                hits[i] += (unsigned)in[i];
                pairs[i] += (unsigned)(in[i] && in[i + 1]);
            }
        }
        const double p = ps[q];
        for (int i = 0; i < R; i++) {
            const double m1 = p * SEEDS, m2 = p * p * SEEDS;
            assert_true(fabs(hits[i] - m1) <= 5 * sqrt(m1 * (1 - p)));
            if (i + 1 < R)
                assert_true(fabs(pairs[i] - m2) <= 5 * sqrt(m2 * (1 - p * p)) + 1);
        }
    }
}

static void test_bernoulli_contract(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_of(key, 5);
    rf_status st = RF_OK;
    const double bad[] = {-0.001, 1.0000001, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 5; i++) {
        assert_null(rf_bernoulli_new(key, bad[i], &st));
        assert_int_equal(st, RF_EINVAL);
    }
    rf_bernoulli *b = rf_bernoulli_new(key, 0.0, &st);
    assert_non_null(b);
    assert_int_equal(rf_bernoulli_next(b), RF_BERNOULLI_END);
    rf_bernoulli_free(b);
    rf_bernoulli_free(NULL);
    b = rf_bernoulli_new(key, 1e-300, &st); /* below every rung: the top level */
    assert_non_null(b);
    assert_true(rf_bernoulli_next(b) > (UINT64_C(1) << 40));
    rf_bernoulli_free(b);
    uint64_t t;
    int all;
    assert_int_equal(rf_unit_threshold(0.5, &t, &all), RF_OK);
    assert_true(t == UINT64_C(1) << 63 && !all);
    assert_int_equal(rf_unit_threshold(1.0, &t, &all), RF_OK);
    assert_true(all);
    assert_int_equal(rf_unit_threshold(0.0, &t, &all), RF_OK);
    assert_true(t == 0 && !all);
}

/* ---- the ladder's walk, enumerated over every class of draws ---- */

/* A ladder of levels 0 .. ENUM_TOP watched over records 0 .. ENUM_N-1.
 * Each skip draw matters only as its class -- skip 0, 1, ..., ENUM_N-1, or
 * at least ENUM_N (past every watched record) -- and each value draw only as
 * whether its unit value is below the threshold; the exact weight of each
 * class is counted over every 53-bit uniform (skips: first_reaching, with
 * the level's own log(1 - r), so a wrong r shows) or every 64-bit word
 * (values).  Draws that only place or value records past
 * the watched ones have one class, "selected" (so the walk stops there):
 * summing them out changes nothing before.  Walking every sequence of
 * classes, with the word that starts each class, gives each record's
 * probability of being selected, and each pair's, as sums of exact weights. */
#define ENUM_N 3
#define ENUM_TOP 2
#define ENUM_DEPTH 64

struct walk {
    uint64_t t;                          /* the threshold of P */
    int depth, len, too_deep;
    int choice[ENUM_DEPTH], nclass[ENUM_DEPTH];
    double weight;                       /* of the run being made */
    uint64_t edge[ENUM_TOP + 1][ENUM_N + 2]; /* first_reaching(level, g) */
    int edged[ENUM_TOP + 1];
};

/* The classes' edges of level m's skips, from the log(1 - r) it uses. */
static const uint64_t *walk_edges(struct walk *w, unsigned m, double log1m)
{
    if (!w->edged[m]) {
        for (int g = 0; g <= ENUM_N; g++)
            w->edge[m][g] = first_reaching(log1m, (uint64_t)g);
        w->edge[m][ENUM_N + 1] = UINT64_C(1) << 53;
        w->edged[m] = 1;
    }
    return w->edge[m];
}

static uint64_t walk_draw(void *ctx, int kind, unsigned m, uint64_t at, double log1m)
{
    struct walk *w = ctx;
    if (at >= ENUM_N) /* past the watched records: skip 0, a value of 0 */
        return kind == RFI_DRAW_SKIP ? 0 : 0;
    const int d = w->depth++;
    if (d >= ENUM_DEPTH) {
        w->too_deep = 1;
        return 0;
    }
    const int classes = kind == RFI_DRAW_SKIP ? ENUM_N + 1 : 2;
    if (d >= w->len) {
        w->choice[d] = 0;
        w->nclass[d] = classes;
        w->len = d + 1;
    }
    const int c = w->choice[d];
    if (kind == RFI_DRAW_SKIP) {
        const uint64_t *e = walk_edges(w, m, log1m);
        w->weight *= (double)(e[c + 1] - e[c]) * 0x1.0p-53;
        return e[c] << 11; /* the uniform 1 - e[c] 2^-53 */
    }
    /* values: u = 2^(63-m) | (word >> (m+1)) below the top, word >> top at
     * it; the words below `lim` give u < t.  The class's word is the last one
     * below (or the first one not below), so a wrong shift shows. */
    const int top = m == ENUM_TOP;
    const uint64_t base = top ? 0 : UINT64_C(1) << (63 - m);
    const unsigned shift = top ? ENUM_TOP : m + 1;
    const unsigned __int128 room = (unsigned __int128)1 << (64 - shift);
    const unsigned __int128 above = w->t <= base ? 0 : w->t - base;
    const unsigned __int128 lim = (above < room ? above : room) << shift;
    const double below = (double)lim * 0x1.0p-64;
    w->weight *= c == 0 ? below : 1.0 - below;
    if (c == 0)
        return lim ? (uint64_t)(lim - 1) : 0;
    return lim >> 64 ? UINT64_MAX : (uint64_t)lim;
}

static int walk_next(struct walk *w)
{
    for (int d = w->len - 1; d >= 0; d--)
        if (++w->choice[d] < w->nclass[d]) {
            w->len = d + 1;
            return 1;
        }
    return 0;
}

/* Each watched record is selected with probability P and each pair with
 * P^2, to within the skips' rounding (2^-40 per class). */
static void check_walk(double p)
{
    struct walk w;
    memset(&w, 0, sizeof w);
    int all;
    assert_int_equal(rf_unit_threshold(p, &w.t, &all), RF_OK);
    double one[ENUM_N] = {0}, two[ENUM_N][ENUM_N] = {{0}}, total = 0;
    unsigned long runs = 0;
    do {
        w.depth = 0;
        w.weight = 1.0;
        rf_status st;
        rf_bernoulli *b = rfi_bernoulli_new_scripted(p, ENUM_TOP, walk_draw, &w, &st);
        assert_non_null(b);
        int in[ENUM_N] = {0};
        for (uint64_t i; (i = rf_bernoulli_next(b)) < ENUM_N;)
            in[i] = 1;
        rf_bernoulli_free(b);
        assert_false(w.too_deep);
        total += w.weight;
        for (int i = 0; i < ENUM_N; i++)
            for (int j = 0; j < ENUM_N; j++) {
                one[i] += i == j && in[i] ? w.weight : 0;
                two[i][j] += in[i] && in[j] ? w.weight : 0;
            }
        runs++;
    } while (walk_next(&w));
    const double q = all ? 1.0 : (double)w.t * 0x1.0p-64;
    assert_true(runs > 1);
    assert_true(fabs(total - 1.0) <= 1e-9);
    for (int i = 0; i < ENUM_N; i++) {
        assert_true(fabs(one[i] - q) <= 1e-9);
        for (int j = 0; j < ENUM_N; j++)
            if (j != i)
                assert_true(fabs(two[i][j] - q * q) <= 1e-9);
    }
}

static void test_bernoulli_enumerated(void **state)
{
    (void)state;
    const double ps[] = {0.9, 0.5, 0.4, 0.3, 0.25, 0.2, 0.05};
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        check_walk(ps[i]);
}

/* ---- unit values of keys and the parts they cut ---- */

static void test_keyhash(void **state)
{
    (void)state;
    uint8_t k1[RF_KEY_BYTES], k2[RF_KEY_BYTES];
    key_of(k1, 1);
    key_of(k2, 2);
    rf_keyhash a, a2, b;
    assert_int_equal(rf_keyhash_init(&a, k1), RF_OK);
    assert_int_equal(rf_keyhash_init(&a2, k1), RF_OK);
    assert_int_equal(rf_keyhash_init(&b, k2), RF_OK);
    assert_int_equal(rf_keyhash_unit(&a, "user17", 6), rf_keyhash_unit(&a2, "user17", 6));
    assert_int_not_equal(rf_keyhash_unit(&a, "user17", 6), rf_keyhash_unit(&b, "user17", 6));
    assert_int_not_equal(rf_keyhash_unit(&a, "user17", 6), rf_keyhash_unit(&a, "user18", 6));
    assert_int_not_equal(rf_keyhash_unit(&a, "", 0), rf_keyhash_unit(&a, "\0", 1));
    /* the top bit of 20000 keys: half set, within 5 standard deviations */
    unsigned top = 0;
    for (unsigned i = 0; i < 20000; i++)
        top += (unsigned)(rf_keyhash_unit(&a, &i, sizeof i) >> 63);
    assert_true(fabs(top - 10000.0) <= 5 * sqrt(5000.0));
}

static void test_split_part_of_unit(void **state)
{
    (void)state;
    rf_split s;
    size_t part;
    assert_int_equal(rf_split_parse(&s, "4", NULL), RF_OK);
    const uint64_t q = UINT64_C(1) << 62;
    const uint64_t us[] = {0, q - 1, q, 2 * q - 1, 2 * q, 3 * q, UINT64_MAX};
    const size_t want[] = {0, 0, 1, 1, 2, 3, 3};
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(rf_split_part_of_unit(&s, us[i], &part), RF_OK);
        assert_int_equal(part, want[i]);
    }
    rf_split_free(&s);
    assert_int_equal(rf_split_parse(&s, "50%,25%,25%", NULL), RF_OK);
    const size_t want_pc[] = {0, 0, 0, 0, 1, 2, 2};
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(rf_split_part_of_unit(&s, us[i], &part), RF_OK);
        assert_int_equal(part, want_pc[i]);
    }
    rf_split_free(&s);
    /* a zero part takes nothing; the last takes up to 2^64 - 1 */
    assert_int_equal(rf_split_parse(&s, "0%,100%", NULL), RF_OK);
    assert_int_equal(rf_split_part_of_unit(&s, 0, &part), RF_OK);
    assert_int_equal(part, 1);
    rf_split_free(&s);
    assert_int_equal(rf_split_parse(&s, "100%,0%", NULL), RF_OK);
    assert_int_equal(rf_split_part_of_unit(&s, UINT64_MAX, &part), RF_OK);
    assert_int_equal(part, 0);
    rf_split_free(&s);
    assert_int_equal(rf_split_parse(&s, "10,*", NULL), RF_OK);
    assert_int_equal(rf_split_part_of_unit(&s, 5, &part), RF_EINVAL);
    rf_split_free(&s);
}

/* ---- a reservoir per group ---- */

/* Two groups interleaved: each keeps min(k, n_g) of its items; group
 * indices follow first appearance; a group's selection is the same whether
 * or not the other group's items are offered between its own. */
static void test_groups_independent(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_of(key, 9);
    rf_status st;
    size_t kept_mixed[5], kept_alone[5];
    for (int mixed = 0; mixed < 2; mixed++) {
        rf_groups *gs = rf_groups_new(key, 5, &st);
        assert_non_null(gs);
        size_t *kept = mixed ? kept_mixed : kept_alone;
        for (size_t i = 0; i < 1000; i++) {
            size_t g, slot;
            if (mixed) {
                assert_int_equal(rf_groups_offer(gs, "b", 1, &g, &slot), RF_OK);
                assert_int_equal(g, 0);
            }
            assert_int_equal(rf_groups_offer(gs, "a", 1, &g, &slot), RF_OK);
            assert_int_equal(g, (size_t)mixed);
            if (i < 5)
                assert_int_equal(slot, i);
            if (slot != RF_RESERVOIR_DISCARD)
                kept[slot] = i;
        }
        assert_int_equal(rf_groups_count(gs), (size_t)mixed + 1);
        rf_groups_free(gs);
    }
    assert_memory_equal(kept_mixed, kept_alone, sizeof kept_mixed);
    assert_null(rf_groups_new(key, 0, &st));
    assert_int_equal(st, RF_EINVAL);
    rf_groups_free(NULL);
}

/* Every item of a group of 12 is kept with probability k/12 = 1/4: over
 * 3000 seeds (fixed), 5 standard deviations; many groups grow the table. */
static void test_groups_uniform(void **state)
{
    (void)state;
    enum { N = 12, K = 3, SEEDS = 3000, GROUPS = 40 };
    unsigned hits[N] = {0};
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        uint8_t key[RF_KEY_BYTES];
        key_of(key, seed);
        rf_status st;
        rf_groups *gs = rf_groups_new(key, K, &st);
        assert_non_null(gs);
        size_t slots[GROUPS][K];
        for (size_t i = 0; i < N; i++) {
            for (unsigned g = 0; g < GROUPS; g++) {
                char name[16];
                const int len = snprintf(name, sizeof name, "g%u", g);
                size_t idx, slot;
                assert_int_equal(rf_groups_offer(gs, name, (size_t)len, &idx, &slot), RF_OK);
                assert_int_equal(idx, g);
                if (slot != RF_RESERVOIR_DISCARD)
                    slots[g][slot] = i;
            }
        }
        assert_int_equal(rf_groups_count(gs), GROUPS);
        rf_groups_free(gs);
        for (int j = 0; j < K; j++)
            hits[slots[seed % GROUPS][j]]++;
    }
    const double p = (double)K / N, m = p * SEEDS;
    for (int i = 0; i < N; i++)
        assert_true(fabs(hits[i] - m) <= 5 * sqrt(m * (1 - p)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_geometric_law),
        cmocka_unit_test(test_bernoulli_definition),
        cmocka_unit_test(test_bernoulli_nested),
        cmocka_unit_test(test_bernoulli_levels),
        cmocka_unit_test(test_bernoulli_each_record),
        cmocka_unit_test(test_bernoulli_enumerated),
        cmocka_unit_test(test_bernoulli_contract),
        cmocka_unit_test(test_keyhash),
        cmocka_unit_test(test_split_part_of_unit),
        cmocka_unit_test(test_groups_independent),
        cmocka_unit_test(test_groups_uniform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
