/* Splits (riffle_engine.h, "Splits") through the public headers only: the
 * spec grammar and its refusals with their messages, the part bounds of each
 * kind for a total (the documented formulas, worked by hand here), the part
 * names of a pattern or a list, and rf_split_sink: its parts against the
 * unsplit output of rf_engine_shuffle cut by the plan, for several buffer
 * sizes, and against the parts the riffle program writes for the same seed
 * (RIFFLE names the program; by default the build's riffle beside this test's
 * directory; without it that test is skipped). */
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "riffle.h"
#include "riffle_engine.h"
#include "riffle_io.h"

/* ------------------------------------------------------------------------ */
/* Byte buffers                                                             */
/* ------------------------------------------------------------------------ */

typedef struct bytes {
    unsigned char *p;
    size_t len;
} bytes;

static bytes read_fd_all(int fd)
{
    bytes b = {NULL, 0};
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    b.len = (size_t)st.st_size;
    b.p = malloc(b.len + 1);
    assert_non_null(b.p);
    size_t got = 0;
    while (got < b.len) {
        const ssize_t k = pread(fd, b.p + got, b.len - got, (off_t)got);
        assert_true(k > 0);
        got += (size_t)k;
    }
    return b;
}

static bytes read_path(const char *path)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    bytes b = read_fd_all(fd);
    close(fd);
    return b;
}

/* Offset of the start of record i in b (delimited by delim); len for i past
 * the last. */
static size_t record_start(const bytes *b, unsigned char delim, uint64_t i)
{
    size_t at = 0;
    for (uint64_t k = 0; k < i && at < b->len; k++) {
        const unsigned char *d = memchr(b->p + at, delim, b->len - at);
        at = d ? (size_t)(d - b->p) + 1 : b->len;
    }
    return at;
}

/* ------------------------------------------------------------------------ */
/* Specs, bounds, names, messages                                           */
/* ------------------------------------------------------------------------ */

static void assert_reason(const rf_split_error *e, const char *want)
{
    char msg[256];
    const size_t n = rf_split_error_message(e, msg, sizeof msg);
    assert_string_equal(msg, want);
    assert_int_equal(n, strlen(want));
}

static void parse_refusals(void **state)
{
    (void)state;
    const struct {
        const char *spec;
        rf_split_problem problem;
        const char *reason;
    } bad[] = {
        {"0", RF_SPLIT_NO_PARTS, "no parts"},
        {"4097", RF_SPLIT_TOO_MANY, "more than 4096 parts"},
        {"2x", RF_SPLIT_BAD_SPEC, ""},
        {"-1", RF_SPLIT_BAD_SPEC, ""},
        {"", RF_SPLIT_BAD_SPEC, ""},
        {",", RF_SPLIT_BAD_SPEC, ""},
        {"3,", RF_SPLIT_BAD_SPEC, ""},
        {"*,3", RF_SPLIT_BAD_SPEC, ""},
        {"3,*,*", RF_SPLIT_BAD_SPEC, ""},
        {"1.5,*", RF_SPLIT_BAD_SPEC, ""},
        {"50%,50", RF_SPLIT_BAD_SPEC, ""},
        {"1.%,99%", RF_SPLIT_BAD_SPEC, ""},
        {".5%,99.5%", RF_SPLIT_BAD_SPEC, ""},
        {"0.1234567891%,99.8765432109%", RF_SPLIT_BAD_SPEC, ""},
        {"101%,-1%", RF_SPLIT_BAD_SPEC, ""},
        {"50%%,50%", RF_SPLIT_BAD_SPEC, ""},
        {"80%,10%", RF_SPLIT_PERCENT_SUM, "the percentages add up to 90%, not 100%"},
        {"33.3%,33.3%,33.3%", RF_SPLIT_PERCENT_SUM,
         "the percentages add up to 99.9%, not 100%"},
        {"100%,0.000000001%", RF_SPLIT_PERCENT_SUM,
         "the percentages add up to 100.000000001%, not 100%"},
        {"18446744073709551615,1,*", RF_SPLIT_COUNTS_OVERFLOW,
         "the counts add up to more than 2^64-1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rf_split s;
        rf_split_error e;
        assert_int_equal(rf_split_parse(&s, bad[i].spec, &e), RF_EINVAL);
        assert_int_equal(e.problem, bad[i].problem);
        assert_null(s.value);
        assert_int_equal(s.parts, 0);
        assert_reason(&e, bad[i].reason);
    }
    /* 4096 parts is the most; 4097 in a list too */
    char many[4097 * 2 + 1];
    for (size_t i = 0; i < 4097; i++)
        memcpy(many + 2 * i, "1,", 2);
    many[4097 * 2 - 1] = '\0';
    rf_split s;
    rf_split_error e;
    assert_int_equal(rf_split_parse(&s, many, &e), RF_EINVAL);
    assert_int_equal(e.problem, RF_SPLIT_TOO_MANY);
    many[4096 * 2 - 1] = '\0';
    assert_int_equal(rf_split_parse(&s, many, &e), RF_OK);
    assert_int_equal(s.parts, 4096);
    rf_split_free(&s);
    assert_int_equal(rf_split_parse(&s, "4096", NULL), RF_OK);
    assert_int_equal(s.parts, 4096);
    rf_split_free(&s);
}

/* Parse spec and plan n records; the bounds must be want[0..parts]. */
static void assert_bounds(const char *spec, uint64_t n, const uint64_t *want, size_t parts)
{
    rf_split s;
    assert_int_equal(rf_split_parse(&s, spec, NULL), RF_OK);
    assert_int_equal(s.parts, parts);
    uint64_t *b = malloc((parts + 1) * sizeof *b);
    assert_non_null(b);
    assert_int_equal(rf_split_bounds(&s, n, b, NULL), RF_OK);
    assert_memory_equal(b, want, (parts + 1) * sizeof *b);
    free(b);
    rf_split_free(&s);
}

static void plans(void **state)
{
    (void)state;
    /* equal: q = n / N, r = n % N, the r larger parts first */
    assert_bounds("4", 10, (const uint64_t[]){0, 3, 6, 8, 10}, 4);
    assert_bounds("3", 2, (const uint64_t[]){0, 1, 2, 2}, 3);
    assert_bounds("1", 0, (const uint64_t[]){0, 0}, 1);
    assert_bounds("2", UINT64_MAX, (const uint64_t[]){0, UINT64_MAX / 2 + 1, UINT64_MAX}, 2);
    /* percentages: b(i) = round(n c(i) / 100), halves up */
    assert_bounds("80%,10%,10%", 1000, (const uint64_t[]){0, 800, 900, 1000}, 3);
    assert_bounds("50%,50%", 3, (const uint64_t[]){0, 2, 3}, 2);          /* 1.5 -> 2 */
    assert_bounds("12.5%,87.5%", 4, (const uint64_t[]){0, 1, 4}, 2);      /* 0.5 -> 1 */
    assert_bounds("33.3%,33.3%,33.4%", 7, (const uint64_t[]){0, 2, 5, 7}, 3); /* 2.331, 4.662 */
    assert_bounds("33.333333333%,66.666666667%", 10, (const uint64_t[]){0, 3, 10}, 2);
    assert_bounds("0%,100%", 5, (const uint64_t[]){0, 0, 5}, 2);
    assert_bounds("100%", UINT64_MAX, (const uint64_t[]){0, UINT64_MAX}, 1);
    assert_bounds("50%,50%", UINT64_MAX,
                  (const uint64_t[]){0, UINT64_MAX / 2 + 1, UINT64_MAX}, 2);
    /* counts: cumulative, '*' the rest */
    assert_bounds("3,4,3", 10, (const uint64_t[]){0, 3, 7, 10}, 3);
    assert_bounds("2,0,5,*", 10, (const uint64_t[]){0, 2, 2, 7, 10}, 4);
    assert_bounds("10,*", 10, (const uint64_t[]){0, 10, 10}, 2);
    assert_bounds("*", 6, (const uint64_t[]){0, 6}, 1);

    rf_split s;
    rf_split_error e;
    uint64_t b[4];
    assert_int_equal(rf_split_parse(&s, "3,4", NULL), RF_OK);
    assert_int_equal(rf_split_bounds(&s, 10, b, &e), RF_EINVAL);
    assert_int_equal(e.problem, RF_SPLIT_COUNTS_DIFFER);
    assert_reason(&e, "the counts add up to 7, but 10 records are output");
    assert_int_equal(rf_split_bounds(&s, 7, b, &e), RF_OK);
    rf_split_free(&s);
    assert_int_equal(rf_split_parse(&s, "8,4,*", NULL), RF_OK);
    assert_int_equal(rf_split_bounds(&s, 10, b, &e), RF_EINVAL);
    assert_int_equal(e.problem, RF_SPLIT_COUNTS_EXCEED);
    assert_int_equal(e.sum, 12);
    assert_int_equal(e.total, 10);
    assert_reason(&e, "the counts add up to 12, more than the 10 records output");
    assert_int_equal(rf_split_bounds(&s, 12, b, &e), RF_OK);
    rf_split_free(&s);
}

static void assert_names(const char *pattern, size_t parts, const char *const *want)
{
    char **names;
    rf_split_error e;
    assert_int_equal(rf_split_names(pattern, parts, &names, &e), RF_OK);
    for (size_t i = 0; i < parts; i++)
        assert_string_equal(names[i], want[i]);
    rf_split_names_free(names, parts);
}

static void assert_names_refused(const char *pattern, size_t parts, const char *reason)
{
    char **names = (char **)1;
    rf_split_error e;
    assert_int_equal(rf_split_names(pattern, parts, &names, &e), RF_EINVAL);
    assert_null(names);
    assert_reason(&e, reason);
}

static void names(void **state)
{
    (void)state;
    assert_names("p%d", 3, (const char *const[]){"p0", "p1", "p2"});
    assert_names("dir/x%03d.csv", 2, (const char *const[]){"dir/x000.csv", "dir/x001.csv"});
    assert_names("%2d%%", 2, (const char *const[]){" 0%", " 1%"});
    assert_names("%%%d%%%%", 1, (const char *const[]){"%0%%"});
    assert_names("a%020d", 1, (const char *const[]){"a00000000000000000000"});
    assert_names("train.csv,test.csv", 2, (const char *const[]){"train.csv", "test.csv"});
    assert_names_refused("p%21d", 2, "the width of %d is at most 20");
    assert_names_refused("p%s", 2,
                         "the only conversions are %d (with an optional width, e.g. %03d) and %%");
    assert_names_refused("p%-d", 2,
                         "the only conversions are %d (with an optional width, e.g. %03d) and %%");
    assert_names_refused("p%d%d", 2, "more than one %d");
    assert_names_refused("p%%", 2, "no %d (or, without any %, a comma-separated list of names)");
    assert_names_refused("a,b,c", 2, "3 names for 2 parts");
    assert_names_refused("a", 2, "1 name for 2 parts");
    assert_names_refused("a,b", 1, "2 names for 1 part");
    assert_names_refused("a,,c", 3, "an empty name");
    assert_names_refused("a,b,a", 3, "a name given twice");
}

/* ------------------------------------------------------------------------ */
/* The sink                                                                 */
/* ------------------------------------------------------------------------ */

/* 600 records "r<i>" (some longer), a header of two records. */
static bytes make_input(unsigned char delim)
{
    bytes b = {malloc(64 * 1024), 0};
    assert_non_null(b.p);
    b.len += (size_t)sprintf((char *)b.p, "id%cname%c", delim, delim);
    for (int i = 0; i < 600; i++) {
        b.len += (size_t)sprintf((char *)b.p + b.len, "r%d%s", i, i % 7 ? "" : "-longer-record");
        b.p[b.len++] = delim;
    }
    return b;
}

static void engine_options(rf_engine_options *o, const char *seed, unsigned char delim,
                           uint64_t header, uint64_t count)
{
    rf_engine_options_init(o);
    assert_int_equal(rf_seed_text(o->key, seed), RF_OK);
    o->delim = delim;
    o->header = header;
    o->count = count;
    o->threads = 2;
}

/* The unsplit output, through rf_fd_sink. */
static bytes unsplit(const rf_engine_options *o, const bytes *in)
{
    const int fd = memfd_create("riffle-unsplit", MFD_CLOEXEC);
    assert_true(fd >= 0);
    unsigned char *buf = malloc(1 << 16);
    assert_non_null(buf);
    rf_fd_sink s;
    rf_fd_sink_init(&s, fd, buf, 1 << 16);
    const rf_engine_input x = rf_engine_input_bytes(in->p, in->len, "in");
    rf_engine_error err;
    assert_int_equal(rf_engine_shuffle(o, &x, 1, &s.sink, &err), RF_OK);
    assert_int_equal(rf_fd_sink_flush(&s), 0);
    bytes b = read_fd_all(fd);
    close(fd);
    free(buf);
    return b;
}

/* The parts through rf_split_sink with a buffer of cap bytes; out[0..parts)
 * to be freed. */
static void split_run(const rf_engine_options *o, const bytes *in, const rf_split *sp, size_t cap,
                      bytes *out)
{
    int *fds = malloc(sp->parts * sizeof *fds);
    unsigned char *buf = malloc(cap);
    assert_true(fds && buf);
    for (size_t i = 0; i < sp->parts; i++)
        assert_true((fds[i] = memfd_create("riffle-part", MFD_CLOEXEC)) >= 0);
    rf_split_sink s;
    assert_int_equal(rf_split_sink_init(&s, sp, fds, buf, cap), RF_OK);
    const rf_engine_input x = rf_engine_input_bytes(in->p, in->len, "in");
    rf_engine_error err;
    assert_int_equal(rf_engine_shuffle(o, &x, 1, &s.sink, &err), RF_OK);
    assert_int_equal(rf_split_sink_finish(&s), 0);
    rf_split_sink_free(&s);
    for (size_t i = 0; i < sp->parts; i++) {
        out[i] = read_fd_all(fds[i]);
        close(fds[i]);
    }
    free(fds);
    free(buf);
}

/* Each part is the header then records [b(i), b(i+1)) of the unsplit
 * output. */
static void assert_parts_cut_from(const bytes *parts, const rf_split *sp, const bytes *whole,
                                  unsigned char delim, uint64_t header)
{
    const size_t hlen = record_start(whole, delim, header);
    uint64_t records = 0;
    for (size_t at = hlen; at < whole->len; at++)
        records += whole->p[at] == delim;
    uint64_t *b = malloc((sp->parts + 1) * sizeof *b);
    assert_non_null(b);
    assert_int_equal(rf_split_bounds(sp, records, b, NULL), RF_OK);
    for (size_t i = 0; i < sp->parts; i++) {
        const size_t from = record_start(whole, delim, header + b[i]);
        const size_t to = record_start(whole, delim, header + b[i + 1]);
        assert_int_equal(parts[i].len, hlen + (to - from));
        assert_memory_equal(parts[i].p, whole->p, hlen);
        if (to > from)
            assert_memory_equal(parts[i].p + hlen, whole->p + from, to - from);
    }
    free(b);
}

static void sink_cuts_the_unsplit_output(void **state)
{
    (void)state;
    const char *specs[] = {"1", "7", "600", "1000", "80%,10%,10%", "0%,12.5%,0%,87.5%",
                           "100,0,250,*", "598"};
    const size_t caps[] = {1, 7, 1 << 20};
    for (int d = 0; d < 2; d++) {
        const unsigned char delim = d ? '\0' : '\n';
        bytes in = make_input(delim);
        for (uint64_t header = 0; header <= 2; header += 2)
            for (int c = 0; c < 2; c++) {
                rf_engine_options o;
                engine_options(&o, "2026", delim, header, c ? 598 : RF_ENGINE_ALL);
                bytes whole = unsplit(&o, &in);
                for (size_t si = 0; si < sizeof specs / sizeof *specs; si++) {
                    rf_split sp;
                    assert_int_equal(rf_split_parse(&sp, specs[si], NULL), RF_OK);
                    for (size_t ci = 0; ci < 3; ci++) {
                        bytes *parts = calloc(sp.parts, sizeof *parts);
                        assert_non_null(parts);
                        split_run(&o, &in, &sp, caps[ci], parts);
                        assert_parts_cut_from(parts, &sp, &whole, delim, header);
                        for (size_t i = 0; i < sp.parts; i++)
                            free(parts[i].p);
                        free(parts);
                    }
                    rf_split_free(&sp);
                }
                free(whole.p);
            }
        free(in.p);
    }
}

/* Counts that do not fit the records: begin refuses, the run fails with the
 * sink's EINVAL, and the reason is in the sink. */
static void sink_refuses_counts(void **state)
{
    (void)state;
    bytes in = make_input('\n');
    rf_split sp;
    assert_int_equal(rf_split_parse(&sp, "100,200", NULL), RF_OK);
    int fds[2];
    for (int i = 0; i < 2; i++)
        assert_true((fds[i] = memfd_create("riffle-part", MFD_CLOEXEC)) >= 0);
    unsigned char buf[256];
    rf_split_sink s;
    assert_int_equal(rf_split_sink_init(&s, &sp, fds, buf, sizeof buf), RF_OK);
    rf_split_free(&sp); /* the sink holds its own copy */
    rf_engine_options o;
    engine_options(&o, "1", '\n', 2, RF_ENGINE_ALL);
    const rf_engine_input x = rf_engine_input_bytes(in.p, in.len, "in");
    rf_engine_error err;
    assert_int_equal(rf_engine_shuffle(&o, &x, 1, &s.sink, &err), RF_EIO);
    assert_int_equal(err.op, RF_ENGINE_OP_OUTPUT);
    assert_int_equal(err.err, EINVAL);
    assert_int_equal(s.error.problem, RF_SPLIT_COUNTS_DIFFER);
    assert_int_equal(s.error.sum, 300);
    assert_int_equal(s.error.total, 600);
    assert_int_not_equal(rf_split_sink_finish(&s), 0);
    rf_split_sink_free(&s);
    close(fds[0]);
    close(fds[1]);
    free(in.p);
}

/* The protocol by hand: room at each boundary, more than the room refused,
 * finish before the end refused. */
static void sink_protocol(void **state)
{
    (void)state;
    rf_split sp;
    assert_int_equal(rf_split_parse(&sp, "3", NULL), RF_OK);
    int fds[3];
    for (int i = 0; i < 3; i++)
        assert_true((fds[i] = memfd_create("riffle-part", MFD_CLOEXEC)) >= 0);
    unsigned char buf[64];
    rf_split_sink s;
    assert_int_equal(rf_split_sink_init(&s, &sp, fds, buf, sizeof buf), RF_OK);
    const rf_engine_sink *k = &s.sink;
    assert_int_equal(k->room(k->ctx), 0); /* before begin */
    assert_int_equal(k->begin(k->ctx, "H\n", 2, 7), 0);
    const uint64_t rooms[] = {3, 2, 2};
    const char *recs = "abcdefg";
    size_t r = 0;
    for (int part = 0; part < 3; part++) {
        assert_int_equal(k->room(k->ctx), rooms[part]);
        for (uint64_t j = 0; j < rooms[part]; j++, r++) {
            rf_writer *w = k->writer(k->ctx);
            const char rec[2] = {recs[r], '\n'};
            assert_int_equal(rf_writer_put(w, rec, 2), 0);
            assert_int_equal(k->advance(k->ctx, 1), 0);
        }
    }
    assert_int_equal(k->room(k->ctx), 0);
    assert_int_equal(rf_split_sink_finish(&s), 0);
    const char *want[] = {"H\na\nb\nc\n", "H\nd\ne\n", "H\nf\ng\n"};
    for (int i = 0; i < 3; i++) {
        bytes b = read_fd_all(fds[i]);
        assert_int_equal(b.len, strlen(want[i]));
        assert_memory_equal(b.p, want[i], b.len);
        free(b.p);
        assert_int_equal(ftruncate(fds[i], 0), 0);
    }
    rf_split_sink_free(&s);

    /* more than the room; and finishing early */
    assert_int_equal(rf_split_sink_init(&s, &sp, fds, buf, sizeof buf), RF_OK);
    assert_int_equal(k->begin(k->ctx, NULL, 0, 7), 0);
    assert_int_equal(k->advance(k->ctx, 4), EINVAL);
    rf_split_sink_free(&s);
    assert_int_equal(rf_split_sink_init(&s, &sp, fds, buf, sizeof buf), RF_OK);
    assert_int_equal(k->begin(k->ctx, NULL, 0, 7), 0);
    assert_int_equal(k->advance(k->ctx, 3), 0);
    assert_int_equal(rf_split_sink_finish(&s), EINVAL);
    rf_split_sink_free(&s);
    /* init refusals */
    assert_int_equal(rf_split_sink_init(&s, NULL, fds, buf, sizeof buf), RF_EINVAL);
    assert_int_equal(rf_split_sink_init(&s, &sp, NULL, buf, sizeof buf), RF_EINVAL);
    assert_int_equal(rf_split_sink_init(&s, &sp, fds, buf, 0), RF_EINVAL);
    rf_split_free(&sp);
    for (int i = 0; i < 3; i++)
        close(fds[i]);
}

/* ------------------------------------------------------------------------ */
/* Against the program                                                      */
/* ------------------------------------------------------------------------ */

/* The riffle program: $RIFFLE, else ../../riffle from this test's binary
 * (build/tests/engine/test_split -> build/riffle). */
static int find_riffle(char *path, size_t len)
{
    const char *env = getenv("RIFFLE");
    if (env && *env) {
        snprintf(path, len, "%s", env);
        return access(path, X_OK) == 0;
    }
    char self[1024];
    const ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0)
        return 0;
    self[k] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    const int n = snprintf(path, len, "%s/../../riffle", self);
    return n > 0 && (size_t)n < len && access(path, X_OK) == 0;
}

static void run_program(const char *riffle, char *const argv[])
{
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execv(riffle, argv);
        _exit(127);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void sink_matches_the_program(void **state)
{
    (void)state;
    char riffle[4096];
    if (!find_riffle(riffle, sizeof riffle)) {
        skip(); /* no riffle program built beside the tests */
        return;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[96];
    snprintf(dir, sizeof dir, "%s/riffle-split-test.XXXXXX",
             tmp && *tmp && strlen(tmp) < 48 ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    char in_path[128];
    snprintf(in_path, sizeof in_path, "%s/in", dir);
    bytes in = make_input('\n');
    const int fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, in.p, in.len), (ssize_t)in.len);
    close(fd);
    const char *specs[] = {"5", "80%,10%,10%", "33.333333333%,66.666666667%", "100,0,*"};
    const char *seeds[] = {"7", "x7", "18446744073709551616"};
    for (size_t si = 0; si < sizeof specs / sizeof *specs; si++)
        for (size_t ki = 0; ki < sizeof seeds / sizeof *seeds; ki++) {
            char seed_arg[64], split_arg[64], pattern_arg[160];
            snprintf(seed_arg, sizeof seed_arg, "--seed=%s", seeds[ki]);
            snprintf(split_arg, sizeof split_arg, "--split=%s", specs[si]);
            snprintf(pattern_arg, sizeof pattern_arg, "--output-pattern=%s/p%%d", dir);
            char *argv[] = {riffle, seed_arg, "--header=2", split_arg, pattern_arg, in_path,
                            NULL};
            run_program(riffle, argv);
            rf_split sp;
            assert_int_equal(rf_split_parse(&sp, specs[si], NULL), RF_OK);
            rf_engine_options o;
            engine_options(&o, seeds[ki], '\n', 2, RF_ENGINE_ALL);
            bytes *parts = calloc(sp.parts, sizeof *parts);
            assert_non_null(parts);
            split_run(&o, &in, &sp, 4096, parts);
            for (size_t i = 0; i < sp.parts; i++) {
                char part_path[160];
                snprintf(part_path, sizeof part_path, "%s/p%zu", dir, i);
                bytes want = read_path(part_path);
                assert_int_equal(parts[i].len, want.len);
                assert_memory_equal(parts[i].p, want.p, want.len);
                assert_int_equal(unlink(part_path), 0);
                free(want.p);
                free(parts[i].p);
            }
            free(parts);
            rf_split_free(&sp);
        }
    assert_int_equal(unlink(in_path), 0);
    assert_int_equal(rmdir(dir), 0);
    free(in.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_refusals),
        cmocka_unit_test(plans),
        cmocka_unit_test(names),
        cmocka_unit_test(sink_cuts_the_unsplit_output),
        cmocka_unit_test(sink_refuses_counts),
        cmocka_unit_test(sink_protocol),
        cmocka_unit_test(sink_matches_the_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
