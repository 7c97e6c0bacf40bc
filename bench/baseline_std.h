/*
 * baseline_std.h -- the C++ standard-library baseline, callable from C.
 *
 * bench_core.c compares riffle with std::shuffle driven by std::mt19937_64, the
 * shuffle a C++ programmer reaches for.  baseline_std.cpp implements these
 * functions with g++ -O2, the flags the speed targets are defined with (the
 * baseline is flag-sensitive: -O3 makes std::shuffle faster; figures in
 * docs/BENCHMARKS.md).  Built only when a
 * C++ compiler is present; bench_core.c is then compiled with BENCH_HAVE_STD.
 * These names are bench-internal: they are never part of libriffle.
 */
#ifndef BENCH_BASELINE_STD_H
#define BENCH_BASELINE_STD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An std::mt19937_64 seeded with `seed`; NULL if out of memory. */
typedef struct bench_std_rng bench_std_rng;
bench_std_rng *bench_std_new(uint64_t seed);
void bench_std_free(bench_std_rng *r);

/* std::shuffle(a, a + n, engine). */
void bench_std_shuffle_u64(bench_std_rng *r, uint64_t *a, size_t n);

/* `count` raw engine words, XOR-folded (so the loop cannot be dropped). */
uint64_t bench_std_words(bench_std_rng *r, size_t count);

/* `count` draws of std::uniform_int_distribution<uint64_t>(0, b - 1) for
 * b = count, count - 1, ..., 1 (the bounds a shuffle draws), summed. */
uint64_t bench_std_below(bench_std_rng *r, size_t count);

/* The compiler and flags baseline_std.cpp was built with, for the report. */
const char *bench_std_compiler(void);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_BASELINE_STD_H */
