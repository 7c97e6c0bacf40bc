/*
 * scan_avx2.c -- counting, locating and finding delimiters with AVX2
 * (records_scan.h), compiled for AVX2 by target attributes and called only
 * when rfi_cpu_avx2().
 *
 * Each 64-byte block becomes a 64-bit mask of delimiter positions (two AVX2
 * compares); counting is then a popcount per block and locating the k-th
 * delimiter a popcount per block up to the one that holds it: about three
 * times memchr per record (docs/BENCHMARKS_CLI.md, "Finding delimiters").
 */
#include "records_scan.h"

#if defined(RF_HAVE_DELIMS_AVX2)
#include <immintrin.h>

#include "scan_blocks.h"

#define TARGET_AVX2 __attribute__((target("avx2")))

TARGET_AVX2 static uint64_t mask64(const unsigned char *p, __m256i d)
{
    const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    const uint64_t lo = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, d));
    const uint64_t hi = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, d));
    return lo | hi << 32;
}

TARGET_AVX2 size_t rf_count_avx2_(const unsigned char *p, size_t len, unsigned char delim)
{
    const __m256i d = _mm256_set1_epi8((char)delim);
    size_t n = 0, i = 0;
    for (; i + 64 <= len; i += 64)
        n += (size_t)__builtin_popcountll(mask64(p + i, d));
    return n + rf_count_ref_(p + i, len - i, delim);
}

/* Position of the k-th (from 0) set bit of m, which has more than k. */
static unsigned select_bit(uint64_t m, size_t k)
{
    for (; k > 0; k--)
        m &= m - 1;
    return (unsigned)__builtin_ctzll(m);
}

TARGET_AVX2 size_t rf_nth_avx2_(const unsigned char *p, size_t len, unsigned char delim,
                                size_t k)
{
    const __m256i d = _mm256_set1_epi8((char)delim);
    size_t i = 0;
    for (; i + 64 <= len; i += 64) {
        const uint64_t m = mask64(p + i, d);
        const size_t c = (size_t)__builtin_popcountll(m);
        if (c > k)
            return i + select_bit(m, k);
        k -= c;
    }
    return i + rf_nth_ref_(p + i, len - i, delim, k);
}

/* AVX2 masks: a block's positions are stored without a branch per
 * delimiter: four stores whatever the count (a ~50-byte record gives one or
 * two per block, and a branch on that count mispredicts), the count added
 * after: faster than a loop per bit (docs/BENCHMARKS_CLI.md). */
TARGET_AVX2 static inline __attribute__((always_inline)) size_t
emit_avx2(const unsigned char *block, unsigned char delim, uint64_t at, uint64_t *o)
{
    uint64_t m = mask64(block, _mm256_set1_epi8((char)delim));
    const size_t c = (size_t)__builtin_popcountll(m);
    for (size_t j = 0; j < 4; j++) { /* ctz of 0 avoided by the top bit */
        o[j] = at + (uint64_t)__builtin_ctzll(m | (uint64_t)1 << 63);
        m &= m - 1;
    }
    for (size_t j = 4; j < c; j++) {
        o[j] = at + (uint64_t)__builtin_ctzll(m);
        m &= m - 1;
    }
    return c;
}

TARGET_AVX2 size_t rf_scan_avx2_(const unsigned char *p, size_t len, unsigned char delim,
                                 uint64_t base, uint64_t *out)
{
    return scan_blocks(p, len, delim, base, out, emit_avx2);
}
#else
/* ISO C forbids an empty translation unit. */
typedef int rf_scan_avx2_unused_;
#endif
