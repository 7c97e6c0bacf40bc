/*
 * delims.c -- counting and locating delimiter bytes (riffle_io.h,
 * "Delimiters"): the inner loops of engines that must know where records
 * are without storing an offset per record.
 *
 * Each 64-byte block becomes a 64-bit mask of delimiter positions (two AVX2
 * compares, or four SSE2 ones on the x86-64 baseline); counting is then a
 * popcount per block and locating the k-th delimiter a popcount per block up
 * to the one that holds it, several times faster than memchr per record
 * (docs/BENCHMARKS_CLI.md).  The portable versions (memchr) are the
 * reference the tests hold the SIMD ones to (tests/unit/test_records_scan.c).
 */
#include <string.h>

#include "common/cpu.h"
#include "records_scan.h"
#include "riffle_io.h"

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86 1
#include <immintrin.h>
#define TARGET_AVX2 __attribute__((target("avx2")))
#define TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt")))
#endif

size_t rf_count_ref_(const unsigned char *p, size_t len, unsigned char delim)
{
    size_t n = 0;
    const unsigned char *s = p, *end = p + len, *q;
    while (s < end && (q = memchr(s, delim, (size_t)(end - s))) != NULL) {
        n++;
        s = q + 1;
    }
    return n;
}

size_t rf_nth_ref_(const unsigned char *p, size_t len, unsigned char delim, size_t k)
{
    const unsigned char *s = p, *end = p + len, *q;
    while (s < end && (q = memchr(s, delim, (size_t)(end - s))) != NULL) {
        if (k-- == 0)
            return (size_t)(q - p);
        s = q + 1;
    }
    return len;
}

#ifdef HAVE_X86
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
/* Stores the positions of one 64-byte block's delimiters (at + index) at o,
 * possibly followed by up to 8 more values of no meaning; returns how many. */
typedef size_t emit_fn(const unsigned char *block, unsigned char delim, uint64_t at,
                       uint64_t *o);

/* The emitting scan (records_scan.h) of both SIMD variants: whole 64-byte
 * blocks through `emit`, whose stores may run past the last position, so
 * they go to a local buffer of 16 blocks that is copied out exactly; the
 * tail by the reference.  Always inlined with a constant `emit`. */
static inline __attribute__((always_inline)) size_t
scan_blocks(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
            uint64_t *out, emit_fn *emit)
{
    enum { BLOCKS = 16 };
    uint64_t tmp[BLOCKS * 64 + 8];
    size_t n = 0, i = 0;
    while (len - i >= 64) {
        const size_t span = len - i >= BLOCKS * 64 ? BLOCKS * 64 : (len - i) / 64 * 64;
        size_t t = 0;
        for (size_t k = 0; k < span; k += 64)
            t += emit(p + i + k, delim, base + i + k + 1, tmp + t);
        memcpy(out + n, tmp, t * sizeof *out);
        n += t;
        i += span;
    }
    return n + rf_scan_ref_(p + i, len - i, delim, base + i, out + n);
}

/* AVX2 masks: a block's positions are stored without a branch per
 * delimiter: four stores whatever the count (a ~50-byte record gives one or
 * two per block, and a branch on that count mispredicts), the count added
 * after.  Faster than a loop per bit (docs/BENCHMARKS_CLI.md). */
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

/* AVX-512 masks: a block's delimiter positions are packed into bytes with
 * one VPCOMPRESSB (VBMI2) of the bytes 0..63, the first eight widened and
 * stored at once whatever the count; a block with more than eight (short
 * records) takes one more compress per eight.  Faster than the AVX2 form
 * (docs/BENCHMARKS_CLI.md). */
TARGET_AVX512 static inline __attribute__((always_inline)) size_t
emit_avx512(const unsigned char *block, unsigned char delim, uint64_t at, uint64_t *o)
{
    const __m512i iota = _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47, 46, 45, 44, 43, 42,
        41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20,
        19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __mmask64 m =
        _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(block), _mm512_set1_epi8((char)delim));
    const size_t c = (size_t)__builtin_popcountll(m);
    const __m512i base = _mm512_set1_epi64((long long)at);
    __m512i pos = _mm512_maskz_compress_epi8(m, iota);
    for (size_t g = 0;;) {
        const __m512i wide = _mm512_cvtepu8_epi64(_mm512_castsi512_si128(pos));
        _mm512_storeu_si512(o + g, _mm512_add_epi64(wide, base));
        if ((g += 8) >= c)
            return c;
        pos = _mm512_maskz_compress_epi8(~(uint64_t)0xFF, pos); /* next eight */
    }
}

TARGET_AVX512 size_t rf_scan_avx512_(const unsigned char *p, size_t len, unsigned char delim,
                                     uint64_t base, uint64_t *out)
{
    return scan_blocks(p, len, delim, base, out, emit_avx512);
}
#endif

RF_API size_t rf_delims_count(const void *p, size_t len, unsigned char delim)
{
#ifdef HAVE_X86
    if (rfi_cpu_avx2())
        return rf_count_avx2_(p, len, delim);
#endif
    return rf_count_ref_(p, len, delim);
}

RF_API size_t rf_delims_nth(const void *p, size_t len, unsigned char delim, size_t k)
{
#ifdef HAVE_X86
    if (rfi_cpu_avx2())
        return rf_nth_avx2_(p, len, delim, k);
#endif
    return rf_nth_ref_(p, len, delim, k);
}

RF_API size_t rf_delims_find(const void *p, size_t len, unsigned char delim, uint64_t base,
                             uint64_t *out)
{
    return rf_scan_best_()(p, len, delim, base, out);
}
