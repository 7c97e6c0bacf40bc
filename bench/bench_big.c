/*
 * bench_big.c -- shuffling arrays far larger than the caches.  A benchmark,
 * not a test: it prints figures and the large-array speed targets with
 * PASS/MISS and never fails on a missed target (only on
 * a broken shuffle).
 *
 * One run, 8-byte elements, n = 10^7 (10^8 with --big or BIG=1 in the
 * environment), contenders on the same array:
 *   fy        rf_shuffle_u64: the library's plain Fisher-Yates (batched draws,
 *             prefetch beyond L2)
 *   std       std::shuffle + std::mt19937_64, g++ -O2 (bench/baseline_std.cpp)
 *   bucket    rf_shuffle_bucket with a caller scratch buffer from malloc,
 *             allocated and touched once before timing (reused every call)
 *   bucket-map rf_shuffle_bucket, scratch NULL: the library maps its own
 *             (MADV_HUGEPAGE) per call, first-touch faults included -- what a
 *             caller who does not manage memory gets
 *   par2      rf_shuffle_parallel, 2 threads, the same caller scratch
 *   memcpy    memcpy of the array into a second one (touched before timing):
 *             the floor, a shuffle must read and write every element
 * Method (as bench_core.c, for a noisy shared machine): every figure is the
 * median of --reps repetitions; within a repetition the contenders run back
 * to back in an order rotated every repetition; ratios are paired per
 * repetition and their median reported; after every timed run the array is
 * checked (untimed) to still hold 0..n-1 (sum and sum of squares).  par2's
 * CPU time over its wall time says how many CPUs it actually had; the
 * 2-thread target is judged on the repetitions where that was >= 1.8.
 * --only NAME,... runs some contenders; --idle S waits (up to S seconds)
 * before each repetition until the machine's CPUs are idle.
 */
#include "riffle.h"

#if defined(BENCH_HAVE_STD)
#include "baseline_std.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef BENCH_CFLAGS
#define BENCH_CFLAGS "?"
#endif

#define BENCH_SEED 20261121u
#define MAX_REPS 51

enum { C_FY, C_STD, C_BUCKET, C_BUCKET_MAP, C_PAR2, C_MEMCPY, C_COUNT };

typedef struct bench {
    size_t n;
    int reps;
    rf_rng_kind kind;
    uint64_t *a, *copy;
    void *scratch;
    rf_rng g;
#if defined(BENCH_HAVE_STD)
    bench_std_rng *std;
#endif
    int have[C_COUNT];
    double ns[C_COUNT][MAX_REPS];  /* wall ns per element */
    double cpu[C_COUNT][MAX_REPS]; /* process CPU ns per element (all threads) */
    double cpu_ns, wall_ns;       /* process CPU vs wall over the timed runs */
} bench;

static const char *const names[C_COUNT] = {"fy", "std", "bucket", "bucket-map", "par2", "memcpy"};

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *pa, const void *pb)
{
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static double median(const double *v, int k)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)k * sizeof *s);
    qsort(s, (size_t)k, sizeof *s, cmp_double);
    return k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_big: %s\n", what);
    exit(1);
}

/* The array must still hold 0..n-1: sum and sum of squares (mod 2^64) match,
 * which a lost, duplicated or torn element would upset. */
static void check(const uint64_t *a, size_t n, const char *who)
{
    uint64_t s = 0, q = 0, es = 0, eq = 0;
    for (size_t i = 0; i < n; i++) {
        s += a[i];
        q += a[i] * a[i];
        es += i;
        eq += (uint64_t)i * i;
    }
    if (s != es || q != eq) {
        fprintf(stderr, "bench_big: %s: output is not a permutation\n", who);
        exit(1);
    }
}

static void run_one(bench *b, int c, int rep)
{
    const double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    rf_status st = RF_OK;
    switch (c) {
    case C_FY:
        rf_shuffle_u64(&b->g, b->a, b->n);
        break;
    case C_STD:
#if defined(BENCH_HAVE_STD)
        bench_std_shuffle_u64(b->std, b->a, b->n);
#endif
        break;
    case C_BUCKET:
        st = rf_shuffle_bucket(&b->g, b->a, b->n, 8, b->scratch);
        break;
    case C_BUCKET_MAP:
        st = rf_shuffle_bucket(&b->g, b->a, b->n, 8, NULL);
        break;
    case C_PAR2:
        st = rf_shuffle_parallel(&b->g, b->a, b->n, 8, 2, b->scratch);
        break;
    case C_MEMCPY:
        memcpy(b->copy, b->a, b->n * 8);
        break;
    }
    const double wall = clock_ns(CLOCK_MONOTONIC) - w0;
    const double cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
    b->cpu_ns += cpu;
    b->cpu[c][rep] = cpu / (double)b->n;
    b->wall_ns += wall;
    if (st != RF_OK)
        die(rf_strerror(st));
    b->ns[c][rep] = wall / (double)b->n;
    check(c == C_MEMCPY ? b->copy : b->a, b->n, names[c]);
}

static void setup(bench *b)
{
    b->a = malloc(b->n * 8);
    b->copy = malloc(b->n * 8);
    b->scratch = malloc(rf_shuffle_bucket_scratch_size(b->n, 8));
    if (!b->a || !b->copy || !b->scratch)
        die("out of memory");
    for (size_t i = 0; i < b->n; i++)
        b->a[i] = b->copy[i] = i;
    memset(b->scratch, 0, rf_shuffle_bucket_scratch_size(b->n, 8)); /* fault it in */
    if (rf_rng_seed_u64(&b->g, b->kind, BENCH_SEED) != RF_OK)
        die("cannot seed");
    for (int c = 0; c < C_COUNT; c++)
        b->have[c] = 1;
#if defined(BENCH_HAVE_STD)
    if ((b->std = bench_std_new(BENCH_SEED)) == NULL)
        die("out of memory");
#else
    b->have[C_STD] = 0;
#endif
}

/* Median over reps of the per-rep ratio x/y. */
static double paired(const bench *b, int x, int y)
{
    double r[MAX_REPS];
    for (int i = 0; i < b->reps; i++)
        r[i] = b->ns[x][i] / b->ns[y][i];
    return median(r, b->reps);
}

static void target(const bench *b, const char *what, int x, int y, double want)
{
    if (!b->have[x] || !b->have[y])
        return;
    const double got = paired(b, x, y);
    printf("  %-44s %6.2fx  (target >= %.1fx: %s)\n", what, got, want,
           got >= want ? "PASS" : "MISS");
}

/* Median over reps of the per-rep ratio of CPU times x/y. */
static double paired_cpu(const bench *b, int x, int y)
{
    double r[MAX_REPS];
    for (int i = 0; i < b->reps; i++)
        r[i] = b->cpu[x][i] / b->cpu[y][i];
    return median(r, b->reps);
}

/* par2 can only be 1.6x faster if it gets two CPUs: its CPU time over its
 * wall time per repetition says whether it did.  The bucket / par2 ratio is
 * printed again over the repetitions where par2 had at least 1.8 CPUs. */
static void ratio(const bench *b, const char *what, int x, int y,
                  double (*f)(const bench *, int, int))
{
    if (b->have[x] && b->have[y])
        printf("  %-44s %6.2fx\n", what, f(b, x, y));
}

static void report_par2(const bench *b)
{
    double busy[MAX_REPS], r[MAX_REPS];
    int k = 0;
    printf("  par2 CPUs used (its CPU / wall) per rep:");
    for (int i = 0; i < b->reps; i++) {
        busy[i] = b->cpu[C_PAR2][i] / b->ns[C_PAR2][i];
        printf(" %.2f", busy[i]);
        if (busy[i] >= 1.8)
            r[k++] = b->ns[C_BUCKET][i] / b->ns[C_PAR2][i];
    }
    printf("\n");
    if (k > 0)
        printf("  bucket / par2 over the %d rep(s) where par2 had >= 1.8 CPUs: %.2fx "
               "(target >= 1.6x: %s)\n",
               k, median(r, k), median(r, k) >= 1.6 ? "PASS" : "MISS");
    else
        printf("  par2 never had 1.8 CPUs: the machine was busy, the 2-thread target was "
               "not measured\n");
}

static void report(const bench *b)
{
    printf("\nn = %zu, 8-byte elements, generator %s, %d reps, median ns/element:\n", b->n,
           rf_rng_kind_name(b->kind), b->reps);
    printf("  %-10s %8s   %-24s %8s\n", "", "wall", "(min, max)", "cpu");
    for (int c = 0; c < C_COUNT; c++) {
        if (!b->have[c])
            continue;
        double lo = b->ns[c][0], hi = b->ns[c][0];
        for (int i = 1; i < b->reps; i++) {
            lo = b->ns[c][i] < lo ? b->ns[c][i] : lo;
            hi = b->ns[c][i] > hi ? b->ns[c][i] : hi;
        }
        char range[64];
        snprintf(range, sizeof range, "(%.2f, %.2f)", lo, hi);
        printf("  %-10s %8.2f   %-24s %8.2f\n", names[c], median(b->ns[c], b->reps), range,
               median(b->cpu[c], b->reps));
    }
    printf("paired wall-clock ratios (median over reps):\n");
    target(b, "fy / bucket (1 thread)", C_FY, C_BUCKET, 2.5);
    target(b, "std / bucket (1 thread)", C_STD, C_BUCKET, 3.0);
    target(b, "bucket (1 thread) / par2 (2 threads)", C_BUCKET, C_PAR2, 1.6);
    ratio(b, "fy / bucket-map (library-mapped scratch)", C_FY, C_BUCKET_MAP, paired);
    ratio(b, "bucket / memcpy (distance to the floor)", C_BUCKET, C_MEMCPY, paired);
    ratio(b, "par2 / memcpy", C_PAR2, C_MEMCPY, paired);
    printf("paired CPU-time ratios (robust to preemption; single-threaded only):\n");
    ratio(b, "fy / bucket", C_FY, C_BUCKET, paired_cpu);
    ratio(b, "fy / bucket-map", C_FY, C_BUCKET_MAP, paired_cpu);
    ratio(b, "std / bucket", C_STD, C_BUCKET, paired_cpu);
    if (b->have[C_PAR2] && b->have[C_BUCKET]) {
        printf("  par2 CPU / bucket CPU (work overhead of 2 threads): %.2f\n",
               paired_cpu(b, C_PAR2, C_BUCKET));
        report_par2(b);
    }
    printf("process CPU / wall over the timed runs: %.2f (par2 can use 2; below 1 means "
           "preempted)\n",
           b->cpu_ns / b->wall_ns);
}

/* --idle: before each repetition wait (at most `limit` seconds) until both
 * CPUs have been idle for half a second -- /proc/stat shows under 10% of the
 * machine busy -- so that par2 can be measured on a shared machine when two
 * CPUs are actually free.  Returns 1 if the machine was idle.  Linux only
 * (elsewhere: 0 at once). */
static int cpu_ticks(unsigned long long *busy, unsigned long long *total)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return 0;
    const int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
                           &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (got < 5)
        return 0;
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    *total = *busy + v[3] + v[4];
    return 1;
}

static int wait_idle(double limit)
{
    const double t0 = clock_ns(CLOCK_MONOTONIC);
    const struct timespec half = {0, 500000000};
    while (clock_ns(CLOCK_MONOTONIC) - t0 < limit * 1e9) {
        unsigned long long b0, t0_, b1, t1;
        if (!cpu_ticks(&b0, &t0_))
            return 0;
        nanosleep(&half, NULL);
        if (!cpu_ticks(&b1, &t1))
            return 0;
        if (t1 > t0_ && (double)(b1 - b0) < 0.1 * (double)(t1 - t0_))
            return 1;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_big [--big] [--n N] [--reps R] [--rng chacha|xoshiro|pcg]\n"
                    "                 [--only NAME,NAME,...]  (fy std bucket bucket-map par2 "
                    "memcpy)\n"
                    "                 [--idle SECONDS]  (before each rep, wait up to SECONDS "
                    "for idle CPUs)\n");
    exit(2);
}

/* --only: run just the named contenders. */
static void select_only(int *have, const char *list)
{
    int want[C_COUNT] = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok != NULL; tok = strtok(NULL, ",")) {
        int c = 0;
        while (c < C_COUNT && strcmp(tok, names[c]) != 0)
            c++;
        if (c == C_COUNT)
            usage();
        want[c] = 1;
    }
    for (int c = 0; c < C_COUNT; c++)
        have[c] = have[c] && want[c];
}

int main(int argc, char **argv)
{
    static bench b;
    b.n = 10000000;
    b.reps = 5;
    b.kind = RF_RNG_XOSHIRO256PP;
    const char *big = getenv("BIG"), *only = NULL;
    double idle = 0;
    int idle_reps = 0;
    if (big != NULL && strcmp(big, "1") == 0)
        b.n = 100000000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--big") == 0)
            b.n = 100000000;
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            b.n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            b.reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rng") == 0 && i + 1 < argc) {
            if (rf_rng_kind_parse(argv[++i], &b.kind) != RF_OK)
                usage();
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--idle") == 0 && i + 1 < argc)
            idle = atof(argv[++i]);
        else
            usage();
    }
    if (b.reps < 1 || b.reps > MAX_REPS || b.n < 2)
        usage();
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    printf("bench_big: riffle %s, C flags %s", rf_version(), BENCH_CFLAGS);
#if defined(BENCH_HAVE_STD)
    printf(", std baseline: %s", bench_std_compiler());
#endif
    printf("\nL2 cache (sysconf): %ld bytes; online CPUs: %ld; bucket scratch: %zu bytes\n", l2,
           sysconf(_SC_NPROCESSORS_ONLN), rf_shuffle_bucket_scratch_size(b.n, 8));
    setup(&b);
    if (only != NULL)
        select_only(b.have, only);
    for (int rep = 0; rep < b.reps; rep++) {
        if (idle > 0)
            idle_reps += wait_idle(idle);
        for (int k = 0; k < C_COUNT; k++) {
            const int c = (k + rep) % C_COUNT;
            if (b.have[c])
                run_one(&b, c, rep);
        }
    }
    report(&b);
    if (idle > 0)
        printf("--idle %.0f: %d of %d reps started on an idle machine\n", idle, idle_reps,
               b.reps);
    free(b.a);
    free(b.copy);
    free(b.scratch);
#if defined(BENCH_HAVE_STD)
    bench_std_free(b.std);
#endif
    return 0;
}
