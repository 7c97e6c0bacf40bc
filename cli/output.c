/*
 * output.c -- standard output, -o FILE and --split parts (output.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "compress.h"
#include "output.h"

/* Output buffer: 1 MiB makes a thousand write(2) calls per GB, so their cost
 * disappears against the gather; it is also the usual pipe-max-size.  One
 * buffer serves every split part in turn: parts are written one after
 * another, never interleaved. */
#define OUT_BUFFER ((size_t)1 << 20)

/* Every part's temporary, and -o's, can be guarded at once. */
_Static_assert(CLEANUP_MAX_FILES >= RF_SPLIT_MAX_PARTS + 1, "cleanup.h holds every split part");

/* ------------------------------------------------------------------------ */
/* --split=SPEC and --output-pattern=PATTERN: the library's plan            */
/* ------------------------------------------------------------------------ */

/* "invalid WHAT 'TEXT'", then ": why" when the library gives a reason. */
static int bad_split_arg(const char *what, const char *text, const rf_split_error *e)
{
    char why[128];
    rf_split_error_message(e, why, sizeof why);
    if (*why)
        return cli_usage(NULL, "invalid %s %s: %s", what, cli_quote(text), why);
    return cli_usage(NULL, "invalid %s %s", what, cli_quote(text));
}

int split_parse(struct cli_split *s, const char *spec)
{
    split_free(s);
    rf_split_error e;
    const rf_status st = rf_split_parse(&s->plan, spec, &e);
    if (st == RF_ENOMEM) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    return st == RF_OK ? CLI_CONTINUE : bad_split_arg("split", spec, &e);
}

void split_free(struct cli_split *s)
{
    rf_split_names_free(s->names, s->plan.parts);
    rf_split_free(&s->plan);
    s->names = NULL;
}

int split_set_pattern(struct cli_split *s, const char *pattern)
{
    rf_split_error e;
    const rf_status st = rf_split_names(pattern, s->plan.parts, &s->names, &e);
    if (st == RF_ENOMEM) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    return st == RF_OK ? CLI_CONTINUE : bad_split_arg("output pattern", pattern, &e);
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */
/* ------------------------------------------------------------------------ */

/* Guard a's temporary against signals, with cleanup.h (the library's own
 * guard covers one file, a split needs several).  Nothing to guard when the
 * target is written in place (a device, a FIFO) or the temporary has no
 * name (O_TMPFILE). */
static int guard_file(const rf_atomic_file *a, int *slot)
{
    *slot = -1;
    const char *tmp = rf_atomic_temp_path(a);
    if (!tmp)
        return 0;
    *slot = cleanup_add(tmp);
    return *slot >= 0 ? 0 : ENAMETOOLONG;
}

/* rf_atomic_open, its temporary registered before any signal can see it
 * unregistered.  Returns 0 or an errno value (nothing left behind). */
static int open_guarded(rf_atomic_file *a, const char *name, int *slot)
{
    sigset_t old;
    cleanup_hold(&old);
    int e = cli_named_temps() ? rf_atomic_open_named(a, name) : rf_atomic_open(a, name);
    if (!e && (e = guard_file(a, slot)) != 0)
        rf_atomic_abort(a);
    cleanup_release(&old);
    return e;
}

static void unguard_abort(rf_atomic_file *a, int *slot)
{
    rf_atomic_abort(a);
    cleanup_remove(*slot);
    *slot = -1;
}

/* Every part is an open file until the end: make room under the soft
 * RLIMIT_NOFILE (the hard limit allows it on usual systems). */
static int ensure_fds(size_t parts, size_t fds)
{
    struct rlimit rl;
    const rlim_t need = (rlim_t)fds + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        cli_error("%zu output files exceed the limit of open files (%llu)", parts,
                  (unsigned long long)rl.rlim_max);
        return -1;
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        cli_error("cannot raise the limit of open files: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void abort_parts(struct cli_output *o, size_t from)
{
    for (size_t i = from; i < o->split->plan.parts; i++)
        unguard_abort(&o->parts[i].file, &o->parts[i].guard);
}

static void free_all(struct cli_output *o)
{
    outflow_free(o->flow);
    o->flow = NULL;
    if (o->sink_ready)
        rf_split_sink_free(&o->sink);
    o->sink_ready = 0;
    free(o->buf);
    free(o->parts);
    free(o->header);
    o->buf = NULL;
    o->parts = NULL;
    o->header = NULL;
}

/* The codec of the file `name` (NULL: standard output) under the spec. */
static enum cli_codec codec_of(const struct cli_output_spec *spec, const char *name)
{
    if (spec->compress != CLI_CODEC_BY_NAME)
        return spec->compress;
    return name ? codec_by_name(name) : CLI_CODEC_NONE;
}

/* The library's split sink over the parts' descriptors, or the pipes of
 * their compressors. */
static int start_sink(struct cli_output *o, const struct cli_output_spec *spec)
{
    const size_t parts = o->split->plan.parts;
    int *fds = malloc(parts * sizeof *fds);
    enum cli_codec *codecs = malloc(parts * sizeof *codecs);
    rf_status st = RF_ENOMEM;
    int e = 0;
    if (fds && codecs) {
        for (size_t i = 0; i < parts; i++) {
            fds[i] = o->parts[i].file.fd;
            codecs[i] = codec_of(spec, o->split->names[i]);
        }
        e = outflow_start(&o->flow, fds, codecs, parts, spec->threads);
        if (!e)
            st = rf_split_sink_init(&o->sink, &o->split->plan, fds, o->buf, OUT_BUFFER);
    }
    free(fds);
    free(codecs);
    if (e) {
        cli_error("cannot compress the output: %s", strerror(e));
        return -1;
    }
    if (st != RF_OK) {
        cli_error("cannot write the split: %s", rf_strerror(st));
        return -1;
    }
    o->sink_ready = 1;
    return 0;
}

/* The descriptors the parts hold: every part a file, a compressed one also
 * a pipe's two ends. */
static size_t parts_fds(const struct cli_output_spec *spec)
{
    const struct cli_split *s = spec->split;
    size_t n = s->plan.parts;
    for (size_t i = 0; i < s->plan.parts; i++)
        n += codec_of(spec, s->names[i]) != CLI_CODEC_NONE ? 2 : 0;
    return n;
}

static int open_parts(struct cli_output *o, const struct cli_output_spec *spec)
{
    const struct cli_split *s = spec->split;
    o->split = s;
    const size_t parts = s->plan.parts;
    size_t a, b;
    const int same = rf_same_file_pair((const char *const *)s->names, parts, &a, &b);
    if (same != 0) {
        if (same < 0)
            cli_error("memory exhausted");
        else
            cli_error("%s and %s are the same file", cli_quote(s->names[a]),
                      cli_quote(s->names[b]));
        return -1;
    }
    if (ensure_fds(parts, parts_fds(spec)) != 0)
        return -1;
    o->parts = calloc(parts, sizeof *o->parts);
    if (!o->parts) {
        cli_error("memory exhausted");
        return -1;
    }
    for (size_t i = 0; i < parts; i++) {
        struct cli_output_part *p = &o->parts[i];
        const int e = open_guarded(&p->file, s->names[i], &p->guard);
        if (e) {
            cli_error("%s: %s", s->names[i], strerror(e));
            for (size_t j = 0; j < i; j++)
                unguard_abort(&o->parts[j].file, &o->parts[j].guard);
            return -1;
        }
    }
    if (start_sink(o, spec) != 0) {
        abort_parts(o, 0);
        return -1;
    }
    return 0;
}

static int open_single(struct cli_output *o, const struct cli_output_spec *spec)
{
    const char *name = spec->name;
    o->name = name;
    int fd = STDOUT_FILENO;
    if (name) {
        const int e = open_guarded(&o->file, name, &o->guard);
        if (e) {
            cli_error("%s: %s", name, strerror(e));
            return -1;
        }
        fd = o->file.fd;
    }
    const enum cli_codec codec = codec_of(spec, name);
    const int e = outflow_start(&o->flow, &fd, &codec, 1, spec->threads);
    if (e) {
        cli_error("cannot compress the output: %s", strerror(e));
        if (name)
            unguard_abort(&o->file, &o->guard);
        return -1;
    }
    rf_writer_init(&o->w, fd, o->buf, OUT_BUFFER);
    return 0;
}

int output_open(struct cli_output *o, const struct cli_output_spec *spec)
{
    memset(o, 0, sizeof *o);
    o->guard = -1;
    o->buf = malloc(OUT_BUFFER);
    if (!o->buf) {
        cli_error("memory exhausted");
        return -1;
    }
    const int split = spec->split && spec->split->plan.parts > 0;
    const int r = split ? open_parts(o, spec) : open_single(o, spec);
    if (r != 0)
        free_all(o);
    return r;
}

int output_splitting(const struct cli_output *o)
{
    return o->split != NULL;
}

/* ------------------------------------------------------------------------ */
/* Planning                                                                 */
/* ------------------------------------------------------------------------ */

static int misuse(struct cli_output *o, const char *what);

/* Why the split sink refused the total: the counts of --split against the
 * records output, as the program words it (the library's reason names no
 * option), or memory. */
static void plan_error(struct cli_output *o, int e)
{
    const rf_split_error *why = &o->sink.error;
    if (e == ENOMEM)
        cli_error("memory exhausted");
    else if (why->problem == RF_SPLIT_COUNTS_EXCEED)
        cli_error("the --split counts add up to %llu, more than the %llu records output",
                  (unsigned long long)why->sum, (unsigned long long)why->total);
    else if (why->problem == RF_SPLIT_COUNTS_DIFFER)
        cli_error("the --split counts add up to %llu, but %llu records are output",
                  (unsigned long long)why->sum, (unsigned long long)why->total);
    else
        misuse(o, "the split output refused its plan");
    o->err = -1;
}

int output_set_total(struct cli_output *o, uint64_t n)
{
    if (!o->split)
        return 0;
    if (o->planned) {
        misuse(o, "split output planned twice");
        return -1;
    }
    const int e = o->sink.sink.begin(&o->sink, o->header, o->header_len, n);
    if (e) {
        plan_error(o, e);
        return -1;
    }
    o->planned = 1;
    return 0;
}

int output_set_header(struct cli_output *o, const void *bytes, size_t len)
{
    if (len == 0)
        return 0; /* bytes may be NULL */
    if (!o->split) {
        rf_writer_put(&o->w, bytes, len);
        return 0;
    }
    free(o->header);
    o->header = malloc(len);
    if (!o->header) {
        cli_error("memory exhausted");
        return -1;
    }
    memcpy(o->header, bytes, len);
    o->header_len = len;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* A caller broke the protocol (records before output_set_total, or more than
 * planned): fail the output rather than write a wrong split. */
static int misuse(struct cli_output *o, const char *what)
{
    rf_writer *w = o->split ? &o->sink.w : &o->w;
    if (!o->err) {
        cli_error("internal error: %s", what);
        o->err = -1;
    }
    if (!w->err)
        w->err = EINVAL;
    return EINVAL;
}

rf_writer *output_writer(struct cli_output *o)
{
    if (!o->split)
        return &o->w;
    if (!o->planned && !o->sink.w.err)
        misuse(o, "split output written before its size was known");
    return o->sink.sink.writer(&o->sink);
}

uint64_t output_room(struct cli_output *o)
{
    if (!o->split)
        return UINT64_MAX;
    return o->sink.sink.room(&o->sink);
}

/* A compressor that failed makes the writer fail: the run stops early, and
 * closing reports the compressor's error. */
static void take_flow_error(struct cli_output *o)
{
    const int e = outflow_failed(o->flow);
    rf_writer *w = o->split ? &o->sink.w : &o->w;
    if (e && !w->err)
        w->err = e;
}

int output_advance(struct cli_output *o, uint64_t records)
{
    take_flow_error(o);
    if (!o->split)
        return o->w.err;
    if (records > output_room(o))
        return misuse(o, "more records written than planned");
    return o->sink.sink.advance(&o->sink, records);
}

/* The engine sink's calls (output_sink), on a struct cli_output. */
static rf_writer *sink_writer(void *ctx)
{
    return output_writer(ctx);
}

static uint64_t sink_room(void *ctx)
{
    return output_room(ctx);
}

static int sink_advance(void *ctx, uint64_t records)
{
    return output_advance(ctx, records);
}

rf_engine_sink output_sink(struct cli_output *o,
                           int (*begin)(void *ctx, const void *header, size_t len,
                                        uint64_t records))
{
    const rf_engine_sink s = {begin, sink_writer, sink_room, sink_advance, o};
    return s;
}

int output_records(struct cli_output *o, const rf_records *r, const uint64_t *offs, size_t count)
{
    while (count > 0) {
        rf_writer *w = output_writer(o);
        if (w->err)
            return w->err;
        const uint64_t room = output_room(o);
        if (room == 0)
            return misuse(o, "more records written than planned");
        const size_t k = room < count ? (size_t)room : count;
        const int werr = rf_records_write(r, offs, k, w);
        if (werr)
            return werr;
        const int e = output_advance(o, k);
        if (e)
            return e;
        offs += k;
        count -= k;
    }
    return output_writer(o)->err;
}

/* ------------------------------------------------------------------------ */
/* Closing                                                                  */
/* ------------------------------------------------------------------------ */

static int close_single(struct cli_output *o)
{
    int e = rf_writer_flush(&o->w);
    size_t which;
    const int fe = outflow_finish(o->flow, &which);
    if (fe)
        e = fe; /* the compressor's error is the cause of any writer error */
    int status = CLI_OK;
    if (o->name) {
        if (e) {
            unguard_abort(&o->file, &o->guard);
        } else {
            /* Unguarded after the rename: a signal in between unlinks a name
             * that no longer exists, which is harmless. */
            const int c = rf_atomic_commit(&o->file);
            cleanup_remove(o->guard);
            if (c) {
                cli_error("%s: %s", o->name, strerror(c));
                status = CLI_FAIL;
            }
        }
    } else if (!e && close(STDOUT_FILENO) != 0 && errno != EBADF) {
        e = errno;
    }
    free_all(o);
    /* EPIPE included: SIGPIPE is ignored (it would have ended the process),
     * and shuf then says "write error: Broken pipe" too. */
    if (e) {
        cli_error("write error: %s", strerror(e));
        return CLI_FAIL;
    }
    return status;
}

/* Write every part to the end and fsync them all, so that the renames that
 * follow are the only step left.  Returns 0 or an errno value (reported). */
static int finish_parts(struct cli_output *o)
{
    const size_t parts = o->split->plan.parts;
    if (!o->sink.w.err && o->sink.done != o->sink.total)
        return misuse(o, "fewer records written than planned");
    int e = rf_split_sink_finish(&o->sink);
    size_t which = o->sink.cur;
    const int fe = outflow_finish(o->flow, &which);
    if (fe)
        e = fe; /* the compressor's error is the cause of any writer error */
    if (e) {
        if (o->err >= 0)
            cli_error("%s: %s", o->split->names[which], strerror(e));
        return e;
    }
    for (size_t i = 0; i < parts; i++) {
        const rf_atomic_file *a = &o->parts[i].file;
        if (rf_atomic_staged(a) && fsync(a->fd) != 0) {
            e = errno;
            cli_error("%s: %s", o->split->names[i], strerror(e));
            return e;
        }
    }
    return 0;
}

static int close_parts(struct cli_output *o)
{
    const size_t parts = o->split->plan.parts;
    if (!o->planned && !o->err)
        misuse(o, "split output closed before its size was known");
    if (o->err || finish_parts(o) != 0) {
        abort_parts(o, 0);
        free_all(o);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < parts; i++) {
        const int e = rf_atomic_commit(&o->parts[i].file);
        cleanup_remove(o->parts[i].guard);
        o->parts[i].guard = -1;
        if (e) {
            cli_error("%s: %s", o->split->names[i], strerror(e));
            if (i > 0)
                cli_error("%zu of %zu parts were already in place", i, parts);
            abort_parts(o, i + 1);
            free_all(o);
            return CLI_FAIL;
        }
    }
    free_all(o);
    return CLI_OK;
}

int output_finish(struct cli_output *o)
{
    if (o->split) {
        if (!o->planned && !o->err)
            misuse(o, "split output finished before its size was known");
        return o->err || finish_parts(o) != 0 ? -1 : 0;
    }
    int e = rf_writer_flush(&o->w);
    if (!e && o->name && rf_atomic_staged(&o->file) && fsync(o->file.fd) != 0)
        e = errno;
    if (e) {
        cli_error("%s: %s", o->name ? o->name : "write error", strerror(e));
        o->err = -1;
        return -1;
    }
    return 0;
}

int output_close(struct cli_output *o)
{
    return o->split ? close_parts(o) : close_single(o);
}

void output_abort(struct cli_output *o)
{
    outflow_free(o->flow); /* before the files it writes go */
    o->flow = NULL;
    if (o->split && o->parts)
        abort_parts(o, 0);
    else if (o->name)
        unguard_abort(&o->file, &o->guard);
    free_all(o);
}
