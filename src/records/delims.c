/*
 * delims.c -- counting and locating delimiter bytes (riffle_io.h,
 * "Delimiters"): the inner loops of engines that must know where records
 * are without storing an offset per record.  The loops themselves, one file
 * per SIMD variant and the portable references the tests hold them to, are
 * records_scan.h's; these take the fastest one this CPU runs.
 */
#include "records_scan.h"
#include "riffle_io.h"

RF_API size_t rf_delims_count(const void *p, size_t len, unsigned char delim)
{
    return rf_count_best_()(p, len, delim);
}

RF_API size_t rf_delims_nth(const void *p, size_t len, unsigned char delim, size_t k)
{
    return rf_nth_best_()(p, len, delim, k);
}

RF_API size_t rf_delims_find(const void *p, size_t len, unsigned char delim, uint64_t base,
                             uint64_t *out)
{
    return rf_scan_best_()(p, len, delim, base, out);
}
