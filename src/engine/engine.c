/* engine.c -- rf_engine_shuffle (riffle_engine.h): the options checked, the
 * inputs measured, and the engine chosen -- never a choice of output, which
 * only the key and the input decide:
 *   - a count K small against the budget: rfi_engine_head, O(K) memory, one
 *     streaming pass (a pipe never has to be held);
 *   - everything fits in the budget (input bytes + 8 per record):
 *     rfi_engine_memory (a regular file mapped, anything else read);
 *   - otherwise rfi_engine_external, which starts from whatever was already read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/thread.h"
#include "engine_internal.h"
#include "reader.h"

/* A count goes to rfi_engine_head when K records surely fit: K up to 2^22 and at
 * most one per 256 bytes of the budget. */
static int head_fits(const struct engine *e)
{
    return e->count <= ((uint64_t)1 << 22) && e->count <= e->budget / 256;
}

/* Total size of the inputs when all are regular files or bytes, else 0
 * (unknown). */
static uint64_t known_size(const rf_engine_input *in, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (in[i].data) {
            total += in[i].size;
            continue;
        }
        const int r = in[i].fd >= 0 ? fstat(in[i].fd, &st) : stat(in[i].name, &st);
        if (r != 0 || !S_ISREG(st.st_mode))
            return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

/* Records in memory: rfi_engine_memory if they fit, else the external engine
 * fed from them. */
static int from_memory(struct engine *e, rf_records *r)
{
    struct layout l;
    if (rfi_layout_init(&l, e, r) != 0)
        return 1;
    if (l.hashed)
        rfi_watch_set_sum(&e->inputs, e->mapped, l.sum, l.size);
    if (rfi_engine_memory_fits(e, &l)) {
        const int status = rfi_engine_memory(e, r, &l);
        rfi_layout_free(&l);
        return status;
    }
    rfi_layout_free(&l);
    struct reader rd;
    if (rfi_reader_open(&rd, NULL, 0, e->delim, e->err) != 0)
        return 1;
    if (e->csv)
        rfi_reader_csv(&rd, 0);
    rfi_reader_prefix(&rd, r->data, r->size, -1, 0, "");
    e->size_hint = r->size;
    const int status = rfi_engine_external(e, &rd);
    rfi_reader_close(&rd);
    return status;
}

/* in as a descriptor: its own, or a file opened here (*own set). */
static int open_input(struct engine *e, const rf_engine_input *in, int *own)
{
    *own = in->fd < 0;
    const int fd = in->fd >= 0 ? in->fd : open(in->name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_INPUT, in->name, errno);
    return fd;
}

/* Where an input added to r at r->size == start begins: after the
 * delimiter given to the previous input's unterminated last record, if
 * one was. */
static size_t input_start(const rf_records *r, size_t start)
{
    const int sealed = start > 0 && start < r->size && r->data[start] == r->delim &&
                       r->data[start - 1] != r->delim;
    return start + (sealed ? 1 : 0);
}

/* A CSV input read whole into r from `start`: refused if it ends inside
 * quotes. */
static int csv_open(struct engine *e, const rf_records *r, size_t start, const char *name)
{
    start = input_start(r, start);
    const uint64_t line = rf_csv_open_quote_line(r->data + start, r->size - start);
    return line ? rfi_engine_csv_open(e->err, name, line) : 0;
}

/* A mapped input that another input follows is copied into the records'
 * buffer: its hash is taken now, in a pass of its own (one mapped input
 * alone is hashed while its records are counted, rfi_layout_init). */
static void feed_mapped(struct engine *e, const rf_records *r)
{
    if (e->mapped >= 0 && r->map_)
        rfi_watch_feed(&e->inputs, e->mapped, r->data, r->size);
    e->mapped = -1;
}

/* Add one input to r, up to `limit` bytes in all: *more when it goes on
 * beyond them (then *fd is left open, positioned after what was read, and
 * *slot is its watch entry).  Bytes read are fed to the input's watch
 * entry; a file mapped becomes e->mapped. */
static int add_input(struct engine *e, rf_records *r, const rf_engine_input *in, size_t limit,
                     int *fd, int *own, int *more, long *slot)
{
    *more = 0;
    *fd = -1;
    *own = 0;
    *slot = -1;
    feed_mapped(e, r);
    if (in->data) {
        if (e->csv) {
            const uint64_t line = rf_csv_open_quote_line(in->data, in->size);
            if (line)
                return rfi_engine_csv_open(e->err, in->name ? in->name : "", line);
        }
        const int err = rf_records_add_bytes(r, in->data, in->size);
        return err ? rfi_engine_nomem(e->err) : 0;
    }
    if ((*fd = open_input(e, in, own)) < 0)
        return 1;
    if (rfi_watch_add(&e->inputs, *fd, *own, in->name, slot, e->err) != 0) {
        if (*own)
            close(*fd);
        *fd = -1;
        return 1;
    }
    const size_t start = r->size;
    const int err = rf_records_add_fd_max(r, *fd, limit, more);
    if (!err && r->map_ && start == 0)
        e->mapped = *slot; /* hashed when counted, or by feed_mapped */
    else if (!err)
        rfi_watch_feed(&e->inputs, *slot, r->data + start, r->size - start);
    if (!err && !*more && e->csv && csv_open(e, r, start, in->name) != 0) {
        if (*own)
            close(*fd);
        *fd = -1;
        return 1;
    }
    if (err)
        rfi_engine_fail(e->err, err == ENOMEM ? RF_ENOMEM : RF_EIO,
                 err == ENOMEM ? RF_ENGINE_OP_NONE : RF_ENGINE_OP_READ, in->name, err);
    if (err || !*more) {
        if (*own)
            close(*fd);
        *fd = -1;
    }
    return err != 0;
}

/* Read the inputs into memory until half the budget is used; then go on
 * with the external engine from there. */
static int read_then_decide(struct engine *e, const rf_engine_input *in, size_t n)
{
    rf_records r;
    rf_records_init(&r, e->delim);
    rf_records_defer_index(&r); /* the engines count and find records themselves */
    if (e->csv)
        rf_records_csv(&r);
    const size_t limit = e->budget / 2 < SIZE_MAX ? (size_t)(e->budget / 2) : SIZE_MAX;
    int status = 1;
    rfi_engine_phase(e, RF_ENGINE_READ, e->size_hint);
    for (size_t i = 0; i < n; i++) {
        int fd, own, more;
        const size_t start = r.size;
        long slot;
        if (add_input(e, &r, &in[i], limit, &fd, &own, &more, &slot) != 0)
            goto done;
        rfi_engine_progress(e, r.size);
        if (more) { /* too big for memory: external from here on */
            struct reader rd;
            if (rfi_reader_open(&rd, in + i + 1, n - i - 1, e->delim, e->err) != 0) {
                if (own)
                    close(fd);
                goto done;
            }
            rd.watch = &e->inputs;
            rfi_reader_map(&rd, rfi_reader_window(e->budget));
            if (e->csv) /* lines count from this input's start */
                rfi_reader_csv(&rd, -(int64_t)rf_delims_count(r.data, input_start(&r, start), '\n'));
            rfi_reader_prefix(&rd, r.data, r.size, fd, own, in[i].name);
            rd.slot = slot; /* the input goes on on fd */
            status = rfi_engine_external(e, &rd);
            rfi_reader_close(&rd);
            goto done;
        }
    }
    status = from_memory(e, &r);
done:
    rf_records_free(&r);
    return status;
}

/* Streamed (the head of a count, or regular files too big to hold), or
 * read while they fit. */
static int run(struct engine *e, const rf_engine_input *in, size_t n)
{
    e->size_hint = known_size(in, n);
    if (!head_fits(e) && e->size_hint <= e->budget / 2)
        return read_then_decide(e, in, n);
    struct reader rd;
    if (rfi_reader_open(&rd, in, n, e->delim, e->err) != 0)
        return 1;
    rd.watch = &e->inputs;
    rfi_reader_map(&rd, rfi_reader_window(e->budget));
    if (e->csv)
        rfi_reader_csv(&rd, 0);
    const int status = head_fits(e) ? rfi_engine_head(e, &rd) : rfi_engine_external(e, &rd);
    rfi_reader_close(&rd);
    return status;
}

static int usable(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                  const rf_engine_sink *s)
{
    if (o && o->csv && o->delim != '\n')
        return 0;
    if (!o || !s || !s->begin || !s->writer || !s->room || !s->advance || (n > 0 && !in))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!in[i].data && in[i].fd < 0 && !in[i].name)
            return 0;
    return 1;
}

rf_status rf_engine_shuffle(const rf_engine_options *o, const rf_engine_input *inputs, size_t n,
                            const rf_engine_sink *sink, rf_engine_error *err)
{
    rf_engine_error local;
    if (!err)
        err = &local;
    memset(err, 0, sizeof *err);
    if (!usable(o, inputs, n, sink))
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    struct engine e = {
        .delim = o->delim,
        .csv = o->csv != 0,
        .header = o->header,
        .count = o->count,
        .budget = o->memory ? o->memory : rf_engine_default_memory(),
        .threads = rfi_threads(o->threads),
        .tmpdir = rf_temp_dir(o->tmpdir),
        .named_temps = o->named_temps,
        .sink = sink,
        .progress = o->progress,
        .progress_ctx = o->progress_ctx,
        .temp = o->temp,
        .temp_ctx = o->temp_ctx,
        .err = err,
        .mapped = -1,
    };
    const rf_status st = rf_keyed_order_init(&e.order, o->rng, o->key);
    if (st != RF_OK)
        return rfi_engine_status(err, st), st;
    if (run(&e, inputs, n) == 0)
        rfi_watch_check(&e.inputs, err);
    rfi_watch_free(&e.inputs);
    sodium_memzero(&e.order, sizeof e.order);
    return err->status;
}
