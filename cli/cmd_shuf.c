/*
 * cmd_shuf.c -- the shuf-compatible mode: read the records, shuffle an array
 * of their offsets with rf_shuffle (or its head with rf_shuffle_partial for
 * -n), and write them in that order.
 *
 * Order contract (pinned by tests/cli_seed.bats): the output is the offsets
 * array after rf_shuffle -- front-to-back Fisher-Yates -- over the records
 * after the --header ones; -n K is rf_shuffle_partial(.., K) and prints the
 * first K, which riffle.h guarantees to be the head of the full shuffle; -r
 * prints record rf_below(n) each time.  -i LO-HI shuffles the numbers the same
 * way, so `seq` into a file, stdin, -e and -i all give the same order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "riffle_io.h"
#include "shuf.h"

/* Output buffer: 1 MiB makes a thousand write(2) calls per GB, so their cost
 * disappears against the gather; it is also the usual pipe-max-size. */
#define OUT_BUFFER ((size_t)1 << 20)
/* -r draws this many records, then writes them with prefetching. */
#define REPEAT_BATCH 1024

struct output {
    rf_writer w;
    rf_atomic_file file;
    const char *name; /* -o FILE, or NULL for stdout */
    unsigned char *buf;
};

static int out_open(struct output *out, const char *name)
{
    out->name = name;
    out->buf = malloc(OUT_BUFFER);
    if (!out->buf) {
        cli_error("memory exhausted");
        return -1;
    }
    int fd = STDOUT_FILENO;
    if (name) {
        const int e = rf_atomic_open(&out->file, name);
        if (e) {
            cli_error("%s: %s", name, strerror(e));
            free(out->buf);
            return -1;
        }
        rf_atomic_guard_signals(&out->file);
        fd = out->file.fd;
    }
    rf_writer_init(&out->w, fd, out->buf, OUT_BUFFER);
    return 0;
}

/* Flush and close, replacing -o FILE only if everything was written.  A
 * closed pipe (EPIPE, when SIGPIPE is ignored) ends quietly: the reader has
 * all it wanted, as with `shuf | head`. */
static int out_close(struct output *out)
{
    int e = rf_writer_flush(&out->w);
    free(out->buf);
    if (out->name) {
        if (e) {
            rf_atomic_abort(&out->file);
        } else if ((e = rf_atomic_commit(&out->file)) != 0) {
            cli_error("%s: %s", out->name, strerror(e));
            return CLI_FAIL;
        }
    } else if (!e && close(STDOUT_FILENO) != 0 && errno != EBADF) {
        e = errno;
    }
    if (e == EPIPE)
        return CLI_FAIL;
    if (e) {
        cli_error("write error: %s", strerror(e));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* -n 0 (and no header): nothing to read; -o FILE is still created empty. */
static int run_nothing(const struct shuf_opts *o)
{
    struct output out;
    if (out_open(&out, o->output) != 0)
        return CLI_FAIL;
    return out_close(&out);
}

static int add_input(rf_records *r, const char *name)
{
    const int is_stdin = strcmp(name, "-") == 0;
    const int fd = is_stdin ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
    int e = fd < 0 ? errno : rf_records_add_fd(r, fd);
    if (fd >= 0 && !is_stdin)
        close(fd);
    if (e)
        cli_error("%s: %s", name, strerror(e));
    return e ? -1 : 0;
}

static int load_records(const struct shuf_opts *o, rf_records *r)
{
    int e = 0;
    if (o->echo) {
        for (int i = 0; i < o->n_operands && !e; i++)
            e = rf_records_add_record(r, o->operands[i], strlen(o->operands[i]));
    } else if (o->n_operands == 0) {
        if (add_input(r, "-") != 0)
            return -1;
    } else {
        for (int i = 0; i < o->n_operands; i++)
            if (add_input(r, o->operands[i]) != 0)
                return -1;
    }
    if (!e)
        e = rf_records_index(r);
    if (e) {
        cli_error("memory exhausted");
        return -1;
    }
    return 0;
}

static size_t min_size(uint64_t a, size_t b)
{
    return a < b ? (size_t)a : b;
}

static void repeat_records(const rf_records *r, size_t first, uint64_t count, rf_rng *g,
                           rf_writer *w)
{
    uint64_t batch[REPEAT_BATCH];
    const size_t m = r->n - first;
    while (count > 0 && !w->err) {
        const size_t k = min_size(count, REPEAT_BATCH);
        for (size_t i = 0; i < k; i++)
            batch[i] = r->offs[first + rf_below(g, m)];
        rf_records_write(r, batch, k, w);
        count -= k;
    }
}

static int no_lines_to_repeat(void)
{
    cli_error("no lines to repeat");
    return CLI_FAIL;
}

static int run_records(const struct shuf_opts *o, rf_rng *g)
{
    rf_records r;
    rf_records_init(&r, o->delim);
    int status = CLI_FAIL;
    if (load_records(o, &r) != 0)
        goto done;
    const size_t head = min_size(o->header, r.n);
    const size_t m = r.n - head;
    const uint64_t count = o->have_count ? o->count : UINT64_MAX;
    if (o->repeat && m == 0 && count > 0) {
        status = no_lines_to_repeat();
        goto done;
    }
    struct output out;
    if (out_open(&out, o->output) != 0)
        goto done;
    rf_records_write(&r, r.offs, head, &out.w);
    if (o->repeat) {
        repeat_records(&r, head, count, g, &out.w);
    } else {
        const size_t k = min_size(count, m);
        if (k < m)
            rf_shuffle_partial(g, r.offs + head, m, k, sizeof *r.offs);
        else
            rf_shuffle_u64(g, r.offs + head, m);
        rf_records_write(&r, r.offs + head, k, &out.w);
    }
    status = out_close(&out);
done:
    rf_records_free(&r);
    return status;
}

static void write_numbers(rf_writer *w, const uint64_t *v, size_t n, unsigned char delim)
{
    for (size_t i = 0; i < n && !w->err; i++) {
        rf_writer_put_u64(w, v[i]);
        rf_writer_putc(w, delim);
    }
}

/* -i LO-HI -r: no need to hold the range. */
static int run_range_repeat(const struct shuf_opts *o, rf_rng *g, uint64_t n)
{
    const uint64_t head = o->header < n ? o->header : n;
    const uint64_t m = n - head;
    uint64_t count = o->have_count ? o->count : UINT64_MAX;
    if (m == 0 && count > 0)
        return no_lines_to_repeat();
    struct output out;
    if (out_open(&out, o->output) != 0)
        return CLI_FAIL;
    for (uint64_t i = 0; i < head && !out.w.err; i++) {
        rf_writer_put_u64(&out.w, o->lo + i);
        rf_writer_putc(&out.w, o->delim);
    }
    for (; count > 0 && !out.w.err; count--) {
        rf_writer_put_u64(&out.w, o->lo + head + rf_below(g, m));
        rf_writer_putc(&out.w, o->delim);
    }
    return out_close(&out);
}

/* The numbers must fit in memory for now: a constant-memory random-access
 * permutation for huge ranges is planned (issue 6).  Refuse clearly rather than
 * let the kernel kill us: more than the physical memory is refused. */
static int range_fits(uint64_t n)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
    return n <= SIZE_MAX / sizeof(uint64_t) && n <= phys / sizeof(uint64_t);
}

static int run_range(const struct shuf_opts *o, rf_rng *g)
{
    const uint64_t n = o->hi - o->lo + 1;
    if (o->repeat)
        return run_range_repeat(o, g, n);
    if (!range_fits(n)) {
        cli_error("input range '%llu-%llu' is too large to hold in memory "
                  "(huge ranges are not supported yet)",
                  (unsigned long long)o->lo, (unsigned long long)o->hi);
        return CLI_FAIL;
    }
    uint64_t *v = malloc(n ? (size_t)n * sizeof *v : 1);
    if (!v) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = o->lo + i;
    const size_t head = min_size(o->header, (size_t)n);
    const size_t m = (size_t)n - head;
    const size_t k = min_size(o->have_count ? o->count : UINT64_MAX, m);
    if (k < m)
        rf_shuffle_partial(g, v + head, m, k, sizeof *v);
    else
        rf_shuffle_u64(g, v + head, m);
    struct output out;
    int status = CLI_FAIL;
    if (out_open(&out, o->output) == 0) {
        write_numbers(&out.w, v, head + k, o->delim);
        status = out_close(&out);
    }
    free(v);
    return status;
}

int cli_shuf_main(int argc, char **argv, int shuf_mode)
{
    struct shuf_opts o;
    const int r = cli_shuf_parse(argc, argv, shuf_mode, &o);
    if (r != CLI_CONTINUE)
        return r;
    /* shuf -n 0 reads nothing it need not: no input, no random source. */
    if (o.have_count && o.count == 0 && o.header == 0)
        return run_nothing(&o);
    rf_rng storage;
    rf_rng *g = cli_rng_make(&o.rng, &storage);
    if (!g)
        return CLI_FAIL;
    const int status = o.have_range ? run_range(&o, g) : run_records(&o, g);
    cli_rng_release(g, &storage);
    return status;
}
