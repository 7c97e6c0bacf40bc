/* shuf_engine.c -- the shuf mode's records (files, stdin, -e) without -r:
 * the options turned into the engine's (riffle_engine.h), the program's
 * output (output.h: stdout, -o, --split) as its sink, its progress line and
 * its signal-time clean-up (cleanup.h) as its callbacks, and its errors
 * printed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "cleanup.h"
#include "decompress.h"
#include "output.h"
#include "progress.h"
#include "riffle_engine.h"
#include "shuf.h"
#include "shuf_engine.h"

/* ---- the sink: struct cli_output ---- */

static int out_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    struct cli_output *o = ctx;
    return output_set_header(o, header, len) != 0 || output_set_total(o, records) != 0 ? -1 : 0;
}

/* The output behind a gate: nothing is written before every compressed
 * input is known to have decoded to its end (a corrupt one ends its pipe
 * early, which the engine reads as an end).  The engine calls begin once
 * every input is read. */
struct gated {
    struct cli_output *out;
    struct cli_inflow *flow;
};

static int gated_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    struct gated *g = ctx;
    if (inflow_check(g->flow) != 0)
        return -1;
    return out_begin(g->out, header, len, records);
}

static rf_writer *gated_writer(void *ctx)
{
    return output_writer(((struct gated *)ctx)->out);
}

static uint64_t gated_room(void *ctx)
{
    return output_room(((struct gated *)ctx)->out);
}

static int gated_advance(void *ctx, uint64_t records)
{
    return output_advance(((struct gated *)ctx)->out, records);
}

/* ---- the callbacks: progress line and clean-up registry ---- */

static const char *phase_name(rf_engine_phase ph)
{
    switch (ph) {
    case RF_ENGINE_READ:
        return "read";
    case RF_ENGINE_SCATTER:
        return "scatter";
    case RF_ENGINE_SHUFFLE:
        return "shuffle";
    case RF_ENGINE_WRITE:
        return "write";
    }
    return "run";
}

/* The progress line, and the phase it shows. */
struct line {
    struct progress *p;
    rf_engine_phase phase; /* 0: none yet */
};

/* A new phase ends the line of the last one. */
static void on_progress(void *ctx, rf_engine_phase ph, uint64_t done, uint64_t total)
{
    struct line *l = ctx;
    if (ph != l->phase) {
        progress_done(l->p);
        progress_phase(l->p, phase_name(ph), total);
        l->phase = ph;
    }
    if (done > 0)
        progress_update(l->p, done);
}

/* ---- the run ---- */

int shuf_keyed_order(const struct shuf_opts *o, rf_keyed_order *order)
{
    uint8_t key[RF_KEY_BYTES];
    if (cli_rng_key(&o->rng, key) != 0)
        return 1;
    const rf_status st = rf_keyed_order_init(order, cli_rng_kind(&o->rng), key);
    sodium_memzero(key, sizeof key);
    if (st != RF_OK) {
        cli_error("cannot make the random key: %s", rf_strerror(st));
        return 1;
    }
    return 0;
}

static int engine_options(const struct shuf_opts *o, struct line *l, rf_engine_options *eo)
{
    rf_engine_options_init(eo);
    if (cli_rng_key(&o->rng, eo->key) != 0)
        return 1;
    eo->rng = cli_rng_kind(&o->rng);
    eo->delim = o->delim;
    eo->header = o->header;
    eo->count = o->have_count ? o->count : RF_ENGINE_ALL;
    eo->memory = o->memory;
    eo->tmpdir = cli_tmpdir(o);
    eo->threads = o->threads ? o->threads : 1;
    eo->progress = l->p->on ? on_progress : NULL;
    eo->progress_ctx = l;
    eo->temp = cleanup_engine_temp;
    eo->named_temps = cli_named_temps();
    eo->csv = o->csv;
    return 0;
}

rf_engine_input *shuf_file_inputs(char *const *names, int n, size_t *count)
{
    const size_t k = n > 0 ? (size_t)n : 1;
    rf_engine_input *in = malloc(k * sizeof *in);
    if (!in)
        return NULL;
    for (size_t i = 0; i < k; i++) {
        const char *name = n > 0 ? names[i] : "-";
        in[i] = strcmp(name, "-") == 0 ? rf_engine_input_fd(STDIN_FILENO, "-")
                                       : rf_engine_input_path(name);
    }
    *count = k;
    return in;
}

int shuf_each_input(const struct shuf_opts *o, int raw, shuf_input_fn *add, void *ctx)
{
    size_t n;
    rf_engine_input *files = shuf_file_inputs(o->operands, o->n_operands, &n);
    struct cli_inflow *flow = NULL;
    int r = -1;
    if (!files)
        cli_error("memory exhausted");
    else if (raw || inflow_start(&flow, files, n) == 0)
        r = 0;
    for (size_t i = 0; i < n && r == 0; i++)
        if (!files[i].data) /* else a descriptor given again: read once */
            r = add(ctx, files[i].name, files[i].fd, n == 1);
    if (r == 0)
        r = inflow_check(flow);
    inflow_end(flow);
    free(files);
    return r;
}

/* The operands as inputs (shuf_file_inputs), or the -e arguments as one
 * block of records.  *echo is to be freed. */
static rf_engine_input *engine_inputs(const struct shuf_opts *o, size_t *n, unsigned char **echo)
{
    *echo = NULL;
    if (!o->echo)
        return shuf_file_inputs(o->operands, o->n_operands, n);
    rf_engine_input *in = malloc(sizeof *in);
    if (!in)
        return NULL;
    size_t len = 0;
    for (int i = 0; i < o->n_operands; i++)
        len += strlen(o->operands[i]) + 1;
    unsigned char *b = *echo = malloc(len ? len : 1);
    if (!b) {
        free(in);
        return NULL;
    }
    for (int i = 0; i < o->n_operands; i++) {
        const size_t l = strlen(o->operands[i]);
        memcpy(b, o->operands[i], l);
        b[l] = o->delim;
        b += l + 1;
    }
    in[0] = rf_engine_input_bytes(*echo, len, "-e");
    *n = 1;
    return in;
}

/* After a failed run: the message, and the output left as it was.  A write
 * error of the output is output_close's to report (a closed pipe too,
 * as shuf); a sink that failed otherwise has printed its message. */
static int failed(const rf_engine_error *err, struct cli_output *out, struct progress *p)
{
    progress_done(p);
    const int sink = err->op == RF_ENGINE_OP_OUTPUT;
    if (sink && err->err > 0 && output_writer(out)->err)
        return output_close(out);
    if (err->op == RF_ENGINE_OP_READ) {
        cli_read_error(err->path, err->err);
    } else if (err->op == RF_ENGINE_OP_INPUT && err->err > 0) {
        cli_error("%s: %s", cli_quote_file(err->path), strerror(err->err));
    } else if (!sink || err->err != -1) {
        char msg[4096 + 256];
        rf_engine_error_message(err, msg, sizeof msg);
        cli_error("%s", msg);
    }
    output_abort(out);
    return CLI_FAIL;
}

int shuf_engine_options(const struct shuf_opts *o, rf_engine_options *eo)
{
    struct progress none = {0};
    struct line l = {&none, 0};
    const int r = engine_options(o, &l, eo);
    eo->progress = NULL; /* shuf_engine_run's */
    eo->progress_ctx = NULL;
    return r;
}

int shuf_engine_run(const rf_engine_options *options, const rf_engine_input *in, size_t n,
                    const rf_engine_sink *sink, struct cli_output *out, struct progress *p)
{
    struct line line = {p, 0};
    rf_engine_options eo = *options;
    eo.progress = p->on ? on_progress : NULL;
    eo.progress_ctx = &line;
    rf_engine_error err;
    const int status = rf_engine_shuffle(&eo, in, n, sink, &err) != RF_OK
                           ? failed(&err, out, p)
                           : CLI_OK;
    sodium_memzero(eo.key, sizeof eo.key);
    if (status == CLI_OK)
        progress_done(p);
    return status;
}

int shuf_run_keyed(const struct shuf_opts *o, struct progress *p)
{
    struct line line = {p, 0};
    rf_engine_options eo;
    if (engine_options(o, &line, &eo) != 0)
        return CLI_FAIL;
    size_t n;
    unsigned char *echo;
    rf_engine_input *in = engine_inputs(o, &n, &echo);
    struct cli_output out;
    struct gated gate = {&out, NULL};
    int status = CLI_FAIL;
    if (!in)
        cli_error("memory exhausted");
    else if ((o->shuf_mode || inflow_start(&gate.flow, in, n) == 0) &&
             shuf_output_open(&out, o) == 0) {
        const rf_engine_sink sink = {gated_begin, gated_writer, gated_room, gated_advance, &gate};
        rf_engine_error err;
        if (rf_engine_shuffle(&eo, in, n, &sink, &err) != RF_OK) {
            status = failed(&err, &out, p);
        } else {
            progress_done(p);
            status = output_close(&out);
        }
    }
    inflow_end(gate.flow);
    sodium_memzero(eo.key, sizeof eo.key);
    free(echo);
    free(in);
    return status;
}
