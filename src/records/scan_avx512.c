/*
 * scan_avx512.c -- finding delimiters with AVX-512 BW and VBMI2
 * (records_scan.h), compiled for them by a target attribute and called only
 * when rfi_cpu_avx512_vbmi2().
 */
#include "records_scan.h"

#if defined(RF_HAVE_DELIMS_AVX2)
#include <immintrin.h>

#include "scan_blocks.h"

#define TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi2,popcnt")))

/* AVX-512 masks: a block's delimiter positions are packed into bytes with
 * one VPCOMPRESSB (VBMI2) of the bytes 0..63, the first eight widened and
 * stored at once whatever the count; a block with more than eight (short
 * records) takes one more compress per eight: faster than AVX2 where the
 * CPU has it (docs/BENCHMARKS_CLI.md). */
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
#else
/* ISO C forbids an empty translation unit. */
typedef int rf_scan_avx512_unused_;
#endif
