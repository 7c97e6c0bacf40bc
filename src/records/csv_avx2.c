/*
 * csv_avx2.c -- finding CSV record ends with AVX2 (csv_scan.h), compiled
 * for AVX2 by target attributes and called only when rfi_cpu_avx2().
 *
 * A 64-byte block gives two masks, its quotes and its line feeds.  The
 * prefix XOR of the quote mask (bit i: the parity of the quotes at 0..i),
 * flipped when the block starts inside quotes, is the mask of bytes inside
 * quotes; a line feed ends a record where that bit is clear, and the top
 * bit carries into the next block (Langdale & Lemire, VLDB J. 2019, 3.1.1,
 * where a carry-less multiplication by all ones gives the same XOR; six
 * shifts do here, on any x86-64 with AVX2).  No branch depends on the
 * data but the one per block that has a record end.
 */
#include "csv_scan.h"

#if defined(RF_HAVE_CSV_AVX2)
#include <immintrin.h>

#define TARGET_AVX2 __attribute__((target("avx2")))

TARGET_AVX2 static inline uint64_t eq64(const unsigned char *p, unsigned char c)
{
    const __m256i d = _mm256_set1_epi8((char)c);
    const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    const uint64_t lo = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, d));
    const uint64_t hi = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, d));
    return lo | hi << 32;
}

static inline uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

TARGET_AVX2 size_t rf_csv_scan_avx2_(const unsigned char *p, size_t len, uint64_t base,
                                     uint64_t *out, size_t limit, struct rf_csv_state_ *s)
{
    uint64_t carry = s->quoted ? ~(uint64_t)0 : 0;
    size_t n = 0, i = 0, last = 0;
    for (; i + 64 <= len; i += 64) {
        const uint64_t inside = prefix_xor(eq64(p + i, '"')) ^ carry;
        uint64_t ends = eq64(p + i, '\n') & ~inside;
        carry = (uint64_t)0 - (inside >> 63);
        if (!ends)
            continue;
        for (; ends; ends &= ends - 1) {
            const size_t at = i + (size_t)__builtin_ctzll(ends) + 1;
            if (out)
                out[n] = base + at;
            last = at;
            if (++n == limit) {
                s->quoted = 0;
                s->stop = at;
                s->last = at;
                return n;
            }
        }
    }
    s->quoted = carry != 0;
    const size_t m = rf_csv_scan_ref_(p + i, len - i, base + i, out ? out + n : NULL, limit - n, s);
    s->stop += i;
    s->last = s->last ? s->last + i : last;
    return n + m;
}
#else
/* ISO C forbids an empty translation unit. */
typedef int rf_csv_avx2_unused_;
#endif
