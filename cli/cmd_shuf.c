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
 * way, so `seq` into a file, stdin, -e and -i all give the same order -- up to
 * RF_PERM_TABLE_MAX = 2^20 numbers.  A larger range (up to all 2^64 numbers) is
 * never held: it comes out in the order of the keyed permutation rf_perm
 * (riffle_perm.h), in constant memory (run_range_perm).  For n <= 2^20 that
 * permutation's table mode is the same rf_shuffle of 0..n-1, so `riffle perm`
 * agrees with -i on both sides of the threshold (tests/cli_perm.bats,
 * tests/cli_seed.bats).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "riffle_io.h"
#include "riffle_perm.h"
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

/* Uniform in [0, max]: rf_below(max + 1), or one raw word when max + 1 is
 * 2^64 (rf_range's rule for the full range). */
static uint64_t draw_upto(rf_rng *g, uint64_t max)
{
    return max == UINT64_MAX ? rf_rng_next64(g) : rf_below(g, max + 1);
}

/* The numbers LO .. LO+count-1, in order (a --header), streamed. */
static void write_run(rf_writer *w, uint64_t lo, uint64_t count, unsigned char delim)
{
    for (uint64_t i = 0; i < count && !w->err; i++) {
        rf_writer_put_u64(w, lo + i);
        rf_writer_putc(w, delim);
    }
}

/* The --header part of -i LO-HI (lo <= hi): min(K, n) numbers, where
 * n = hi - lo + 1 may be 2^64. */
static uint64_t range_head(const struct shuf_opts *o)
{
    const uint64_t max = o->hi - o->lo;
    return o->header <= max ? o->header : max + 1;
}

/* -i LO-HI -r: no need to hold the range; any 64-bit range. */
static int run_range_repeat(const struct shuf_opts *o, rf_rng *g)
{
    const int empty = o->lo > o->hi;
    const uint64_t head = empty ? 0 : range_head(o);
    const int none = empty || head > o->hi - o->lo; /* nothing after the header */
    uint64_t count = o->have_count ? o->count : UINT64_MAX;
    if (none && count > 0)
        return no_lines_to_repeat();
    struct output out;
    if (out_open(&out, o->output) != 0)
        return CLI_FAIL;
    write_run(&out.w, o->lo, head, o->delim);
    const uint64_t first = o->lo + head, max = o->hi - first;
    for (; count > 0 && !out.w.err; count--) {
        rf_writer_put_u64(&out.w, first + draw_upto(g, max));
        rf_writer_putc(&out.w, o->delim);
    }
    return out_close(&out);
}

/* More numbers than RF_PERM_TABLE_MAX (2^20): too many to shuffle in memory
 * in general, so they are streamed through a keyed permutation instead.  The
 * choice depends on the size of the range only, never on the machine, so a
 * seeded command gives the same output everywhere. */
static int range_is_huge(const struct shuf_opts *o)
{
    return o->lo <= o->hi && o->hi - o->lo >= RF_PERM_TABLE_MAX;
}

/* Numbers rf_perm_at_range evaluates per call. */
#define PERM_BLOCK 512

static rf_perm *range_perm(const struct shuf_opts *o, uint64_t max)
{
    uint8_t key[RF_KEY_BYTES];
    if (cli_rng_key(&o->rng, key) != 0)
        return NULL;
    rf_status s;
    rf_perm *p = rf_perm_new(key, max, RF_PERM_AUTO, &s);
    memset(key, 0, sizeof key);
    if (!p && s == RF_ENOMEM)
        cli_error("memory exhausted");
    else if (!p)
        cli_error("cannot make the permutation: %s", rf_strerror(s));
    return p;
}

/* Write LO + p(i) for i = 0, 1, ... up to `limit` numbers (all max + 1 of
 * them, which may be 2^64, when unlimited). */
static void write_perm(rf_writer *w, const rf_perm *p, uint64_t lo, int limited,
                       uint64_t limit, unsigned char delim)
{
    const uint64_t max = rf_perm_max(p);
    uint64_t buf[PERM_BLOCK];
    for (uint64_t first = 0; !w->err; first += PERM_BLOCK) {
        size_t c = max - first < PERM_BLOCK - 1 ? (size_t)(max - first) + 1 : PERM_BLOCK;
        if (limited && limit < c)
            c = (size_t)limit;
        if (c == 0)
            return;
        rf_perm_at_range(p, first, c, buf);
        for (size_t j = 0; j < c && !w->err; j++) {
            rf_writer_put_u64(w, lo + buf[j]);
            rf_writer_putc(w, delim);
        }
        limit -= limited ? c : 0;
        if (max - first == c - 1)
            return; /* the last number of the domain */
    }
}

/* -i LO-HI for more than 2^20 numbers, constant memory: the --header numbers
 * in place, then LO' + p(0), LO' + p(1), ... where p is rf_perm (riffle_perm.h,
 * RF_PERM_AUTO: the SipHash Feistel cipher with cycle walking) over the m
 * numbers after the header, starting at LO' = LO + header.  The key is made
 * from --seed or --random-source exactly as the generator's (cli_rng_key), or
 * from the OS; --rng does not enter (the permutation is not a generator).
 * -n K evaluates p(0) .. p(K-1) only: O(K), and the head of the full output. */
static int run_range_perm(const struct shuf_opts *o)
{
    const uint64_t head = range_head(o);
    const int body = head <= o->hi - o->lo; /* numbers after the header */
    rf_perm *p = NULL;
    if (body && !(o->have_count && o->count == 0) && !(p = range_perm(o, o->hi - o->lo - head)))
        return CLI_FAIL;
    struct output out;
    if (out_open(&out, o->output) != 0) {
        rf_perm_free(p);
        return CLI_FAIL;
    }
    write_run(&out.w, o->lo, head, o->delim);
    if (p)
        write_perm(&out.w, p, o->lo + head, o->have_count, o->count, o->delim);
    rf_perm_free(p);
    return out_close(&out);
}

/* -i LO-HI for at most 2^20 numbers (or none): the numbers in an array,
 * shuffled as records are, so -i and `seq` give the same order. */
static int run_range(const struct shuf_opts *o, rf_rng *g)
{
    const uint64_t n = o->lo <= o->hi ? o->hi - o->lo + 1 : 0; /* <= 2^20 */
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
    /* A huge range needs a key, not a generator. */
    if (o.have_range && !o.repeat && range_is_huge(&o))
        return run_range_perm(&o);
    rf_rng storage;
    rf_rng *g = cli_rng_make(&o.rng, &storage);
    if (!g)
        return CLI_FAIL;
    int status;
    if (o.have_range)
        status = o.repeat ? run_range_repeat(&o, g) : run_range(&o, g);
    else
        status = run_records(&o, g);
    cli_rng_release(g, &storage);
    return status;
}
