/* bench_perm -- nanoseconds per index of rf_perm at N = 10^9 and 2^64 - 59,
 * against a table lookup after a Fisher-Yates where it fits (target: under
 * 20 ns per index).
 *
 * For each cipher mode and domain it times rf_perm_at over consecutive
 * indices (one call per index) and rf_perm_at_range (the "riffle -i LO-HI"
 * stream, 4096 indices per call), --reps runs of each, and prints the median
 * and the best.  The baseline shuffles a table of --table-n uint32 (default
 * 10^7; 10^9 needs 4 GB) with rf_shuffle_u32 and then reads it in order: the
 * cost per index of materialising the permutation, shuffle included, and of
 * the lookup alone.  The vector units the library can choose from are printed
 * (rf_perm_at_range runs the widest: src/perm_sip_*.c).  A benchmark, not a
 * test: it exits non-zero only if a result is wrong.
 *
 * Build: cc -O2 -Iinclude bench/bench_perm.c build/libriffle.a -lsodium -lgmp -lm
 * Run:   ./bench_perm [--count N] [--reps R] [--table-n N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "riffle_perm.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t sink;

static double time_at(const rf_perm *p, uint64_t first, uint64_t count)
{
    uint64_t s = 0;
    const double t0 = now();
    for (uint64_t i = 0; i < count; i++)
        s += rf_perm_at(p, first + i);
    const double t1 = now();
    sink += s;
    return (t1 - t0) * 1e9 / (double)count;
}

static double time_range(const rf_perm *p, uint64_t first, uint64_t count)
{
    enum { BLOCK = 4096 };
    static uint64_t out[BLOCK];
    uint64_t s = 0;
    const double t0 = now();
    for (uint64_t i = 0; i < count; i += BLOCK) {
        const size_t m = count - i < BLOCK ? (size_t)(count - i) : BLOCK;
        rf_perm_at_range(p, first + i, m, out);
        s += out[m - 1];
    }
    const double t1 = now();
    sink += s;
    return (t1 - t0) * 1e9 / (double)count;
}

static int check(const rf_perm *p, uint64_t first)
{
    for (uint64_t i = 0; i < 1000; i++) {
        const uint64_t y = rf_perm_at(p, first + i);
        if (y > rf_perm_max(p) || rf_perm_inverse(p, y) != first + i)
            return 0;
    }
    return 1;
}

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts t[0..n). */
static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static void print_cpu(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    printf("CPU: avx2 %s, avx512f %s\n", __builtin_cpu_supports("avx2") ? "yes" : "no",
           __builtin_cpu_supports("avx512f") ? "yes" : "no");
#endif
}

enum { MAX_REPS = 101 };

int main(int argc, char **argv)
{
    uint64_t count = 2000000, table_n = 10000000;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--count") == 0)
            count = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0)
            reps = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--table-n") == 0)
            table_n = strtoull(argv[i + 1], NULL, 10);
    }
    if (reps < 1 || reps > MAX_REPS || count == 0 || table_n == 0 || table_n > UINT32_MAX) {
        fprintf(stderr, "bench_perm: bad arguments\n");
        return 1;
    }
    uint8_t key[RF_KEY_BYTES];
    if (rf_seed_u64(key, 1) != RF_OK)
        return 1;
    const struct {
        const char *name;
        uint64_t max;
    } dom[] = {{"N = 10^9", 999999999ULL}, {"N = 2^64 - 59", UINT64_MAX - 59}};
    const rf_perm_mode modes[] = {RF_PERM_SIPHASH, RF_PERM_MULTIPLY};
    int ok = 1;
    print_cpu();
    printf("rf_perm, ns per index: median (best) of %d runs, %llu consecutive indices\n",
           reps, (unsigned long long)count);
    printf("%-16s %-10s %18s %18s\n", "domain", "mode", "rf_perm_at", "rf_perm_at_range");
    for (size_t d = 0; d < 2; d++) {
        for (size_t m = 0; m < 2; m++) {
            rf_status st;
            rf_perm *p = rf_perm_new(key, dom[d].max, modes[m], &st);
            if (p == NULL)
                return 1;
            const uint64_t first = dom[d].max / 3;
            double at[MAX_REPS], range[MAX_REPS];
            for (int r = 0; r < reps; r++) {
                at[r] = time_at(p, first, count);
                range[r] = time_range(p, first, count);
            }
            ok &= check(p, first);
            const double at_med = median(at, reps), range_med = median(range, reps);
            printf("%-16s %-10s %9.2f (%6.2f) %9.2f (%6.2f)\n", dom[d].name,
                   rf_perm_mode_name(modes[m]), at_med, at[0], range_med, range[0]);
            rf_perm_free(p);
        }
    }
    /* Baseline: materialise the permutation with Fisher-Yates, then look up. */
    uint32_t *t = malloc(table_n * sizeof *t);
    if (t == NULL)
        return 1;
    double fy[MAX_REPS], look[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        rf_rng g;
        if (rf_rng_init(&g, RF_RNG_CHACHA20, key, 0) != RF_OK)
            return 1;
        for (uint64_t i = 0; i < table_n; i++)
            t[i] = (uint32_t)i;
        double t0 = now();
        rf_shuffle_u32(&g, t, table_n);
        double t1 = now();
        uint64_t s = 0;
        for (uint64_t i = 0; i < table_n; i++)
            s += t[i];
        double t2 = now();
        sink += s;
        fy[r] = (t1 - t0) * 1e9 / (double)table_n;
        look[r] = (t2 - t1) * 1e9 / (double)table_n;
    }
    free(t);
    const double fy_med = median(fy, reps), look_med = median(look, reps);
    printf("table, N = %llu: Fisher-Yates %.2f (%.2f) ns per element, then lookup %.2f "
           "(%.2f) ns per index\n",
           (unsigned long long)table_n, fy_med, fy[0], look_med, look[0]);
    printf("(checksum %llu)\n", (unsigned long long)(sink & 0xffff));
    if (!ok)
        fprintf(stderr, "bench_perm: p(p^-1(x)) != x\n");
    return ok ? 0 : 1;
}
