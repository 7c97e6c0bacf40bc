/* Distributed runs (riffle_engine.h, "Distributed runs") through the public
 * headers only: a run cut into P parts scattered to Q owners, the owners'
 * outputs concatenated in order after the header, must be rf_engine_shuffle's
 * bytes for the same options -- for P, Q = 1..7, tiny rounds (many of them),
 * budgets so small that every packet spills, several inputs, '\n' and '\0',
 * headers, unterminated last records, empty inputs, fewer records than
 * parts, a record longer than a part and than a round, and packets fed to
 * the gathers in several interleavings.  Also: rf_engine_gather_bytes
 * against what _write writes, a count, ties (frames built by hand from the
 * documented wire format, against rf_keyed_sort), the owner function, and
 * the error paths, none of which may leave a temporary file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "riffle.h"
#include "riffle_engine.h"
#include "riffle_io.h"
#include "test_bytes.h"
#include "dist/dist_internal.h"

#define KIB ((uint64_t)1024)
#define MIB (KIB * 1024)

/* ------------------------------------------------------------------------ */
/* Byte buffers and a test generator (test_bytes.h), memfd sinks            */

static void assert_same(const buf *got, const buf *want)
{
    if (got->len != want->len)
        fail_msg("length %zu, want %zu", got->len, want->len);
    for (size_t i = 0; i < got->len; i++)
        if (got->p[i] != want->p[i])
            fail_msg("first difference at byte %zu of %zu", i, got->len);
}

/* n records of 0..maxlen random letters, each ended by delim except the
 * last when `unterminated`. */
static void gen(buf *b, uint64_t *s, size_t n, size_t maxlen, unsigned char delim,
                int unterminated)
{
    for (size_t i = 0; i < n; i++) {
        const size_t len = (size_t)(mix_next(s) % (maxlen + 1));
        for (size_t j = 0; j < len; j++) {
            const unsigned char c = (unsigned char)('a' + mix_next(s) % 26);
            buf_put(b, &c, 1);
        }
        if (i + 1 < n || !unterminated)
            buf_put(b, &delim, 1);
    }
}

static void read_fd(int fd, buf *out)
{
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    unsigned char tmp[65536];
    ssize_t got;
    while ((got = read(fd, tmp, sizeof tmp)) > 0)
        buf_put(out, tmp, (size_t)got);
    assert_true(got == 0);
}

static void options(rf_engine_options *o, uint64_t seed, unsigned char delim, uint64_t header,
                    uint64_t memory, const char *tmpdir)
{
    rf_engine_options_init(o);
    assert_int_equal(rf_seed_u64(o->key, seed), RF_OK);
    o->delim = delim;
    o->header = header;
    o->memory = memory;
    o->tmpdir = tmpdir;
    o->threads = 2;
}

static void reference(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                      uint64_t count, buf *out)
{
    rf_engine_options c = *o;
    c.count = count;
    c.memory = 64 * MIB;
    const int fd = memfd_create("riffle-test-ref", MFD_CLOEXEC);
    assert_true(fd >= 0);
    unsigned char wb[65536];
    rf_fd_sink s;
    rf_fd_sink_init(&s, fd, wb, sizeof wb);
    rf_engine_error e;
    assert_int_equal(rf_engine_shuffle(&c, in, n, &s.sink, &e), RF_OK);
    assert_int_equal(rf_fd_sink_flush(&s), 0);
    read_fd(fd, out);
    close(fd);
}

/* A fresh temporary directory for a test's spills. */
static void fresh_dir(char *dir, size_t len)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, len, "%s/riffle-test-dist-XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------------ */
/* A distributed run in one process                                         */

/* The packets of one (part, owner): the rounds, as copies. */
typedef struct rounds {
    buf *r;
    size_t n, cap;
} rounds;

static void rounds_put(rounds *x, const void *p, size_t len)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 8;
        x->r = realloc(x->r, x->cap * sizeof *x->r);
        assert_non_null(x->r);
    }
    x->r[x->n] = (buf){0};
    buf_put(&x->r[x->n++], p, len);
}

static void rounds_free(rounds *x)
{
    for (size_t i = 0; i < x->n; i++)
        buf_free(&x->r[i]);
    free(x->r);
}

/* Frames of references (rf_engine_scatter_refer, rf_engine_gather_inputs):
 * 0 none, 1 for every owner, 2 for the even owners (the odd ones get
 * records: a gather given both).  And keys from a table (tests: ties), or
 * NULL.  Set by the tests of references around their runs. */
static int refer_mode;
static struct key_table *run_keys;
static uint64_t test_key(void *ctx, uint64_t number);

static int refers(unsigned d)
{
    return refer_mode == 1 || (refer_mode == 2 && d % 2 == 0);
}

/* Every part scattered: pk[p * q + d] the rounds of part p for owner d.
 * Checks the counts against what the scatters hand out. */
static void scatter_all(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                        unsigned parts, unsigned owners, size_t room, rounds *pk,
                        uint64_t *records, uint64_t *bytes)
{
    uint64_t first = 0, total_bytes = 0;
    for (unsigned p = 0; p < parts; p++) {
        uint64_t count, b;
        rf_engine_error e;
        assert_int_equal(rf_engine_part_count(o, in, n, p, parts, &count, &b, &e), RF_OK);
        rf_engine_scatter *s;
        assert_int_equal(rf_engine_scatter_open(&s, o, in, n, p, parts, first, owners, &e), RF_OK);
        if (run_keys)
            rfi_dist_scatter_keys(s, test_key, run_keys);
        for (unsigned d = 0; d < owners; d++)
            if (refers(d))
                assert_int_equal(rf_engine_scatter_refer(s, d, &e), RF_OK);
        const void **out = calloc(owners, sizeof *out);
        size_t *len = calloc(owners, sizeof *len);
        assert_true(out && len);
        int done = 0, rounds_seen = 0;
        while (!done) {
            assert_int_equal(rf_engine_scatter_next(s, room, out, len, &done, &e), RF_OK);
            rounds_seen++;
            for (unsigned d = 0; d < owners; d++) {
                if (len[d]) /* a reference frame exactly where one is asked for */
                    assert_int_equal(memcmp(out[d], refers(d) ? "RFPR" : "RFPK", 4), 0);
                if (len[d])
                    rounds_put(&pk[p * owners + d], out[d], len[d]);
            }
        }
        /* after the end: empty rounds */
        assert_int_equal(rf_engine_scatter_next(s, room, out, len, &done, &e), RF_OK);
        assert_int_equal(done, 1);
        for (unsigned d = 0; d < owners; d++)
            assert_int_equal(len[d], 0);
        uint64_t total;
        assert_int_equal(rf_engine_scatter_records(s, &total), count);
        assert_int_equal(total, count);
        rf_engine_scatter_close(s);
        free(out);
        free(len);
        first += count;
        total_bytes += b;
        (void)rounds_seen;
    }
    *records = first;
    *bytes = total_bytes;
}

enum feed { PART_MAJOR, ROUND_ROBIN, REVERSE, SHUFFLED, WHOLE_PARTS, IN_PLACE, HELD, FEEDS };

/* Owner d's rounds as a pipelined transport gives them: round r of every
 * part received into one gather buffer, parts in order, handed over only
 * after the buffer of round r + 1 is out (two out at once). */
static void feed_in_place(rf_engine_gather *g, rounds *pk, unsigned parts, unsigned owners,
                          unsigned d)
{
    rf_engine_error e;
    size_t *len[2] = {calloc(parts, sizeof(size_t)), calloc(parts, sizeof(size_t))};
    assert_true(len[0] && len[1]);
    void *pending = NULL;
    for (size_t r = 0;; r++) {
        size_t total = 0, *l = len[r % 2];
        for (unsigned p = 0; p < parts; p++) {
            const rounds *x = &pk[p * owners + d];
            l[p] = r < x->n ? x->r[r].len : 0;
            total += l[p];
        }
        int more = 0;
        for (unsigned p = 0; p < parts; p++)
            more |= r < pk[p * owners + d].n;
        void *b = NULL;
        if (more) {
            assert_int_equal(rf_engine_gather_buffer(g, total, &b, &e), RF_OK);
            size_t at = 0;
            for (unsigned p = 0; p < parts; p++)
                if (l[p]) {
                    memcpy((unsigned char *)b + at, pk[p * owners + d].r[r].p, l[p]);
                    at += l[p];
                }
        }
        if (pending)
            assert_int_equal(rf_engine_gather_recv(g, pending, len[(r + 1) % 2], &e), RF_OK);
        pending = b;
        if (!more)
            break;
    }
    free(len[0]);
    free(len[1]);
}

/* Owner d's packets to g in one of the feeds; every part's rounds in order. */
static void feed(rf_engine_gather *g, rounds *pk, unsigned parts, unsigned owners, unsigned d,
                 enum feed f, uint64_t *seed)
{
    rf_engine_error e;
    if (f == IN_PLACE) {
        feed_in_place(g, pk, parts, owners, d);
        return;
    }
    size_t *next = calloc(parts, sizeof *next);
    assert_non_null(next);
    if (f == PART_MAJOR || f == WHOLE_PARTS) {
        for (unsigned p = 0; p < parts; p++) {
            rounds *x = &pk[p * owners + d];
            if (f == WHOLE_PARTS) { /* a file of all its rounds, added at once */
                buf all = {0};
                for (size_t i = 0; i < x->n; i++)
                    buf_put(&all, x->r[i].p, x->r[i].len);
                assert_int_equal(rf_engine_gather_add(g, p, all.p, all.len, &e), RF_OK);
                buf_free(&all);
                continue;
            }
            for (size_t i = 0; i < x->n; i++)
                assert_int_equal(rf_engine_gather_add(g, p, x->r[i].p, x->r[i].len, &e), RF_OK);
        }
        free(next);
        return;
    }
    for (;;) {
        unsigned live = 0;
        for (unsigned p = 0; p < parts; p++)
            live += next[p] < pk[p * owners + d].n;
        if (live == 0)
            break;
        for (unsigned i = 0; i < parts; i++) {
            unsigned p = f == REVERSE ? parts - 1 - i : i;
            if (f == SHUFFLED)
                p = (unsigned)(mix_next(seed) % parts);
            rounds *x = &pk[p * owners + d];
            if (next[p] < x->n) {
                const buf *r = &x->r[next[p]++];
                /* HELD: the rounds stay until every gather is closed */
                assert_int_equal(f == HELD ? rf_engine_gather_hold(g, p, r->p, r->len, &e)
                                           : rf_engine_gather_add(g, p, r->p, r->len, &e),
                                 RF_OK);
            }
        }
    }
    free(next);
}

static void gather_out(rf_engine_gather *g, uint64_t count, buf *out)
{
    const int fd = memfd_create("riffle-test-owner", MFD_CLOEXEC);
    assert_true(fd >= 0);
    unsigned char wb[4096];
    rf_fd_sink s;
    rf_fd_sink_init(&s, fd, wb, sizeof wb);
    rf_engine_error e;
    assert_int_equal(rf_engine_gather_write(g, count, &s.sink, &e), RF_OK);
    assert_int_equal(rf_fd_sink_flush(&s), 0);
    read_fd(fd, out);
    close(fd);
}

/* An owner's first k records appended to out, checked on the way: _bytes
 * for k (asked twice: the same) and k / 2 against what _write writes, and
 * a second write, of k / 2, the first k / 2 of the first. */
static void owner_out(rf_engine_gather *g, uint64_t k, buf *out)
{
    rf_engine_error e;
    uint64_t kb, halfb, again;
    assert_int_equal(rf_engine_gather_bytes(g, k, &kb, &e), RF_OK);
    assert_int_equal(rf_engine_gather_bytes(g, k / 2, &halfb, &e), RF_OK);
    assert_int_equal(rf_engine_gather_bytes(g, k, &again, &e), RF_OK);
    assert_int_equal(again, kb);
    buf ob = {0}, half = {0};
    gather_out(g, k, &ob);
    gather_out(g, k / 2, &half); /* a second write: the same order again */
    assert_int_equal(ob.len, kb);
    assert_int_equal(half.len, halfb);
    assert_true(half.len <= ob.len && (half.len == 0 || memcmp(half.p, ob.p, half.len) == 0));
    buf_put(out, ob.p, ob.len);
    buf_free(&ob);
    buf_free(&half);
}

/* The whole run: header, then each owner's first records until `count`. */
static void dist_run(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                     unsigned parts, unsigned owners, size_t room, enum feed f, uint64_t count,
                     buf *out)
{
    void *hb;
    size_t hl;
    rf_engine_error e;
    assert_int_equal(rf_engine_header(o, in, n, &hb, &hl, &e), RF_OK);
    buf_put(out, hb, hl);
    free(hb);
    rounds *pk = calloc((size_t)parts * owners, sizeof *pk);
    assert_non_null(pk);
    uint64_t records, bytes, seed = parts * 31u + owners;
    scatter_all(o, in, n, parts, owners, room, pk, &records, &bytes);
    uint64_t left = count, got_records = 0;
    const size_t before = out->len;
    for (unsigned d = 0; d < owners; d++) {
        rf_engine_gather *g;
        assert_int_equal(rf_engine_gather_open(&g, o, parts, &e), RF_OK);
        if (run_keys)
            rfi_dist_gather_keys(g, test_key, run_keys);
        if (refers(d))
            assert_int_equal(rf_engine_gather_inputs(g, o, in, n, &e), RF_OK);
        feed(g, pk, parts, owners, d, f, &seed);
        unsigned owner = 99, of = 99;
        if (rf_engine_gather_owner(g, &owner, &of)) {
            assert_int_equal(owner, d);
            assert_int_equal(of, owners);
        }
        const uint64_t mine = rf_engine_gather_records(g);
        got_records += mine;
        const uint64_t k = left < mine ? left : mine;
        owner_out(g, k, out);
        rf_engine_gather_close(g);
        left -= k;
        if (o->tmpdir)
            assert_int_equal(dir_entries(o->tmpdir), 0);
    }
    assert_int_equal(got_records, records);
    if (count == RF_ENGINE_ALL)
        assert_int_equal(out->len - before, bytes);
    for (size_t i = 0; i < (size_t)parts * owners; i++)
        rounds_free(&pk[i]);
    free(pk);
}

/* dist_run against rf_engine_shuffle. */
static void check_run(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                      unsigned parts, unsigned owners, size_t room, enum feed f, uint64_t count)
{
    buf want = {0}, got = {0};
    reference(o, in, n, count, &want);
    dist_run(o, in, n, parts, owners, room, f, count, &got);
    if (got.len != want.len || (got.len && memcmp(got.p, want.p, got.len) != 0))
        print_error("P=%u Q=%u room=%zu feed=%d memory=%llu header=%llu delim=%d\n", parts,
                    owners, room, (int)f, (unsigned long long)o->memory,
                    (unsigned long long)o->header, o->delim);
    assert_same(&got, &want);
    buf_free(&want);
    buf_free(&got);
}

/* ------------------------------------------------------------------------ */
/* Input sets                                                               */

enum { SETS = 6 };

/* Set k of inputs (each a buf; *n of them). */
static void make_set(int k, unsigned char delim, buf *b, size_t *n)
{
    uint64_t s = 1000 + (uint64_t)k;
    memset(b, 0, 4 * sizeof *b);
    switch (k) {
    case 0: /* several inputs, one empty, unterminated ends */
        gen(&b[0], &s, 40, 12, delim, 1);
        gen(&b[1], &s, 0, 12, delim, 0);
        gen(&b[2], &s, 25, 30, delim, 0);
        gen(&b[3], &s, 7, 5, delim, 1);
        *n = 4;
        break;
    case 1: { /* a record longer than a part and than a round */
        gen(&b[0], &s, 10, 8, delim, 0);
        for (int i = 0; i < 3000; i++)
            buf_put(&b[0], "x", 1);
        buf_put(&b[0], &delim, 1);
        gen(&b[0], &s, 10, 8, delim, 1);
        *n = 1;
        break;
    }
    case 2: /* empty */
        *n = 1;
        break;
    case 3: /* fewer records than parts */
        gen(&b[0], &s, 2, 3, delim, 0);
        *n = 1;
        break;
    case 4: /* one unterminated record, then empty records only */
        gen(&b[0], &s, 1, 9, delim, 1);
        gen(&b[1], &s, 9, 0, delim, 0);
        *n = 2;
        break;
    default: /* many short records */
        gen(&b[0], &s, 600, 6, delim, 0);
        *n = 1;
        break;
    }
}

static void set_inputs(const buf *b, size_t n, rf_engine_input *in)
{
    for (size_t i = 0; i < n; i++)
        in[i] = rf_engine_input_bytes(b[i].p, b[i].len, "set");
}

/* ------------------------------------------------------------------------ */
/* The tests                                                                */

/* The set's inputs written to files dir/in0.. (references need regular
 * files), as paths in in[0..n). */
static void set_files(const buf *b, size_t n, const char *dir, char names[][300],
                      rf_engine_input *in)
{
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], 300, "%s/in%zu", dir, i);
        FILE *f = fopen(names[i], "wb");
        assert_non_null(f);
        if (b[i].len) /* an empty set's buffer has no bytes at all (NULL) */
            assert_int_equal(fwrite(b[i].p, 1, b[i].len, f), b[i].len);
        assert_int_equal(fclose(f), 0);
        in[i] = rf_engine_input_path(names[i]);
    }
}

static void unlink_files(char names[][300], size_t n, const char *dir)
{
    for (size_t i = 0; i < n; i++)
        unlink(names[i]);
    rmdir(dir);
}

/* P, Q = 1..7 on every set, both delimiters, with and without a header;
 * rounds of 64 bytes or 1 MiB, a budget of 1 byte (every frame spills) or
 * plenty, every feed: the bytes of rf_engine_shuffle.  `by_reference`: the
 * inputs in files, every owner's frames by reference then every other
 * owner's (the odd ones get records), and a count now and then. */
static void matrix_runs(int by_reference)
{
    char dir[256], files[256];
    fresh_dir(dir, sizeof dir);
    if (by_reference)
        fresh_dir(files, sizeof files);
    unsigned run = 0;
    for (int k = 0; k < SETS; k++) {
        for (int dl = 0; dl < 2; dl++) {
            const unsigned char delim = dl ? '\0' : '\n';
            buf b[4];
            size_t n;
            make_set(k, delim, b, &n);
            rf_engine_input in[4];
            char names[4][300];
            if (by_reference)
                set_files(b, n, files, names, in);
            else
                set_inputs(b, n, in);
            for (uint64_t header = 0; header <= 2; header += 2) {
                for (unsigned parts = 1; parts <= 7; parts++) {
                    for (unsigned owners = 1; owners <= 7; owners++, run++) {
                        rf_engine_options o;
                        options(&o, 7 + run % 3, delim, header, run % 4 == 1 ? 1 : 64 * MIB, dir);
                        const size_t room = run % 3 == 0 ? MIB : 64;
                        refer_mode = by_reference ? 1 + (int)(run % 2) : 0;
                        check_run(&o, in, n, parts, owners, room, (enum feed)(run % FEEDS),
                                  by_reference && run % 5 == 2 ? 9 : RF_ENGINE_ALL);
                        refer_mode = 0;
                    }
                }
            }
            for (size_t i = 0; by_reference && i < n; i++)
                unlink(names[i]);
            for (size_t i = 0; i < 4; i++)
                buf_free(&b[i]);
        }
    }
    assert_int_equal(dir_entries(dir), 0);
    rmdir(dir);
    if (by_reference)
        rmdir(files);
}

static void matrix(void **state)
{
    (void)state;
    matrix_runs(0);
}

/* The first K records of the whole run: the owners' first ones in order. */
static void counts(void **state)
{
    (void)state;
    buf b[4];
    size_t n;
    make_set(5, '\n', b, &n);
    rf_engine_input in[4];
    set_inputs(b, n, in);
    const uint64_t ks[] = {0, 1, 5, 77, 599, 600, 1000};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        rf_engine_options o;
        options(&o, 3, '\n', 1, i % 2 ? 1 : 64 * MIB, NULL);
        check_run(&o, in, n, 3, 4, 200, ROUND_ROBIN, ks[i]);
    }
    for (size_t i = 0; i < 4; i++)
        buf_free(&b[i]);
}

/* Many records, a budget that spills a few times with parts interleaved
 * (so bucket files hold runs out of number order), other generators. */
static void many_records(void **state)
{
    (void)state;
    char dir[256];
    fresh_dir(dir, sizeof dir);
    buf b = {0};
    uint64_t s = 5;
    gen(&b, &s, 200000, 20, '\n', 0);
    rf_engine_input in = rf_engine_input_bytes(b.p, b.len, "many");
    const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    for (int i = 0; i < 3; i++) {
        rf_engine_options o;
        options(&o, 11, '\n', 0, 256 * KIB, dir);
        o.rng = kinds[i];
        check_run(&o, &in, 1, 5, 2, 16 * KIB, i == 0 ? SHUFFLED : ROUND_ROBIN, RF_ENGINE_ALL);
    }
    buf_free(&b);
    assert_int_equal(dir_entries(dir), 0);
    rmdir(dir);
}

/* Buckets larger than the budget are split again: about 20 MB of records
 * of up to 80 KiB, a budget of 1 byte, one owner. */
static void split_again(void **state)
{
    (void)state;
    char dir[256];
    fresh_dir(dir, sizeof dir);
    buf b = {0};
    uint64_t s = 9;
    gen(&b, &s, 500, 80 * 1024, '\n', 1);
    rf_engine_input in = rf_engine_input_bytes(b.p, b.len, "long");
    rf_engine_options o;
    options(&o, 4, '\n', 0, 1, dir);
    check_run(&o, &in, 1, 2, 1, 256 * KIB, ROUND_ROBIN, RF_ENGINE_ALL);
    buf_free(&b);
    assert_int_equal(dir_entries(dir), 0);
    rmdir(dir);
}

/* A header longer than the pieces the header is looked for in (1 MiB),
 * and one record longer than that inside it. */
static void long_header(void **state)
{
    (void)state;
    buf b = {0};
    uint64_t s = 12;
    gen(&b, &s, 3, 10, '\n', 0);
    for (int i = 0; i < 1500000; i++)
        buf_put(&b, "h", 1);
    buf_put(&b, "\n", 1);
    gen(&b, &s, 100000, 24, '\n', 0);
    rf_engine_input in = rf_engine_input_bytes(b.p, b.len, "long header");
    const uint64_t headers[] = {4, 60000, 100004, 200000};
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
        rf_engine_options o;
        options(&o, 5, '\n', headers[i], 64 * MIB, NULL);
        check_run(&o, &in, 1, 3, 2, 64 * KIB, ROUND_ROBIN, RF_ENGINE_ALL);
    }
    buf_free(&b);
}

/* Inputs as files and descriptors (a regular file from its offset, a pipe
 * read whole) give the same output. */
static void input_kinds(void **state)
{
    (void)state;
    char dir[256];
    fresh_dir(dir, sizeof dir);
    buf b = {0};
    uint64_t s = 77;
    gen(&b, &s, 300, 15, '\n', 1);
    char path[300];
    snprintf(path, sizeof path, "%s/input", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.p, 1, b.len, f), b.len);
    fclose(f);
    rf_engine_options o;
    options(&o, 2, '\n', 1, 64 * MIB, NULL);
    rf_engine_input in[2] = {rf_engine_input_path(path), rf_engine_input_bytes(b.p, 50, "b")};
    check_run(&o, in, 2, 4, 3, 512, SHUFFLED, RF_ENGINE_ALL);
    /* a descriptor from its offset: the first 10 bytes skipped */
    const int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(lseek(fd, 10, SEEK_SET), 10);
    rf_engine_input fin = rf_engine_input_fd(fd, "fd");
    buf got = {0}, want = {0};
    dist_run(&o, &fin, 1, 3, 2, 512, PART_MAJOR, RF_ENGINE_ALL, &got);
    rf_engine_input tail = rf_engine_input_bytes(b.p + 10, b.len - 10, "tail");
    reference(&o, &tail, 1, RF_ENGINE_ALL, &want);
    assert_same(&got, &want);
    close(fd);
    unlink(path);
    rmdir(dir);
    buf_free(&got);
    buf_free(&want);
    buf_free(&b);
}

/* Owners are a range partition: monotone, with exact boundaries. */
static void owners_are_ranges(void **state)
{
    (void)state;
    uint64_t s = 1;
    for (unsigned q = 1; q <= 9; q++) {
        assert_int_equal(rf_engine_owner(0, q), 0);
        assert_int_equal(rf_engine_owner(UINT64_MAX, q), q - 1);
        for (unsigned d = 1; d < q; d++) {
            /* the smallest key of owner d: ceil(d 2^64 / q) */
            const uint64_t lo = (uint64_t)((((unsigned __int128)d << 64) + q - 1) / q);
            assert_int_equal(rf_engine_owner(lo, q), d);
            assert_int_equal(rf_engine_owner(lo - 1, q), d - 1);
        }
        for (int i = 0; i < 10000; i++) {
            uint64_t a = mix_next(&s), b = mix_next(&s);
            if (a > b) {
                const uint64_t t = a;
                a = b;
                b = t;
            }
            assert_true(rf_engine_owner(a, q) <= rf_engine_owner(b, q));
            /* equal keys, one owner: ties never cross owners */
            assert_int_equal(rf_engine_owner(a, q), rf_engine_owner(a, q));
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Hand-built frames (the documented wire format): ties                     */

static void put32(buf *b, uint32_t v)
{
    unsigned char p[4];
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    buf_put(b, p, 4);
}

static void put64(buf *b, uint64_t v)
{
    unsigned char p[8];
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    buf_put(b, p, 8);
}

static void put_varint(buf *b, uint64_t v)
{
    while (v >= 0x80) {
        const unsigned char c = (unsigned char)(v | 0x80);
        buf_put(b, &c, 1);
        v >>= 7;
    }
    const unsigned char c = (unsigned char)v;
    buf_put(b, &c, 1);
}

/* A version-2 frame of records numbers [first, first + n), record
 * "r<number>\n", with the given check field (keys are not sent: the
 * gather draws them, here from test_key through rfi_dist_gather_keys). */
static void frame_check(buf *f, unsigned part, unsigned parts, unsigned owner, unsigned owners,
                        uint64_t first, uint64_t n, uint64_t check)
{
    buf payload = {0};
    for (uint64_t i = first; i < first + n; i++) {
        char rec[32];
        const int len = snprintf(rec, sizeof rec, "r%llu\n", (unsigned long long)i);
        put_varint(&payload, 0);
        buf_put(&payload, rec, (size_t)len);
    }
    buf_put(f, "RFPK", 4);
    put32(f, 2);
    put32(f, part);
    put32(f, parts);
    put32(f, owner);
    put32(f, owners);
    put32(f, '\n');
    put32(f, 0);
    put64(f, n);
    put64(f, payload.len);
    put64(f, first);
    put64(f, check);
    buf_put(f, payload.p, payload.len);
    buf_free(&payload);
}

static void frame(buf *f, unsigned part, unsigned parts, unsigned owner, unsigned owners,
                  uint64_t first, uint64_t n)
{
    frame_check(f, part, parts, owner, owners, first, n, 0);
}

/* The keys of hand-built frames: a table, and UINT64_MAX past its end. */
typedef struct key_table {
    const uint64_t *keys;
    uint64_t n;
} key_table;

static uint64_t test_key(void *ctx, uint64_t number)
{
    const key_table *t = ctx;
    return number < t->n ? t->keys[number] : UINT64_MAX;
}

/* The records "r<i>" of keys[0..n), in rf_keyed_sort's order with the
 * record numbers as input order: what a run of those keys must write. */
static void tie_order(const rf_engine_options *o, const uint64_t *keys, size_t n, buf *want)
{
    rf_keyed_order ko;
    assert_int_equal(rf_keyed_order_init(&ko, o->rng, o->key), RF_OK);
    rf_keyed *a = malloc(n * sizeof *a);
    assert_non_null(a);
    for (size_t i = 0; i < n; i++)
        a[i] = (rf_keyed){keys[i], (uint64_t)i};
    assert_int_equal(rf_keyed_sort(&ko, a, n, 1), RF_OK);
    for (size_t i = 0; i < n; i++) {
        char rec[32];
        const int len = snprintf(rec, sizeof rec, "r%llu\n", (unsigned long long)a[i].val);
        buf_put(want, rec, (size_t)len);
    }
    free(a);
}

/* Equal keys across parts, fed in reverse part order, spilled or not: the
 * order is rf_keyed_sort's with the record numbers as input order. */
static void ties(void **state)
{
    (void)state;
    enum { N = 60, PARTS = 3 };
    uint64_t keys[N];
    for (int i = 0; i < N; i++)
        keys[i] = (uint64_t)(i % 4) << 60; /* four keys, 15 records each */
    rf_engine_options o;
    for (int spill = 0; spill < 2; spill++) {
        char dir[256];
        fresh_dir(dir, sizeof dir);
        options(&o, 99, '\n', 0, spill ? 1 : 64 * MIB, dir);
        buf want = {0};
        tie_order(&o, keys, N, &want);
        rf_engine_gather *g;
        rf_engine_error e;
        assert_int_equal(rf_engine_gather_open(&g, &o, PARTS, &e), RF_OK);
        key_table table = {keys, N};
        rfi_dist_gather_keys(g, test_key, &table);
        for (int p = PARTS - 1; p >= 0; p--) { /* two frames per part */
            const uint64_t first = (uint64_t)p * (N / PARTS), half = N / PARTS / 2;
            buf f = {0};
            frame(&f, (unsigned)p, PARTS, 0, 1, first, half);
            assert_int_equal(rf_engine_gather_add(g, (unsigned)p, f.p, f.len, &e), RF_OK);
            f.len = 0;
            frame(&f, (unsigned)p, PARTS, 0, 1, first + half, N / PARTS - half);
            assert_int_equal(rf_engine_gather_add(g, (unsigned)p, f.p, f.len, &e), RF_OK);
            buf_free(&f);
        }
        buf got = {0};
        gather_out(g, RF_ENGINE_ALL, &got);
        assert_same(&got, &want);
        rf_engine_gather_close(g);
        assert_int_equal(dir_entries(dir), 0);
        rmdir(dir);
        buf_free(&got);
        buf_free(&want);
    }
}

/* A gather of 2 parts with the table's keys, given one frame: its status. */
static rf_status add_one(const rf_engine_options *o, key_table *keys, unsigned from,
                         const buf *f)
{
    rf_engine_gather *g;
    rf_engine_error e;
    assert_int_equal(rf_engine_gather_open(&g, o, 2, &e), RF_OK);
    rfi_dist_gather_keys(g, test_key, keys);
    const rf_status st = rf_engine_gather_add(g, from, f->p, f->len, &e);
    if (st != RF_OK)
        assert_int_equal(e.status, st);
    rf_engine_gather_close(g);
    return st;
}

/* Packets that are not this gather's: refused with RF_EINVAL. */
static void bad_packets(void **state)
{
    (void)state;
    const uint64_t table[8] = {1, 2, 3, 4, UINT64_MAX, 6, 7, 8};
    key_table keys[1] = {{table, 8}};
    rf_engine_options o;
    options(&o, 1, '\n', 0, 64 * MIB, NULL);
    struct {
        unsigned from, part, parts, owner, owners;
        uint64_t first, n;
        size_t cut; /* bytes removed from the end */
        size_t at;  /* a byte changed, if not 0 */
        unsigned char to;
    } cases[] = {
        {0, 1, 2, 0, 2, 0, 2, 0, 0, 0},  /* from part 1, added as part 0 */
        {0, 0, 3, 0, 2, 0, 2, 0, 0, 0},  /* another number of parts */
        {0, 0, 2, 0, 2, 0, 2, 1, 0, 0},  /* truncated */
        {0, 0, 2, 0, 2, 0, 2, 0, 4, 1},  /* version 1 */
        {0, 0, 2, 0, 2, 0, 2, 0, 4, 3},  /* version 3 */
        {0, 0, 2, 0, 2, 0, 2, 0, 0, 'X'}, /* magic */
        {0, 0, 2, 0, 2, 0, 2, 0, 24, 0}, /* another delimiter: no record ends */
        {0, 0, 2, 0, 2, 0, 2, 0, 25, 1}, /* a delimiter past 255 */
        {0, 0, 2, 0, 2, 0, 2, 0, 28, 1}, /* the reserved word */
        {0, 0, 2, 0, 2, 0, 2, 0, 32, 3}, /* more records than entries */
        {0, 0, 2, 0, 2, 0, 2, 0, 32, 1}, /* fewer: bytes left over */
        {0, 0, 2, 0, 2, 0, 2, 0, 67, 'x'}, /* a record without its delimiter */
        {0, 0, 2, 0, 2, 3, 2, 0, 0, 0},  /* key UINT64_MAX is owner 1's */
        {2, 0, 2, 0, 2, 0, 1, 0, 0, 0},  /* no part 2 */
        {0, 0, 2, 2, 2, 0, 1, 0, 0, 0},  /* owner 2 of 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        buf f = {0};
        frame(&f, cases[i].part, cases[i].parts, cases[i].owner, cases[i].owners,
              cases[i].first, cases[i].n);
        if (cases[i].at || cases[i].to)
            f.p[cases[i].at] = cases[i].to;
        f.len -= cases[i].cut;
        if (add_one(&o, keys, cases[i].from, &f) != RF_EINVAL)
            fail_msg("case %zu taken", i);
        buf_free(&f);
    }
    /* the frame the cases change is taken as it is */
    buf f = {0};
    frame(&f, 0, 2, 0, 2, 0, 2);
    assert_int_equal(add_one(&o, keys, 0, &f), RF_OK);
    /* numbers past 2^64 - 1: the first record is number 2^64 - 1 (owner
     * 1's key), the second has no number */
    f.len = 0;
    frame(&f, 0, 2, 1, 2, 0, 2);
    memset(f.p + 48, 0xff, 8);
    assert_int_equal(add_one(&o, keys, 0, &f), RF_EINVAL);
    f.len = 0;
    frame(&f, 0, 2, 1, 2, 0, 1);
    memset(f.p + 48, 0xff, 8);
    assert_int_equal(add_one(&o, keys, 0, &f), RF_OK);
    /* numbers going back within a part; the delimiter changing between
     * frames; garbage; adding after a write */
    rf_engine_gather *g;
    rf_engine_error e;
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    rfi_dist_gather_keys(g, test_key, keys);
    f.len = 0;
    frame(&f, 0, 2, 0, 2, 0, 2);
    assert_int_equal(rf_engine_gather_add(g, 0, f.p, f.len, &e), RF_OK);
    f.len = 0;
    frame(&f, 1, 2, 0, 2, 2, 2);
    f.p[24] = '\r';
    f.p[64 + 3] = f.p[64 + 4 + 3] = '\r';
    assert_int_equal(rf_engine_gather_add(g, 1, f.p, f.len, &e), RF_EINVAL);
    rf_engine_gather_close(g);
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    rfi_dist_gather_keys(g, test_key, keys);
    f.len = 0;
    frame(&f, 0, 2, 0, 2, 2, 2);
    assert_int_equal(rf_engine_gather_add(g, 0, f.p, f.len, &e), RF_OK);
    f.len = 0;
    frame(&f, 0, 2, 0, 2, 0, 2);
    assert_int_equal(rf_engine_gather_add(g, 0, f.p, f.len, &e), RF_EINVAL);
    rf_engine_gather_close(g);
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    assert_int_equal(rf_engine_gather_add(g, 0, "garbage garbage garbage garbage garbage!", 40, &e),
                     RF_EINVAL);
    rf_engine_gather_close(g);
    /* parts whose numbers overlap: part 1 holds numbers before part 0's */
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    rfi_dist_gather_keys(g, test_key, keys);
    f.len = 0;
    frame(&f, 0, 2, 0, 2, 2, 2);
    assert_int_equal(rf_engine_gather_add(g, 0, f.p, f.len, &e), RF_OK);
    f.len = 0;
    frame(&f, 1, 2, 0, 2, 0, 2);
    assert_int_equal(rf_engine_gather_add(g, 1, f.p, f.len, &e), RF_OK);
    uint64_t bytes;
    assert_int_equal(rf_engine_gather_bytes(g, 1, &bytes, &e), RF_EINVAL);
    rf_engine_gather_close(g);
    /* after a write, no more adding */
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    rfi_dist_gather_keys(g, test_key, keys);
    f.len = 0;
    frame(&f, 0, 2, 0, 2, 0, 2);
    assert_int_equal(rf_engine_gather_add(g, 0, f.p, f.len, &e), RF_OK);
    buf out = {0};
    gather_out(g, RF_ENGINE_ALL, &out);
    assert_int_equal(rf_engine_gather_add(g, 1, f.p, 0, &e), RF_EINVAL);
    void *b;
    assert_int_equal(rf_engine_gather_buffer(g, 10, &b, &e), RF_EINVAL);
    rf_engine_gather_close(g);
    buf_free(&out);
    buf_free(&f);
}

/* Packets of a real scatter given to a gather of another seed, another
 * generator, or cut anywhere, or added as another
 * part's: refused, with one owner as with several (the keys are drawn
 * again, and the frames' check field is the seed's). */
static void foreign_packets(void **state)
{
    (void)state;
    buf b[4];
    size_t n;
    make_set(1, '\n', b, &n);
    rf_engine_input in[4];
    set_inputs(b, n, in);
    for (unsigned owners = 1; owners <= 3; owners++) {
        rf_engine_options o;
        options(&o, 5, '\n', 0, 64 * MIB, NULL);
        rounds *pk = calloc(2 * owners, sizeof *pk);
        assert_non_null(pk);
        uint64_t records, bytes;
        scatter_all(&o, in, n, 2, owners, 1 * MIB, pk, &records, &bytes);
        for (int k = 0; k < 4; k++) {
            rf_engine_options other = o;
            if (k == 1)
                assert_int_equal(rf_seed_u64(other.key, 6), RF_OK);
            if (k == 2)
                other.rng = RF_RNG_XOSHIRO256PP;
            for (unsigned d = 0; d < owners; d++) {
                const rounds *x = &pk[1 * owners + d];
                if (x->n == 0)
                    continue;
                rf_engine_gather *g;
                rf_engine_error e;
                assert_int_equal(rf_engine_gather_open(&g, &other, 2, &e), RF_OK);
                rf_status want = k == 0 ? RF_OK : RF_EINVAL;
                rf_status st = RF_OK;
                for (size_t r = 0; r < x->n && st == RF_OK; r++) {
                    size_t len = x->r[r].len;
                    if (k == 3) /* cut inside the frame (one a round) */
                        len = 1 + (size_t)(((uint64_t)len * 2654435761u + d) % (len - 1));
                    st = rf_engine_gather_add(g, 1, x->r[r].p, len, &e);
                }
                if (st != want)
                    fail_msg("owners %u owner %u case %d: status %d", owners, d, k, (int)st);
                if (k == 0) { /* part 0's packets added as part 1's */
                    const rounds *y = &pk[0 * owners + d];
                    for (size_t r = 0; r < y->n; r++)
                        assert_int_equal(rf_engine_gather_add(g, 1, y->r[r].p, y->r[r].len, &e),
                                         RF_EINVAL);
                }
                rf_engine_gather_close(g);
            }
        }
        for (size_t i = 0; i < 2 * owners; i++)
            rounds_free(&pk[i]);
        free(pk);
    }
    for (size_t i = 0; i < n; i++)
        buf_free(&b[i]);
}

/* A sink that takes 7 records at a time (a split's parts): begin's count,
 * the room respected, every record advanced, the bytes those of a plain
 * fd sink. */
typedef struct rooms {
    rf_fd_sink fd;
    uint64_t planned, advanced, calls;
    int begun, over;
} rooms;

static int rooms_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    rooms *r = ctx;
    (void)header;
    r->begun++;
    r->planned = records;
    return len == 0 ? 0 : EINVAL;
}

static rf_writer *rooms_writer(void *ctx)
{
    return &((rooms *)ctx)->fd.w;
}

static uint64_t rooms_room(void *ctx)
{
    const rooms *r = ctx;
    const uint64_t left = r->planned - r->advanced;
    return left < 7 ? left : 7;
}

static int rooms_advance(void *ctx, uint64_t records)
{
    rooms *r = ctx;
    if (records > rooms_room(r) || records == 0)
        r->over = 1;
    r->advanced += records;
    r->calls++;
    return 0;
}

static void sink_rooms(void **state)
{
    (void)state;
    buf b[4];
    size_t n;
    make_set(0, '\n', b, &n);
    rf_engine_input in[4];
    set_inputs(b, n, in);
    rf_engine_options o;
    options(&o, 8, '\n', 0, 64 * MIB, NULL);
    rounds *pk = calloc(2, sizeof *pk);
    assert_non_null(pk);
    uint64_t records, bytes, seed = 1;
    scatter_all(&o, in, n, 2, 1, 100, pk, &records, &bytes);
    for (int spill = 0; spill < 2; spill++) {
        char dir[256];
        fresh_dir(dir, sizeof dir);
        o.memory = spill ? 1 : 64 * MIB;
        o.tmpdir = dir;
        rf_engine_gather *g;
        rf_engine_error e;
        assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
        feed(g, pk, 2, 1, 0, SHUFFLED, &seed);
        buf want = {0}, got = {0};
        gather_out(g, RF_ENGINE_ALL, &want);
        const int fd = memfd_create("riffle-test-rooms", MFD_CLOEXEC);
        assert_true(fd >= 0);
        unsigned char wb[100];
        rooms r = {0};
        rf_fd_sink_init(&r.fd, fd, wb, sizeof wb);
        const rf_engine_sink sink = {rooms_begin, rooms_writer, rooms_room, rooms_advance, &r};
        assert_int_equal(rf_engine_gather_write(g, RF_ENGINE_ALL, &sink, &e), RF_OK);
        assert_int_equal(rf_fd_sink_flush(&r.fd), 0);
        read_fd(fd, &got);
        close(fd);
        assert_same(&got, &want);
        assert_int_equal(r.begun, 1);
        assert_int_equal(r.planned, records);
        assert_int_equal(r.advanced, records);
        assert_true(r.calls >= (records + 6) / 7);
        assert_int_equal(r.over, 0);
        rf_engine_gather_close(g);
        assert_int_equal(dir_entries(dir), 0);
        rmdir(dir);
        buf_free(&want);
        buf_free(&got);
    }
    rounds_free(&pk[0]);
    rounds_free(&pk[1]);
    free(pk);
    for (size_t i = 0; i < 4; i++)
        buf_free(&b[i]);
}

/* Offsets above 2^32 and record numbers above 2^32: a sparse file of 5 GiB
 * of zeros with '\0' as the delimiter (every byte a record), cut into 8192
 * parts; only the last parts are read.  Part r is exactly the bytes
 * [floor(B r / P), floor(B (r+1) / P)), and the last part's entries carry
 * the numbers from there on with the keys rf_keyed_keys gives them. */
static void beyond_32_bits(void **state)
{
    (void)state;
    char dir[256], path[300];
    fresh_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/sparse", dir);
    const uint64_t size = ((uint64_t)5 << 30) + 12345;
    const int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    const int grown = ftruncate(fd, (off_t)size) == 0;
    close(fd);
    if (!grown) {
        unlink(path);
        rmdir(dir);
        print_message("# skip: no 5 GiB sparse file here\n");
        skip();
    }
    rf_engine_options o;
    options(&o, 6, '\0', 0, 64 * MIB, NULL);
    rf_engine_input in = rf_engine_input_path(path);
    const unsigned parts = 8192, owners = 3;
    rf_engine_error e;
    for (unsigned r = parts - 2; r < parts; r++) {
        uint64_t records, bytes;
        assert_int_equal(rf_engine_part_count(&o, &in, 1, r, parts, &records, &bytes, &e), RF_OK);
        const uint64_t lo = (uint64_t)((unsigned __int128)size * r / parts);
        const uint64_t hi = (uint64_t)((unsigned __int128)size * (r + 1) / parts);
        assert_int_equal(records, hi - lo);
        assert_int_equal(bytes, hi - lo);
        if (r + 1 < parts)
            continue;
        rf_keyed_order ko;
        assert_int_equal(rf_keyed_order_init(&ko, o.rng, o.key), RF_OK);
        rf_engine_scatter *sc;
        assert_int_equal(rf_engine_scatter_open(&sc, &o, &in, 1, r, parts, lo, owners, &e), RF_OK);
        const void *out[3];
        size_t len[3];
        int done = 0;
        uint64_t seen = 0, next[3] = {0, 0, 0};
        while (!done) {
            assert_int_equal(rf_engine_scatter_next(sc, MIB, out, len, &done, &e), RF_OK);
            for (unsigned d = 0; d < owners; d++) {
                const unsigned char *p = out[d];
                if (len[d] == 0)
                    continue;
                uint64_t count = 0, number = 0;
                for (int i = 7; i >= 0; i--) {
                    count = count << 8 | p[32 + i];
                    number = number << 8 | p[48 + i];
                }
                p += 64;
                for (uint64_t j = 0; j < count; j++) {
                    uint64_t gap = 0;
                    for (int shift = 0;; shift += 7) {
                        gap |= (uint64_t)(*p & 0x7f) << shift;
                        if (!(*p++ & 0x80))
                            break;
                    }
                    number = (j == 0 ? number : number + 1) + gap;
                    uint64_t key;
                    assert_int_equal(rf_keyed_keys(&ko, number, &key, 1), RF_OK);
                    assert_int_equal(rf_engine_owner(key, owners), d);
                    assert_true(number >= lo && number < hi && number >= next[d]);
                    next[d] = number + 1;
                    assert_int_equal(*p++, 0); /* the record: its delimiter alone */
                    seen++;
                }
            }
        }
        assert_int_equal(seen, hi - lo);
        assert_true(lo > ((uint64_t)1 << 32));
        rf_engine_scatter_close(sc);
    }
    unlink(path);
    rmdir(dir);
}

/* ------------------------------------------------------------------------ */
/* The local lane (rf_engine_scatter_local)                                 */

/* A run of P parts and P owners where part p and owner p share a process:
 * gather p is opened first and takes part p's own records through the lane
 * while scatter p runs; the other parts' packets reach it afterwards in
 * feed f.  Scatters stay open until their gathers are closed.  With keys
 * (tests: rfi_dist_*_keys), both sides take their keys from it. */
static void lane_run(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                     unsigned parts, size_t room, enum feed f, uint64_t count, key_table *keys,
                     buf *out)
{
    void *hb;
    size_t hl;
    rf_engine_error e;
    assert_int_equal(rf_engine_header(o, in, n, &hb, &hl, &e), RF_OK);
    buf_put(out, hb, hl);
    free(hb);
    rounds *pk = calloc((size_t)parts * parts, sizeof *pk);
    rf_engine_gather **g = calloc(parts, sizeof *g);
    rf_engine_scatter **sc = calloc(parts, sizeof *sc);
    const void **pout = calloc(parts, sizeof *pout);
    size_t *len = calloc(parts, sizeof *len);
    assert_true(pk && g && sc && pout && len);
    uint64_t first = 0, records = 0, kept = 0, seed = parts * 17u + 5;
    for (unsigned p = 0; p < parts; p++) {
        uint64_t c, b;
        assert_int_equal(rf_engine_part_count(o, in, n, p, parts, &c, &b, &e), RF_OK);
        assert_int_equal(rf_engine_gather_open(&g[p], o, parts, &e), RF_OK);
        assert_int_equal(rf_engine_scatter_open(&sc[p], o, in, n, p, parts, first, parts, &e),
                         RF_OK);
        if (keys) {
            rfi_dist_gather_keys(g[p], test_key, keys);
            rfi_dist_scatter_keys(sc[p], test_key, keys);
        }
        assert_int_equal(rf_engine_scatter_local(sc[p], p, g[p], &e), RF_OK);
        int done = 0;
        while (!done) {
            assert_int_equal(rf_engine_scatter_next(sc[p], room, pout, len, &done, &e), RF_OK);
            assert_int_equal(len[p], 0); /* its own records never travel */
            for (unsigned d = 0; d < parts; d++)
                if (len[d])
                    rounds_put(&pk[p * parts + d], pout[d], len[d]);
        }
        kept += rf_engine_scatter_kept(sc[p], NULL);
        first += c;
    }
    records = first;
    uint64_t left = count, got = 0;
    for (unsigned d = 0; d < parts; d++) {
        feed(g[d], pk, parts, parts, d, f, &seed);
        const uint64_t mine = rf_engine_gather_records(g[d]);
        got += mine;
        const uint64_t k = left < mine ? left : mine;
        uint64_t kb;
        assert_int_equal(rf_engine_gather_bytes(g[d], k, &kb, &e), RF_OK);
        buf ob = {0};
        gather_out(g[d], k, &ob);
        assert_int_equal(ob.len, kb);
        buf_put(out, ob.p, ob.len);
        buf_free(&ob);
        rf_engine_gather_close(g[d]);
        left -= k;
    }
    assert_int_equal(got, records);
    assert_true(kept <= records);
    for (unsigned p = 0; p < parts; p++)
        rf_engine_scatter_close(sc[p]);
    if (o->tmpdir)
        assert_int_equal(dir_entries(o->tmpdir), 0);
    for (size_t i = 0; i < (size_t)parts * parts; i++)
        rounds_free(&pk[i]);
    free(pk);
    free(g);
    free(sc);
    free(pout);
    free(len);
}

/* Every set, both delimiters, headers, P = 1..7, tiny and large rounds and
 * budgets, every feed, a count now and then: the bytes of rf_engine_shuffle. */
static void lane_matrix(void **state)
{
    (void)state;
    char dir[256];
    fresh_dir(dir, sizeof dir);
    unsigned run = 0;
    for (int k = 0; k < SETS; k++) {
        for (int dl = 0; dl < 2; dl++) {
            const unsigned char delim = dl ? '\0' : '\n';
            buf b[4];
            size_t n;
            make_set(k, delim, b, &n);
            rf_engine_input in[4];
            set_inputs(b, n, in);
            for (uint64_t header = 0; header <= 2; header += 2) {
                for (unsigned parts = 1; parts <= 7; parts++, run++) {
                    rf_engine_options o;
                    options(&o, 11 + run % 3, delim, header, run % 3 == 1 ? 1 : 64 * MIB, dir);
                    const size_t room = run % 2 ? MIB : 64;
                    const uint64_t count = run % 5 == 2 ? 9 : RF_ENGINE_ALL;
                    buf want = {0}, got = {0};
                    reference(&o, in, n, count, &want);
                    lane_run(&o, in, n, parts, room, (enum feed)(run % FEEDS), count, NULL, &got);
                    if (got.len != want.len || (got.len && memcmp(got.p, want.p, got.len)))
                        print_error("lane: set %d P=%u delim=%d header=%llu\n", k, parts, dl,
                                    (unsigned long long)header);
                    assert_same(&got, &want);
                    buf_free(&want);
                    buf_free(&got);
                }
            }
            for (size_t i = 0; i < 4; i++)
                buf_free(&b[i]);
        }
    }
    assert_int_equal(dir_entries(dir), 0);
    rmdir(dir);
}

/* Ties across three inputs (four keys over three owners: ties in each),
 * one record unterminated, on P = 1..4, spilled or not, against
 * rf_keyed_sort's order with the record numbers as input order: through
 * the local lane (lane_run, inputs in memory), or with every frame by
 * reference (dist_run, inputs in files). */
static void ties_across_inputs(int by_reference)
{
    enum { N = 60 };
    uint64_t keys[N];
    for (int i = 0; i < N; i++)
        keys[i] = (uint64_t)(i % 4) << 62;
    buf b[3] = {{0}, {0}, {0}};
    for (int i = 0; i < N; i++) {
        char rec[32];
        const int len = snprintf(rec, sizeof rec, i == 39 ? "r%d" : "r%d\n", i);
        buf_put(&b[i < 20 ? 0 : i < 40 ? 1 : 2], rec, (size_t)len);
    }
    char files[256], names[3][300];
    rf_engine_input in[3];
    if (by_reference) {
        fresh_dir(files, sizeof files);
        set_files(b, 3, files, names, in);
    } else {
        set_inputs(b, 3, in);
    }
    key_table table = {keys, N};
    for (int spill = 0; spill < 2; spill++) {
        for (unsigned parts = 1; parts <= 4; parts++) {
            char dir[256];
            fresh_dir(dir, sizeof dir);
            rf_engine_options o;
            options(&o, 99, '\n', 0, spill ? 1 : 64 * MIB, dir);
            rf_keyed_order ko;
            assert_int_equal(rf_keyed_order_init(&ko, o.rng, o.key), RF_OK);
            rf_keyed a[N];
            for (int i = 0; i < N; i++)
                a[i] = (rf_keyed){keys[i], (uint64_t)i};
            assert_int_equal(rf_keyed_sort(&ko, a, N, 1), RF_OK);
            buf want = {0}, got = {0};
            for (int i = 0; i < N; i++) {
                char rec[32];
                const int len = snprintf(rec, sizeof rec, "r%llu\n", (unsigned long long)a[i].val);
                buf_put(&want, rec, (size_t)len);
            }
            if (by_reference) {
                refer_mode = 1;
                run_keys = &table;
                dist_run(&o, in, 3, parts, 3, parts % 2 ? 16 : MIB, (enum feed)(parts % FEEDS),
                         RF_ENGINE_ALL, &got);
                refer_mode = 0;
                run_keys = NULL;
            } else {
                lane_run(&o, in, 3, parts, parts % 2 ? 64 : MIB, (enum feed)(parts % FEEDS),
                         RF_ENGINE_ALL, &table, &got);
            }
            assert_same(&got, &want);
            buf_free(&want);
            buf_free(&got);
            rmdir(dir);
        }
    }
    if (by_reference)
        unlink_files(names, 3, files);
    for (int i = 0; i < 3; i++)
        buf_free(&b[i]);
}

/* Ties among records of the lane, several inputs (runs end at each one),
 * an unterminated record (copied, a run of its own), spilled or not: the
 * order is rf_keyed_sort's with the record numbers as input order. */
static void lane_ties(void **state)
{
    (void)state;
    ties_across_inputs(0);
}

/* Megabytes of output per owner: the write goes through the records
 * layer's threaded gather (below about 1 MiB it is serial), with the lane
 * and without, whole and with a count; and rounds of 4 MiB per part, whose
 * receive buffer (4.8 MB: one owner's two parts) is huge pages. */
static void threaded_write(void **state)
{
    (void)state;
    buf b = {0};
    uint64_t s = 4242;
    gen(&b, &s, 300000, 30, '\n', 1);
    rf_engine_input in = rf_engine_input_bytes(b.p, b.len, "big");
    rf_engine_options o;
    options(&o, 5, '\n', 1, 256 * MIB, NULL);
    assert_int_equal(o.threads, 2);
    for (int c = 0; c < 2; c++) {
        const uint64_t count = c ? 123457 : RF_ENGINE_ALL;
        check_run(&o, &in, 1, 2, 2, MIB, IN_PLACE, count);
        check_run(&o, &in, 1, 2, 1, 4 * MIB, IN_PLACE, count);
        buf want = {0}, got = {0};
        reference(&o, &in, 1, count, &want);
        lane_run(&o, &in, 1, 1, MIB, PART_MAJOR, count, NULL, &got);
        assert_same(&got, &want);
        buf_free(&want);
        buf_free(&got);
    }
    buf_free(&b);
}

/* What rf_engine_scatter_local refuses. */
static void lane_refused(void **state)
{
    (void)state;
    rf_engine_options o, other;
    options(&o, 1, '\n', 0, 0, NULL);
    options(&other, 2, '\n', 0, 0, NULL);
    rf_engine_input in = rf_engine_input_bytes("a\nb\nc\nd\n", 8, "x");
    rf_engine_error e;
    rf_engine_scatter *s;
    rf_engine_gather *g, *g3, *gx;
    assert_int_equal(rf_engine_scatter_open(&s, &o, &in, 1, 0, 2, 0, 2, &e), RF_OK);
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    assert_int_equal(rf_engine_gather_open(&g3, &o, 3, &e), RF_OK);
    assert_int_equal(rf_engine_gather_open(&gx, &other, 2, &e), RF_OK);
    assert_int_equal(rf_engine_scatter_local(NULL, 0, g, &e), RF_EINVAL);
    assert_int_equal(rf_engine_scatter_local(s, 0, NULL, &e), RF_EINVAL);
    assert_int_equal(rf_engine_scatter_local(s, 2, g, &e), RF_EINVAL);  /* no such owner */
    assert_int_equal(rf_engine_scatter_local(s, 0, g3, &e), RF_EINVAL); /* other parts */
    assert_int_equal(rf_engine_scatter_local(s, 0, gx, &e), RF_EINVAL); /* other seed */
    assert_int_equal(rf_engine_scatter_local(s, 1, g, &e), RF_OK);
    assert_int_equal(rf_engine_scatter_local(s, 1, g, &e), RF_EINVAL); /* twice */
    rf_engine_scatter *s2;
    assert_int_equal(rf_engine_scatter_open(&s2, &o, &in, 1, 1, 2, 0, 2, &e), RF_OK);
    const void *out[2];
    size_t len[2];
    int done;
    assert_int_equal(rf_engine_scatter_next(s2, MIB, out, len, &done, &e), RF_OK);
    assert_int_equal(rf_engine_scatter_local(s2, 0, g3, &e), RF_EINVAL); /* records handed out */
    rf_engine_gather_close(g);
    rf_engine_gather_close(g3);
    rf_engine_gather_close(gx);
    rf_engine_scatter_close(s);
    rf_engine_scatter_close(s2);
}

/* ------------------------------------------------------------------------ */
/* Owners that read their records themselves (rf_engine_gather_direct)      */

/* The whole run by `owners` direct owners: the header, then each owner's
 * first records until `count`; each owner's _bytes checked against what
 * it writes, for k and k / 2 records, and a second write the same. */
static void direct_run(const rf_engine_options *o, const rf_engine_input *in, unsigned owners,
                       uint64_t count, buf *out)
{
    void *hb;
    size_t hl;
    rf_engine_error e;
    assert_int_equal(rf_engine_header(o, in, 1, &hb, &hl, &e), RF_OK);
    buf_put(out, hb, hl);
    free(hb);
    uint64_t total, left = count, got_records = 0;
    assert_int_equal(rf_engine_part_count(o, in, 1, 0, 1, &total, NULL, &e), RF_OK);
    for (unsigned d = 0; d < owners; d++) {
        rf_engine_gather *g;
        assert_int_equal(rfi_dist_gather_direct(&g, o, in, 1, d, owners,
                                                run_keys ? test_key : NULL, run_keys, &e),
                         RF_OK);
        unsigned owner = 99, of = 99;
        assert_true(rf_engine_gather_owner(g, &owner, &of));
        assert_int_equal(owner, d);
        assert_int_equal(of, owners);
        const uint64_t mine = rf_engine_gather_records(g);
        got_records += mine;
        const uint64_t k = left < mine ? left : mine;
        owner_out(g, k, out);
        rf_engine_gather_close(g);
        left -= k;
    }
    assert_int_equal(got_records, total);
}

/* Every set as one file, both delimiters, with and without a header, on
 * Q = 1..7 owners, one thread or two, all records or a count: the owners'
 * outputs one after another are rf_engine_shuffle's bytes. */
static void direct_matrix(void **state)
{
    (void)state;
    char files[256], names[1][300];
    fresh_dir(files, sizeof files);
    unsigned run = 0;
    for (int k = 0; k < SETS; k++)
        for (int dl = 0; dl < 2; dl++) {
            const unsigned char delim = dl ? '\0' : '\n';
            buf b[4], one = {0};
            size_t n;
            make_set(k, delim, b, &n);
            for (size_t i = 0; i < n; i++)
                buf_put(&one, b[i].p, b[i].len);
            rf_engine_input in[1];
            set_files(&one, 1, files, names, in);
            for (uint64_t header = 0; header <= 2; header += 2)
                for (unsigned owners = 1; owners <= 7; owners++, run++) {
                    rf_engine_options o;
                    options(&o, 7 + run % 3, delim, header, 64 * MIB, NULL);
                    o.threads = 1 + run % 2;
                    const uint64_t count = run % 4 == 3 ? 9 : RF_ENGINE_ALL;
                    buf want = {0}, got = {0};
                    reference(&o, in, 1, count, &want);
                    direct_run(&o, in, owners, count, &got);
                    if (got.len != want.len || (got.len && memcmp(got.p, want.p, got.len) != 0))
                        print_error("set %d Q=%u header=%llu delim=%d\n", k, owners,
                                    (unsigned long long)header, delim);
                    assert_same(&got, &want);
                    buf_free(&want);
                    buf_free(&got);
                }
            unlink(names[0]);
            buf_free(&one);
            for (size_t i = 0; i < 4; i++)
                buf_free(&b[i]);
        }
    rmdir(files);
}

/* Several keyed blocks of 2^16 records, found a window at a time: 200000
 * short records with, in the middle, one longer than the window (200 KiB)
 * and, once, an unterminated end; every generator; 1, 2, 3 and 5 owners, a
 * count and a header: rf_engine_shuffle's bytes. */
static void direct_many_records(void **state)
{
    (void)state;
    char files[256], names[1][300];
    fresh_dir(files, sizeof files);
    const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    for (int i = 0; i < 3; i++) {
        buf b = {0};
        uint64_t s = 5 + (uint64_t)i;
        gen(&b, &s, 100000, 20, '\n', 0);
        for (int j = 0; j < 200 * 1024; j++)
            buf_put(&b, "L", 1);
        buf_put(&b, "\n", 1);
        gen(&b, &s, 100000, 20, '\n', i == 1);
        rf_engine_input in[1];
        set_files(&b, 1, files, names, in);
        const unsigned owners[] = {1, 2, 3, 5};
        for (int q = 0; q < 4; q++) {
            rf_engine_options o;
            options(&o, 11, '\n', (uint64_t)(q == 3), 64 * MIB, NULL);
            o.rng = kinds[i];
            const uint64_t count = q == 2 ? 150000 : RF_ENGINE_ALL;
            buf want = {0}, got = {0};
            reference(&o, in, 1, count, &want);
            direct_run(&o, in, owners[q], count, &got);
            assert_same(&got, &want);
            buf_free(&want);
            buf_free(&got);
        }
        unlink(names[0]);
        buf_free(&b);
    }
    rmdir(files);
}

/* Equal keys (four values, 15 records each) on 1..4 owners: rf_keyed_sort's
 * order with the record numbers as input order. */
static void direct_ties(void **state)
{
    (void)state;
    enum { N = 60 };
    uint64_t keys[N];
    buf in_bytes = {0};
    for (int i = 0; i < N; i++) {
        keys[i] = (uint64_t)(i % 4) << 62; /* owner (i % 4) of 4 */
        char rec[32];
        const int len = snprintf(rec, sizeof rec, "r%d\n", i);
        buf_put(&in_bytes, rec, (size_t)len);
    }
    char files[256], names[1][300];
    fresh_dir(files, sizeof files);
    rf_engine_input in[1];
    set_files(&in_bytes, 1, files, names, in);
    rf_engine_options o;
    options(&o, 99, '\n', 0, 64 * MIB, NULL);
    buf want = {0};
    tie_order(&o, keys, N, &want);
    key_table table = {keys, N};
    for (unsigned owners = 1; owners <= 4; owners++) {
        run_keys = &table;
        buf got = {0};
        direct_run(&o, in, owners, RF_ENGINE_ALL, &got);
        run_keys = NULL;
        assert_same(&got, &want);
        buf_free(&got);
    }
    buf_free(&want);
    buf_free(&in_bytes);
    unlink_files(names, 1, files);
}

/* What a direct owner refuses, and an input changed before its write. */
static void direct_refused(void **state)
{
    (void)state;
    char files[256], names[2][300];
    fresh_dir(files, sizeof files);
    buf b[2] = {{0}, {0}};
    buf_put(&b[0], "h\naa\nbbb\ncc\n", 12);
    buf_put(&b[1], "x\n", 2);
    rf_engine_input in[2];
    set_files(b, 2, files, names, in);
    rf_engine_options o;
    options(&o, 3, '\n', 1, 64 * MIB, NULL);
    rf_engine_error e;
    rf_engine_gather *g = (rf_engine_gather *)&e;
    /* two inputs, bytes in memory, no input, an owner out of range, CSV */
    assert_int_equal(rf_engine_gather_direct(&g, &o, in, 2, 0, 1, &e), RF_EINVAL);
    assert_null(g);
    const rf_engine_input mem = rf_engine_input_bytes("a\n", 2, "m");
    assert_int_equal(rf_engine_gather_direct(&g, &o, &mem, 1, 0, 1, &e), RF_EINVAL);
    assert_int_equal(rf_engine_gather_direct(&g, &o, in, 0, 0, 1, &e), RF_EINVAL);
    assert_int_equal(rf_engine_gather_direct(&g, &o, in, 1, 2, 2, &e), RF_EINVAL);
    assert_int_equal(rf_engine_gather_direct(&g, &o, in, 1, 0, 0, &e), RF_EINVAL);
    o.csv = 1;
    assert_int_equal(rf_engine_gather_direct(&g, &o, in, 1, 0, 1, &e), RF_EINVAL);
    o.csv = 0;
    /* a pipe: every owner would need all of it */
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(write(pfd[1], "a\nb\n", 4), 4);
    close(pfd[1]);
    const rf_engine_input pin = rf_engine_input_fd(pfd[0], "pipe");
    assert_int_equal(rf_engine_gather_direct(&g, &o, &pin, 1, 0, 1, &e), RF_EINVAL);
    close(pfd[0]);
    /* a missing file; an order larger than the budget */
    const rf_engine_input gone = rf_engine_input_path("/nonexistent/riffle-test-input");
    assert_int_equal(rf_engine_gather_direct(&g, &o, &gone, 1, 0, 1, &e), RF_EIO);
    assert_int_equal(e.op, RF_ENGINE_OP_INPUT);
    o.memory = 8;
    assert_int_equal(rf_engine_gather_direct(&g, &o, in, 1, 0, 1, &e), RF_ENOMEM);
    o.memory = 64 * MIB;
    /* nothing is added to a direct gather */
    assert_int_equal(rf_engine_gather_direct(&g, &o, in, 1, 0, 1, &e), RF_OK);
    assert_int_equal(rf_engine_gather_records(g), 3);
    assert_int_equal(rf_engine_gather_add(g, 0, "", 0, &e), RF_EINVAL);
    assert_int_equal(rf_engine_gather_inputs(g, &o, in, 1, &e), RF_EINVAL);
    void *bp;
    assert_int_equal(rf_engine_gather_buffer(g, 16, &bp, &e), RF_EINVAL);
    /* the input rewritten (same size, other bytes, a later time) before the
     * write: the write fails as changed */
    struct timespec later[2] = {{0, UTIME_OMIT}, {time(NULL) + 100, 0}};
    FILE *f = fopen(names[0], "r+b");
    assert_non_null(f);
    assert_int_equal(fwrite("h\nzz\n", 1, 5, f), 5);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(utimensat(AT_FDCWD, names[0], later, 0), 0);
    const int fd = memfd_create("riffle-test-direct", MFD_CLOEXEC);
    unsigned char wb[64];
    rf_fd_sink sk;
    rf_fd_sink_init(&sk, fd, wb, sizeof wb);
    assert_int_equal(rf_engine_gather_write(g, RF_ENGINE_ALL, &sk.sink, &e), RF_EIO);
    assert_int_equal(e.op, RF_ENGINE_OP_CHANGED);
    close(fd);
    rf_engine_gather_close(g);
    buf_free(&b[0]);
    buf_free(&b[1]);
    unlink_files(names, 2, files);
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

static void invalid_arguments(void **state)
{
    (void)state;
    rf_engine_options o;
    options(&o, 1, '\n', 0, 0, NULL);
    rf_engine_input in = rf_engine_input_bytes("a\nb\n", 4, "x");
    uint64_t r, b;
    rf_engine_error e;
    assert_int_equal(rf_engine_part_count(&o, &in, 1, 0, 0, &r, &b, &e), RF_EINVAL);
    assert_int_equal(rf_engine_part_count(&o, &in, 1, 2, 2, &r, &b, &e), RF_EINVAL);
    assert_int_equal(rf_engine_part_count(NULL, &in, 1, 0, 1, &r, &b, &e), RF_EINVAL);
    rf_engine_scatter *s;
    assert_int_equal(rf_engine_scatter_open(&s, &o, &in, 1, 0, 1, 0, 0, &e), RF_EINVAL);
    assert_int_equal(rf_engine_scatter_open(&s, &o, NULL, 1, 0, 1, 0, 1, &e), RF_EINVAL);
    rf_engine_gather *g;
    assert_int_equal(rf_engine_gather_open(&g, &o, 0, &e), RF_EINVAL);
    o.rng = (rf_rng_kind)77;
    assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_EINVAL);
    assert_int_equal(rf_engine_scatter_open(&s, &o, &in, 1, 0, 1, 0, 1, &e), RF_EINVAL);
    rf_engine_scatter_close(NULL);
    rf_engine_gather_close(NULL);
    /* a gather's buffers: recv takes only one it gave out, once; buffers
     * never handed over go with the gather */
    o.rng = RF_RNG_CHACHA20;
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    void *b1, *b2, *b3;
    unsigned char mine[16];
    const size_t none[2] = {0, 0}, over[2] = {10, 7};
    assert_int_equal(rf_engine_gather_buffer(g, 16, &b1, &e), RF_OK);
    assert_int_equal(rf_engine_gather_buffer(g, 3 * MIB, &b2, &e), RF_OK);
    assert_int_equal(rf_engine_gather_buffer(g, 0, &b3, &e), RF_OK);
    assert_int_equal(rf_engine_gather_buffer(g, 8, NULL, &e), RF_EINVAL);
    assert_int_equal(rf_engine_gather_recv(g, mine, none, &e), RF_EINVAL);
    assert_int_equal(rf_engine_gather_recv(g, b3, NULL, &e), RF_EINVAL);
    memset(b2, 0xee, 3 * MIB); /* all of it is the caller's to write */
    assert_int_equal(rf_engine_gather_recv(g, b1, none, &e), RF_OK);
    assert_int_equal(rf_engine_gather_recv(g, b1, none, &e), RF_EINVAL); /* not out any more */
    rf_engine_gather_close(g);
    /* lengths past the buffer's end: refused, and the gather failed */
    assert_int_equal(rf_engine_gather_open(&g, &o, 2, &e), RF_OK);
    assert_int_equal(rf_engine_gather_buffer(g, 16, &b1, &e), RF_OK);
    assert_int_equal(rf_engine_gather_recv(g, b1, over, &e), RF_EINVAL);
    assert_int_equal(rf_engine_gather_buffer(g, 16, &b1, &e), RF_EINVAL);
    rf_engine_gather_close(g);
}

static void missing_input(void **state)
{
    (void)state;
    rf_engine_options o;
    options(&o, 1, '\n', 0, 0, NULL);
    rf_engine_input in[2] = {rf_engine_input_bytes("a\n", 2, "x"),
                             rf_engine_input_path("/nonexistent/riffle-test-input")};
    uint64_t r, b;
    rf_engine_error e;
    assert_int_equal(rf_engine_part_count(&o, in, 2, 0, 1, &r, &b, &e), RF_EIO);
    assert_int_equal(e.op, RF_ENGINE_OP_INPUT);
    assert_int_equal(e.err, ENOENT);
    assert_string_equal(e.path, "/nonexistent/riffle-test-input");
    void *hb;
    size_t hl;
    assert_int_equal(rf_engine_header(&o, in, 2, &hb, &hl, &e), RF_EIO);
    rf_engine_scatter *s = (rf_engine_scatter *)&e;
    assert_int_equal(rf_engine_scatter_open(&s, &o, in, 2, 0, 1, 0, 2, &e), RF_EIO);
    assert_null(s);
    in[1] = rf_engine_input_path("/");
    assert_int_equal(rf_engine_part_count(&o, in, 2, 0, 1, &r, &b, &e), RF_EIO);
    assert_int_equal(e.op, RF_ENGINE_OP_READ);
    assert_int_equal(e.err, EISDIR);
}

/* Scatter packets for one owner with a budget of 1 into g. */
static rf_status spill_into(rf_engine_gather *g, const rf_engine_options *o, const buf *b,
                            rf_engine_error *e)
{
    rf_engine_input in = rf_engine_input_bytes(b->p, b->len, "in");
    rf_engine_scatter *s;
    assert_int_equal(rf_engine_scatter_open(&s, o, &in, 1, 0, 1, 0, 1, e), RF_OK);
    int done = 0;
    rf_status st = RF_OK;
    while (!done && st == RF_OK) {
        const void *out;
        size_t len;
        assert_int_equal(rf_engine_scatter_next(s, 4096, &out, &len, &done, e), RF_OK);
        st = rf_engine_gather_add(g, 0, out, len, e);
    }
    rf_engine_scatter_close(s);
    return st;
}

static void bad_tmpdir(void **state)
{
    (void)state;
    buf b = {0};
    uint64_t seed = 3;
    gen(&b, &seed, 100, 10, '\n', 0);
    rf_engine_options o;
    options(&o, 1, '\n', 0, 1, "/nonexistent/riffle-test-tmp");
    rf_engine_gather *g;
    rf_engine_error e;
    assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
    assert_int_equal(spill_into(g, &o, &b, &e), RF_EIO);
    assert_int_equal(e.op, RF_ENGINE_OP_TEMP_DIR);
    assert_int_equal(e.err, ENOENT);
    /* and the gather refuses to go on */
    uint64_t bytes;
    assert_int_equal(rf_engine_gather_bytes(g, 1, &bytes, &e), RF_EINVAL);
    rf_engine_gather_close(g);
    buf_free(&b);
}

/* Named files (forced with named_temps, as where the file system has no
 * O_TMPFILE): the temp callback gets the directory when made, each file
 * before it is created, NULL once all is gone; and nothing is left. */
typedef struct tempwatch {
    int made, gone;
    unsigned long files;
    char dir[4096];
} tempwatch;

static int on_temp(void *ctx, const char *dir, unsigned long files)
{
    tempwatch *t = ctx;
    if (!dir) {
        t->gone++;
        return 0;
    }
    if (files == 0)
        t->made++;
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    t->files = files;
    return 0;
}

static void temp_callback(void **state)
{
    (void)state;
    char dir[256];
    fresh_dir(dir, sizeof dir);
    buf b = {0};
    uint64_t seed = 8;
    gen(&b, &seed, 2000, 10, '\n', 0);
    rf_engine_options o;
    options(&o, 1, '\n', 0, 1, dir);
    tempwatch t = {0};
    o.temp = on_temp;
    o.temp_ctx = &t;
    o.named_temps = 1;
    rf_engine_gather *g;
    rf_engine_error e;
    assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
    assert_int_equal(spill_into(g, &o, &b, &e), RF_OK);
    assert_int_equal(t.made, 1);
    assert_true(t.files >= 2);
    assert_int_equal(dir_entries(dir), 1);
    assert_true(strncmp(t.dir, dir, strlen(dir)) == 0);
    assert_int_equal(dir_entries(t.dir), (int)t.files);
    buf out = {0};
    gather_out(g, RF_ENGINE_ALL, &out);
    assert_int_equal(out.len, b.len);
    rf_engine_gather_close(g);
    assert_int_equal(t.gone, 1);
    assert_int_equal(dir_entries(dir), 0);
    rmdir(dir);
    buf_free(&out);
    buf_free(&b);
}

/* Whether dir's file system gives unnamed files (O_TMPFILE). */
static int unnamed_in(const char *dir)
{
    const int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

/* This process's descriptors open on files in dir, whatever their names
 * (an unnamed file's link reads "dir/#inode (deleted)"). */
static int fds_in(const char *dir)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    const size_t len = strlen(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[512], link[4096];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        const ssize_t got = readlink(path, link, sizeof link - 1);
        if (got > 0) {
            link[got] = 0;
            n += strncmp(link, dir, len) == 0 && link[len] == '/';
        }
    }
    closedir(d);
    return n;
}

/* Unnamed files where the file system takes them: while the gather has
 * spilled, its files are open but nothing has a name in the temporary
 * directory (so a kill -9 leaves nothing), and the temp callback, which is
 * for named files only, is never called.  The output is the named run's. */
static void temp_unnamed(void **state)
{
    (void)state;
    char dir[256];
    fresh_dir(dir, sizeof dir);
    if (!unnamed_in(dir)) {
        rmdir(dir);
        print_message("# skip: no O_TMPFILE in %s\n", dir);
        skip();
    }
    buf b = {0};
    uint64_t seed = 8;
    gen(&b, &seed, 2000, 10, '\n', 0);
    buf want[2] = {{0}, {0}};
    for (int named = 0; named < 2; named++) {
        rf_engine_options o;
        options(&o, 1, '\n', 0, 1, dir);
        tempwatch t = {0};
        o.temp = on_temp;
        o.temp_ctx = &t;
        o.named_temps = named;
        rf_engine_gather *g;
        rf_engine_error e;
        assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
        assert_int_equal(spill_into(g, &o, &b, &e), RF_OK);
        if (!named) {
            assert_int_equal(dir_entries(dir), 0);
            assert_true(fds_in(dir) >= 2); /* the bucket files, open */
            assert_int_equal(t.made + t.gone, 0);
        } else {
            assert_int_equal(rf_engine_gather_temp_files(g), t.files);
        }
        assert_true(rf_engine_gather_temp_files(g) >= 2);
        gather_out(g, RF_ENGINE_ALL, &want[named]);
        if (!named)
            assert_int_equal(dir_entries(dir), 0);
        rf_engine_gather_close(g);
        assert_int_equal(fds_in(dir), 0);
        assert_int_equal(dir_entries(dir), 0);
        assert_int_equal(t.gone, named);
    }
    assert_int_equal(want[0].len, b.len);
    assert_memory_equal(want[0].p, want[1].p, b.len);
    rmdir(dir);
    buf_free(&want[0]);
    buf_free(&want[1]);
    buf_free(&b);
}

/* A full file system under the spill: RF_EIO, ENOSPC, nothing left. */
static void temp_disk_full(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("# skip: mounting a small tmpfs needs root\n");
        skip();
    }
    char dir[256];
    fresh_dir(dir, sizeof dir);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=64k tmpfs '%s' 2>/dev/null", dir);
    if (system(cmd) != 0) {
        rmdir(dir);
        print_message("# skip: cannot mount a tmpfs here\n");
        skip();
    }
    buf b = {0};
    uint64_t seed = 21;
    gen(&b, &seed, 40000, 20, '\n', 0);
    rf_engine_options o;
    options(&o, 1, '\n', 0, 1, dir);
    rf_engine_gather *g;
    rf_engine_error e;
    assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
    const rf_status st = spill_into(g, &o, &b, &e);
    const int left_before_close = dir_entries(dir);
    rf_engine_gather_close(g);
    const int left = dir_entries(dir);
    snprintf(cmd, sizeof cmd, "umount '%s'", dir);
    const int unmounted = system(cmd);
    rmdir(dir);
    buf_free(&b);
    assert_int_equal(unmounted, 0);
    assert_int_equal(st, RF_EIO);
    assert_int_equal(e.op, RF_ENGINE_OP_TEMP_FILE);
    assert_int_equal(e.err, ENOSPC);
    assert_int_equal(left_before_close, 0); /* removed as soon as it failed */
    assert_int_equal(left, 0);
}

/* ------------------------------------------------------------------------ */
/* Frames of references                                                     */

/* The matrix again with every owner's frames, then every other owner's, by
 * reference into files. */
static void refs_matrix(void **state)
{
    (void)state;
    matrix_runs(1);
}

/* Ties among records sent by reference, across parts and inputs (a
 * reference run ends at each input), with an unterminated last record,
 * spilled or not: rf_keyed_sort's order with the record numbers as input
 * order.  Checked to fail when the gather's walk of a run's gaps is wrong. */
static void refs_ties(void **state)
{
    (void)state;
    ties_across_inputs(1);
}

/* A frame of references from part 0 of 1 for owner 0 of 1 over the file
 * `in`: entries (gap, skip, length) as given, the identity `ident`. */
static void ref_frame(buf *f, uint32_t ident, uint64_t check, const uint64_t *e, size_t n)
{
    buf pay = {0};
    for (size_t i = 0; i < 3 * n; i++)
        put_varint(&pay, e[i]);
    buf_put(f, "RFPR", 4);
    put32(f, 2);
    put32(f, 0);
    put32(f, 1);
    put32(f, 0);
    put32(f, 1);
    put32(f, '\n');
    put32(f, ident);
    put64(f, n);
    put64(f, pay.len);
    put64(f, 0);
    put64(f, check);
    buf_put(f, pay.p, pay.len);
    buf_free(&pay);
}

/* What a gather refuses of references, and an input changed before the
 * write; and the frames' size: about 3 bytes a record. */
static void refs_refused(void **state)
{
    (void)state;
    char files[256], names[1][300];
    fresh_dir(files, sizeof files);
    buf b = {0};
    buf_put(&b, "h\naa\nbbb\ncc", 11); /* a header, then 3 records, the last unterminated */
    rf_engine_input in[1];
    set_files(&b, 1, files, names, in);
    rf_engine_options o;
    options(&o, 3, '\n', 1, 64 * MIB, NULL);
    rf_engine_error e;
    /* the identity and check of this run, from a scatter's own frame */
    rf_engine_scatter *s;
    assert_int_equal(rf_engine_scatter_open(&s, &o, in, 1, 0, 1, 0, 1, &e), RF_OK);
    assert_int_equal(rf_engine_scatter_refer(s, 0, &e), RF_OK);
    assert_int_equal(rf_engine_scatter_refer(s, 1, &e), RF_EINVAL); /* no such owner */
    const void *out[1];
    size_t len[1];
    int done;
    assert_int_equal(rf_engine_scatter_next(s, MIB, out, len, &done, &e), RF_OK);
    assert_int_equal(done, 1);
    assert_true(len[0] == 64 + 9); /* 3 records, 3 one-byte varints each */
    const unsigned char *fr = out[0];
    const uint32_t ident = (uint32_t)fr[28] | (uint32_t)fr[29] << 8 | (uint32_t)fr[30] << 16 |
                           (uint32_t)fr[31] << 24;
    uint64_t check = 0;
    for (int i = 7; i >= 0; i--)
        check = check << 8 | fr[56 + i];
    buf good = {0};
    buf_put(&good, out[0], len[0]);
    /* refused after records were handed out */
    assert_int_equal(rf_engine_scatter_refer(s, 0, &e), RF_EINVAL);
    rf_engine_scatter_close(s);
    struct {
        uint64_t e[9];
        size_t n;
        uint32_t ident;
    } bad[] = {
        {{0, 0, 2}, 1, 0},                  /* in the header */
        {{0, 3, 2}, 1, 0},                  /* mid-record */
        {{0, 2, 2}, 1, 0},                  /* ends mid-record */
        {{0, 2, 4}, 1, 0},                  /* ends past its delimiter */
        {{0, 9, 4}, 1, 0},                  /* past the end */
        {{0, 10, 2}, 1, 0},                 /* the unterminated one, not from its start */
        {{0, 2, 3, 0, 0, 3}, 2, 0},         /* the second ends mid-record */
        /* a middle one in the unterminated tail, not whole: its write
         * would search past the input for a delimiter */
        {{0, 2, 3, 0, 4, 1, 0, 0, 2}, 3, 0},
        {{0, 2, 3}, 1, 1},                  /* another identity */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rf_engine_gather *g;
        assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
        assert_int_equal(rf_engine_gather_inputs(g, &o, in, 1, &e), RF_OK);
        buf f = {0};
        ref_frame(&f, ident + bad[i].ident, check, bad[i].e, bad[i].n);
        if (rf_engine_gather_add(g, 0, f.p, f.len, &e) != RF_EINVAL)
            print_error("bad reference %zu accepted\n", i);
        assert_int_equal(e.status, RF_EINVAL);
        rf_engine_gather_close(g);
        buf_free(&f);
    }
    /* without the inputs: refused */
    rf_engine_gather *g;
    assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
    assert_int_equal(rf_engine_gather_add(g, 0, good.p, good.len, &e), RF_EINVAL);
    rf_engine_gather_close(g);
    /* the good frame, then the input rewritten in place before the write:
     * the write fails, naming the change */
    assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
    assert_int_equal(rf_engine_gather_inputs(g, &o, in, 1, &e), RF_OK);
    assert_int_equal(rf_engine_gather_inputs(g, &o, in, 1, &e), RF_EINVAL); /* twice */
    assert_int_equal(rf_engine_gather_add(g, 0, good.p, good.len, &e), RF_OK);
    assert_int_equal(rf_engine_gather_records(g), 3);
    buf ok = {0};
    gather_out(g, RF_ENGINE_ALL, &ok);
    assert_int_equal(ok.len, 3 + 4 + 3);
    struct timespec later[2] = {{0, UTIME_OMIT}, {time(NULL) + 100, 0}};
    assert_int_equal(utimensat(AT_FDCWD, names[0], later, 0), 0);
    const int fd = memfd_create("riffle-test-owner", MFD_CLOEXEC);
    assert_true(fd >= 0);
    unsigned char wb[64];
    rf_fd_sink sink;
    rf_fd_sink_init(&sink, fd, wb, sizeof wb);
    assert_int_equal(rf_engine_gather_write(g, RF_ENGINE_ALL, &sink.sink, &e), RF_EIO);
    assert_int_equal(e.op, RF_ENGINE_OP_CHANGED);
    close(fd);
    rf_engine_gather_close(g);
    /* bytes in memory cannot be referred to */
    rf_engine_input mem = rf_engine_input_bytes(b.p, b.len, "mem");
    assert_int_equal(rf_engine_scatter_open(&s, &o, &mem, 1, 0, 1, 0, 1, &e), RF_OK);
    assert_int_equal(rf_engine_scatter_refer(s, 0, &e), RF_EINVAL);
    rf_engine_scatter_close(s);
    assert_int_equal(rf_engine_gather_open(&g, &o, 1, &e), RF_OK);
    assert_int_equal(rf_engine_gather_inputs(g, &o, &mem, 1, &e), RF_EINVAL);
    rf_engine_gather_close(g);
    buf_free(&ok);
    buf_free(&good);
    buf_free(&b);
    unlink_files(names, 1, files);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matrix),
        cmocka_unit_test(counts),
        cmocka_unit_test(many_records),
        cmocka_unit_test(split_again),
        cmocka_unit_test(long_header),
        cmocka_unit_test(input_kinds),
        cmocka_unit_test(owners_are_ranges),
        cmocka_unit_test(ties),
        cmocka_unit_test(bad_packets),
        cmocka_unit_test(foreign_packets),
        cmocka_unit_test(sink_rooms),
        cmocka_unit_test(beyond_32_bits),
        cmocka_unit_test(lane_matrix),
        cmocka_unit_test(refs_matrix),
        cmocka_unit_test(refs_ties),
        cmocka_unit_test(refs_refused),
        cmocka_unit_test(direct_matrix),
        cmocka_unit_test(direct_many_records),
        cmocka_unit_test(direct_ties),
        cmocka_unit_test(direct_refused),
        cmocka_unit_test(lane_ties),
        cmocka_unit_test(lane_refused),
        cmocka_unit_test(threaded_write),
        cmocka_unit_test(invalid_arguments),
        cmocka_unit_test(missing_input),
        cmocka_unit_test(bad_tmpdir),
        cmocka_unit_test(temp_callback),
        cmocka_unit_test(temp_unnamed),
        cmocka_unit_test(temp_disk_full),
    };
    return cmocka_run_group_tests_name("dist", tests, NULL, NULL);
}
