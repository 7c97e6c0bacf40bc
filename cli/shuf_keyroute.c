/*
 * shuf_keyroute.c -- `riffle --key=FIELD --split=SPEC` at any size.  The
 * engine writes the full shuffle (shuf_engine.h: in memory or external,
 * --memory, --threads, -T, compressed inputs, --csv) into a pipe; a router
 * thread cuts the pipe's bytes into records (record_cut.h: CSV records at
 * line feeds outside quotes) and writes each one to the part of its key,
 * through a writer per part.  A CSV key column named in the header is
 * found in the header the engine hands over first.
 *
 * Why these are the bytes of shuf_bykey.c: there a record's part is a
 * function of the seed, its key and the spec only, and inside a part the
 * records keep the order of the full shuffle.  Routing the full shuffle's
 * records one by one, in order, to the part of their key gives both, while
 * holding nothing beyond the engine's memory but one pipe buffer, a buffer
 * per part and the longest record.
 *
 * The header records go to every part first (the engine hands them to the
 * sink's begin, before any record).  A record without its key field stops
 * the run; the router sees records in shuffled order only, so the inputs
 * are read again up to the first keyless record to name its file and line
 * as shuf_bykey.c does (standard input cannot be read again: the message
 * quotes the record instead).  Every part is a staged temporary of
 * output.c, committed only after a run without error.
 *
 * Compressed parts are written in any order too, so each has a compressor
 * thread of its own (compress.h) rather than output.c's one for all.
 * The in-memory split (shuf_bykey.c) stays for -e and for more compressed
 * parts than that many threads; on files it costs about the same CPU time
 * (docs/BENCHMARKS_CLI.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "compress.h"
#include "decompress.h"
#include "output.h"
#include "progress.h"
#include "record_cut.h"
#include "riffle_sample.h"
#include "shuf.h"
#include "shuf_engine.h"
#include "shuf_keyroute.h"

/* The engine's writes are of its 1 MiB buffer (or the gather's buffers of
 * about that size): the pipe is made that large where the system allows
 * (F_SETPIPE_SZ, up to /proc/sys/fs/pipe-max-size, 1 MiB by default) and
 * read in pieces of that size, so that a write crosses in one go instead
 * of sixteen 64 KiB turns of the two threads. */
#define ROUTE_CHUNK ((size_t)1 << 20)
/* Each part's writer: a write(2) per 256 KiB keeps the calls' cost small
 * against copying the records; with many parts (up to RF_SPLIT_MAX_PARTS)
 * they share 16 MiB, 4 KiB each at the least. */
#define PART_BUFFER ((size_t)256 << 10)
#define PART_BUFFERS ((size_t)16 << 20)
#define PART_BUFFER_MIN ((size_t)4 << 10)
/* Compressed parts each have a thread and a compressor of their own
 * (compress.h) when routed; beyond this many, the in-memory split writes
 * them one after another. */
#define ROUTE_MAX_COMPRESSED 64
/* The bytes of a keyless record that its message quotes. */
#define QUOTED_MAX 60

enum route_failure { ROUTE_OK, ROUTE_MISSING, ROUTE_WRITE, ROUTE_NOMEM, ROUTE_COUNT };

struct router {
    const struct shuf_opts *o;
    struct cli_output *out;
    struct cli_inflow *flow;
    struct key_field key;     /* --key, its CSV column resolved by begin */
    rf_keyhash hk;
    size_t parts;
    rf_writer *w;             /* one per part */
    struct cli_outflow **flows; /* per part: its compressor, or NULL */
    unsigned char *bufs;      /* their buffers */
    size_t part_buffer;       /* bytes of each */
    int pipe_r, pipe_w;       /* -1 when closed */
    rf_writer feed;           /* the engine's writer, into pipe_w */
    unsigned char *feed_buf;
    pthread_t thread;
    int started;
    uint64_t announced;       /* records after the header, by begin */
    /* The thread's, read by the others once it has ended. */
    unsigned char *chunk;
    struct record_cut cut;
    uint64_t routed;
    atomic_int failure;       /* enum route_failure; set by the thread */
    int write_err;
    size_t write_part;
    char quoted[QUOTED_MAX + 1];
};

/* ---- the router thread ---- */

static void fail(struct router *r, enum route_failure f)
{
    int ok = ROUTE_OK;
    atomic_compare_exchange_strong(&r->failure, &ok, (int)f);
}

/* rec[0..len) to the part of its key, with its delimiter (record_cut_fn:
 * nonzero stops). */
static int route_record(void *ctx, const unsigned char *rec, size_t len)
{
    struct router *r = ctx;
    const unsigned char *k;
    size_t klen, part;
    if (key_field_find(&r->key, rec, len, &k, &klen) != 0) {
        const size_t q = len < QUOTED_MAX ? len : QUOTED_MAX;
        memcpy(r->quoted, rec, q);
        r->quoted[q] = '\0';
        fail(r, ROUTE_MISSING);
        return 1;
    }
    /* RF_EINVAL only for counts, which check_key refused. */
    if (rf_split_part_of_unit(&r->o->split.plan, rf_keyhash_unit(&r->hk, k, klen), &part) !=
        RF_OK) {
        fail(r, ROUTE_COUNT);
        return 1;
    }
    rf_writer *w = &r->w[part];
    rf_writer_put(w, rec, len);
    if (rf_writer_putc(w, r->o->delim) != 0) {
        r->write_err = w->err;
        r->write_part = part;
        fail(r, ROUTE_WRITE);
        return 1;
    }
    r->routed++;
    return 0;
}

/* A compressor that failed (its file's write error) fails the run now
 * rather than at the end. */
static void compressors_failed(struct router *r)
{
    for (size_t i = 0; i < r->parts && atomic_load(&r->failure) == ROUTE_OK; i++) {
        const int e = outflow_failed(r->flows[i]);
        if (e) {
            r->write_err = e;
            r->write_part = i;
            fail(r, ROUTE_WRITE);
        }
    }
}

/* Reads the pipe to its end whatever happens: the engine's writes never
 * meet a closed pipe (SIGPIPE would end the program), and a failure stops
 * the engine at its next advance instead. */
static void *route_main(void *arg)
{
    struct router *r = arg;
    for (;;) {
        const ssize_t k = read(r->pipe_r, r->chunk, ROUTE_CHUNK);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* a read error of our own pipe cannot happen: its end */
        if (atomic_load(&r->failure) == ROUTE_OK &&
            record_cut_feed(&r->cut, r->chunk, (size_t)k) < 0)
            fail(r, ROUTE_NOMEM);
        compressors_failed(r);
    }
    /* The engine ends every record with its delimiter. */
    if (record_cut_pending(&r->cut) > 0)
        fail(r, ROUTE_COUNT);
    return NULL;
}

/* ---- the engine's sink ---- */

/* Start the router with every signal blocked in it: they are the main
 * thread's (cleanup.h), and a part written past RLIMIT_FSIZE then fails
 * with EFBIG, reported, instead of killing the run from this thread. */
static int start_router(struct router *r)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return errno;
#ifdef F_SETPIPE_SZ
    (void)fcntl(fds[0], F_SETPIPE_SZ, (int)ROUTE_CHUNK); /* best effort */
#endif
    r->pipe_r = fds[0];
    r->pipe_w = fds[1];
    rf_writer_init(&r->feed, r->pipe_w, r->feed_buf, ROUTE_CHUNK);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    const int e = pthread_create(&r->thread, NULL, route_main, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    r->started = e == 0;
    return e;
}

/* --csv --key=NAME: the column named in the first header record. */
static int resolve_key(struct router *r, const unsigned char *header, size_t len)
{
    if (r->key.field != KEY_FIELD_BY_NAME)
        return 0;
    const size_t first = len ? rf_csv_nth(header, len, 0) : 0;
    const char *file = r->o->n_operands > 0 ? r->o->operands[0] : "-";
    return key_field_resolve(&r->key, len ? header : NULL, first, file, "key");
}

/* Every input is read: the header to every part, then the router. */
static int route_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    struct router *r = ctx;
    if (inflow_check(r->flow) != 0 || resolve_key(r, header, len) != 0)
        return -1;
    r->announced = records;
    for (size_t i = 0; i < r->parts; i++)
        rf_writer_put(&r->w[i], header, len);
    const int e = start_router(r);
    if (e) {
        cli_error("cannot start the router: %s", strerror(e));
        return -1;
    }
    return 0;
}

static rf_writer *route_writer(void *ctx)
{
    return &((struct router *)ctx)->feed;
}

static uint64_t route_room(void *ctx)
{
    (void)ctx;
    return UINT64_MAX;
}

/* -1 (the router's message comes after the run) stops the engine. */
static int route_advance(void *ctx, uint64_t records)
{
    (void)records;
    return atomic_load(&((struct router *)ctx)->failure) != ROUTE_OK ? -1 : 0;
}

/* ---- the run ---- */

/* The codec of part i, as output.c would choose it. */
static enum cli_codec part_codec(const struct shuf_opts *o, size_t i)
{
    if (o->compress != CLI_CODEC_BY_NAME)
        return o->compress;
    return codec_by_name(o->split.names[i]);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Flush the feed, end the pipe, wait for the router.  Returns 0, or -1
 * with the failure set. */
static int stop_router(struct router *r, int flush)
{
    if (!r->started)
        return 0;
    if (flush && rf_writer_flush(&r->feed) != 0)
        fail(r, ROUTE_WRITE); /* our own pipe: not while the router reads */
    close_fd(&r->pipe_w);
    pthread_join(r->thread, NULL);
    r->started = 0;
    return atomic_load(&r->failure) == ROUTE_OK ? 0 : -1;
}

/* ---- a keyless record, named by its input and line ---- */

/* The scan for the first keyless record in input order: the header's
 * records are skipped, lines counted per input, as shuf_bykey.c counts. */
struct finder {
    const struct key_field *key;
    uint64_t header; /* header records still to skip */
    uint64_t line;   /* of the current input: where the last record starts */
    uint64_t next;   /* where the next one starts */
};

static int find_each(void *ctx, const unsigned char *rec, size_t len)
{
    struct finder *f = ctx;
    const unsigned char *k;
    size_t klen;
    /* Lines, not records: a CSV record may span several. */
    f->line = f->next;
    f->next += 1 + (f->key->csv ? rf_delims_count(rec, len, '\n') : 0);
    if (f->header > 0) {
        f->header--;
        return 0;
    }
    return key_field_find(f->key, rec, len, &k, &klen) != 0;
}

/* Cut input `in` (a file, a pipe of its decompressed bytes, or bytes) into
 * c.  Returns 1 when each stopped there, 0 at its end, -1 when it cannot
 * be read. */
static int find_in(const rf_engine_input *in, struct record_cut *c, unsigned char *buf)
{
    if (in->data)
        return record_cut_feed(c, in->data, in->size) != 0 || record_cut_end(c) != 0;
    const int fd = in->fd >= 0 ? in->fd : open(in->name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int r = 0;
    for (;;) {
        const ssize_t k = read(fd, buf, ROUTE_CHUNK);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            r = -1;
        if (k <= 0)
            break;
        if ((r = record_cut_feed(c, buf, (size_t)k)) != 0)
            break;
    }
    if (r == 0)
        r = record_cut_end(c);
    if (in->fd < 0)
        close(fd);
    return r < 0 ? -1 : r;
}

/* Read the pipes of decompressed inputs to their ends, so that their
 * decoder ends by itself rather than cancelled in the middle of a write. */
static void drain(const rf_engine_input *in, size_t n, unsigned char *buf)
{
    for (size_t i = 0; i < n; i++) {
        if (in[i].fd < 0)
            continue;
        ssize_t k;
        while ((k = read(in[i].fd, buf, ROUTE_CHUNK)) > 0 || (k < 0 && errno == EINTR))
            ;
    }
}

/* The routed records come in shuffled order, where a keyless one has no
 * line number: read the inputs again (files, decompressed as the engine
 * read them) up to the first keyless record, and name it "FILE:LINE" as
 * shuf_bykey.c does.  Returns 0 once reported; -1 when standard input (read
 * once) is among the inputs, or no keyless record is found (the inputs
 * changed), or they cannot be read again. */
static int report_line(const struct shuf_opts *o, const struct key_field *key,
                       unsigned char *buf)
{
    size_t n;
    rf_engine_input *in = shuf_file_inputs(o->operands, o->n_operands, &n);
    struct cli_inflow *flow = NULL;
    int found = -1;
    for (size_t i = 0; in && i < n; i++)
        if (in[i].fd >= 0)
            goto done;
    if (!in || inflow_start(&flow, in, n) != 0)
        goto done;
    struct finder f = {key, o->header, 0, 1};
    struct record_cut c;
    record_cut_init(&c, o->delim, find_each, &f);
    if (o->csv)
        record_cut_csv(&c);
    for (size_t i = 0; i < n && found < 0; i++) {
        f.next = 1;
        const int r = find_in(&in[i], &c, buf);
        if (r < 0)
            break;
        if (r > 0) {
            key_field_missing(key, in[i].name, (unsigned long long)f.line);
            found = 0;
        }
    }
    record_cut_free(&c);
    drain(in, n, buf);
    if (flow)
        (void)inflow_check(flow); /* joins: the decoder has ended */
done:
    inflow_end(flow);
    free(in);
    return found;
}

/* The router's failure, as a message. */
static void report(const struct router *r)
{
    switch ((enum route_failure)atomic_load(&r->failure)) {
    case ROUTE_MISSING:
        if (report_line(r->o, &r->key, r->chunk) == 0)
            break;
        cli_error("missing key field %zu in the record %s", r->key.field,
                  cli_quote(r->quoted));
        break;
    case ROUTE_WRITE:
        if (r->write_err)
            cli_error("%s: %s", r->o->split.names[r->write_part], strerror(r->write_err));
        else
            cli_error("internal error: the router's pipe failed");
        break;
    case ROUTE_NOMEM:
        cli_error("memory exhausted");
        break;
    case ROUTE_COUNT:
        cli_error("internal error: the router lost records");
        break;
    case ROUTE_OK:
        break;
    }
}

/* Every part's writer flushed; the router's count matches the engine's. */
static int finish_parts(struct router *r)
{
    if (r->routed != r->announced) {
        fail(r, ROUTE_COUNT);
        return -1;
    }
    for (size_t i = 0; i < r->parts; i++) {
        size_t which;
        int e = rf_writer_flush(&r->w[i]);
        const int fe = outflow_finish(r->flows[i], &which);
        if (fe)
            e = fe; /* the compressor's error is the cause of any writer's */
        if (e) {
            r->write_err = e;
            r->write_part = i;
            fail(r, ROUTE_WRITE);
            return -1;
        }
    }
    return 0;
}

/* Stop every compressor (discarding what is not written): before the
 * files they write are removed. */
static void stop_flows(struct router *r)
{
    for (size_t i = 0; r->flows && i < r->parts; i++) {
        outflow_free(r->flows[i]);
        r->flows[i] = NULL;
    }
}

static int alloc_router(struct router *r)
{
    r->parts = r->o->split.plan.parts;
    r->pipe_r = r->pipe_w = -1;
    record_cut_init(&r->cut, r->o->delim, route_record, r);
    if (r->o->csv)
        record_cut_csv(&r->cut);
    r->key = r->o->key;
    r->w = calloc(r->parts, sizeof *r->w);
    r->flows = calloc(r->parts, sizeof *r->flows);
    r->part_buffer = PART_BUFFERS / r->parts;
    if (r->part_buffer > PART_BUFFER)
        r->part_buffer = PART_BUFFER;
    if (r->part_buffer < PART_BUFFER_MIN)
        r->part_buffer = PART_BUFFER_MIN;
    r->bufs = malloc(r->parts * r->part_buffer);
    r->feed_buf = malloc(ROUTE_CHUNK);
    r->chunk = malloc(ROUTE_CHUNK);
    if (!r->w || !r->flows || !r->bufs || !r->feed_buf || !r->chunk) {
        cli_error("memory exhausted");
        return -1;
    }
    return 0;
}

static void free_router(struct router *r)
{
    close_fd(&r->pipe_w);
    close_fd(&r->pipe_r);
    stop_flows(r);
    free(r->flows);
    free(r->w);
    free(r->bufs);
    free(r->feed_buf);
    free(r->chunk);
    record_cut_free(&r->cut);
}

/* The parts' writers over output.c's staged files, and the key's hash
 * from the engine's key (one key for the order and the parts, as the
 * in-memory split draws both from --seed). */
static int prepare(struct router *r, const rf_engine_options *eo)
{
    const rf_status st = rf_keyhash_init(&r->hk, eo->key);
    if (st != RF_OK) {
        cli_error("cannot make the random key: %s", rf_strerror(st));
        return -1;
    }
    if (output_set_total(r->out, 0) != 0)
        return -1;
    for (size_t i = 0; i < r->parts; i++) {
        int fd = output_part_fd(r->out, i);
        const enum cli_codec codec = part_codec(r->o, i);
        if (fd < 0) {
            cli_error("internal error: a routed split opened compressed");
            return -1;
        }
        const int e = outflow_start(&r->flows[i], &fd, &codec, 1, r->o->threads);
        if (e) {
            cli_error("cannot compress the output: %s", strerror(e));
            return -1;
        }
        rf_writer_init(&r->w[i], fd, r->bufs + i * r->part_buffer, r->part_buffer);
    }
    return 0;
}

/* The engine into the router, then the parts committed, or none. */
static int run_routed(struct router *r, const rf_engine_options *eo, const rf_engine_input *in,
                      size_t n, struct progress *p)
{
    if (prepare(r, eo) != 0) {
        stop_flows(r);
        output_abort(r->out);
        return CLI_FAIL;
    }
    const rf_engine_sink sink = {route_begin, route_writer, route_room, route_advance, r};
    /* The engine's failure path aborts the output it is given: here one of
     * nothing (output.h), so that the parts stay open until the router and
     * the compressors that write them have stopped. */
    struct cli_output none = {0};
    const int status = shuf_engine_run(eo, in, n, &sink, &none, p);
    if (status != CLI_OK) { /* the engine's message printed */
        /* The router's failure, if it stopped the engine; a record cut
         * short by the stop is no failure of its own. */
        const int stopped_by_router = atomic_load(&r->failure) != ROUTE_OK;
        stop_router(r, 0);
        stop_flows(r);
        if (stopped_by_router)
            report(r);
        output_abort(r->out);
        return CLI_FAIL;
    }
    const int routed = stop_router(r, 1) == 0;
    if (!routed || finish_parts(r) != 0) {
        stop_flows(r);
        report(r);
        output_abort(r->out);
        return CLI_FAIL;
    }
    return output_close(r->out);
}

int shuf_keyroute_fits(const struct shuf_opts *o)
{
    if (o->echo)
        return 0;
    size_t compressed = 0;
    for (size_t i = 0; i < o->split.plan.parts; i++)
        compressed += part_codec(o, i) != CLI_CODEC_NONE;
    return compressed <= ROUTE_MAX_COMPRESSED;
}

/* The parts as plain staged files: output.c's compressing thread takes
 * parts one after another, so a compressed part gets its own (prepare). */
static int open_parts(struct cli_output *out, const struct shuf_opts *o)
{
    const struct cli_output_spec spec = {NULL, &o->split, CLI_CODEC_NONE, o->threads};
    return output_open(out, &spec);
}

int shuf_run_keyroute(const struct shuf_opts *o, struct progress *p)
{
    struct cli_output out;
    struct router r = {.o = o, .out = &out};
    rf_engine_options eo;
    size_t n = 0;
    rf_engine_input *in = NULL;
    int status = CLI_FAIL;
    if (alloc_router(&r) != 0 || shuf_engine_options(o, &eo) != 0)
        goto done;
    in = shuf_file_inputs(o->operands, o->n_operands, &n);
    if (!in)
        cli_error("memory exhausted");
    else if (inflow_start(&r.flow, in, n) == 0 && open_parts(&out, o) == 0)
        status = run_routed(&r, &eo, in, n, p);
done:
    stop_router(&r, 0);
    inflow_end(r.flow);
    sodium_memzero(eo.key, sizeof eo.key);
    free(in);
    free_router(&r);
    return status;
}
