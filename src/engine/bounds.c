/* bounds.c -- where the engine's records end (bounds.h): the records
 * layer's delimiter scans, or its CSV scans. */
#include <string.h>

#include "bounds.h"
#include "records/csv_scan.h"
#include "riffle_io.h"

size_t rfi_bounds_count(struct bounds b, const unsigned char *p, size_t len)
{
    int quoted = 0;
    return b.csv ? rf_csv_count(p, len, &quoted) : rf_delims_count(p, len, b.delim);
}

size_t rfi_bounds_nth(struct bounds b, const unsigned char *p, size_t len, size_t k)
{
    return b.csv ? rf_csv_nth(p, len, k) : rf_delims_nth(p, len, b.delim, k);
}

size_t rfi_bounds_nth_from(struct bounds b, const unsigned char *p, size_t len, size_t k,
                           int quoted)
{
    if (!b.csv || !quoted)
        return rfi_bounds_nth(b, p, len, k);
    if (k == SIZE_MAX)
        return len;
    struct rf_csv_state_ s = {1, 0, 0};
    const size_t n = rf_csv_best_()(p, len, 0, NULL, k + 1, &s);
    return n == k + 1 ? s.stop - 1 : len;
}

size_t rfi_bounds_find(struct bounds b, const unsigned char *p, size_t len, uint64_t base,
                       uint64_t *out)
{
    return b.csv ? rf_csv_find(p, len, base, out) : rf_delims_find(p, len, b.delim, base, out);
}

size_t rfi_bounds_whole(struct bounds b, const unsigned char *p, size_t len)
{
    if (b.csv)
        return rf_csv_whole(p, len, NULL);
    const unsigned char *q = memrchr(p, b.delim, len);
    return q ? (size_t)(q - p) + 1 : 0;
}
