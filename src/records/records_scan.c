/*
 * records_scan.c -- the portable reference for finding delimiters: memchr,
 * which libc vectorises, one record at a time.
 */
#include <string.h>

#include "common/cpu.h"
#include "records_scan.h"

size_t rf_scan_ref_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                    uint64_t *out)
{
    size_t n = 0;
    const unsigned char *s = p, *end = p + len;
    const unsigned char *q;
    while (s < end && (q = memchr(s, delim, (size_t)(end - s))) != NULL) {
        out[n++] = base + (uint64_t)(q - p) + 1;
        s = q + 1;
    }
    return n;
}

rf_scan_fn_ rf_scan_best_(void)
{
#if defined(RF_HAVE_DELIMS_AVX2)
    if (rfi_cpu_avx512_vbmi2())
        return rf_scan_avx512_;
    if (rfi_cpu_avx2())
        return rf_scan_avx2_;
#endif
#if defined(RF_HAVE_SCAN_SSE2)
    return rf_scan_sse2_;
#else
    return rf_scan_ref_;
#endif
}
