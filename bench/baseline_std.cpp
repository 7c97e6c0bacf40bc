// baseline_std.cpp -- std::shuffle + std::mt19937_64, the C++ baseline that
// bench_core.c measures riffle against (see baseline_std.h).
//
// Nothing here is tuned: it is what a C++ programmer writes.  Note that
// libstdc++ (GCC >= 11, bits/stl_algo.h) already draws two swap indices from one
// 64-bit engine word when the range allows, and std::uniform_int_distribution
// uses Lemire's nearly-divisionless method (bits/uniform_int_dist.h), so this is
// a strong baseline, not a straw man.
#include "baseline_std.h"

#include <algorithm>
#include <new>
#include <random>

#ifndef BENCH_CXXFLAGS
#define BENCH_CXXFLAGS "?"
#endif

struct bench_std_rng {
    std::mt19937_64 engine;
};

extern "C" bench_std_rng *bench_std_new(uint64_t seed)
{
    return new (std::nothrow) bench_std_rng{std::mt19937_64(seed)};
}

extern "C" void bench_std_free(bench_std_rng *r)
{
    delete r;
}

extern "C" void bench_std_shuffle_u64(bench_std_rng *r, uint64_t *a, size_t n)
{
    std::shuffle(a, a + n, r->engine);
}

extern "C" uint64_t bench_std_words(bench_std_rng *r, size_t count)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < count; i++)
        acc ^= r->engine();
    return acc;
}

extern "C" uint64_t bench_std_below(bench_std_rng *r, size_t count)
{
    uint64_t acc = 0;
    for (size_t b = count; b > 0; b--) {
        std::uniform_int_distribution<uint64_t> dist(0, b - 1);
        acc += dist(r->engine);
    }
    return acc;
}

extern "C" const char *bench_std_compiler(void)
{
#if defined(__clang__)
    return "clang " __clang_version__ ", flags: " BENCH_CXXFLAGS;
#elif defined(__GNUC__)
    return "g++ " __VERSION__ ", flags: " BENCH_CXXFLAGS;
#else
    return "unknown C++ compiler, flags: " BENCH_CXXFLAGS;
#endif
}
