/*
 * csv.c -- CSV records (riffle_io.h, "CSV records"): the public scans over
 * the fastest variant of csv_scan.h.
 */
#include "csv_scan.h"
#include "records_scan.h"
#include "riffle_io.h"

RF_API size_t rf_csv_count(const void *p, size_t len, int *quoted)
{
    struct rf_csv_state_ s = {*quoted != 0, 0, 0};
    const size_t n = rf_csv_best_()(p, len, 0, NULL, SIZE_MAX, &s);
    *quoted = s.quoted;
    return n;
}

RF_API size_t rf_csv_nth(const void *p, size_t len, size_t k)
{
    if (k == SIZE_MAX)
        return len;
    struct rf_csv_state_ s = {0, 0, 0};
    const size_t n = rf_csv_best_()(p, len, 0, NULL, k + 1, &s);
    return n == k + 1 ? s.stop - 1 : len;
}

RF_API size_t rf_csv_find(const void *p, size_t len, uint64_t base, uint64_t *out)
{
    struct rf_csv_state_ s = {0, 0, 0};
    return rf_csv_best_()(p, len, base, out, SIZE_MAX, &s);
}

RF_API size_t rf_csv_whole(const void *p, size_t len, int *quoted)
{
    struct rf_csv_state_ s = {0, 0, 0};
    (void)rf_csv_best_()(p, len, 0, NULL, SIZE_MAX, &s);
    if (quoted)
        *quoted = s.quoted;
    return s.last;
}

RF_API uint64_t rf_csv_open_quote_line(const void *p, size_t len)
{
    int quoted = 0;
    const size_t start = rf_csv_whole(p, len, &quoted);
    if (!quoted)
        return 0;
    return (uint64_t)rf_delims_count(p, start, '\n') + 1;
}
