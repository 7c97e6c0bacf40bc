/* walk.c -- the record walk the streaming engines share (engine_internal.h,
 * walk.h): every record of a reader, in input order, with its key.
 *
 * The reader's blocks are cut into chunks of about 64 KiB of whole records;
 * a chunk is counted with rf_delims_count while it is in the cache and gets
 * its keys in one go (walk_keys.h, drawn ahead on a helper thread).  Nothing
 * is done per record unless the engine asks: rfi_engine_head looks at the keys
 * and locates only the few records it keeps; rfi_engine_walk locates them all
 * with rf_delims_find.  One memchr per record was more than half of a
 * -n 1000 run (head.c); for the external engine, whose bucket writes
 * dominate, the walk is a few percent either way. */
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "engine_internal.h"
#include "reader.h"
#include "walk.h"
#include "walk_keys.h"

/* Bytes per chunk: small enough that counting, keying and locating a chunk
 * read it from the L1/L2 cache, large enough that the per-chunk calls do not
 * show (measured with -n 1000 on a 1 GB file: 16, 64 and 256 KiB cost the
 * same CPU time, 1 MiB more; docs/BENCHMARKS_CLI.md, "Engine"). */
#define CHUNK ((size_t)64 << 10)

static int append(unsigned char **buf, size_t *len, const unsigned char *p, size_t n)
{
    unsigned char *b = realloc(*buf, *len + n);
    if (!b)
        return -1;
    memcpy(b + *len, p, n);
    *buf = b;
    *len += n;
    return 0;
}

/* The --header records at the front of a block go to *hbuf: all of the
 * block, or up to the end of the last header record. */
static int take_header(struct bounds b, uint64_t *left, const unsigned char **data,
                       size_t *len, unsigned char **hbuf, size_t *hlen)
{
    const size_t k = *left - 1 < SIZE_MAX ? (size_t)(*left - 1) : SIZE_MAX;
    const size_t at = rfi_bounds_nth(b, *data, *len, k);
    size_t n = *len;
    if (at < *len) {
        n = at + 1;
        *left = 0;
    } else {
        *left -= rfi_bounds_count(b, *data, *len);
    }
    if (append(hbuf, hlen, *data, n) != 0)
        return 1;
    *data += n;
    *len -= n;
    return 0;
}

/* The length of the next chunk of p[0..len) (which ends with a delimiter):
 * whole records, about CHUNK bytes, at least one record. */
static size_t chunk_len(const unsigned char *p, size_t len, struct bounds b)
{
    if (len <= CHUNK)
        return len;
    const size_t w = rfi_bounds_whole(b, p, CHUNK);
    if (w)
        return w;
    return rfi_bounds_nth(b, p, len, 0) + 1;
}

/* Keys on a helper thread (walk_keys.h) when there is a second thread and
 * its 2 MiB of buffers are at most a sixteenth of the memory budget. */
static int helper_pays(const struct engine *e)
{
    return e->threads >= 2 && e->budget >= ((uint64_t)32 << 20);
}

/* The records of one reader block, chunk by chunk. */
static int walk_block(struct engine *e, struct walk_keys *wk, struct reader *rd,
                      const unsigned char *p, size_t len, const struct spilled *out,
                      engine_chunk_fn fn, void *ctx)
{
    const struct bounds b = {e->csv, e->delim};
    while (len > 0) {
        size_t c = chunk_len(p, len, b);
        size_t n = rfi_bounds_count(b, p, c);
        if (wk->avail == 0) {
            const rf_status st = rfi_walk_keys_more(wk, n);
            if (st != RF_OK)
                return rfi_engine_status(e->err, st);
        }
        if (n > wk->avail) { /* the keys at hand end first: a shorter chunk */
            c = rfi_bounds_nth(b, p, c, wk->avail - 1) + 1;
            n = wk->avail;
        }
        const struct walk_chunk ch = {wk->next, p, c, n, wk->keys, out};
        if (fn(ctx, &ch) != 0)
            return 1;
        rfi_reader_feed(rd, p, c); /* the input's hash, from the cache too */
        rfi_walk_keys_take(wk, n);
        p += c;
        len -= c;
    }
    return 0;
}

int rfi_engine_walk_chunks(struct engine *e, struct reader *rd, engine_chunk_fn fn, void *ctx,
                       unsigned char **hbuf, size_t *hlen)
{
    struct walk_keys wk;
    const rf_status st = rfi_walk_keys_init(&wk, &e->order, helper_pays(e));
    uint64_t header_left = e->header;
    const unsigned char *data;
    size_t len;
    int got = 1;
    /* The header records go to the sink's begin in one piece: they are
     * never put out of line. */
    const size_t giant = rd->giant;
    const struct bounds hb = {e->csv, e->delim};
    if (header_left > 0)
        rd->giant = 0;
    if (st != RF_OK) {
        rfi_walk_keys_free(&wk);
        return rfi_engine_status(e->err, st);
    }
    while ((got = rfi_reader_next(rd, &data, &len)) > 0) {
        const unsigned char *block = data;
        if (header_left > 0 && take_header(hb, &header_left, &data, &len, hbuf, hlen)) {
            rfi_engine_nomem(e->err);
            break;
        }
        rfi_reader_feed(rd, block, (size_t)(data - block));
        if (header_left == 0)
            rd->giant = giant;
        if (walk_block(e, &wk, rd, data, len, got == 2 ? &rd->last : NULL, fn, ctx) != 0)
            break;
        rfi_engine_progress(e, rd->bytes);
    }
    rfi_walk_keys_free(&wk);
    return got != 0;
}

/* rfi_engine_walk: every record of a chunk located, then handed over. */
struct each {
    engine_record_fn fn;
    void *ctx;
    struct bounds b;
    uint64_t *ends; /* CHUNK entries: a chunk has at most CHUNK records */
};

static int each_record(void *ctx, const struct walk_chunk *c)
{
    const struct each *w = ctx;
    const size_t n = rfi_bounds_find(w->b, c->data, c->len, 0, w->ends);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        if (w->fn(w->ctx, c->keys[i], c->data + at, (size_t)w->ends[i] - at, c->out) != 0)
            return 1;
        at = (size_t)w->ends[i];
    }
    return 0;
}

int rfi_engine_walk(struct engine *e, struct reader *rd, engine_record_fn fn, void *ctx,
                unsigned char **hbuf, size_t *hlen)
{
    struct each w = {fn, ctx, {e->csv, e->delim}, malloc(CHUNK * sizeof *w.ends)};
    if (!w.ends)
        return rfi_engine_nomem(e->err);
    const int status = rfi_engine_walk_chunks(e, rd, each_record, &w, hbuf, hlen);
    free(w.ends);
    return status;
}
