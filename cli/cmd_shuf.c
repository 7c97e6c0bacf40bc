/*
 * cmd_shuf.c -- the shuf-compatible mode: options to modes.
 *
 * Order contract (pinned by tests/cli/cli_seed.bats, checked against the
 * independent tests/checks/keyed_reference.py): records -- files, stdin,
 * -e -- come out in the library's keyed order (riffle.h, "Keyed order") of
 * the records after the --header ones, whichever engine computes it
 * (riffle_engine.h, through shuf_engine.c: in memory, streamed head for
 * -n K, external buckets beyond --memory; any --threads): -n K is the first
 * K of that order.  -i LO-HI for up to RF_PERM_TABLE_MAX = 2^20 numbers
 * puts them in the same keyed order,
 * so `seq` into a file, stdin, -e and -i all agree.  A larger range (up to
 * all 2^64 numbers) is never held: it comes out in the order of the keyed
 * permutation rf_perm (riffle_perm.h), in constant memory (run_range_perm),
 * and `riffle perm` evaluates the same p.  -r prints record rf_below(n) of
 * the generator each time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "decompress.h"
#include "output.h"
#include "progress.h"
#include "shuf_bykey.h"
#include "shuf_keyroute.h"
#include "shuf_engine.h"
#include "riffle_io.h"
#include "riffle_perm.h"
#include "shuf.h"

/* -r draws this many records, then writes them with prefetching. */
#define REPEAT_BATCH 1024
/* Records written between two progress updates: about a megabyte of
 * 16-byte lines, and ~1% of the write loop's time even at 20 ns a call. */
#define WRITE_CHUNK 65536

/* -n 0 (and no header): nothing to read; -o FILE (or every split part) is
 * still created, empty. */
static int run_nothing(const struct shuf_opts *o)
{
    struct cli_output out;
    if (shuf_output_open(&out, o) != 0)
        return CLI_FAIL;
    if (output_set_total(&out, 0) != 0) {
        output_abort(&out);
        return CLI_FAIL;
    }
    return output_close(&out);
}

/* The records -r draws from: its inputs are held whole, so they are held
 * within the memory budget -- the bytes read into memory (a sole regular
 * file is mapped, not held) and 8 bytes of offset per record -- and a
 * regular input is stamped when opened, so that a change while the run
 * uses it fails the run before its output is committed (riffle_io.h,
 * "Inputs that change while they are read"). */
struct repeat_in {
    rf_records r;
    uint64_t budget;
    size_t counted;    /* bytes of r.data whose delimiters are counted */
    uint64_t records;  /* the delimiters counted */
    int n_stamps;
    const char **names;
    rf_file_stamp *stamps;
};

static int too_large(const struct repeat_in *in, const char *name)
{
    cli_error("%s: too large for --repeat within the memory budget of %llu bytes "
              "(see --memory)",
              cli_quote_file(name), (unsigned long long)in->budget);
    return -1;
}

/* Whether what is held fits the budget now that `name` is read: the bytes
 * read into memory, the offsets of the records found so far and the one
 * after the last delimiter. */
static int within_budget(struct repeat_in *in, const char *name, int mapped)
{
    rf_records *r = &in->r;
    in->records += rf_delims_count(r->data + in->counted, r->size - in->counted, r->delim);
    in->counted = r->size;
    const uint64_t held = (mapped ? 0 : (uint64_t)r->size) + 8 * (in->records + 1);
    return held > in->budget ? too_large(in, name) : 0;
}

/* The input `name`, read from `given` when it is a descriptor (standard
 * input, a decompressed input's pipe), else opened. */
static int add_input(struct repeat_in *in, const char *name, int given, int sole)
{
    const int fd = given >= 0 ? given : open(name, O_RDONLY | O_CLOEXEC);
    rf_file_stamp then = {0};
    int e = fd < 0 ? errno : rf_file_stamp_sum_fd(fd, &then);
    int more = 0;
    /* A sole regular file is mapped when it can be (riffle_io.h): not held.
     * Anything else -- stdin left inside a file by an earlier reader, a file
     * system without mmap(2) -- is read, and never past the budget. */
    const int mapped = !e && sole && rf_records_map_fd(&in->r, fd);
    const size_t max = in->budget < SIZE_MAX ? (size_t)in->budget : SIZE_MAX;
    if (!e && !mapped)
        e = rf_records_add_fd_max(&in->r, fd, max, &more);
    if (fd >= 0 && given < 0)
        close(fd);
    if (e && fd >= 0)
        cli_read_error(name, e);
    else if (e)
        cli_error("%s: %s", cli_quote_file(name), strerror(e));
    if (e)
        return -1;
    if (more)
        return too_large(in, name);
    if (then.regular) {
        in->names[in->n_stamps] = name;
        in->stamps[in->n_stamps++] = then;
    }
    return within_budget(in, name, mapped);
}

/* The first input that changed since it was stamped: reported, -1. */
static int inputs_changed(const struct repeat_in *in)
{
    for (int i = 0; i < in->n_stamps; i++) {
        const char *name = in->names[i];
        const int fd = strcmp(name, "-") == 0 ? STDIN_FILENO : -1;
        if (rf_file_snapshot_changed(&in->stamps[i], fd, name)) {
            cli_error("%s: file changed as we read it", cli_quote_file(name));
            return -1;
        }
    }
    return 0;
}

/* add_input as a shuf_input_fn, for shuf_each_input. */
static int add_one(void *ctx, const char *name, int fd, int sole)
{
    return add_input(ctx, name, fd, sole);
}

static int load_records(const struct shuf_opts *o, struct repeat_in *in)
{
    rf_records *r = &in->r;
    int e = 0;
    const int n = o->n_operands > 0 ? o->n_operands : 1;
    in->budget = o->memory ? o->memory : rf_engine_default_memory();
    in->names = calloc((size_t)n, sizeof *in->names);
    in->stamps = calloc((size_t)n, sizeof *in->stamps);
    if (!in->names || !in->stamps) {
        e = ENOMEM;
    } else if (o->echo) {
        for (int i = 0; i < o->n_operands && !e; i++)
            e = rf_records_add_record(r, o->operands[i], strlen(o->operands[i]));
    } else if (shuf_each_input(o, o->shuf_mode, add_one, in) != 0) {
        return -1; /* compressed inputs are decompressed, but in shuf mode */
    }
    if (!e)
        e = rf_records_index(r);
    if (e) {
        cli_error("memory exhausted");
        return -1;
    }
    return 0;
}

static void repeat_in_free(struct repeat_in *in)
{
    rf_records_free(&in->r);
    free(in->names);
    free(in->stamps);
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
        if (rf_records_write(r, batch, k, w) != 0)
            return; /* the error sticks in w: output_close reports it */
        count -= k;
    }
}

static int no_lines_to_repeat(void)
{
    cli_error("no lines to repeat");
    return CLI_FAIL;
}

/* Bytes [0, end) of r: the first `head` records, delimiters included (the
 * records of a set are stored back to back, each followed by its delimiter,
 * except perhaps the very last).  Reads offs[head]: call before shuffling. */
static size_t header_end(const rf_records *r, size_t head)
{
    return head < r->n ? (size_t)r->offs[head] : r->size;
}

int shuf_put_header(struct cli_output *out, const rf_records *r, size_t head)
{
    if (head == 0)
        return 0;
    if (!output_splitting(out)) {
        /* A write error sticks in the writer: output_close reports it. */
        const int written = rf_records_write(r, r->offs, head, output_writer(out));
        (void)written;
        return 0;
    }
    const size_t end = header_end(r, head);
    if (r->data[end - 1] == r->delim)
        return output_set_header(out, r->data, end);
    /* The whole input is header, its last line unterminated. */
    unsigned char *h = malloc(end + 1);
    if (!h) {
        cli_error("memory exhausted");
        return -1;
    }
    memcpy(h, r->data, end);
    h[end] = r->delim;
    const int e = output_set_header(out, h, end + 1);
    free(h);
    return e;
}

/* Write the k shuffled records at offs, reporting progress: bytes are
 * estimated from the record count (the body's bytes times the fraction of
 * its records written), which costs nothing per record. */
static void write_body(struct cli_output *out, const rf_records *r, const uint64_t *offs,
                       size_t k, size_t m, size_t body_bytes, struct progress *p)
{
    const double per_record = m ? (double)body_bytes / (double)m : 0;
    progress_phase(p, "write", (uint64_t)(per_record * (double)k));
    for (size_t i = 0; i < k;) {
        const size_t c = min_size(k - i, WRITE_CHUNK);
        if (output_records(out, r, offs + i, c) != 0)
            break;
        i += c;
        progress_update(p, (uint64_t)(per_record * (double)i));
    }
    progress_done(p);
}

static int run_records(const struct shuf_opts *o, rf_rng *g, struct progress *p)
{
    struct repeat_in in = {0};
    rf_records_init(&in.r, o->delim);
    rf_records_defer_index(&in.r); /* counted per input, indexed once */
    int status = CLI_FAIL;
    if (load_records(o, &in) != 0)
        goto done;
    const size_t head = min_size(o->header, in.r.n);
    const size_t m = in.r.n - head;
    const uint64_t count = o->have_count ? o->count : UINT64_MAX;
    if (o->repeat && m == 0 && count > 0) {
        status = no_lines_to_repeat();
        goto done;
    }
    const size_t k = min_size(count, m);
    struct cli_output out;
    if (shuf_output_open(&out, o) != 0)
        goto done;
    if (shuf_put_header(&out, &in.r, head) != 0 ||
        output_set_total(&out, o->repeat ? count : k) != 0) {
        output_abort(&out);
        goto done;
    }
    if (o->repeat) {
        repeat_records(&in.r, head, count, g, output_writer(&out));
    } else {
        const size_t body_bytes = in.r.size - header_end(&in.r, head); /* before the shuffle */
        if (k < m)
            rf_shuffle_partial(g, in.r.offs + head, m, k, sizeof *in.r.offs);
        else
            rf_shuffle_u64(g, in.r.offs + head, m);
        write_body(&out, &in.r, in.r.offs + head, k, m, body_bytes, p);
    }
    if (inputs_changed(&in) != 0) {
        output_abort(&out);
        goto done;
    }
    status = output_close(&out);
done:
    repeat_in_free(&in);
    return status;
}

/* Write v[0..n), each followed by delim, through the output's parts. */
static void write_numbers(struct cli_output *out, const uint64_t *v, size_t n,
                          unsigned char delim)
{
    while (n > 0) {
        rf_writer *w = output_writer(out);
        if (w->err)
            return;
        const uint64_t room = output_room(out);
        if (room == 0) {
            output_advance(out, n); /* more than planned: the output fails */
            return;
        }
        const size_t k = min_size(room, n);
        for (size_t i = 0; i < k; i++) {
            rf_writer_put_u64(w, v[i]);
            rf_writer_putc(w, delim);
        }
        if (output_advance(out, k) != 0)
            return;
        v += k;
        n -= k;
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

/* Decimal digits of v at p; returns the end. */
static char *put_decimal(char *p, uint64_t v)
{
    char d[20];
    size_t n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = d[--n];
    return p;
}

/* The --header numbers of -i: streamed to a single output; for a split,
 * made into bytes (at most 21 a number) that start every part. */
static int put_number_header(struct cli_output *out, uint64_t lo, uint64_t count,
                             unsigned char delim)
{
    if (count == 0)
        return 0;
    if (!output_splitting(out)) {
        write_run(output_writer(out), lo, count, delim);
        return 0;
    }
    char *h = count <= SIZE_MAX / 21 ? malloc((size_t)count * 21) : NULL;
    if (!h) {
        cli_error("memory exhausted");
        return -1;
    }
    char *p = h;
    for (uint64_t i = 0; i < count; i++) {
        p = put_decimal(p, lo + i);
        *p++ = (char)delim;
    }
    const int e = output_set_header(out, h, (size_t)(p - h));
    free(h);
    return e;
}

/* The --header part of -i LO-HI (lo <= hi): min(K, n) numbers, where
 * n = hi - lo + 1 may be 2^64. */
static uint64_t range_head(const struct shuf_opts *o)
{
    const uint64_t max = o->hi - o->lo;
    return o->header <= max ? o->header : max + 1;
}

/* -i LO-HI -r: no need to hold the range; any 64-bit range.  (--split
 * excludes -r: the output is a single one.) */
static int run_range_repeat(const struct shuf_opts *o, rf_rng *g)
{
    const int empty = o->lo > o->hi;
    const uint64_t head = empty ? 0 : range_head(o);
    const int none = empty || head > o->hi - o->lo; /* nothing after the header */
    uint64_t count = o->have_count ? o->count : UINT64_MAX;
    if (none && count > 0)
        return no_lines_to_repeat();
    struct cli_output out;
    if (shuf_output_open(&out, o) != 0)
        return CLI_FAIL;
    rf_writer *w = output_writer(&out);
    write_run(w, o->lo, head, o->delim);
    const uint64_t first = o->lo + head, max = o->hi - first;
    for (; count > 0 && !w->err; count--) {
        rf_writer_put_u64(w, first + draw_upto(g, max));
        rf_writer_putc(w, o->delim);
    }
    return output_close(&out);
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
static void write_perm(struct cli_output *out, const rf_perm *p, uint64_t lo, int limited,
                       uint64_t limit, unsigned char delim)
{
    const uint64_t max = rf_perm_max(p);
    uint64_t buf[PERM_BLOCK];
    for (uint64_t first = 0; !output_writer(out)->err; first += PERM_BLOCK) {
        size_t c = max - first < PERM_BLOCK - 1 ? (size_t)(max - first) + 1 : PERM_BLOCK;
        if (limited && limit < c)
            c = (size_t)limit;
        if (c == 0)
            return;
        rf_perm_at_range(p, first, c, buf);
        for (size_t j = 0; j < c; j++)
            buf[j] += lo;
        write_numbers(out, buf, c, delim);
        limit -= limited ? c : 0;
        if (max - first == c - 1)
            return; /* the last number of the domain */
    }
}

/* The numbers -i LO-HI outputs after its header: min(-n, numbers left); 0
 * with *all = 1 when that is all 2^64 numbers (0-18446744073709551615). */
static uint64_t range_body(const struct shuf_opts *o, uint64_t head, int *all)
{
    *all = 0;
    if (head > o->hi - o->lo)
        return 0;
    const uint64_t max = o->hi - o->lo - head; /* body: max + 1 numbers */
    if (o->have_count && o->count <= max)
        return o->count;
    *all = max == UINT64_MAX;
    return max + 1;
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
    int all;
    const uint64_t total = range_body(o, head, &all);
    if (all && o->split.plan.parts > 0) {
        cli_error("cannot split 2^64 numbers: give -n");
        return CLI_FAIL;
    }
    rf_perm *p = NULL;
    if (body && !(o->have_count && o->count == 0) && !(p = range_perm(o, o->hi - o->lo - head)))
        return CLI_FAIL;
    struct cli_output out;
    if (shuf_output_open(&out, o) != 0) {
        rf_perm_free(p);
        return CLI_FAIL;
    }
    if (put_number_header(&out, o->lo, head, o->delim) != 0 ||
        output_set_total(&out, all ? UINT64_MAX : total) != 0) {
        rf_perm_free(p);
        output_abort(&out);
        return CLI_FAIL;
    }
    if (p)
        write_perm(&out, p, o->lo + head, o->have_count, o->count, o->delim);
    rf_perm_free(p);
    return output_close(&out);
}

/* -i LO-HI for at most 2^20 numbers (or none): the numbers in an array,
 * shuffled as records are, so -i and `seq` give the same order. */
static rf_status order_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    return rf_keyed_keys(ctx, first, out, n);
}

/* -i LO-HI for at most 2^20 numbers (or none): the numbers after the header
 * in the keyed order, as records are, so -i and `seq` give the same order. */
static int run_range(const struct shuf_opts *o)
{
    const uint64_t n = o->lo <= o->hi ? o->hi - o->lo + 1 : 0; /* <= 2^20 */
    const size_t head = min_size(o->header, (size_t)n);
    const size_t m = (size_t)n - head;
    const size_t k = min_size(o->have_count ? o->count : UINT64_MAX, m);
    rf_keyed_order order;
    if (shuf_keyed_order(o, &order) != 0)
        return CLI_FAIL;
    uint64_t *v = malloc(m ? m * sizeof *v : 1);
    if (!v) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    const rf_status st = rf_keyed_index(&order, m, order_keys, &order, o->threads, v);
    if (st != RF_OK) {
        cli_error("cannot shuffle: %s", rf_strerror(st));
        free(v);
        return CLI_FAIL;
    }
    for (size_t j = 0; j < k; j++)
        v[j] += o->lo + head;
    struct cli_output out;
    int status = CLI_FAIL;
    if (shuf_output_open(&out, o) == 0) {
        if (put_number_header(&out, o->lo, head, o->delim) == 0 &&
            output_set_total(&out, k) == 0) {
            write_numbers(&out, v, k, o->delim);
            status = output_close(&out);
        } else {
            output_abort(&out);
        }
    }
    free(v);
    return status;
}

static int run(const struct shuf_opts *o)
{
    if (o->lockstep) { /* files only (shuf_options.c): every count compared, -n 0 too */
        struct progress p;
        progress_init(&p, o->progress);
        return shuf_run_lockstep(o, &p);
    }
    /* shuf -n 0 reads nothing it need not: no input, no random source. */
    if (o->have_count && o->count == 0 && o->header == 0)
        return run_nothing(o);
    /* A huge range needs a key, not a generator. */
    if (o->have_range && !o->repeat && range_is_huge(o))
        return run_range_perm(o);
    if (o->have_range && !o->repeat)
        return run_range(o);
    if (o->key.field) { /* --key: a split by key (-i, -n, -r refused) */
        if (!shuf_keyroute_fits(o)) /* -e, > 64 compressed parts: in memory */
            return shuf_run_bykey(o);
        struct progress p;
        progress_init(&p, o->progress);
        return shuf_run_keyroute(o, &p);
    }
    if (!o->have_range && !o->repeat) { /* records: the keyed order's engines */
        struct progress p;
        progress_init(&p, o->progress);
        return shuf_run_keyed(o, &p);
    }
    rf_rng storage;
    rf_rng *g = cli_rng_make(&o->rng, &storage);
    if (!g)
        return CLI_FAIL;
    struct progress p;
    progress_init(&p, o->progress);
    int status;
    if (o->have_range)
        status = run_range_repeat(o, g);
    else
        status = run_records(o, g, &p);
    cli_rng_release(g, &storage);
    return status;
}

int cli_shuf_main(int argc, char **argv, int shuf_mode)
{
    struct shuf_opts o;
    int status = cli_shuf_parse(argc, argv, shuf_mode, &o);
    if (status == CLI_CONTINUE) {
        /* Best effort, as before: without handlers a signal still ends the
         * run, only leaving temporary files behind. */
        (void)cleanup_init();
        status = run(&o);
    }
    cli_shuf_free(&o);
    return status;
}
