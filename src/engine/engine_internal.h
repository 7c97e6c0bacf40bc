/* engine_internal.h -- the engines behind riffle_engine.h.  All three compute
 * one order, the library's keyed order (riffle.h, "Keyed order"): record i
 * after the header records gets key k_i, records come out by increasing
 * key, ties shuffled.  So the output for a key is the same whichever engine
 * runs, whatever the budget and the thread count:
 *   - rfi_engine_memory: the records in memory (mapped or read), ordered by
 *     rf_keyed_index_vals as their offsets (8 bytes per record);
 *   - rfi_engine_head: a count K, keeping only the K smallest keys while
 *     streaming;
 *   - rfi_engine_external: records scattered by the top bits of their keys into
 *     temporary bucket files, then each bucket sorted in memory in turn (a
 *     bucket still too large is split again by the next bits).
 * Each returns 0, or 1 with the error recorded in e->err (rfi_engine_fail); the
 * sink's output is then to be discarded by the caller. */
#ifndef RF_ENGINE_INTERNAL_H
#define RF_ENGINE_INTERNAL_H

#include <stdint.h>

#include "riffle_engine.h"
#include "riffle_io.h"
#include "watch.h"

struct reader;

struct engine {
    unsigned char delim;
    int csv;               /* CSV records (bounds.h) */
    uint64_t header;       /* records kept in place */
    uint64_t count;        /* records to output; RF_ENGINE_ALL: every one */
    uint64_t budget;       /* bytes */
    unsigned threads;      /* >= 1 */
    const char *tmpdir;    /* for rfi_engine_external */
    int named_temps;       /* never O_TMPFILE (riffle_engine.h) */
    uint64_t size_hint;    /* input bytes if known (regular files), else 0 */
    rf_keyed_order order;
    const rf_engine_sink *sink;
    rf_engine_progress_fn *progress; /* may be NULL */
    void *progress_ctx;
    rf_engine_phase phase; /* the phase under way, for engine_progress */
    uint64_t phase_total;
    uint64_t done;         /* bytes of the phase last reported */
    rf_engine_temp_fn *temp; /* may be NULL */
    void *temp_ctx;
    uint64_t record_bytes; /* average record size, for progress in bytes */
    rf_engine_error *err;  /* the first error (never NULL) */
    struct watch inputs;   /* the regular inputs as they were when opened */
    long mapped;           /* the entry of inputs of the file mapped as the
                              records' bytes (its hash is taken while they
                              are counted: rfi_layout_init), or -1 */
};

/* Record the first error of a run in *err (later ones are consequences) and
 * return 1.  path may be NULL. */
int rfi_engine_fail(rf_engine_error *err, rf_status st, rf_engine_op op, const char *path, int errnum);
/* rfi_engine_fail for an input `path` whose last record, starting at line
 * `line`, leaves a quote open (RF_EINVAL, RF_ENGINE_OP_CSV). */
int rfi_engine_csv_open(rf_engine_error *err, const char *path, uint64_t line);
/* rfi_engine_fail for a failed allocation. */
int rfi_engine_nomem(rf_engine_error *err);
/* rfi_engine_fail for a status of a library call (RF_ENOMEM included). */
int rfi_engine_status(rf_engine_error *err, rf_status st);

/* Progress: phase `ph` begins (total bytes, 0 if unknown); done bytes of it
 * are done. */
void rfi_engine_phase(struct engine *e, rf_engine_phase ph, uint64_t total);
void rfi_engine_progress(struct engine *e, uint64_t done);

/* The sink's begin: the header records and how many records follow.
 * Returns 0, or 1 with the error recorded. */
int rfi_engine_begin(struct engine *e, const void *header, size_t len, uint64_t records);

/* Where the records of one buffer are, without an offset per record: the
 * --header records' end, the number of records after them, and the start
 * of every keyed block of 2^16 of them (memory.c). */
struct layout {
    const unsigned char *data;
    uint64_t size;
    unsigned char delim;
    int csv;          /* CSV records (bounds.h) */
    uint64_t header;  /* header records found (<= e->header) */
    uint64_t begin;   /* the records after the header start here */
    uint64_t m;       /* records after the header */
    int terminated;   /* the last record ends with the delimiter */
    uint64_t blocks;  /* ceil(m / 2^16) */
    uint64_t *starts; /* starts[c]: offset of record c * 2^16 after the header */
    int hashed;       /* the bytes are e->mapped's file: sum holds their */
    uint64_t sum;     /* blocks' sum (records/bytesum.h), taken while counting */
};
/* The layout's header alone: data, size, delimiter, the --header records
 * and where the records after them begin (nothing counted). */
void rfi_layout_head(struct layout *l, const struct engine *e, const rf_records *r);
/* Count r's records (on e->threads threads).  Returns 0, or 1 with the
 * error recorded.  layout_free releases it. */
int rfi_layout_init(struct layout *l, const struct engine *e, const rf_records *r);
void rfi_layout_free(struct layout *l);
/* The offsets of the records of keyed block first / 2^16 (first a multiple
 * of 2^16, n its records): RF_OK, or RF_EINVAL when they are not there. */
rf_status rfi_layout_offsets(const struct layout *l, uint64_t first, uint64_t *out, size_t n);
/* Whether rfi_engine_memory can order them under the budget: the bytes plus 8
 * per record (the order, as offsets). */
int rfi_engine_memory_fits(const struct engine *e, const struct layout *l);
/* r: every input, in memory (r->offs unused); l: its layout. */
int rfi_engine_memory(struct engine *e, const rf_records *r, const struct layout *l);
int rfi_engine_head(struct engine *e, struct reader *rd);
int rfi_engine_external(struct engine *e, struct reader *rd);

struct spilled;

/* One record after the header: its key (the keyed stream, in input order)
 * and its bytes, rec[len - 1] being the delimiter; or, for an out-of-line
 * record (out not NULL, reader.h), a one-byte proxy and where its bytes are.
 * Returns 0, or nonzero with the error recorded (the walk stops). */
typedef int (*engine_record_fn)(void *ctx, uint64_t key, const unsigned char *rec, size_t len,
                                const struct spilled *out);

/* Read every record of rd: the first e->header records are appended to
 * *hbuf / *hlen (complete records, for the sink's begin; free *hbuf), every
 * later one goes to fn with its key.  Reports progress (phase set by the
 * caller).  Returns 0, or 1 with the error recorded. */
int rfi_engine_walk(struct engine *e, struct reader *rd, engine_record_fn fn, void *ctx,
                unsigned char **hbuf, size_t *hlen);



/* Write the records of r starting at offs[0..count) to the sink, as much
 * at a time as its room allows.  Returns 0, or 1 with the error recorded. */
int rfi_engine_emit(struct engine *e, const rf_records *r, const uint64_t *offs, size_t count);

#endif
