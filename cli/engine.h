/* engine.h -- the engines of the shuf mode.  All three compute one order,
 * the library's keyed order (riffle.h, "Keyed order"): record i after the
 * --header records gets key k_i, records come out by increasing key, ties
 * shuffled.  So the output for a seed is the same whichever engine runs,
 * whatever --memory and --threads say (DESIGN.md principle 4):
 *   - engine_memory: the records in memory (mapped or read), ordered by
 *     rf_keyed_index_vals as their offsets (8 bytes per record);
 *   - engine_head: -n K, keeping only the K smallest keys while streaming;
 *   - engine_external: records scattered by the top bits of their keys into
 *     temporary bucket files, then each bucket sorted in memory in turn (a
 *     bucket still too large is split again by the next bits).
 * Each returns 0, or 1 after printing a message; the output is then to be
 * aborted by the caller. */
#ifndef RIFFLE_ENGINE_H
#define RIFFLE_ENGINE_H

#include <stdint.h>

#include "riffle_io.h"

struct cli_output;
struct progress;
struct reader;
struct shuf_opts;

/* The shuf mode's records (files, stdin, -e) without -r, written to the
 * output the options name: picks the engine (shuf_keyed.c).  Returns the
 * exit status. */
int shuf_run_keyed(const struct shuf_opts *o, struct progress *p);
/* The keyed order of --seed/--random-source (or the OS) and --rng.  Returns
 * 0, or 1 after a message. */
int shuf_keyed_order(const struct shuf_opts *o, rf_keyed_order *order);

struct engine {
    unsigned char delim;
    uint64_t header;       /* records kept in place (--header) */
    int limited;           /* -n given */
    uint64_t count;        /* -n K */
    uint64_t budget;       /* --memory, bytes */
    unsigned threads;      /* >= 1 */
    const char *tmpdir;    /* for engine_external */
    uint64_t size_hint;    /* input bytes if known (regular files), else 0 */
    rf_keyed_order order;
    struct cli_output *out;
    struct progress *progress;
    uint64_t record_bytes; /* average record size, for progress in bytes */
};

/* Where the records of one buffer are, without an offset per record: the
 * --header records' end, the number of records after them, and the start
 * of every keyed block of 2^16 of them (engine_mem.c). */
struct layout {
    const unsigned char *data;
    uint64_t size;
    unsigned char delim;
    uint64_t header;  /* header records found (<= e->header) */
    uint64_t begin;   /* the records after the header start here */
    uint64_t m;       /* records after the header */
    int terminated;   /* the last record ends with the delimiter */
    uint64_t blocks;  /* ceil(m / 2^16) */
    uint64_t *starts; /* starts[c]: offset of record c * 2^16 after the header */
};
/* Count r's records (on e->threads threads).  Returns 0, or 1 after a
 * message.  layout_free releases it. */
int layout_init(struct layout *l, const struct engine *e, const rf_records *r);
void layout_free(struct layout *l);
/* Whether engine_memory can order them under the budget: the bytes plus 8
 * per record (the order, as offsets). */
int engine_memory_fits(const struct engine *e, const struct layout *l);
/* r: every input, in memory (r->offs unused); l: its layout. */
int engine_memory(struct engine *e, const rf_records *r, const struct layout *l);
int engine_head(struct engine *e, struct reader *rd);
int engine_external(struct engine *e, struct reader *rd);

/* One record after the header: its key (the keyed stream, in input order)
 * and its bytes, rec[len - 1] being the delimiter.  Returns 0, or nonzero
 * after printing a message (the walk stops). */
typedef int (*engine_record_fn)(void *ctx, uint64_t key, const unsigned char *rec, size_t len);

/* Read every record of rd: the first e->header records are appended to
 * *hbuf / *hlen (complete records, for output_set_header; free *hbuf), every
 * later one goes to fn with its key.  Reports progress (phase set by the
 * caller).  Returns 0, or 1 after a message. */
int engine_walk(struct engine *e, struct reader *rd, engine_record_fn fn, void *ctx,
                unsigned char **hbuf, size_t *hlen);


/* How much of a regular file a streaming engine maps at a time. */
size_t shuf_window(const struct engine *e);

/* Write the records of r starting at offs[0..count) through the output,
 * part by part. */
int engine_emit(struct engine *e, const rf_records *r, const uint64_t *offs, size_t count);

#endif
