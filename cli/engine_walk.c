/* engine_walk.c -- the record walk the streaming engines share (engine.h):
 * every record of a reader, in input order, with its key. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "progress.h"
#include "reader.h"

/* Keys are drawn in batches of this many. */
#define KEY_BATCH 512

static int append(unsigned char **buf, size_t *len, const unsigned char *p, size_t n)
{
    unsigned char *b = realloc(*buf, *len + n);
    if (!b) {
        cli_error("memory exhausted");
        return 1;
    }
    memcpy(b + *len, p, n);
    *buf = b;
    *len += n;
    return 0;
}

int engine_walk(struct engine *e, struct reader *rd, engine_record_fn fn, void *ctx,
                unsigned char **hbuf, size_t *hlen)
{
    rf_keyed_stream ks;
    rf_keyed keys[KEY_BATCH];
    size_t nkeys = 0, used = 0;
    uint64_t header_left = e->header;
    if (rf_keyed_stream_init(&ks, &e->order, 0) != RF_OK) {
        cli_error("cannot shuffle: %s", rf_strerror(RF_ECRYPTO));
        return 1;
    }
    const unsigned char *data;
    size_t len;
    int got;
    while ((got = reader_next(rd, &data, &len)) > 0) {
        for (const unsigned char *p = data, *end = data + len; p < end;) {
            const unsigned char *q = memchr(p, e->delim, (size_t)(end - p));
            const size_t rl = (size_t)(q - p) + 1;
            if (header_left > 0) { /* --header records, kept in place */
                if (append(hbuf, hlen, p, rl) != 0)
                    return 1;
                header_left--;
            } else {
                if (used == nkeys) {
                    if (rf_keyed_stream_fill(&ks, keys, KEY_BATCH) != RF_OK) {
                        cli_error("cannot shuffle: %s", rf_strerror(RF_ECRYPTO));
                        return 1;
                    }
                    nkeys = KEY_BATCH;
                    used = 0;
                }
                if (fn(ctx, keys[used++].key, p, rl) != 0)
                    return 1;
            }
            p = q + 1;
        }
        if (e->progress)
            progress_update(e->progress, rd->bytes);
    }
    return got < 0;
}
