/*
 * shuf_lockstep.c -- --lockstep: several aligned files (a source text and
 * its translation, features and labels) shuffled in one order, each to its
 * own output.
 *
 * The keyed order gives record i its key from the record number i and the
 * key alone (riffle.h, "Keyed order"), so two files with the same number of
 * records, shuffled with one key, come out in the same positional order on
 * every engine and budget: line j of every output comes from the same input
 * line number.  So the run is one engine run per file with one key (drawn
 * once from the OS when no --seed is given), each written to its own
 * staged output; a file whose record count differs from the first's fails
 * when its run announces its count (the sink's begin, before any of its
 * records is written); and no output is committed until every run has
 * succeeded and every output is flushed and fsynced: then they are renamed
 * one after another.
 *
 * -n K: the runs order every record (count RF_ENGINE_ALL), so that each
 * announces its full count to compare, and the records after the first K
 * are dropped.  The first K of the full order are what -n K prints anyway;
 * the price is the full shuffle's work instead of the streamed head's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "decompress.h"
#include "output.h"
#include "progress.h"
#include "riffle_engine.h"
#include "shuf.h"
#include "shuf_engine.h"

/* The buffer of the writer that drops the records after -n K. */
#define DROP_BUFFER ((size_t)1 << 16)

/* What every file's run is compared with: the first file's record count. */
struct lockstep_first {
    const char *name;
    uint64_t records;
    int known;
};

/* The sink of one file's run: its output, the -n limit, and the check of
 * its record count. */
struct lockstep_sink {
    struct cli_output *out;
    uint64_t want;      /* -n K, or RF_ENGINE_ALL */
    uint64_t written;   /* records passed to out */
    rf_writer drop;     /* records after the first K: /dev/null */
    unsigned char delim;
    int csv;            /* --csv: the header's records are CSV records */
    const char *name;
    struct lockstep_first *first;
    struct cli_inflow *flow; /* the file decompressed, or NULL */
};

/* The records of this run (header records included) against the first
 * file's: the same count, or a message naming both. */
static int same_count(struct lockstep_sink *s, uint64_t records)
{
    struct lockstep_first *f = s->first;
    if (!f->known) {
        *f = (struct lockstep_first){s->name, records, 1};
        return 0;
    }
    if (records == f->records)
        return 0;
    cli_error("%s: %llu records, but %s has %llu: --lockstep needs the same number",
              cli_quote_file(s->name), (unsigned long long)records, cli_quote_file(f->name),
              (unsigned long long)f->records);
    return -1;
}

static int lock_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    struct lockstep_sink *s = ctx;
    if (inflow_check(s->flow) != 0) /* a compressed file decoded to its end */
        return -1;
    int quoted = 0;
    const uint64_t head = !len ? 0
                          : s->csv ? rf_csv_count(header, len, &quoted)
                                   : rf_delims_count(header, len, s->delim);
    if (same_count(s, head + records) != 0)
        return -1;
    const uint64_t k = records < s->want ? records : s->want;
    return output_set_header(s->out, header, len) != 0 || output_set_total(s->out, k) != 0 ? -1
                                                                                         : 0;
}

static rf_writer *lock_writer(void *ctx)
{
    struct lockstep_sink *s = ctx;
    return s->written < s->want ? output_writer(s->out) : &s->drop;
}

static uint64_t lock_room(void *ctx)
{
    struct lockstep_sink *s = ctx;
    if (s->written >= s->want)
        return UINT64_MAX;
    const uint64_t room = output_room(s->out);
    return room < s->want - s->written ? room : s->want - s->written;
}

static int lock_advance(void *ctx, uint64_t records)
{
    struct lockstep_sink *s = ctx;
    if (s->written >= s->want)
        return s->drop.err;
    s->written += records;
    return output_advance(s->out, records);
}

/* The outputs of the run: one per file, each with its own options (its -o,
 * or its split plan and names), alive as long as its output. */
struct lockstep {
    const struct shuf_opts *o;
    size_t files;
    struct shuf_opts *each;
    struct cli_output *outs;
    size_t opened;
    unsigned char *drop_buf;
    int drop_fd;
};

/* Every output name of every file, for one check that no two are the same
 * file (two -o, or parts of two files' splits). */
static int distinct_outputs(const struct lockstep *l)
{
    const struct shuf_opts *o = l->o;
    size_t n = 0;
    for (size_t i = 0; i < l->files; i++)
        n += o->split_spec ? o->splits[i].plan.parts : 1;
    const char **names = malloc(n * sizeof *names);
    if (!names) {
        cli_error("memory exhausted");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < l->files; i++) {
        if (!o->split_spec) {
            names[k++] = o->outputs[i];
            continue;
        }
        for (size_t j = 0; j < o->splits[i].plan.parts; j++)
            names[k++] = o->splits[i].names[j];
    }
    size_t a, b;
    const int same = rf_same_file_pair(names, n, &a, &b);
    if (same < 0)
        cli_error("memory exhausted");
    else if (same > 0)
        cli_error("%s and %s are the same file", cli_quote(names[a]), cli_quote(names[b]));
    free(names);
    return same != 0 ? -1 : 0;
}

/* Every file's options and output, opened (temporaries) before any work. */
static int open_outputs(struct lockstep *l)
{
    const struct shuf_opts *o = l->o;
    l->each = calloc(l->files, sizeof *l->each);
    l->outs = calloc(l->files, sizeof *l->outs);
    l->drop_buf = malloc(DROP_BUFFER);
    l->drop_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (!l->each || !l->outs || !l->drop_buf) {
        cli_error("memory exhausted");
        return -1;
    }
    if (l->drop_fd < 0) {
        cli_error("/dev/null: %s", strerror(errno));
        return -1;
    }
    if (distinct_outputs(l) != 0)
        return -1;
    for (size_t i = 0; i < l->files; i++) {
        struct shuf_opts *e = &l->each[i];
        *e = *o;
        e->output = o->split_spec ? NULL : o->outputs[i];
        if (o->split_spec)
            e->split = o->splits[i];
        if (shuf_output_open(&l->outs[i], e) != 0)
            return -1;
        l->opened++;
    }
    return 0;
}

/* Abort every open output but `skip` (one already aborted or closed; pass
 * l->files for none). */
static void abort_outputs(struct lockstep *l, size_t skip)
{
    for (size_t i = 0; i < l->opened; i++)
        if (i != skip)
            output_abort(&l->outs[i]);
    l->opened = 0;
}

/* The run of file i into its output.  Returns CLI_OK or CLI_FAIL (printed;
 * its output aborted). */
static int run_file(struct lockstep *l, size_t i, const rf_engine_options *eo,
                    rf_engine_input *in, struct lockstep_first *first, struct progress *p)
{
    const struct shuf_opts *o = l->o;
    struct lockstep_sink s = {
        .out = &l->outs[i],
        .want = o->have_count ? o->count : RF_ENGINE_ALL,
        .delim = o->delim,
        .csv = o->csv,
        .name = in->name,
        .first = first,
    };
    rf_writer_init(&s.drop, l->drop_fd, l->drop_buf, DROP_BUFFER);
    if (inflow_start(&s.flow, in, 1) != 0) {
        output_abort(&l->outs[i]);
        return CLI_FAIL;
    }
    const rf_engine_sink sink = {lock_begin, lock_writer, lock_room, lock_advance, &s};
    const int status = shuf_engine_run(eo, in, 1, &sink, &l->outs[i], p);
    inflow_end(s.flow);
    return status;
}

/* Every output finished (flushed, fsynced), then every one committed. */
static int commit_all(struct lockstep *l)
{
    for (size_t i = 0; i < l->files; i++)
        if (output_finish(&l->outs[i]) != 0) {
            abort_outputs(l, l->files);
            return CLI_FAIL;
        }
    for (size_t i = 0; i < l->files; i++)
        if (output_close(&l->outs[i]) != CLI_OK) { /* a rename failed */
            if (i > 0)
                cli_error("%zu of %zu outputs were already in place", i, l->files);
            for (size_t j = i + 1; j < l->files; j++)
                output_abort(&l->outs[j]);
            l->opened = 0;
            return CLI_FAIL;
        }
    l->opened = 0;
    return CLI_OK;
}

static int run_files(struct lockstep *l, const rf_engine_options *eo, struct progress *p)
{
    size_t n;
    rf_engine_input *in = shuf_file_inputs(l->o->operands, l->o->n_operands, &n);
    if (!in) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    struct lockstep_first first = {0};
    int status = CLI_OK;
    for (size_t i = 0; i < n && status == CLI_OK; i++) {
        status = run_file(l, i, eo, &in[i], &first, p);
        if (status != CLI_OK)
            abort_outputs(l, i); /* file i's: aborted by the failed run */
    }
    free(in);
    return status == CLI_OK ? commit_all(l) : status;
}

int shuf_run_lockstep(const struct shuf_opts *o, struct progress *p)
{
    struct lockstep l = {.o = o, .files = o->n_operands > 0 ? (size_t)o->n_operands : 1,
                         .drop_fd = -1};
    rf_engine_options eo;
    int status = CLI_FAIL;
    if (shuf_engine_options(o, &eo) != 0)
        return CLI_FAIL;
    eo.count = RF_ENGINE_ALL; /* every count announced, to compare (see above) */
    if (open_outputs(&l) == 0)
        status = run_files(&l, &eo, p);
    abort_outputs(&l, l.files);
    if (l.drop_fd >= 0)
        close(l.drop_fd);
    free(l.drop_buf);
    free(l.outs);
    free(l.each);
    sodium_memzero(eo.key, sizeof eo.key);
    return status;
}
