/* records_scan.h -- finding, counting and locating the delimiters of a
 * block: the inner loops of records.c (rf_records_index) and of delims.c
 * (the public rf_delims_*).  One file per variant, every variant agreeing
 * exactly with the portable reference (tests/unit/test_records_scan.c):
 *
 *   scan_ref.c       the portable references (memchr), always built;
 *   scan_sse2.c      the emitting scan with SSE2 (the x86-64 baseline);
 *   scan_avx2.c      counting, locating and the emitting scan with AVX2;
 *   scan_avx512.c    the emitting scan with AVX-512 (BW and VBMI2);
 *   scan_dispatch.c  the fastest variant this CPU runs, picked at run time
 *                    (common/cpu.h).
 *
 * Calls go one way: records.c and delims.c -> scan_dispatch.c -> a variant
 * -> scan_ref.c (the tails). */
#ifndef RIFFLE_RECORDS_SCAN_H
#define RIFFLE_RECORDS_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* For every i in [0, len) with p[i] == delim, in increasing order, store
 * base + i + 1 (where the next record starts) in out; return how many.  out
 * must have room for len values. */
typedef size_t (*rf_scan_fn_)(const unsigned char *p, size_t len, unsigned char delim,
                              uint64_t base, uint64_t *out);
/* How many bytes of p[0..len) equal delim. */
typedef size_t (*rf_count_fn_)(const unsigned char *p, size_t len, unsigned char delim);
/* The index of the k-th (from 0) byte of p[0..len) equal to delim, or len. */
typedef size_t (*rf_nth_fn_)(const unsigned char *p, size_t len, unsigned char delim,
                             size_t k);

/* scan_ref.c */
size_t rf_scan_ref_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                    uint64_t *out);
size_t rf_count_ref_(const unsigned char *p, size_t len, unsigned char delim);
size_t rf_nth_ref_(const unsigned char *p, size_t len, unsigned char delim, size_t k);

/* scan_sse2.c */
#if defined(__SSE2__)
#define RF_HAVE_SCAN_SSE2 1
size_t rf_scan_sse2_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                     uint64_t *out);
#endif

/* scan_avx2.c, scan_avx512.c: built on x86-64 by target attributes, called
 * only when rfi_cpu_avx2() and rfi_cpu_avx512_vbmi2() respectively. */
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define RF_HAVE_DELIMS_AVX2 1
size_t rf_count_avx2_(const unsigned char *p, size_t len, unsigned char delim);
size_t rf_nth_avx2_(const unsigned char *p, size_t len, unsigned char delim, size_t k);
size_t rf_scan_avx2_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                     uint64_t *out);
size_t rf_scan_avx512_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                       uint64_t *out);
#endif

/* scan_dispatch.c: the fastest variant built that this CPU runs. */
rf_scan_fn_ rf_scan_best_(void);
rf_count_fn_ rf_count_best_(void);
rf_nth_fn_ rf_nth_best_(void);

#endif
