/*
 * audit_trials.c -- statistical mode: accumulate shuffled orderings and test
 * them against the laws of a uniform random permutation.
 *
 * Tests (each gives a p-value; the verdict corrects for running several):
 *  - orderings: Pearson chi-square over all n! orderings (small n);
 *  - item-position: the item-to-position count matrix, blocked into B x B cells
 *    for large n.  Its margins are fixed in every trial, so Pearson's statistic
 *    has mean (n/(n-1)) (B-1)^2, not (B-1)^2; scaled by (n-1)/n it follows
 *    chi-square((B-1)^2) (the permutation distribution of a contingency table
 *    with fixed margins; e.g. Agresti, Categorical Data Analysis, 3rd ed.,
 *    section 3.5), summed over independent trials;
 *  - fixed points against the rencontres law, rising sequences against the
 *    Eulerian law, successions against Kaplansky's law (pooled chi-square);
 *  - duplicate orderings (birthday): with N = n! equally likely orderings, m
 *    trials repeat an earlier ordering C times, C ~ Poisson with mean
 *    m - N (1 - (1 - 1/N)^m); a 32-bit seed (N <= 2^32) or a clock seed makes C
 *    far too large.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "audit_internal.h"
#include "audit_rules.h"

#define ORDER_MAX_N 9         /* 9! = 362880 counters per thread */
#define FULL_MATRIX_MAX_N 32  /* beyond this the matrix is blocked */
#define MATRIX_BLOCKS 16
#define HASH_CAP ((uint64_t)1 << 23)
#define BIRTHDAY_RATIO 100.0  /* apply when n! >= 100 trials: C ~ Poisson */
#define MIN_EXPECTED 5.0      /* Cochran's rule for chi-square cells */
#define CHUNK ((uint64_t)1 << 16)

static const char *const test_names[AUDIT_T_COUNT] = {
    "orderings", "item-position", "fixed-points", "rising-sequences", "successions",
    "duplicate-orderings", "runs", "serial-correlation", "poker", "gap",
    "coupon-collector"};

int audit_acc_init(audit_acc *acc, size_t n, uint64_t max_trials)
{
    memset(acc, 0, sizeof *acc);
    acc->n = n;
    if (n >= 2 && n <= ORDER_MAX_N && audit_factorial_u64(n) <= max_trials) {
        acc->nperm = audit_factorial_u64(n);
        acc->order = calloc(acc->nperm, sizeof *acc->order);
    }
    acc->blocks = n <= FULL_MATRIX_MAX_N ? n : MATRIX_BLOCKS;
    acc->pos = calloc(acc->blocks * acc->blocks, sizeof *acc->pos);
    acc->fixed = calloc(n + 1, sizeof *acc->fixed);
    acc->rising = calloc(n + 1, sizeof *acc->rising);
    acc->succ = calloc(n + 1, sizeof *acc->succ);
    acc->scratch = calloc(n + 1, sizeof *acc->scratch);
    acc->first = calloc(n + 1, sizeof *acc->first);
    acc->rules = audit_rules_new(n);
    if (audit_factorial(n) >= BIRTHDAY_RATIO * (double)max_trials) {
        acc->hash_cap = max_trials < HASH_CAP ? max_trials : HASH_CAP;
        acc->hashes = calloc(acc->hash_cap, sizeof *acc->hashes);
        if (acc->hashes == NULL)
            acc->hash_cap = 0;
    }
    if ((acc->nperm && !acc->order) || !acc->pos || !acc->fixed || !acc->rising ||
        !acc->succ || !acc->scratch || !acc->first || !acc->rules) {
        audit_acc_free(acc);
        return -1;
    }
    return 0;
}

void audit_acc_free(audit_acc *acc)
{
    free(acc->order);
    free(acc->pos);
    free(acc->fixed);
    free(acc->rising);
    free(acc->succ);
    free(acc->hashes);
    free(acc->scratch);
    free(acc->first);
    audit_rules_free(acc->rules);
    memset(acc, 0, sizeof *acc);
}

/* FNV-1a over 32-bit words, finished with the splitmix64 mixer (Steele, Lea &
 * Flood, OOPSLA 2014): distinct orderings collide with probability ~2^-64. */
static uint64_t ordering_hash(const uint32_t *a, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ a[i]) * 0x100000001b3ULL;
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

/* Small decks (the common case, and the one whose trial rate matters most;
 * docs/BENCHMARKS_AUDIT.md): every statistic in one pass over the ordering. */
static void acc_counts_small(audit_acc *acc, const uint32_t *a)
{
    const size_t n = acc->n;
    uint32_t pos[FULL_MATRIX_MAX_N];
    size_t fixed = 0, succ = 0, runs = 1;
    for (size_t p = 0; p < n; p++) {
        const uint32_t x = a[p];
        pos[x] = (uint32_t)p;
        acc->pos[x * n + p]++;
        fixed += x == p;
        succ += p + 1 < n && a[p + 1] == x + 1;
    }
    for (size_t i = 0; i + 1 < n; i++)
        runs += pos[i + 1] < pos[i];
    acc->fixed[fixed]++;
    acc->succ[succ]++;
    acc->rising[n ? runs : 0]++;
    if (acc->order != NULL)
        acc->order[audit_rank(a, n)]++;
}

/* Remember the first ordering and whether any later one differs: a
 * shuffler that always gives the same ordering is never called fair. */
static void acc_same(audit_acc *acc, const uint32_t *a)
{
    if (acc->trials == 0)
        memcpy(acc->first, a, acc->n * sizeof *a);
    else if (!acc->varied && memcmp(acc->first, a, acc->n * sizeof *a) != 0)
        acc->varied = 1;
}

int audit_acc_degenerate(const audit_acc *acc)
{
    return acc->trials >= 2 && !acc->varied;
}

static void acc_counts(audit_acc *acc, const uint32_t *a)
{
    const size_t n = acc->n, b = acc->blocks;
    acc_same(acc, a);
    audit_rules_add(acc->rules, a);
    if (b == n) {
        acc_counts_small(acc, a);
        return;
    }
    /* n > 32: no order counts (n > 9), the matrix in blocks. */
    for (size_t p = 0; p < n; p++)
        acc->pos[(a[p] * b / n) * b + p * b / n]++;
    acc->fixed[audit_fixed_points(a, n)]++;
    acc->rising[audit_rising_sequences(a, n, acc->scratch)]++;
    acc->succ[audit_successions(a, n)]++;
}

void audit_acc_add(audit_acc *acc, const uint32_t *a)
{
    acc_counts(acc, a);
    if (acc->hashes != NULL && acc->trials < acc->hash_cap)
        acc->hashes[acc->trials] = ordering_hash(a, acc->n);
    acc->trials++;
}

void audit_acc_merge(audit_acc *dst, const audit_acc *src)
{
    const size_t n = dst->n;
    for (uint64_t r = 0; dst->order != NULL && r < dst->nperm; r++)
        dst->order[r] += src->order[r];
    for (size_t i = 0; i < dst->blocks * dst->blocks; i++)
        dst->pos[i] += src->pos[i];
    for (size_t k = 0; k <= n; k++) {
        dst->fixed[k] += src->fixed[k];
        dst->rising[k] += src->rising[k];
        dst->succ[k] += src->succ[k];
    }
    if (src->trials > 0) {
        if (dst->trials == 0)
            memcpy(dst->first, src->first, n * sizeof *dst->first);
        else if (src->varied || memcmp(dst->first, src->first, n * sizeof *dst->first) != 0)
            dst->varied = 1;
        dst->varied |= src->varied;
    }
    audit_rules_merge(dst->rules, src->rules);
    dst->trials += src->trials;
}

/* ---- the tests ------------------------------------------------------------ */

static void set_result(audit_test *t, double stat, double df)
{
    t->applicable = df > 0.0;
    t->stat = stat;
    t->nobs = 0.0; /* set by the caller: trials, or item placements */
    t->df = df;
    t->pvalue = t->applicable ? audit_chi2_sf(stat, df) : 1.0;
}

static void test_orderings(const audit_acc *acc, audit_test *t)
{
    if (acc->order == NULL) {
        snprintf(t->note, sizeof t->note, "n! too large for the trials");
        return;
    }
    double *prob = malloc(acc->nperm * sizeof *prob);
    if (prob == NULL)
        return;
    for (uint64_t r = 0; r < acc->nperm; r++)
        prob[r] = 1.0 / (double)acc->nperm;
    double df;
    const double stat =
        audit_chi2_pooled(acc->order, prob, acc->nperm, acc->trials, MIN_EXPECTED, &df);
    free(prob);
    set_result(t, stat, df);
    if (df + 1.0 < (double)acc->nperm)
        snprintf(t->note, sizeof t->note, "%.0f pooled cells", df + 1.0);
}

double audit_block_size(size_t k, size_t b, size_t n)
{
    /* x lies in block k iff k n <= x b < (k+1) n. */
    const size_t lo = (k * n + b - 1) / b, hi = ((k + 1) * n + b - 1) / b;
    return (double)(hi - lo);
}

static void test_positions(const audit_acc *acc, audit_test *t)
{
    const size_t n = acc->n, b = acc->blocks;
    if (n < 2)
        return;
    const double T = (double)acc->trials;
    double stat = 0.0, min_e = INFINITY;
    for (size_t i = 0; i < b; i++) {
        for (size_t j = 0; j < b; j++) {
            const double e = T * audit_block_size(i, b, n) * audit_block_size(j, b, n) / (double)n;
            const double d = (double)acc->pos[i * b + j] - e;
            stat += d * d / e;
            min_e = fmin(min_e, e);
        }
    }
    if (min_e < MIN_EXPECTED) {
        snprintf(t->note, sizeof t->note, "too few trials (cells expect %.2g)", min_e);
        return;
    }
    set_result(t, stat * (double)(n - 1) / (double)n, (double)((b - 1) * (b - 1)));
    /* T n placements, scaled by (n-1)/n: the statistic's sample size. */
    t->nobs = T * (double)(n - 1);
    snprintf(t->note, sizeof t->note, "%zux%zu %s", b, b, b == n ? "cells" : "blocks");
}

typedef void (*law_fn)(size_t n, double *p);

static void test_law(const audit_acc *acc, const uint64_t *obs, law_fn law,
                     audit_test *t)
{
    double *p = malloc((acc->n + 1) * sizeof *p);
    if (p == NULL)
        return;
    law(acc->n, p);
    double df;
    const double stat =
        audit_chi2_pooled(obs, p, acc->n + 1, acc->trials, MIN_EXPECTED, &df);
    free(p);
    set_result(t, stat, df);
    if (!t->applicable)
        snprintf(t->note, sizeof t->note, "too few trials or n too small");
}

static int u64_cmp(const void *x, const void *y)
{
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static void test_birthday(const audit_acc *acc, audit_test *t)
{
    if (acc->hashes == NULL) {
        snprintf(t->note, sizeof t->note, "n! too small (the orderings test covers it)");
        return;
    }
    const uint64_t m = acc->trials < acc->hash_cap ? acc->trials : acc->hash_cap;
    uint64_t *h = malloc((m ? m : 1) * sizeof *h);
    if (h == NULL)
        return;
    memcpy(h, acc->hashes, m * sizeof *h);
    qsort(h, m, sizeof *h, u64_cmp);
    uint64_t dup = 0;
    for (uint64_t i = 1; i < m; i++)
        dup += h[i] == h[i - 1];
    free(h);
    const double N = audit_factorial(acc->n), md = (double)m;
    /* E[C] = m - N (1 - (1 - 1/N)^m), computed without cancellation. */
    double mean = md + N * expm1(md * log1p(-1.0 / N));
    if (!(mean > 0.0))
        mean = md * (md - 1.0) / (2.0 * N);
    t->applicable = 1;
    t->stat = (double)dup;
    t->df = 0.0;
    t->pvalue = audit_poisson_sf(dup, mean);
    snprintf(t->note, sizeof t->note, "%llu repeats in %llu, expected %.3g",
             (unsigned long long)dup, (unsigned long long)m, mean);
}

void audit_acc_tests(const audit_acc *acc, audit_test *t)
{
    for (int i = 0; i < AUDIT_T_COUNT; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].name = test_names[i];
        t[i].pvalue = t[i].adjusted = 1.0;
        t[i].detectable_w = NAN;
    }
    if (acc->trials == 0)
        return;
    test_orderings(acc, &t[AUDIT_T_ORDER]);
    test_positions(acc, &t[AUDIT_T_POSITION]);
    test_law(acc, acc->fixed, audit_law_fixed_points, &t[AUDIT_T_FIXED]);
    test_law(acc, acc->rising, audit_law_rising, &t[AUDIT_T_RISING]);
    test_law(acc, acc->succ, audit_law_successions, &t[AUDIT_T_SUCCESSION]);
    test_birthday(acc, &t[AUDIT_T_BIRTHDAY]);
    audit_rules_tests(acc->rules, &t[AUDIT_T_RUNS]);
    static const int per_trial[] = {AUDIT_T_ORDER, AUDIT_T_FIXED, AUDIT_T_RISING,
                                    AUDIT_T_SUCCESSION};
    for (size_t i = 0; i < sizeof per_trial / sizeof per_trial[0]; i++)
        t[per_trial[i]].nobs = (double)acc->trials;
}

/* ---- in-process trials ---------------------------------------------------- */

typedef struct worker {
    const audit_algo *al;
    unsigned param;
    uint8_t key[RF_KEY_BYTES];
    uint64_t batch, trials, base; /* trials [0, trials) of this batch */
    unsigned index, count;  /* this worker takes chunks index, index+count, ... */
    audit_acc local;
    uint64_t *hashes;       /* shared, indexed by base + trial */
    uint64_t hash_cap;
    int failed;
} worker;

/* Chunk c of batch b uses xoshiro256++ stream (b << 32) + c of the seed's key,
 * so results do not depend on how chunks are spread over threads, and no two
 * chunks of one audit share a stream. */
static void *worker_main(void *arg)
{
    worker *w = arg;
    const size_t n = w->local.n;
    uint32_t *a = malloc((n + 1) * sizeof *a);
    uint32_t *scratch = malloc(AUDIT_SCRATCH(n) * sizeof *scratch);
    if (a == NULL || scratch == NULL) {
        w->failed = 1;
        goto done;
    }
    for (uint64_t c = w->index; c * CHUNK < w->trials; c += w->count) {
        rf_rng g;
        /* A chunk is a stream of games of its own: a stateful shuffler's
         * memory and the pairs of consecutive games start afresh. */
        memset(scratch, 0, AUDIT_SCRATCH(n) * sizeof *scratch);
        audit_rules_restart(w->local.rules);
        if (rf_rng_init(&g, RF_RNG_XOSHIRO256PP, w->key, (w->batch << 32) + c) != RF_OK) {
            w->failed = 1;
            goto done;
        }
        const uint64_t hi = (c + 1) * CHUNK < w->trials ? (c + 1) * CHUNK : w->trials;
        for (uint64_t k = c * CHUNK; k < hi; k++) {
            for (size_t i = 0; i < n; i++)
                a[i] = (uint32_t)i;
            w->al->shuffle(&g, a, n, w->param, scratch);
            acc_counts(&w->local, a);
            w->local.trials++;
            if (w->hashes != NULL && w->base + k < w->hash_cap)
                w->hashes[w->base + k] = ordering_hash(a, n);
        }
    }
done:
    free(a);
    free(scratch);
    return NULL;
}

static int worker_prepare(worker *w, const audit_acc *acc)
{
    if (audit_acc_init(&w->local, acc->n, 0) != 0)
        return -1;
    free(w->local.hashes);
    w->local.hashes = NULL;
    if (acc->order != NULL) { /* keep order counts like the main accumulator */
        w->local.nperm = acc->nperm;
        w->local.order = calloc(acc->nperm, sizeof *acc->order);
        if (w->local.order == NULL)
            return -1;
    }
    return 0;
}

int audit_run_builtin(const audit_algo *al, unsigned param, uint64_t seed,
                      uint64_t batch, uint64_t trials, unsigned threads, audit_acc *acc)
{
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    worker *w = calloc(threads, sizeof *w);
    pthread_t *tid = calloc(threads, sizeof *tid);
    int ret = -1;
    unsigned started = 0;
    uint8_t key[RF_KEY_BYTES];
    if (w == NULL || tid == NULL || rf_seed_u64(key, seed) != RF_OK)
        goto done;
    for (unsigned i = 0; i < threads; i++) {
        w[i] = (worker){.al = al, .param = param, .batch = batch, .trials = trials,
                        .base = acc->trials, .index = i, .count = threads,
                        .hashes = acc->hashes, .hash_cap = acc->hash_cap};
        memcpy(w[i].key, key, sizeof key);
        if (worker_prepare(&w[i], acc) != 0 ||
            audit_thread_start(&tid[i], worker_main, &w[i]) != 0)
            goto join;
        started++;
    }
    ret = 0;
join:
    for (unsigned i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
        if (w[i].failed)
            ret = -1;
        audit_acc_merge(acc, &w[i].local);
    }
    for (unsigned i = 0; i < threads && w != NULL; i++)
        audit_acc_free(&w[i].local);
done:
    free(w);
    free(tid);
    return ret;
}
