/*
 * scan_sse2.c -- finding delimiters 64 bytes at a time with SSE2 (the
 * x86-64 baseline): four 16-byte compares give a 64-bit mask of delimiter
 * positions, and each set bit is one record start.  memchr per record pays a
 * call and a restart for every ~50-byte line; this pays one pass
 * (docs/BENCHMARKS_CLI.md compares the two).
 */
#include "records_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>

static size_t emit(uint64_t mask, uint64_t at, uint64_t *out)
{
    size_t n = 0;
    while (mask) {
        out[n++] = at + (uint64_t)__builtin_ctzll(mask) + 1;
        mask &= mask - 1;
    }
    return n;
}

size_t rf_scan_sse2_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                     uint64_t *out)
{
    const __m128i d = _mm_set1_epi8((char)delim);
    size_t n = 0, i = 0;
    for (; i + 64 <= len; i += 64) {
        const __m128i *v = (const __m128i *)(const void *)(p + i);
        const uint64_t m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v), d));
        const uint64_t m1 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 1), d));
        const uint64_t m2 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 2), d));
        const uint64_t m3 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(v + 3), d));
        n += emit(m0 | m1 << 16 | m2 << 32 | m3 << 48, base + i, out + n);
    }
    for (; i < len; i++)
        if (p[i] == delim)
            out[n++] = base + i + 1;
    return n;
}
#else
/* ISO C forbids an empty translation unit. */
typedef int rf_scan_sse2_unused_;
#endif
