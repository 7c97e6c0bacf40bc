/* csv_scan.h -- finding the ends of CSV records (RFC 4180, section 2): a
 * line feed ends a record unless it lies inside double quotes, and every
 * double quote opens or closes a quoted section (an escaped quote, "",
 * closes and reopens at once).  The inner loop of csv.c (the public
 * rf_csv_* of riffle_io.h) and of the CSV paths of records.c and writer.c.
 * One file per variant, each agreeing exactly with the portable reference
 * (tests/unit/test_csv_scan.c):
 *
 *   csv_ref.c        the portable reference (memchr skipping), always built;
 *   csv_avx2.c       64 bytes a block with AVX2: the quote mask's prefix
 *                    XOR gives the bytes inside quotes (as simdjson finds
 *                    the bytes inside strings: Langdale & Lemire, "Parsing
 *                    gigabytes of JSON per second", VLDB J. 2019, 3.1.1);
 *   scan_dispatch.c  the fastest variant this CPU runs (rf_csv_best_). */
#ifndef RIFFLE_CSV_SCAN_H
#define RIFFLE_CSV_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* The state of a scan: in, whether p[0] is inside quotes; out, whether the
 * byte after the last one examined is, where the scan stopped, and where
 * the last record end it found was. */
struct rf_csv_state_ {
    int quoted;  /* in and out */
    size_t stop; /* out: len, or just after the limit-th end */
    size_t last; /* out: index just after the last end found, 0 if none */
};

/* For every line feed p[i] outside quotes (a record end), in order, store
 * base + i + 1 in out (when out is not NULL) and count it; stop after
 * `limit` of them (limit >= 1).  Returns how many were found. */
typedef size_t (*rf_csv_fn_)(const unsigned char *p, size_t len, uint64_t base, uint64_t *out,
                             size_t limit, struct rf_csv_state_ *s);

size_t rf_csv_scan_ref_(const unsigned char *p, size_t len, uint64_t base, uint64_t *out,
                        size_t limit, struct rf_csv_state_ *s);

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define RF_HAVE_CSV_AVX2 1
size_t rf_csv_scan_avx2_(const unsigned char *p, size_t len, uint64_t base, uint64_t *out,
                         size_t limit, struct rf_csv_state_ *s);
#endif

/* scan_dispatch.c */
rf_csv_fn_ rf_csv_best_(void);

#endif
