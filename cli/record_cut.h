/* record_cut.h -- a stream of bytes, arriving in pieces of any size (reads
 * of a pipe or a file), cut into records at a delimiter byte.  A record cut
 * by the end of a piece is carried, in a buffer that grows to the longest
 * such record, until its delimiter arrives.
 *
 * Use:
 *     struct record_cut c;
 *     record_cut_init(&c, '\n', each, ctx);
 *     while (...read a piece...) if (record_cut_feed(&c, piece, len)) break;
 *     record_cut_end(&c);     // an unterminated last record, if any
 *     record_cut_free(&c);
 */
#ifndef RIFFLE_RECORD_CUT_H
#define RIFFLE_RECORD_CUT_H

#include <stddef.h>

/* Called with each record, without its delimiter.  Nonzero stops the
 * cutting (the value is handed back). */
typedef int record_cut_fn(void *ctx, const unsigned char *rec, size_t len);

struct record_cut {
    unsigned char delim;
    int csv;              /* CSV records: delim only outside quotes */
    int quoted;           /* private: the carried bytes leave a quote open */
    record_cut_fn *each;
    void *ctx;
    unsigned char *carry; /* private */
    size_t carry_len, carry_cap;
};

void record_cut_init(struct record_cut *c, unsigned char delim, record_cut_fn *each, void *ctx);
/* CSV records (riffle_io.h, "CSV records"): a record ends at a line feed
 * outside double quotes, every quote opening or closing them.  Before the
 * first piece; the delimiter must be '\n'. */
void record_cut_csv(struct record_cut *c);
/* Hand every complete record of what came so far and bytes[0..len) to
 * each.  Returns 0, the nonzero value of each that stopped (the rest of the
 * piece is dropped), or -1 when out of memory to carry a record. */
int record_cut_feed(struct record_cut *c, const void *bytes, size_t len);
/* Bytes carried: a record begun and not ended. */
size_t record_cut_pending(const struct record_cut *c);
/* The end of the stream: the carried bytes, if any, are its last record
 * (unterminated).  Returns 0 or the value of each. */
int record_cut_end(struct record_cut *c);
void record_cut_free(struct record_cut *c);

#endif
