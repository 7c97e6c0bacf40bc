/* records_scan.h -- finding the delimiters of a block (records.c's inner
 * loop): a portable reference and an SSE2 variant that must agree exactly
 * (tests/unit/test_records_scan.c). */
#ifndef RIFFLE_RECORDS_SCAN_H
#define RIFFLE_RECORDS_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* For every i in [0, len) with p[i] == delim, in increasing order, store
 * base + i + 1 (where the next record starts) in out; return how many.  out
 * must have room for len values. */
typedef size_t (*rf_scan_fn_)(const unsigned char *p, size_t len, unsigned char delim,
                              uint64_t base, uint64_t *out);

size_t rf_scan_ref_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                    uint64_t *out);
#if defined(__SSE2__)
#define RF_HAVE_SCAN_SSE2 1
size_t rf_scan_sse2_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                     uint64_t *out);
#endif
/* The fastest variant built. */
rf_scan_fn_ rf_scan_best_(void);

/* delims.c: how many bytes of p[0..len) equal delim, and the index of the
 * k-th (from 0) of them or len; portable references (memchr) and AVX2
 * variants, used when rfi_cpu_avx2(). */
size_t rf_count_ref_(const unsigned char *p, size_t len, unsigned char delim);
size_t rf_nth_ref_(const unsigned char *p, size_t len, unsigned char delim, size_t k);
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define RF_HAVE_DELIMS_AVX2 1
size_t rf_count_avx2_(const unsigned char *p, size_t len, unsigned char delim);
size_t rf_nth_avx2_(const unsigned char *p, size_t len, unsigned char delim, size_t k);
size_t rf_scan_avx2_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                     uint64_t *out);
/* AVX-512 (BW and VBMI2) emitting scan, used when rfi_cpu_avx512_vbmi2(). */
size_t rf_scan_avx512_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                       uint64_t *out);
#endif

#endif
