/*
 * bench_core.c -- how fast riffle shuffles, against what people use today.
 * A benchmark, not a test: it prints figures and the speed targets with
 * PASS/MISS, and never fails on a missed target.
 *
 * Measured, in ns per element / per draw:
 *   - rf_shuffle_u64 on 8-byte elements with xoshiro256++, PCG64 and ChaCha20
 *     (each made by rf_rng_seed_u64), at n = 10^3 .. 10^7 (10^8 with --big);
 *   - baselines on the same array: the textbook loop with rand() % (i+1)
 *     (biased, and rand() takes glibc's lock on every call), Fisher-Yates on
 *     glibc random_r with an unbiased bound (rejection, see randr_below),
 *     C++ std::shuffle + std::mt19937_64 (g++ -O2, baseline_std.cpp);
 *   - two bench-local references on xoshiro256++ kept in locals: lemire-ref,
 *     an unbatched Fisher-Yates with one Lemire draw per swap, and batch-ref,
 *     rf's own batched draw schedule written for speed (it must give exactly
 *     rf_shuffle_u64's permutation, which is checked): what the library could
 *     reach with the same stream;
 *   - rf_below with varying bounds and raw words (rf_rng_next64) per generator,
 *     the handle reached through a pointer and held in a local.
 *
 * Method, chosen for a noisy machine shared with other people's compilers:
 *   - every figure is the median of --reps repetitions (default 9);
 *   - within a repetition the contenders run back to back, in an order rotated
 *     every repetition, so a burst of load from elsewhere hits them alike;
 *     ratios are taken per repetition (paired) and their median reported;
 *   - a timed run shuffles the same array again and again until at least
 *     --min-elems elements (default 4*10^6) went through, so even n = 1000 is
 *     timed over milliseconds, far above the clock's resolution;
 *   - CLOCK_MONOTONIC; the array is allocated and touched before timing;
 *   - a timed run during which the thread was off the CPU (its CPU time < 95%
 *     of the wall time: other jobs preempted it) is repeated, see keep_run;
 *   - after every timed run (untimed) the array is checked to still hold
 *     0..n-1 (sum) and folded into a checksum that is printed, so no shuffle
 *     can be optimised away and a broken one is caught.
 */
#include "riffle.h"

#if defined(BENCH_HAVE_STD)
#include "baseline_std.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_CFLAGS
#define BENCH_CFLAGS "?"
#endif

#define BENCH_SEED 20261121u
#define MAX_REPS 101
#define MAX_SIZES 16
#define MAX_CONTENDERS 9
#define MAX_DRAWERS 24
#define DRAW_COUNT ((size_t)1 << 22) /* draws per timed run: ~10 ms */

/* ------------------------------------------------------------------------ */
/* Options, clock, statistics                                               */
/* ------------------------------------------------------------------------ */

typedef struct options {
    int reps;
    size_t min_elems;
    size_t sizes[MAX_SIZES];
    int nsizes;
    int draws; /* run the bounded-draw section */
} options;

static volatile uint64_t bench_sink; /* every result is folded in here */

/* Preemption.  Other people's jobs on a shared machine take the core away in
 * the middle of a timed run, which then reads high.  Each timed run also
 * reads this thread's CPU time; a run that had the CPU for less than
 * CLEAN_SHARE of its wall time is discarded and repeated, up to MAX_ATTEMPTS
 * tries (the last one is kept whatever it is, and counted).  The wall and CPU
 * time of the kept runs are summed: their ratio is printed at the end. */
#define CLEAN_SHARE 0.95
#define MAX_ATTEMPTS 4

static double total_wall_ns, total_cpu_ns;
static long runs_kept, runs_retried, runs_kept_preempted;

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct stopwatch {
    double wall, cpu;
} stopwatch;

static stopwatch stopwatch_start(void)
{
    const stopwatch sw = {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_THREAD_CPUTIME_ID)};
    return sw;
}

/* Wall and CPU ns since `sw` was started. */
static stopwatch stopwatch_read(stopwatch sw)
{
    const stopwatch now = {clock_ns(CLOCK_MONOTONIC) - sw.wall,
                           clock_ns(CLOCK_THREAD_CPUTIME_ID) - sw.cpu};
    return now;
}

/* Whether a timed run (elapsed times `t`, attempt number `attempt`) is the
 * one to keep; counts it. */
static int keep_run(stopwatch t, int attempt)
{
    const int clean = t.cpu >= CLEAN_SHARE * t.wall;
    if (!clean && attempt < MAX_ATTEMPTS) {
        runs_retried++;
        return 0;
    }
    runs_kept++;
    runs_kept_preempted += !clean;
    total_wall_ns += t.wall;
    total_cpu_ns += t.cpu;
    return 1;
}

static int cmp_double(const void *pa, const void *pb)
{
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The q-quantile (0 <= q <= 1) of v[0..k), by nearest rank; q = 0.5 with k
 * even averages the two middle values. */
static double quantile(const double *v, int k, double q)
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)k * sizeof *s);
    qsort(s, (size_t)k, sizeof *s, cmp_double);
    if (q == 0.5 && k % 2 == 0)
        return (s[k / 2 - 1] + s[k / 2]) / 2;
    return s[(int)(q * (k - 1) + 0.5)];
}

static double median(const double *v, int k)
{
    return quantile(v, k, 0.5);
}

/* Interquartile range over the median: how noisy one contender's reps were. */
static double spread(const double *v, int k)
{
    const double m = median(v, k);
    return m > 0 ? (quantile(v, k, 0.75) - quantile(v, k, 0.25)) / m : 0;
}

/* ------------------------------------------------------------------------ */
/* Shuffle contenders                                                       */
/* ------------------------------------------------------------------------ */

typedef void (*shuffle_fn)(void *state, uint64_t *a, size_t n);

enum contender_id { C_XOSHIRO, C_PCG, C_CHACHA, C_BATCH, C_LEMIRE, C_STD, C_RANDOM_R, C_RAND };

typedef struct contender {
    enum contender_id id;
    const char *name; /* column header, <= 10 characters */
    const char *what; /* legend */
    shuffle_fn run;
    void *state;
} contender;

static void swap_u64(uint64_t *a, size_t i, size_t j)
{
    const uint64_t t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static void run_rf(void *state, uint64_t *a, size_t n)
{
    rf_shuffle_u64(state, a, n);
}

/* The textbook loop found in countless tutorials: biased (rand() % (i+1)
 * favours small residues), limited to RAND_MAX + 1 = 2^31 positions, and glibc's
 * rand() locks a mutex on every call.  It is here because people use it. */
static void run_rand_mod(void *state, uint64_t *a, size_t n)
{
    (void)state;
    for (size_t i = n; i-- > 1;)
        swap_u64(a, i, (size_t)rand() % (i + 1));
}

/* Uniform in [0, bound) from glibc random_r's 31-bit outputs, exactly
 * unbiased: reject the top 2^31 mod bound values so that every residue has the
 * same number of preimages (the classic rejection, as in Java's nextInt).
 * Costs two divisions per draw; bound <= 2^31. */
static uint32_t randr_below(struct random_data *rd, uint32_t bound)
{
    const uint32_t range = UINT32_C(1) << 31;
    const uint32_t limit = range - range % bound;
    int32_t r;
    do
        random_r(rd, &r);
    while ((uint32_t)r >= limit);
    return (uint32_t)r % bound;
}

static void run_random_r(void *state, uint64_t *a, size_t n)
{
    for (size_t i = n; i-- > 1;)
        swap_u64(a, i, randr_below(state, (uint32_t)(i + 1)));
}

#if defined(BENCH_HAVE_STD)
static void run_std(void *state, uint64_t *a, size_t n)
{
    bench_std_shuffle_u64(state, a, n);
}
#endif

#if defined(__SIZEOF_INT128__)
/* Lemire, "Fast Random Integer Generation in an Interval", ACM TOMACS 29(1),
 * 2019, algorithm 5: the high word of word * n is uniform in [0, n) once
 * products whose low word is below 2^64 mod n are rejected; that remainder
 * (one division) is only needed when the low word is below n. */
static inline uint64_t lemire_below(rf_xoshiro *x, uint64_t n)
{
    unsigned __int128 m = (unsigned __int128)rf_xoshiro_next64(x) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        const uint64_t threshold = (0 - n) % n;
        while (lo < threshold) {
            m = (unsigned __int128)rf_xoshiro_next64(x) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

/* One Lemire draw per swap, generator state copied into a local so that it
 * lives in registers (a state behind a pointer may alias the array and be
 * reloaded after every store).  Not riffle's stream: a reference point. */
static void run_lemire_ref(void *state, uint64_t *a, size_t n)
{
    rf_xoshiro x = *(rf_xoshiro *)state;
    for (size_t i = n; i-- > 1;)
        swap_u64(a, i, (size_t)lemire_below(&x, i + 1));
    *(rf_xoshiro *)state = x;
}

/* batch-ref: a bench-local copy of the draw schedule that rf_shuffle uses
 * (riffle.h, "Shuffles"; the batch lengths are src/uniform/bounded_internal.h's
 * rfi_batch_len), written for speed, to show what the schedule can cost.
 * Step t swaps a[t] with a[t + d_t], d_t uniform in [0, b) for b = n - t.  A
 * batch takes k consecutive bounds b, b-1, ..., b-k+1 from one 64-bit word
 * (Brackett-Rozinsky & Lemire, "Batched Ranged Random Integer Generation",
 * SPE 2024): the digits are the successive high words of lo * bound, and the
 * word is rejected when the final low word is below 2^64 mod P, P the product
 * of the bounds (Lemire 2019's test, extended).  k is 1, 2, ..., 6 while b is
 * above 2^30, 2^19, 2^14, 2^11, 2^9, 1 (never more than b - 1), so k is
 * constant over long phases; with k a compile-time constant per phase the
 * digits stay in registers, and since P <= b_max^k <= 2^s (s = 60, 57, 56, 55,
 * 54 for k = 2..6) a low word >= 2^s accepts without computing P at all.
 * bench_core checks once that this reproduces rf_shuffle_u64 exactly. */
#if defined(__GNUC__)
#define BENCH_COLD __attribute__((noinline, cold))
#else
#define BENCH_COLD
#endif

static inline uint64_t mulhi64(uint64_t a, uint64_t b, uint64_t *lo)
{
    const unsigned __int128 p = (unsigned __int128)a * b;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
}

/* The exact test, rarely reached: accept iff lo >= 2^64 mod P. */
static BENCH_COLD int batch_accept_exact(uint64_t lo, uint64_t b, int k)
{
    uint64_t p = 1;
    for (int i = 0; i < k; i++)
        p *= b - (uint64_t)i;
    return lo >= p || lo >= (0 - p) % p;
}

#define BATCH_PHASE(K, B_MIN, LOG2_P_MAX)                                         \
    for (; b > (B_MIN) && b > (K); b -= (K), t += (K)) {                          \
        uint64_t d[K];                                                            \
        for (;;) {                                                                \
            uint64_t lo = rf_xoshiro_next64(&x);                                  \
            _Pragma("GCC unroll 8") for (int i = 0; i < (K); i++)                 \
                d[i] = mulhi64(lo, b - (uint64_t)i, &lo);                         \
            if ((lo >> (LOG2_P_MAX)) != 0 || batch_accept_exact(lo, b, (K)))     \
                break;                                                            \
        }                                                                         \
        _Pragma("GCC unroll 8") for (int i = 0; i < (K); i++)                     \
            swap_u64(a, t + (size_t)i, t + (size_t)i + (size_t)d[i]);             \
    }

static void run_batch_ref(void *state, uint64_t *a, size_t n)
{
    rf_xoshiro x = *(rf_xoshiro *)state;
    uint64_t b = n;
    size_t t = 0;
    for (; b > (UINT64_C(1) << 30); b--, t++) { /* k = 1: P = b */
        uint64_t lo, d;
        do
            d = mulhi64(rf_xoshiro_next64(&x), b, &lo);
        while (lo < b && !batch_accept_exact(lo, b, 1));
        swap_u64(a, t, t + (size_t)d);
    }
    BATCH_PHASE(2, UINT64_C(1) << 19, 60)
    BATCH_PHASE(3, UINT64_C(1) << 14, 57)
    BATCH_PHASE(4, UINT64_C(1) << 11, 56)
    BATCH_PHASE(5, UINT64_C(1) << 9, 55)
    BATCH_PHASE(6, 1, 54)
    if (b >= 2) { /* the last batch: k = b - 1 <= 5 */
        const int k = (int)b - 1;
        uint64_t d[5];
        for (;;) {
            uint64_t lo = rf_xoshiro_next64(&x);
            for (int i = 0; i < k; i++)
                d[i] = mulhi64(lo, b - (uint64_t)i, &lo);
            if (batch_accept_exact(lo, b, k))
                break;
        }
        for (int i = 0; i < k; i++)
            swap_u64(a, t + (size_t)i, t + (size_t)i + (size_t)d[i]);
    }
    *(rf_xoshiro *)state = x;
}

/* Whether batch-ref gives rf_shuffle_u64's permutation and final generator
 * state at a few sizes that cover every batch length but 1 (n > 2^30). */
static int batch_ref_matches(void)
{
    static const size_t sizes[] = {2, 3, 7, 8, 600, 3000, 20000, 600000};
    static uint64_t a[600000], r[600000];
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        const size_t n = sizes[s];
        rf_rng g;
        if (rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, BENCH_SEED + n) != RF_OK)
            return 0;
        rf_xoshiro x = g.u.xoshiro;
        for (size_t i = 0; i < n; i++)
            a[i] = r[i] = i;
        rf_shuffle_u64(&g, a, n);
        run_batch_ref(&x, r, n);
        if (memcmp(a, r, n * sizeof *a) != 0 || memcmp(&x, &g.u.xoshiro, sizeof x) != 0)
            return 0;
    }
    return 1;
}
#endif

/* ------------------------------------------------------------------------ */
/* Shuffle measurement                                                      */
/* ------------------------------------------------------------------------ */

typedef struct shuffle_result {
    double ns[MAX_CONTENDERS];    /* median ns per element */
    double ratio[MAX_CONTENDERS]; /* median over reps of ns / ns(xoshiro) */
    double noise;                 /* worst IQR/median over contenders */
    double cpu_share;             /* CPU time / wall time over this size's runs */
} shuffle_result;

/* Untimed: a[0..n) must still hold 0..n-1 (its sum is checked); fold a
 * position-weighted hash into the sink so the shuffle's stores are used. */
static void check_and_fold(const contender *c, const uint64_t *a, size_t n)
{
    uint64_t sum = 0, hash = 0;
    for (size_t i = 0; i < n; i++) {
        sum += a[i];
        hash += a[i] * (2 * (uint64_t)i + 1);
    }
    if (sum != (uint64_t)n * (n - 1) / 2) {
        fprintf(stderr, "bench_core: %s: result is not a permutation (n=%zu)\n", c->name, n);
        exit(2);
    }
    bench_sink ^= hash;
}

static double time_shuffle(const contender *c, uint64_t *a, size_t n, size_t iters)
{
    for (int attempt = 1;; attempt++) {
        const stopwatch sw = stopwatch_start();
        for (size_t k = 0; k < iters; k++)
            c->run(c->state, a, n);
        const stopwatch t = stopwatch_read(sw);
        check_and_fold(c, a, n);
        if (keep_run(t, attempt))
            return t.wall / ((double)iters * (double)n);
    }
}

static void measure_size(const options *o, const contender *cs, int nc, uint64_t *a,
                         size_t n, shuffle_result *res)
{
    static double ns[MAX_CONTENDERS][MAX_REPS], ratio[MAX_REPS];
    const size_t iters = n >= o->min_elems ? 1 : (o->min_elems + n - 1) / n;

    const double wall0 = total_wall_ns, cpu0 = total_cpu_ns;
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    if (iters > 1) /* warm caches and branch predictors; large n needs none */
        for (int c = 0; c < nc; c++)
            time_shuffle(&cs[c], a, n, 1);
    for (int r = 0; r < o->reps; r++)
        for (int k = 0; k < nc; k++) {
            const int c = (r + k) % nc;
            ns[c][r] = time_shuffle(&cs[c], a, n, iters);
        }
    res->cpu_share = (total_cpu_ns - cpu0) / (total_wall_ns - wall0);
    res->noise = 0;
    for (int c = 0; c < nc; c++) {
        for (int r = 0; r < o->reps; r++)
            ratio[r] = ns[c][r] / ns[0][r]; /* cs[0] is rf xoshiro256++ */
        res->ns[c] = median(ns[c], o->reps);
        res->ratio[c] = median(ratio, o->reps);
        if (spread(ns[c], o->reps) > res->noise)
            res->noise = spread(ns[c], o->reps);
    }
}

static void print_size_header(const contender *cs, int nc)
{
    printf("%10s", "n");
    for (int c = 0; c < nc; c++)
        printf(" %10s", cs[c].name);
    printf("  %6s %5s\n", "noise", "cpu");
}

static void print_size_row(size_t n, const shuffle_result *res, int nc)
{
    printf("%10zu", n);
    for (int c = 0; c < nc; c++)
        printf(" %10.2f", res->ns[c]);
    printf("  %5.1f%% %4.0f%%\n", 100 * res->noise, 100 * res->cpu_share);
    fflush(stdout);
}

static void print_ratio_table(const options *o, const contender *cs, int nc,
                              const shuffle_result *res)
{
    printf("\nratios, same run: contender time / rf xoshiro256++ time "
           "(> 1: rf xoshiro256++ is that many times faster)\n");
    printf("%10s", "n");
    for (int c = 1; c < nc; c++)
        printf(" %10s", cs[c].name);
    printf("\n");
    for (int s = 0; s < o->nsizes; s++) {
        printf("%10zu", o->sizes[s]);
        for (int c = 1; c < nc; c++)
            printf(" %9.2fx", res[s].ratio[c]);
        printf("\n");
    }
}

static void print_legend(const contender *cs, int nc)
{
    for (int c = 0; c < nc; c++)
        printf("  %-10s %s\n", cs[c].name, cs[c].what);
}

static int find_contender(const contender *cs, int nc, enum contender_id id)
{
    for (int c = 0; c < nc; c++)
        if (cs[c].id == id)
            return c;
    return -1;
}

static int find_size(const options *o, size_t n)
{
    for (int s = 0; s < o->nsizes; s++)
        if (o->sizes[s] == n)
            return s;
    return -1;
}

static int run_shuffles(const options *o, const contender *cs, int nc, shuffle_result *res)
{
    size_t max_n = 0;
    for (int s = 0; s < o->nsizes; s++)
        if (o->sizes[s] > max_n)
            max_n = o->sizes[s];
    uint64_t *a = malloc(max_n * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "bench_core: cannot allocate %zu elements\n", max_n);
        return -1;
    }
    printf("shuffle of 8-byte elements: ns per element, median of %d reps "
           "(>= %zu elements per timed run)\n"
           "noise: worst interquartile range / median of any column; cpu: CPU time /"
           " wall time of the timed runs (< 95%%: preempted by other jobs)\n",
           o->reps, o->min_elems);
    print_legend(cs, nc);
    print_size_header(cs, nc);
    for (int s = 0; s < o->nsizes; s++) {
        measure_size(o, cs, nc, a, o->sizes[s], &res[s]);
        print_size_row(o->sizes[s], &res[s], nc);
    }
    free(a);
    print_ratio_table(o, cs, nc, res);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Bounded draws and raw words                                              */
/* ------------------------------------------------------------------------ */

typedef uint64_t (*draw_fn)(void *state, size_t count);

typedef struct drawer {
    const char *name;
    draw_fn run;
    void *state;
    const char *target; /* non-NULL: checked against the < 2 ns target */
} drawer;

/* The draw loops store every result into this ring and fold it at the end,
 * rather than summing into an accumulator: the compiler may keep a sum in
 * memory, and its store-to-load round trip would then dominate what is timed. */
#define DRAW_RING 256
static uint64_t draw_ring[DRAW_RING];

static uint64_t fold_ring(void)
{
    uint64_t h = 0;
    for (size_t i = 0; i < DRAW_RING; i++)
        h = h * 31 + draw_ring[i];
    return h;
}

/* Bounds count, count-1, ..., 1: the bounds a shuffle of `count` draws. */
static uint64_t draw_rf_below(void *state, size_t count)
{
    for (size_t b = count; b > 0; b--)
        draw_ring[b % DRAW_RING] = rf_below(state, b);
    return fold_ring();
}

static uint64_t draw_rf_raw(void *state, size_t count)
{
    for (size_t i = 0; i < count; i++)
        draw_ring[i % DRAW_RING] = rf_rng_next64(state);
    return fold_ring();
}

/* The same words with the handle copied to a local first, so the compiler may
 * keep the state in registers: the generator's own cost, without the round
 * trip of its state through memory on every word. */
static uint64_t draw_rf_raw_local(void *state, size_t count)
{
    rf_rng g = *(rf_rng *)state;
    for (size_t i = 0; i < count; i++)
        draw_ring[i % DRAW_RING] = rf_rng_next64(&g);
    *(rf_rng *)state = g;
    return fold_ring();
}

/* rf_below with the handle copied to a local (state may stay in registers). */
static uint64_t draw_rf_below_local(void *state, size_t count)
{
    rf_rng g = *(rf_rng *)state;
    for (size_t b = count; b > 0; b--)
        draw_ring[b % DRAW_RING] = rf_below(&g, b);
    *(rf_rng *)state = g;
    return fold_ring();
}

/* The typed bounded draws (no handle dispatch), state copied to a local. */
static uint64_t draw_xoshiro_below(void *state, size_t count)
{
    rf_xoshiro x = ((rf_rng *)state)->u.xoshiro;
    for (size_t b = count; b > 0; b--)
        draw_ring[b % DRAW_RING] = rf_xoshiro_below(&x, b);
    ((rf_rng *)state)->u.xoshiro = x;
    return fold_ring();
}

static uint64_t draw_pcg64_below(void *state, size_t count)
{
    rf_pcg64 p = ((rf_rng *)state)->u.pcg;
    for (size_t b = count; b > 0; b--)
        draw_ring[b % DRAW_RING] = rf_pcg64_below(&p, b);
    ((rf_rng *)state)->u.pcg = p;
    return fold_ring();
}

static uint64_t draw_chacha_below(void *state, size_t count)
{
    rf_chacha c = ((rf_rng *)state)->u.chacha;
    for (size_t b = count; b > 0; b--)
        draw_ring[b % DRAW_RING] = rf_chacha_below(&c, b);
    ((rf_rng *)state)->u.chacha = c;
    return fold_ring();
}

#if defined(__SIZEOF_INT128__)
/* Reference: Lemire's draw inlined, xoshiro256++ state in locals. */
static uint64_t draw_lemire_ref(void *state, size_t count)
{
    rf_xoshiro x = *(rf_xoshiro *)state;
    for (size_t b = count; b > 0; b--)
        draw_ring[b % DRAW_RING] = lemire_below(&x, b);
    *(rf_xoshiro *)state = x;
    return fold_ring();
}
#endif

static uint64_t draw_random_r_raw(void *state, size_t count)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < count; i++) {
        int32_t r;
        random_r(state, &r);
        acc ^= (uint64_t)r;
    }
    return acc;
}

static uint64_t draw_random_r_below(void *state, size_t count)
{
    uint64_t acc = 0;
    for (size_t b = count; b > 0; b--)
        acc += randr_below(state, (uint32_t)b);
    return acc;
}

#if defined(BENCH_HAVE_STD)
static uint64_t draw_std_raw(void *state, size_t count)
{
    return bench_std_words(state, count);
}

static uint64_t draw_std_below(void *state, size_t count)
{
    return bench_std_below(state, count);
}
#endif

static double time_draws(const drawer *d)
{
    for (int attempt = 1;; attempt++) {
        const stopwatch sw = stopwatch_start();
        const uint64_t v = d->run(d->state, DRAW_COUNT);
        const stopwatch t = stopwatch_read(sw);
        bench_sink ^= v;
        if (keep_run(t, attempt))
            return t.wall / (double)DRAW_COUNT;
    }
}

/* Times every drawer, interleaved and rotated like the shuffles; med[i] gets
 * the median ns per draw. */
static void measure_draws(const options *o, const drawer *ds, int nd, double *med)
{
    static double ns[MAX_DRAWERS][MAX_REPS];
    for (int i = 0; i < nd; i++)
        time_draws(&ds[i]); /* warm-up */
    for (int r = 0; r < o->reps; r++)
        for (int k = 0; k < nd; k++) {
            const int i = (r + k) % nd;
            ns[i][r] = time_draws(&ds[i]);
        }
    printf("\nbounded draws (bounds %zu, %zu, ..., 1) and raw 64-bit words: "
           "ns per draw, median of %d reps\n", DRAW_COUNT, DRAW_COUNT - 1, o->reps);
    for (int i = 0; i < nd; i++) {
        med[i] = median(ns[i], o->reps);
        printf("  %-52s %7.2f   (noise %4.1f%%)\n", ds[i].name, med[i],
               100 * spread(ns[i], o->reps));
    }
}

/* ------------------------------------------------------------------------ */
/* Targets: informational PASS/MISS                                        */
/* ------------------------------------------------------------------------ */

static void print_target(const char *what, double value, const char *unit, int pass,
                         const char *target)
{
    printf("  %-52s %6.2f%-3s (target %s)  %s\n", what, value, unit, target,
           pass ? "PASS" : "MISS");
}

static void print_speedup_target(const options *o, const contender *cs, int nc,
                                 const shuffle_result *res, size_t n)
{
    const int s = find_size(o, n), c = find_contender(cs, nc, C_STD);
    char what[80];
    snprintf(what, sizeof what, "xoshiro256++ vs std::shuffle+mt19937_64, n=%zu", n);
    if (s < 0 || c < 0) {
        printf("  %-52s n/a (%s)\n", what, c < 0 ? "no C++ compiler" : "size not run");
        return;
    }
    print_target(what, res[s].ratio[c], "x", res[s].ratio[c] >= 2.5, ">= 2.50x faster");
}

/* med[i]: median ns per draw of ds[i]; the drawers with a `target` label are
 * the bounded draws on xoshiro256++ that the < 2 ns target is about. */
static void print_targets(const options *o, const contender *cs, int nc,
                          const shuffle_result *res, const drawer *ds, int nd,
                          const double *med)
{
    printf("\ntargets (informational, never fails the build)\n");
    print_speedup_target(o, cs, nc, res, 10000);
    print_speedup_target(o, cs, nc, res, 1000000);
    for (int i = 0; i < nd; i++)
        if (ds[i].target != NULL && med[i] > 0)
            print_target(ds[i].target, med[i], "ns", med[i] < 2.0, "< 2 ns");
    const int s = find_size(o, 1000000), c = find_contender(cs, nc, C_CHACHA);
    if (s >= 0 && c >= 0)
        print_target("chacha20 / xoshiro256++ shuffle time, n=1000000", res[s].ratio[c], "x",
                     res[s].ratio[c] <= 1.5, "<= 1.50x");
}

/* ------------------------------------------------------------------------ */
/* Set-up and main                                                          */
/* ------------------------------------------------------------------------ */

typedef struct states {
    rf_rng xoshiro, pcg, chacha;
    rf_xoshiro lemire, lemire_draws, batch; /* states of the bench-local references */
    struct random_data rd_shuffle, rd_draws;
    char rd_shuffle_buf[256], rd_draws_buf[256];
#if defined(BENCH_HAVE_STD)
    bench_std_rng *std_shuffle, *std_draws;
#endif
} states;

static int seed_states(states *st)
{
    if (rf_rng_seed_u64(&st->xoshiro, RF_RNG_XOSHIRO256PP, BENCH_SEED) != RF_OK ||
        rf_rng_seed_u64(&st->pcg, RF_RNG_PCG64, BENCH_SEED) != RF_OK ||
        rf_rng_seed_u64(&st->chacha, RF_RNG_CHACHA20, BENCH_SEED) != RF_OK)
        return -1;
    st->lemire = st->xoshiro.u.xoshiro;
    st->batch = st->xoshiro.u.xoshiro;
    st->lemire_draws = st->xoshiro.u.xoshiro;
    srand(BENCH_SEED);
    memset(&st->rd_shuffle, 0, sizeof st->rd_shuffle); /* initstate_r requires it */
    memset(&st->rd_draws, 0, sizeof st->rd_draws);
    if (initstate_r(BENCH_SEED, st->rd_shuffle_buf, sizeof st->rd_shuffle_buf,
                    &st->rd_shuffle) != 0 ||
        initstate_r(BENCH_SEED, st->rd_draws_buf, sizeof st->rd_draws_buf, &st->rd_draws) != 0)
        return -1;
#if defined(BENCH_HAVE_STD)
    st->std_shuffle = bench_std_new(BENCH_SEED);
    st->std_draws = bench_std_new(BENCH_SEED);
    if (st->std_shuffle == NULL || st->std_draws == NULL)
        return -1;
#endif
    return 0;
}

static void free_states(states *st)
{
#if defined(BENCH_HAVE_STD)
    bench_std_free(st->std_shuffle);
    bench_std_free(st->std_draws);
#else
    (void)st;
#endif
}

/* The rf xoshiro256++ contender must come first: ratios are relative to it. */
static int make_contenders(states *st, contender *cs)
{
    int nc = 0;
    cs[nc++] = (contender){C_XOSHIRO, "xoshiro", "rf_shuffle_u64, xoshiro256++", run_rf,
                           &st->xoshiro};
    cs[nc++] = (contender){C_PCG, "pcg64", "rf_shuffle_u64, PCG64 XSL-RR", run_rf, &st->pcg};
    cs[nc++] = (contender){C_CHACHA, "chacha20", "rf_shuffle_u64, ChaCha20 (libsodium)", run_rf,
                           &st->chacha};
#if defined(__SIZEOF_INT128__)
    cs[nc++] = (contender){C_BATCH, "batch-ref",
                           "bench-local copy of rf's batched schedule, constant-k unrolled, "
                           "fused with the swaps (same permutation as rf xoshiro)",
                           run_batch_ref, &st->batch};
    cs[nc++] = (contender){C_LEMIRE, "lemire-ref",
                           "bench-local Fisher-Yates, one Lemire draw per swap, xoshiro256++ "
                           "in locals (unbatched reference)",
                           run_lemire_ref, &st->lemire};
#endif
#if defined(BENCH_HAVE_STD)
    cs[nc++] = (contender){C_STD, "std::shuf", "std::shuffle + std::mt19937_64 (C++, -O2)",
                           run_std, st->std_shuffle};
#endif
    cs[nc++] = (contender){C_RANDOM_R, "random_r",
                           "Fisher-Yates on glibc random_r, unbiased bound (rejection)",
                           run_random_r, &st->rd_shuffle};
    cs[nc++] = (contender){C_RAND, "rand%", "textbook loop, rand() % (i+1) (biased)",
                           run_rand_mod, NULL};
    return nc;
}

static int make_drawers(states *st, drawer *ds)
{
    int nd = 0;
    ds[nd++] = (drawer){"rf_below, handle via pointer: xoshiro256++", draw_rf_below,
                        &st->xoshiro, "rf_below, xoshiro256++, handle via pointer"};
    ds[nd++] = (drawer){"rf_below, handle via pointer: pcg64", draw_rf_below, &st->pcg, NULL};
    ds[nd++] = (drawer){"rf_below, handle via pointer: chacha20", draw_rf_below, &st->chacha,
                        NULL};
    ds[nd++] = (drawer){"rf_below, handle in a local: xoshiro256++", draw_rf_below_local,
                        &st->xoshiro, "rf_below, xoshiro256++, handle in a local"};
    ds[nd++] = (drawer){"rf_below, handle in a local: pcg64", draw_rf_below_local, &st->pcg,
                        NULL};
    ds[nd++] = (drawer){"rf_below, handle in a local: chacha20", draw_rf_below_local,
                        &st->chacha, NULL};
    ds[nd++] = (drawer){"rf_xoshiro_below (typed), state in a local", draw_xoshiro_below,
                        &st->xoshiro, "rf_xoshiro_below (typed), state in a local"};
    ds[nd++] = (drawer){"rf_pcg64_below (typed), state in a local", draw_pcg64_below,
                        &st->pcg, NULL};
    ds[nd++] = (drawer){"rf_chacha_below (typed), state in a local", draw_chacha_below,
                        &st->chacha, NULL};
#if defined(__SIZEOF_INT128__)
    ds[nd++] = (drawer){"reference: Lemire inlined, xoshiro256++ in locals", draw_lemire_ref,
                        &st->lemire_draws, NULL};
#endif
    ds[nd++] = (drawer){"rf_rng_next64, handle via pointer: xoshiro256++", draw_rf_raw,
                        &st->xoshiro, NULL};
    ds[nd++] = (drawer){"rf_rng_next64, handle via pointer: pcg64", draw_rf_raw, &st->pcg, NULL};
    ds[nd++] = (drawer){"rf_rng_next64, handle via pointer: chacha20", draw_rf_raw,
                        &st->chacha, NULL};
    ds[nd++] = (drawer){"rf_rng_next64, handle in a local: xoshiro256++", draw_rf_raw_local,
                        &st->xoshiro, NULL};
    ds[nd++] = (drawer){"rf_rng_next64, handle in a local: pcg64", draw_rf_raw_local,
                        &st->pcg, NULL};
    ds[nd++] = (drawer){"rf_rng_next64, handle in a local: chacha20", draw_rf_raw_local,
                        &st->chacha, NULL};
#if defined(BENCH_HAVE_STD)
    ds[nd++] = (drawer){"std::uniform_int_distribution, mt19937_64", draw_std_below,
                        st->std_draws, NULL};
    ds[nd++] = (drawer){"mt19937_64 raw word", draw_std_raw, st->std_draws, NULL};
#endif
    ds[nd++] = (drawer){"random_r unbiased bound (rejection)", draw_random_r_below,
                        &st->rd_draws, NULL};
    ds[nd++] = (drawer){"random_r raw 31-bit word", draw_random_r_raw, &st->rd_draws, NULL};
    return nd;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_core [--big] [--reps N] [--min-elems N] [--sizes N,N,...] "
               "[--no-draws]\n"
               "  --big          add n = 10^8 (about 0.8 GB; also env BIG=1 in bench_all.sh)\n"
               "  --reps N       repetitions per figure, median reported (default 9)\n"
               "  --min-elems N  elements shuffled per timed run at small n (default 4000000)\n"
               "  --sizes LIST   comma-separated n values (2 .. 2^31) instead of 10^3..10^7\n"
               "  --no-draws     skip the bounded-draw section\n");
}

static int parse_sizes(options *o, const char *list)
{
    o->nsizes = 0;
    while (*list != '\0' && o->nsizes < MAX_SIZES) {
        char *end;
        const double v = strtod(list, &end); /* accepts 1e6 */
        if (end == list || v < 2 || v > 2147483648.0) /* random_r and rand() reach 2^31 */
            return -1;
        o->sizes[o->nsizes++] = (size_t)v;
        list = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    return o->nsizes > 0 ? 0 : -1;
}

static int parse_options(options *o, int argc, char **argv)
{
    static const size_t defaults[] = {1000, 10000, 100000, 1000000, 10000000};
    *o = (options){.reps = 9, .min_elems = 4000000, .nsizes = 5, .draws = 1};
    memcpy(o->sizes, defaults, sizeof defaults);
    int big = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--big") == 0)
            big = 1;
        else if (strcmp(arg, "--no-draws") == 0)
            o->draws = 0;
        else if (i + 1 == argc) /* every other option takes a value */
            return -1;
        else if (strcmp(arg, "--reps") == 0)
            o->reps = atoi(argv[++i]);
        else if (strcmp(arg, "--min-elems") == 0)
            o->min_elems = (size_t)strtod(argv[++i], NULL);
        else if (strcmp(arg, "--sizes") == 0) {
            if (parse_sizes(o, argv[++i]) != 0)
                return -1;
        } else
            return -1;
    }
    if (big && o->nsizes < MAX_SIZES && find_size(o, 100000000) < 0)
        o->sizes[o->nsizes++] = 100000000;
    return o->reps >= 1 && o->reps <= MAX_REPS && o->min_elems >= 1 ? 0 : -1;
}

static void print_setup(void)
{
    printf("riffle %s benchmark (library linked: %s)\n", RF_VERSION_STRING, rf_version());
#if defined(__clang__)
    printf("bench C compiler: clang %s, flags: %s\n", __clang_version__, BENCH_CFLAGS);
#elif defined(__GNUC__)
    printf("bench C compiler: gcc %s, flags: %s\n", __VERSION__, BENCH_CFLAGS);
#endif
#if defined(BENCH_HAVE_STD)
    printf("C++ baseline compiler: %s\n", bench_std_compiler());
#else
    printf("C++ baseline: not built (no C++ compiler)\n");
#endif
    printf("method: contenders interleaved within each rep, order rotated; "
           "CLOCK_MONOTONIC; medians; preempted runs repeated\n");
#if defined(__SIZEOF_INT128__)
    printf("batch-ref gives rf_shuffle_u64's permutations and generator state: %s\n",
           batch_ref_matches() ? "yes (checked at 8 sizes)"
                               : "NO: the library's draw schedule differs from the bench's "
                                 "copy; batch-ref is only a reference point");
#endif
    printf("\n");
}

int main(int argc, char **argv)
{
    options o;
    states st;
    contender cs[MAX_CONTENDERS];
    drawer ds[MAX_DRAWERS];
    static shuffle_result res[MAX_SIZES];
    double draw_med[MAX_DRAWERS] = {0};

    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (parse_options(&o, argc, argv) != 0) {
        usage(stderr);
        return 1;
    }
    if (seed_states(&st) != 0) {
        fprintf(stderr, "bench_core: cannot seed the generators\n");
        return 1;
    }
    print_setup();
    const int nc = make_contenders(&st, cs);
    const int failed = run_shuffles(&o, cs, nc, res);
    if (!failed) {
        const int nd = o.draws ? make_drawers(&st, ds) : 0;
        if (nd > 0)
            measure_draws(&o, ds, nd, draw_med);
        print_targets(&o, cs, nc, res, ds, nd, draw_med);
        printf("\nCPU share during kept timed runs: %.1f%%; %ld runs kept, %ld of them "
               "preempted (< %.0f%% CPU) after %d tries; %ld preempted runs repeated\n",
               total_wall_ns > 0 ? 100 * total_cpu_ns / total_wall_ns : 0, runs_kept,
               runs_kept_preempted, 100 * CLEAN_SHARE, MAX_ATTEMPTS, runs_retried);
        printf("checksum %016llx\n", (unsigned long long)bench_sink);
    }
    free_states(&st);
    return failed ? 1 : 0;
}
