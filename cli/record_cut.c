/* record_cut.c -- records cut from a stream of pieces (record_cut.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record_cut.h"

void record_cut_init(struct record_cut *c, unsigned char delim, record_cut_fn *each, void *ctx)
{
    memset(c, 0, sizeof *c);
    c->delim = delim;
    c->each = each;
    c->ctx = ctx;
}

void record_cut_csv(struct record_cut *c)
{
    c->csv = 1;
}

/* The line feed outside quotes that ends the record in b[0..end), c->quoted
 * saying whether b[0] is inside quotes; NULL when none, c->quoted then set
 * for the byte after end.  Every quote toggles, as the library's CSV scan
 * reads them (src/records/csv_ref.c): one memchr for the next quote and one
 * for a line feed before it, so each byte is read at most twice. */
static const unsigned char *csv_end(struct record_cut *c, const unsigned char *b,
                                    const unsigned char *end)
{
    while (b < end) {
        const unsigned char *q = memchr(b, '"', (size_t)(end - b));
        if (!c->quoted) {
            const unsigned char *lf = memchr(b, '\n', (size_t)((q ? q : end) - b));
            if (lf)
                return lf;
        }
        if (!q)
            return NULL;
        c->quoted = !c->quoted;
        b = q + 1;
    }
    return NULL;
}

static const unsigned char *record_end(struct record_cut *c, const unsigned char *b,
                                       const unsigned char *end)
{
    if (c->csv)
        return csv_end(c, b, end);
    return memchr(b, c->delim, (size_t)(end - b));
}

/* Append b[0..len) to the carried bytes.  0 or -1. */
static int carry(struct record_cut *c, const unsigned char *b, size_t len)
{
    if (len > c->carry_cap - c->carry_len) {
        size_t cap = c->carry_cap ? c->carry_cap : 4096;
        while (cap - c->carry_len < len) {
            if (cap > SIZE_MAX / 2)
                return -1;
            cap *= 2;
        }
        unsigned char *p = realloc(c->carry, cap);
        if (!p)
            return -1;
        c->carry = p;
        c->carry_cap = cap;
    }
    memcpy(c->carry + c->carry_len, b, len);
    c->carry_len += len;
    return 0;
}

int record_cut_feed(struct record_cut *c, const void *bytes, size_t len)
{
    const unsigned char *b = bytes, *end = b + len;
    while (b < end) {
        const unsigned char *d = record_end(c, b, end);
        if (!d)
            return carry(c, b, (size_t)(end - b));
        int r;
        if (c->carry_len == 0) {
            r = c->each(c->ctx, b, (size_t)(d - b));
        } else {
            if (carry(c, b, (size_t)(d - b)) != 0)
                return -1;
            r = c->each(c->ctx, c->carry, c->carry_len);
            c->carry_len = 0;
        }
        if (r)
            return r;
        b = d + 1;
    }
    return 0;
}

size_t record_cut_pending(const struct record_cut *c)
{
    return c->carry_len;
}

int record_cut_end(struct record_cut *c)
{
    if (c->carry_len == 0)
        return 0;
    const int r = c->each(c->ctx, c->carry, c->carry_len);
    c->carry_len = 0;
    c->quoted = 0;
    return r;
}

void record_cut_free(struct record_cut *c)
{
    free(c->carry);
    c->carry = NULL;
    c->carry_len = c->carry_cap = 0;
}
