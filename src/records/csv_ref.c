/*
 * csv_ref.c -- the portable reference for finding CSV record ends
 * (csv_scan.h).  Outside quotes, the next quote is found once with memchr
 * and the line feeds before it with memchr; inside quotes, only the closing
 * quote is searched for.  Each byte is read by at most two memchr calls,
 * however the quotes and line feeds fall.  Always built; csv_avx2.c is held
 * to it and finishes its tails with it.
 */
#include <string.h>

#include "csv_scan.h"

size_t rf_csv_scan_ref_(const unsigned char *p, size_t len, uint64_t base, uint64_t *out,
                        size_t limit, struct rf_csv_state_ *s)
{
    size_t n = 0, i = 0, quote = 0; /* quote: the next '"' at or after i, once known */
    int quoted = s->quoted, known = 0;
    s->last = 0;
    while (i < len && n < limit) {
        if (quoted) {
            const unsigned char *q = memchr(p + i, '"', len - i);
            i = q ? (size_t)(q - p) + 1 : len;
            quoted = q == NULL;
            continue;
        }
        if (!known || quote < i) {
            const unsigned char *q = memchr(p + i, '"', len - i);
            quote = q ? (size_t)(q - p) : len;
            known = 1;
        }
        const unsigned char *lf = memchr(p + i, '\n', quote - i);
        if (lf) {
            i = (size_t)(lf - p) + 1;
            if (out)
                out[n] = base + i;
            n++;
            s->last = i;
        } else if (quote < len) {
            i = quote + 1;
            quoted = 1;
        } else {
            i = len;
        }
    }
    s->quoted = quoted;
    s->stop = i;
    return n;
}
