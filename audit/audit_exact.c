/*
 * audit_exact.c -- exact distributions of shuffling algorithms.
 *
 * Three methods, all exact (integer numerators over a common denominator):
 *  - the odometer (audit_odometer.c): run the algorithm once per draw
 *    sequence and add 1/(b1...bk), the probability of a path with bounds
 *    b1..bk, to the ordering it produced.  Works for any algorithm with a
 *    finite draw tree, including the library's own shuffles.
 *  - a dynamic programme over orderings for swap programmes (audit_step): the
 *    distribution after each step, n! states, instead of the n^n paths (naive
 *    n = 8: 8 x 40320 x 8 updates instead of 16.7 million runs).
 *  - a dynamic programme over positions for the item-to-position matrix at any
 *    n: one item's position under a swap programme is a Markov chain on n
 *    states, computed with GMP integers (naive n = 52: denominators 52^52).
 */
#include <stdlib.h>
#include <string.h>

#include "audit_internal.h"

typedef audit_u128 u128;

#define WALK_MAX_PATHS ((uint64_t)1 << 27)
#define CHAIN_MAX_N 256
#define PROG_MAX_STEPS 100000

void audit_exact_init(audit_exact *e)
{
    memset(e, 0, sizeof *e);
    mpz_init(e->den);
    mpz_init(e->pos_den);
}

void audit_exact_clear(audit_exact *e)
{
    if (e->num != NULL) {
        for (uint64_t r = 0; r < e->nperm; r++)
            mpz_clear(e->num[r]);
        free(e->num);
    }
    if (e->pos_num != NULL) {
        for (size_t i = 0; i < e->n * e->n; i++)
            mpz_clear(e->pos_num[i]);
        free(e->pos_num);
    }
    mpz_clear(e->den);
    mpz_clear(e->pos_den);
    memset(e, 0, sizeof *e);
}

static void mpz_set_u128(mpz_t z, u128 v)
{
    mpz_set_ui(z, (unsigned long)(uint64_t)(v >> 64));
    mpz_mul_2exp(z, z, 64);
    mpz_add_ui(z, z, (unsigned long)(uint64_t)v);
}

static u128 gcd128(u128 a, u128 b)
{
    while (b != 0) {
        const u128 t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static mpz_t *mpz_array(size_t count)
{
    mpz_t *v = malloc((count ? count : 1) * sizeof *v);
    if (v != NULL)
        for (size_t i = 0; i < count; i++)
            mpz_init(v[i]);
    return v;
}

/* Store the distribution acc[0..nperm)/den and derive the position matrix. */
static int store_distribution(audit_exact *e, const u128 *acc, u128 den)
{
    const size_t n = e->n;
    e->num = mpz_array(e->nperm);
    e->pos_num = mpz_array(n * n);
    if (e->num == NULL || e->pos_num == NULL) {
        snprintf(e->error, sizeof e->error, "out of memory");
        return -1;
    }
    mpz_set_u128(e->den, den);
    mpz_set(e->pos_den, e->den);
    uint32_t a[21];
    for (uint64_t r = 0; r < e->nperm; r++) {
        mpz_set_u128(e->num[r], acc[r]);
        if (acc[r] == 0)
            continue;
        audit_unrank(r, n, a);
        for (size_t p = 0; p < n; p++)
            mpz_add(e->pos_num[a[p] * n + p], e->pos_num[a[p] * n + p], e->num[r]);
    }
    return 0;
}

/* ---- the size of a draw tree, before walking it ------------------------- */

/* Knuth's estimator (D. E. Knuth, "Estimating the efficiency of backtrack
 * programs", Math. Comp. 29, 1975): along a path chosen by uniform draws, the
 * product of the draw bounds is an unbiased estimate of the number of leaves
 * of the tree.  Where every path has the same product (Fisher-Yates and its
 * wrong variants, sort keys) one probe is exact; PROBES of them, averaged,
 * bound the others well enough to refuse a walk that could never end in time.
 * The probes draw from a fixed seed, so a refusal is reproducible. */
#define PROBES 32
#define PROBE_SEED 0x9e3779b97f4a7c15u

typedef struct probe {
    rf_rng g;
    double product;
    size_t depth;
} probe;

static uint64_t probe_below(void *ctx, uint64_t n)
{
    probe *p = ctx;
    p->product *= (double)n;
    p->depth++;
    return p->depth > AUDIT_ODOMETER_MAX_DRAWS ? 0 : rf_below(&p->g, n);
}

static uint64_t probe_next64(void *ctx)
{
    return rf_rng_next64(&((probe *)ctx)->g);
}

/* The estimated number of draw paths of fn on n items; -1 without memory. */
static double estimate_paths(audit_shuffle_fn fn, size_t n, unsigned param)
{
    probe p;
    rf_rng g;
    uint32_t *a = malloc(n * sizeof *a + 1);
    uint32_t *scratch = malloc(AUDIT_SCRATCH(n) * sizeof *scratch);
    const rf_source src = {probe_next64, probe_below, &p};
    double sum = -1.0;
    if (a != NULL && scratch != NULL &&
        rf_rng_seed_u64(&p.g, RF_RNG_XOSHIRO256PP, PROBE_SEED) == RF_OK &&
        rf_rng_from_source(&g, &src) == RF_OK) {
        sum = 0.0;
        for (int k = 0; k < PROBES; k++) {
            p.product = 1.0;
            p.depth = 0;
            for (size_t i = 0; i < n; i++)
                a[i] = (uint32_t)i;
            fn(&g, a, n, param, scratch);
            sum += p.product;
        }
        sum /= PROBES;
    }
    free(scratch);
    free(a);
    return sum;
}

int audit_exact_fits(audit_shuffle_fn fn, size_t n, unsigned param, audit_exact *e)
{
    const double paths = estimate_paths(fn, n, param);
    if (paths < 0.0) {
        snprintf(e->error, sizeof e->error, "out of memory");
        return -1;
    }
    if (paths <= (double)WALK_MAX_PATHS)
        return 0;
    size_t fits = 0;
    for (size_t m = 1; m < n; m++) {
        const double at_m = estimate_paths(fn, m, param);
        if (at_m < 0.0 || at_m > (double)WALK_MAX_PATHS)
            break;
        fits = m;
    }
    if (fits == 0)
        snprintf(e->error, sizeof e->error,
                 "exact mode: about %.3g draw paths at n = %zu, more than %llu, "
                 "even at n = 1", paths, n, (unsigned long long)WALK_MAX_PATHS);
    else
        snprintf(e->error, sizeof e->error,
                 "exact mode: about %.3g draw paths at n = %zu, more than %llu; "
                 "the largest n that fits is %zu", paths, n,
                 (unsigned long long)WALK_MAX_PATHS, fits);
    return -1;
}

/* ---- the walk ------------------------------------------------------------ */

/* Add weight 1/p to acc[rank], keeping a common denominator *den. */
static int walk_add(u128 *acc, uint64_t nperm, u128 *den, u128 p, uint64_t rank)
{
    if (*den % p != 0) {
        const u128 g = gcd128(*den, p), f = p / g;
        u128 nd;
        if (__builtin_mul_overflow(*den, f, &nd))
            return -1;
        for (uint64_t r = 0; r < nperm; r++)
            acc[r] *= f; /* acc[r] <= *den, so no overflow */
        *den = nd;
    }
    acc[rank] += *den / p;
    return 0;
}

int audit_exact_walk(audit_shuffle_fn fn, size_t n, unsigned param, audit_exact *e)
{
    int ret = -1;
    e->n = n;
    e->nperm = audit_factorial_u64(n);
    e->method = "odometer over every draw path";
    if (audit_exact_fits(fn, n, param, e) != 0)
        return -1;
    audit_odometer *w = malloc(sizeof *w);
    u128 *acc = calloc(e->nperm, sizeof *acc);
    uint32_t *a = malloc(n * sizeof *a + 1);
    uint32_t *scratch = malloc(AUDIT_SCRATCH(n) * sizeof *scratch);
    if (w == NULL || acc == NULL || a == NULL || scratch == NULL) {
        snprintf(e->error, sizeof e->error, "out of memory");
        goto done;
    }
    audit_odometer_init(w);
    rf_rng g;
    if (audit_odometer_rng(w, &g) != 0) {
        snprintf(e->error, sizeof e->error, "cannot make a scripted generator");
        goto done;
    }
    u128 den = 1;
    do {
        for (size_t i = 0; i < n; i++)
            a[i] = (uint32_t)i;
        fn(&g, a, n, param, scratch);
        const int fault = audit_odometer_check(w);
        if (fault != AUDIT_ODOMETER_OK) {
            snprintf(e->error, sizeof e->error, "exact mode: %s",
                     audit_odometer_problem(fault));
            goto done;
        }
        u128 p;
        if (audit_odometer_den(w, &p) != 0) {
            snprintf(e->error, sizeof e->error,
                     "exact mode: path probabilities exceed 128 bits");
            goto done;
        }
        if (walk_add(acc, e->nperm, &den, p, audit_rank(a, n)) != 0) {
            snprintf(e->error, sizeof e->error,
                     "exact mode: common denominator exceeds 128 bits");
            goto done;
        }
        if (++e->paths > WALK_MAX_PATHS) {
            snprintf(e->error, sizeof e->error,
                     "exact mode: more than %llu draw paths; try a smaller n",
                     (unsigned long long)WALK_MAX_PATHS);
            goto done;
        }
    } while (audit_odometer_next(w));
    ret = store_distribution(e, acc, den);
done:
    free(scratch);
    free(a);
    free(acc);
    free(w);
    return ret;
}

/* ---- swap programmes ------------------------------------------------------ */

/* Weight of r in [0, b) for a FIXED step, out of step_total(). */
static uint64_t step_weight(const audit_step *st, size_t r)
{
    const uint64_t b = st->hi - st->lo;
    if (st->mod == 0)
        return 1;
    return st->mod / b + (r < st->mod % b);
}

static uint64_t step_total(const audit_step *st, size_t n)
{
    if (st->kind == AUDIT_STEP_TRANSPOSE)
        return (uint64_t)n * n;
    return st->mod != 0 ? st->mod : st->hi - st->lo;
}

audit_step *audit_exact_program(const audit_algo *al, size_t n, unsigned param,
                                size_t *count, audit_exact *e)
{
    audit_step *st = malloc(PROG_MAX_STEPS * sizeof *st);
    if (st == NULL) {
        snprintf(e->error, sizeof e->error, "out of memory");
        return NULL;
    }
    *count = al->program(n, param, st, PROG_MAX_STEPS);
    if (*count == SIZE_MAX) {
        snprintf(e->error, sizeof e->error, "exact mode: more than %d steps",
                 PROG_MAX_STEPS);
        free(st);
        return NULL;
    }
    return st;
}

/* Spread weight v of ordering b over the orderings after step st. */
static void dp_step_state(const audit_step *st, size_t n, const uint32_t *b, u128 v,
                          u128 *next)
{
    uint32_t c[21];
    if (st->kind == AUDIT_STEP_TRANSPOSE) {
        for (size_t x = 0; x < n; x++) {
            for (size_t y = 0; y < n; y++) {
                memcpy(c, b, n * sizeof *c);
                const uint32_t t = c[x];
                c[x] = c[y];
                c[y] = t;
                next[audit_rank(c, n)] += v;
            }
        }
        return;
    }
    for (size_t j = st->lo; j < st->hi; j++) {
        const uint64_t w = step_weight(st, j - st->lo);
        if (w == 0)
            continue;
        memcpy(c, b, n * sizeof *c);
        const uint32_t t = c[st->i];
        c[st->i] = c[j];
        c[j] = t;
        next[audit_rank(c, n)] += v * w;
    }
}

static int dp_orderings(const audit_step *st, size_t steps, audit_exact *e)
{
    const size_t n = e->n;
    int ret = -1;
    u128 *cur = calloc(e->nperm, sizeof *cur), *next = calloc(e->nperm, sizeof *next);
    if (cur == NULL || next == NULL) {
        snprintf(e->error, sizeof e->error, "out of memory");
        goto done;
    }
    u128 den = 1;
    for (size_t k = 0; k < steps; k++)
        if (__builtin_mul_overflow(den, (u128)step_total(&st[k], n), &den)) {
            snprintf(e->error, sizeof e->error,
                     "exact mode: the denominator exceeds 128 bits; use a smaller n");
            goto done;
        }
    cur[0] = 1; /* rank 0 is the identity */
    uint32_t b[21];
    for (size_t k = 0; k < steps; k++) {
        memset(next, 0, e->nperm * sizeof *next);
        for (uint64_t r = 0; r < e->nperm; r++) {
            if (cur[r] == 0)
                continue;
            audit_unrank(r, n, b);
            dp_step_state(&st[k], n, b, cur[r], next);
        }
        u128 *t = cur;
        cur = next;
        next = t;
    }
    ret = store_distribution(e, cur, den);
done:
    free(cur);
    free(next);
    return ret;
}

/* One step of the position chain of one item: v (over the old denominator)
 * becomes nv (over the old denominator times step_total). */
static void chain_step(const audit_step *st, size_t n, mpz_t *v, mpz_t *nv, mpz_t tmp)
{
    if (st->kind == AUDIT_STEP_TRANSPOSE) {
        /* Item at x goes to y != x when the pair is (x,y) or (y,x). */
        mpz_set_ui(tmp, 0);
        for (size_t x = 0; x < n; x++)
            mpz_add(tmp, tmp, v[x]);
        const unsigned long stay = (unsigned long)(n * n - 2 * (n - 1));
        for (size_t y = 0; y < n; y++) {
            mpz_mul_ui(nv[y], v[y], stay);
            mpz_addmul_ui(nv[y], tmp, 2);
            mpz_submul_ui(nv[y], v[y], 2);
        }
        return;
    }
    const uint64_t total = step_total(st, n);
    const size_t i = st->i;
    /* An item elsewhere, at x, moves to i exactly when j == x. */
    mpz_set_ui(nv[i], 0);
    for (size_t x = 0; x < n; x++) {
        if (x == i)
            continue;
        const uint64_t w = (x >= st->lo && x < st->hi) ? step_weight(st, x - st->lo) : 0;
        mpz_mul_ui(nv[x], v[x], (unsigned long)(total - w));
        mpz_addmul_ui(nv[i], v[x], (unsigned long)w);
    }
    /* The item at i goes to j. */
    for (size_t j = st->lo; j < st->hi; j++)
        mpz_addmul_ui(nv[j], v[i], (unsigned long)step_weight(st, j - st->lo));
}

int audit_exact_positions(const audit_step *st, size_t steps, audit_exact *e)
{
    const size_t n = e->n;
    e->pos_num = mpz_array(n * n);
    mpz_t *v = mpz_array(n), *nv = mpz_array(n);
    mpz_t tmp;
    mpz_init(tmp);
    int ret = -1;
    if (e->pos_num == NULL || v == NULL || nv == NULL) {
        snprintf(e->error, sizeof e->error, "out of memory");
        goto done;
    }
    mpz_set_ui(e->pos_den, 1);
    for (size_t k = 0; k < steps; k++)
        mpz_mul_ui(e->pos_den, e->pos_den, (unsigned long)step_total(&st[k], n));
    for (size_t item = 0; item < n; item++) {
        for (size_t x = 0; x < n; x++)
            mpz_set_ui(v[x], x == item);
        for (size_t k = 0; k < steps; k++) {
            chain_step(&st[k], n, v, nv, tmp);
            mpz_t *t = v;
            v = nv;
            nv = t;
        }
        for (size_t p = 0; p < n; p++)
            mpz_set(e->pos_num[item * n + p], v[p]);
    }
    ret = 0;
done:
    mpz_clear(tmp);
    if (v != NULL) {
        for (size_t x = 0; x < n; x++)
            mpz_clear(v[x]);
        free(v);
    }
    if (nv != NULL) {
        for (size_t x = 0; x < n; x++)
            mpz_clear(nv[x]);
        free(nv);
    }
    return ret;
}

int audit_exact_run(const audit_algo *al, size_t n, unsigned param, int force_walk,
                    audit_exact *e)
{
    e->n = n;
    if (!al->finite) {
        snprintf(e->error, sizeof e->error,
                 "'%s' has an unbounded draw tree; exact mode is impossible, "
                 "use the statistical mode", al->name);
        return -1;
    }
    if (n == 0 || (n > AUDIT_EXACT_MAX_FULL && al->program == NULL)) {
        snprintf(e->error, sizeof e->error,
                 "exact mode for '%s' needs 1 <= n <= %d (larger n only for "
                 "swap programmes such as naive)", al->name, AUDIT_EXACT_MAX_FULL);
        return -1;
    }
    if (al->program == NULL || (force_walk && n <= AUDIT_EXACT_MAX_FULL))
        return audit_exact_walk(al->shuffle, n, param, e);
    if (n > CHAIN_MAX_N) {
        snprintf(e->error, sizeof e->error, "exact mode needs n <= %d", CHAIN_MAX_N);
        return -1;
    }
    size_t steps;
    audit_step *st = audit_exact_program(al, n, param, &steps, e);
    if (st == NULL)
        return -1;
    int ret;
    if (n <= AUDIT_EXACT_MAX_FULL) {
        e->nperm = audit_factorial_u64(n);
        e->method = "dynamic programme over orderings";
        ret = dp_orderings(st, steps, e);
    } else {
        e->nperm = 0;
        e->method = "dynamic programme over positions";
        ret = audit_exact_positions(st, steps, e);
    }
    free(st);
    return ret;
}

/* ---- summary -------------------------------------------------------------- */

static int mpz_ptr_cmp(const void *x, const void *y)
{
    return mpz_cmp(*(const mpz_srcptr *)x, *(const mpz_srcptr *)y);
}

static void summarize_full(const audit_exact *e, audit_exact_summary *s, mpz_t tmp)
{
    mpz_srcptr *sorted = malloc(e->nperm * sizeof *sorted);
    mpz_t nf, acc;
    mpz_inits(nf, acc, NULL);
    mpz_set_ui(nf, 1);
    for (size_t i = 2; i <= e->n; i++)
        mpz_mul_ui(nf, nf, (unsigned long)i);
    for (uint64_t r = 0; r < e->nperm; r++) {
        if (mpz_cmp(e->num[r], e->num[s->argmin]) < 0)
            s->argmin = r;
        if (mpz_cmp(e->num[r], e->num[s->argmax]) > 0)
            s->argmax = r;
        s->support += mpz_sgn(e->num[r]) > 0;
        /* TV = sum |num * n! - den| / (2 den n!) */
        mpz_mul(tmp, e->num[r], nf);
        mpz_sub(tmp, tmp, e->den);
        mpz_abs(tmp, tmp);
        mpz_add(acc, acc, tmp);
        if (sorted != NULL)
            sorted[r] = e->num[r];
    }
    mpq_set_num(s->tv, acc);
    mpz_mul(tmp, e->den, nf);
    mpz_mul_2exp(tmp, tmp, 1);
    mpq_set_den(s->tv, tmp);
    mpq_canonicalize(s->tv);
    mpq_set_num(s->min, e->num[s->argmin]);
    mpq_set_den(s->min, e->den);
    mpq_canonicalize(s->min);
    mpq_set_num(s->max, e->num[s->argmax]);
    mpq_set_den(s->max, e->den);
    mpq_canonicalize(s->max);
    s->uniform = mpz_cmp(e->num[s->argmin], e->num[s->argmax]) == 0;
    if (sorted != NULL) {
        qsort(sorted, e->nperm, sizeof *sorted, mpz_ptr_cmp);
        s->distinct = 1;
        for (uint64_t r = 1; r < e->nperm; r++)
            s->distinct += mpz_cmp(sorted[r], sorted[r - 1]) != 0;
        const uint64_t h = e->nperm / 2;
        mpz_set(acc, sorted[h]);
        if (e->nperm % 2 == 0)
            mpz_add(acc, acc, sorted[h - 1]);
        mpq_set_num(s->median, acc);
        mpz_mul_ui(tmp, e->den, e->nperm % 2 == 0 ? 2 : 1);
        mpq_set_den(s->median, tmp);
        mpq_canonicalize(s->median);
        free(sorted);
    }
    mpz_clears(nf, acc, NULL);
}

int audit_exact_summarize(const audit_exact *e, audit_exact_summary *s)
{
    memset(s, 0, sizeof *s);
    mpq_inits(s->min, s->max, s->median, s->tv, s->fixed, NULL);
    mpz_t tmp, diag;
    mpz_inits(tmp, diag, NULL);
    const size_t n = e->n;
    s->full = e->num != NULL;
    if (s->full)
        summarize_full(e, s, tmp);
    s->matrix_uniform = 1;
    for (size_t i = 0; i < n * n; i++) {
        mpz_mul_ui(tmp, e->pos_num[i], (unsigned long)n);
        if (mpz_cmp(tmp, e->pos_den) != 0)
            s->matrix_uniform = 0;
    }
    for (size_t k = 0; k < n; k++)
        mpz_add(diag, diag, e->pos_num[k * n + k]);
    mpq_set_num(s->fixed, diag);
    mpq_set_den(s->fixed, e->pos_den);
    mpq_canonicalize(s->fixed);
    mpz_clears(tmp, diag, NULL);
    return 0;
}

void audit_exact_summary_clear(audit_exact_summary *s)
{
    mpq_clears(s->min, s->max, s->median, s->tv, s->fixed, NULL);
}
