/* bench_rank -- seconds to rank and unrank a permutation of n items through
 * the library (rf_rank_mpz / rf_unrank_mpz, and the decimal-string forms that
 * `riffle rank` and `riffle unrank` use), against the quadratic method the
 * library used before its product and remainder trees (Horner's rule: one
 * multiplication or division of the whole rank by a word per item), with the
 * ratio old / new side by side.  Target: rank and unrank of 10^6 items in
 * under 5 s each on one core (string forms, decimal conversion included).
 *
 * The old method is only run up to --old-max items (default 10^5; its time
 * grows as n^2: docs/BENCHMARKS_PERM.md).  A benchmark, not a test: it exits non-zero
 * only if a result is wrong (the two methods disagree, or a round trip fails).
 * Times are CPU seconds (see now()).
 *
 * Build: make bench (or cc -O2 -Iinclude bench/bench_rank.c build/libriffle.a
 *        -lsodium -lgmp -lm -lpthread)
 * Run:   ./bench_rank [--sizes N,N,...] [--old-max N] */
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "riffle_gmp.h"

#ifndef BENCH_CFLAGS
#define BENCH_CFLAGS "unknown flags"
#endif

/* CPU time of this (single-threaded) process: on a shared machine it is
 * what one core spends, which wall-clock time only equals on an idle one. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---- the previous method, for comparison ------------------------------- */

/* Fenwick tree over values 1..n (index 0 unused), as the library uses. */
static void fw_add(size_t *t, size_t n, size_t i, long delta)
{
    for (i++; i <= n; i += i & (~i + 1))
        t[i] = (size_t)((long)t[i] + delta);
}

static size_t fw_below(const size_t *t, size_t i)
{
    size_t s = 0;
    for (; i > 0; i &= i - 1)
        s += t[i];
    return s;
}

static size_t fw_select(const size_t *t, size_t n, size_t d)
{
    size_t pos = 0, step = 1;
    while (step <= n / 2)
        step *= 2;
    for (; step > 0; step /= 2)
        if (pos + step <= n && t[pos + step] <= d) {
            pos += step;
            d -= t[pos];
        }
    return pos;
}

/* Lehmer digits by the Fenwick tree, the number by Horner's rule. */
static void old_rank(mpz_t r, const size_t *p, size_t n, size_t *t)
{
    memset(t, 0, (n + 1) * sizeof *t);
    mpz_set_ui(r, 0);
    for (size_t i = 0; i < n; i++) {
        mpz_mul_ui(r, r, (unsigned long)(n - i));
        mpz_add_ui(r, r, (unsigned long)(p[i] - fw_below(t, p[i])));
        fw_add(t, n, p[i], 1);
    }
}

/* Digits by n divisions by a word, then the d-th unused value. */
static void old_unrank(const mpz_t rank, size_t n, size_t *p, size_t *t)
{
    mpz_t r;
    mpz_init_set(r, rank);
    for (size_t m = 1; m <= n; m++)
        p[n - m] = (size_t)mpz_fdiv_q_ui(r, r, (unsigned long)m);
    mpz_clear(r);
    t[0] = 0;
    for (size_t i = 1; i <= n; i++)
        t[i] = i & (~i + 1);
    for (size_t i = 0; i < n; i++) {
        const size_t v = fw_select(t, n, p[i]);
        fw_add(t, n, v, -1);
        p[i] = v;
    }
}

/* ---- the run ------------------------------------------------------------ */

static int parse_sizes(const char *s, size_t *sizes, int max)
{
    int k = 0;
    while (*s && k < max) {
        char *end;
        const double v = strtod(s, &end);
        if (end == s || v < 1)
            return -1;
        sizes[k++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return k;
}

static void print_pair(const char *what, double old_s, double new_s)
{
    if (old_s >= 0)
        printf("  %-28s old %9.3f s   new %8.3f s   old/new %7.1f\n", what, old_s, new_s,
               old_s / new_s);
    else
        printf("  %-28s old         -     new %8.3f s\n", what, new_s);
}

static int run(size_t n, size_t old_max, rf_rng *g)
{
    int ok = 1;
    size_t *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
    size_t *t = malloc((n + 1) * sizeof *t);
    char *buf = malloc(rf_rank_string_size(n));
    if (p == NULL || q == NULL || t == NULL || buf == NULL) {
        fprintf(stderr, "bench_rank: out of memory at n = %zu\n", n);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = i;
    rf_shuffle(g, p, n, sizeof *p);
    mpz_t fast, slow;
    mpz_inits(fast, slow, NULL);
    printf("n = %zu\n", n);

    double t0 = now();
    ok &= rf_rank_mpz(fast, p, n, NULL, NULL, 0) == RF_OK;
    const double rank_new = now() - t0;
    t0 = now();
    ok &= rf_unrank_mpz(fast, n, q, NULL, 0) == RF_OK;
    const double unrank_new = now() - t0;
    ok &= memcmp(p, q, n * sizeof *p) == 0;

    double rank_old = -1, unrank_old = -1;
    if (n <= old_max) {
        t0 = now();
        old_rank(slow, p, n, t);
        rank_old = now() - t0;
        ok &= mpz_cmp(fast, slow) == 0;
        t0 = now();
        old_unrank(slow, n, q, t);
        unrank_old = now() - t0;
        ok &= memcmp(p, q, n * sizeof *p) == 0;
    }
    print_pair("rf_rank_mpz", rank_old, rank_new);
    print_pair("rf_unrank_mpz", unrank_old, unrank_new);

    /* The string forms: what riffle rank / riffle unrank call. */
    t0 = now();
    ok &= rf_rank_string(p, n, buf, rf_rank_string_size(n), NULL, NULL, 0) == RF_OK;
    const double rank_str = now() - t0;
    t0 = now();
    ok &= rf_unrank_string(buf, n, q, NULL, 0) == RF_OK;
    const double unrank_str = now() - t0;
    ok &= memcmp(p, q, n * sizeof *p) == 0;
    printf("  %-28s new %8.3f s   (%zu decimal digits)\n", "rf_rank_string", rank_str,
           strlen(buf));
    printf("  %-28s new %8.3f s\n", "rf_unrank_string", unrank_str);
    if (n == 1000000)
        printf("  target (10^6 items, under 5 s each): rank %s, unrank %s\n",
               rank_str < 5.0 ? "met" : "NOT met", unrank_str < 5.0 ? "met" : "NOT met");
    if (!ok)
        printf("  WRONG: the methods disagree or a round trip failed\n");
    mpz_clears(fast, slow, NULL);
    free(p);
    free(q);
    free(t);
    free(buf);
    return ok;
}

int main(int argc, char **argv)
{
    size_t sizes[16] = {10000, 100000, 1000000};
    int count = 3;
    size_t old_max = 100000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            count = parse_sizes(argv[++i], sizes, 16);
            if (count <= 0) {
                fprintf(stderr, "bench_rank: bad --sizes\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--old-max") == 0 && i + 1 < argc) {
            old_max = (size_t)strtod(argv[++i], NULL);
        } else {
            fprintf(stderr, "usage: bench_rank [--sizes N,N,...] [--old-max N]\n");
            return 2;
        }
    }
    printf("bench_rank: rank/unrank of a random permutation, CPU seconds, one thread, %s, GMP %s\n",
           BENCH_CFLAGS, gmp_version);
    rf_rng g;
    if (rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, 1) != RF_OK)
        return 1;
    int ok = 1;
    for (int i = 0; i < count; i++)
        ok &= run(sizes[i], old_max, &g);
    return ok ? 0 : 1;
}
