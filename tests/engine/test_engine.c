/* The engine (riffle_engine.h) through its public headers only: the output
 * of every engine (in memory, streamed head, external) against a reference
 * built from the keyed order of riffle.h, for inputs given as paths,
 * descriptors (files, pipes fed by a thread or a child) and bytes; the head
 * property; a sink that cuts the output into parts; the error details and
 * messages; the temporary-file and progress callbacks; and that nothing is
 * ever left in the temporary directory.
 *
 * Which engine ran is seen from outside: the external engine is the only one
 * that makes a temporary directory (the temp callback reports it). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "riffle.h"
#include "riffle_engine.h"
#include "riffle_io.h"
#include "test_bytes.h"

#define KIB ((uint64_t)1024)
#define MIB (KIB * 1024)

/* Budgets: smaller than every test input (external); enough for the inputs
 * in memory and for the head engine up to 2048 records but not 2500 (the
 * six-input set has about 2600 records); plenty. */
#define TINY (64 * KIB)
#define MID (512 * KIB)
#define BIG (64 * MIB)

/* ------------------------------------------------------------------------ */
/* Byte buffers and a test generator (test_bytes.h)                         */
/* ------------------------------------------------------------------------ */

static int buf_equal(const buf *a, const buf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

/* About `target` bytes of records of varied lengths (empty ones, short ones,
 * a few of kilobytes), any byte but the delimiter (the other delimiter byte
 * included).  Unterminated: a last record without its delimiter. */
static void gen_part(buf *b, uint64_t *s, size_t target, unsigned char delim, int terminated)
{
    const size_t end = b->len + target;
    while (b->len < end) {
        const uint64_t r = mix_next(s);
        size_t len = (size_t)((r >> 8) % 90);
        if (r % 16 == 0)
            len = 0;
        else if (r % 64 == 1)
            len = 200 + (size_t)((r >> 8) % 1000);
        for (size_t i = 0; i < len; i++) {
            const uint64_t x = mix_next(s);
            unsigned char c = (unsigned char)(1 + x % 255);
            if (x % 41 == 0)
                c = delim == '\n' ? '\0' : '\n';
            if (c == delim)
                c = 'a';
            buf_put(b, &c, 1);
        }
        buf_put(b, &delim, 1);
    }
    if (!terminated)
        buf_put(b, "last record, no delimiter", 25);
}

/* ------------------------------------------------------------------------ */
/* Records and the reference order                                          */
/* ------------------------------------------------------------------------ */

/* The stream of several inputs: each input's last record gets its
 * delimiter, and off[0..n] are the record starts (off[n] = the end). */
typedef struct recset {
    buf norm;
    size_t n;
    size_t *off;
    unsigned char delim;
} recset;

static void recset_build(recset *r, const buf *parts, size_t nparts, unsigned char delim)
{
    memset(r, 0, sizeof *r);
    r->delim = delim;
    for (size_t i = 0; i < nparts; i++) {
        buf_put(&r->norm, parts[i].p, parts[i].len);
        if (parts[i].len && parts[i].p[parts[i].len - 1] != delim)
            buf_put(&r->norm, &delim, 1);
    }
    size_t n = 0;
    for (size_t i = 0; i < r->norm.len; i++)
        n += r->norm.p[i] == delim;
    r->off = malloc((n + 1) * sizeof *r->off);
    assert_non_null(r->off);
    r->off[0] = 0;
    size_t k = 0;
    for (size_t i = 0; i < r->norm.len; i++)
        if (r->norm.p[i] == delim)
            r->off[++k] = i + 1;
    r->n = n;
}

static void recset_free(recset *r)
{
    buf_free(&r->norm);
    free(r->off);
    memset(r, 0, sizeof *r);
}

/* What the engine must write, from riffle.h's keyed order: the header
 * records, then the others by rf_keyed_sort of their keys k_0, k_1, ...,
 * the first `count` of them. */
static void expect(buf *out, const recset *r, rf_rng_kind kind, const uint8_t *key,
                   uint64_t header, uint64_t count)
{
    const size_t h = header < r->n ? (size_t)header : r->n;
    const size_t m = r->n - h;
    buf_put(out, r->norm.p, r->off[h]);
    if (m == 0)
        return;
    rf_keyed_order ord;
    assert_int_equal(rf_keyed_order_init(&ord, kind, key), RF_OK);
    rf_keyed *a = malloc(m * sizeof *a);
    assert_non_null(a);
    assert_int_equal(rf_keyed_fill(&ord, 0, a, m, 1), RF_OK);
    for (size_t j = 0; j < m; j++)
        a[j].val = j;
    assert_int_equal(rf_keyed_sort(&ord, a, m, 1), RF_OK);
    const size_t k = count < m ? (size_t)count : m;
    for (size_t j = 0; j < k; j++) {
        const size_t i = h + (size_t)a[j].val;
        buf_put(out, r->norm.p + r->off[i], r->off[i + 1] - r->off[i]);
    }
    free(a);
}

typedef struct span {
    const unsigned char *p;
    size_t len;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    const size_t n = x->len < y->len ? x->len : y->len;
    const int c = n ? memcmp(x->p, y->p, n) : 0;
    if (c)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* The output is the header records, then min(count, m) distinct records of
 * the others (a sub-multiset; all of them when count >= m).  Returns NULL or
 * what is wrong. */
static const char *check_permutation(const buf *out, const recset *r, uint64_t header,
                                     uint64_t count)
{
    const size_t h = header < r->n ? (size_t)header : r->n;
    const size_t m = r->n - h;
    const size_t want = count < m ? (size_t)count : m;
    if (out->len < r->off[h] || (h && memcmp(out->p, r->norm.p, r->off[h]) != 0))
        return "the header records are not first";
    if (out->len && out->p[out->len - 1] != r->delim)
        return "the output does not end with the delimiter";
    span *got = malloc((want + 1) * sizeof *got);
    span *all = malloc((m + 1) * sizeof *all);
    assert_non_null(got);
    assert_non_null(all);
    size_t k = 0, start = r->off[h];
    for (size_t i = start; i < out->len; i++)
        if (out->p[i] == r->delim) {
            if (k == want) {
                free(got);
                free(all);
                return "more records than expected";
            }
            got[k].p = out->p + start;
            got[k].len = i + 1 - start;
            k++;
            start = i + 1;
        }
    const char *why = NULL;
    if (k != want)
        why = "fewer records than expected";
    for (size_t j = 0; j < m; j++) {
        all[j].p = r->norm.p + r->off[h + j];
        all[j].len = r->off[h + j + 1] - r->off[h + j];
    }
    qsort(got, k, sizeof *got, span_cmp);
    qsort(all, m, sizeof *all, span_cmp);
    size_t j = 0;
    for (size_t i = 0; i < k && !why; i++) {
        while (j < m && span_cmp(&all[j], &got[i]) < 0)
            j++;
        if (j == m || span_cmp(&all[j], &got[i]) != 0)
            why = "a record that is not in the input (or too many copies of one)";
        j++;
    }
    free(got);
    free(all);
    return why;
}

/* ------------------------------------------------------------------------ */
/* Directories                                                              */
/* ------------------------------------------------------------------------ */

/* The tests' files, and in it a fresh temporary directory for each run
 * (removed with it at the end, whatever happened). */
static char scratch[64];

static void fresh_dir(char *d, size_t len)
{
    snprintf(d, len, "%s/tmp-XXXXXX", scratch);
    assert_non_null(mkdtemp(d));
}

/* How many entries dir holds (-1 if it cannot be read). */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* The directory is removed whatever it holds (so that a failing test
 * leaves nothing behind either), then the test fails if it was not empty. */
static void assert_empty_and_remove(const char *dir)
{
    const int n = dir_entries(dir);
    if (n != 0) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fail_msg("cannot remove %s", dir);
        fail_msg("temporary directory %s holds %d entries after the run", dir, n);
    }
    assert_int_equal(rmdir(dir), 0);
}

/* ------------------------------------------------------------------------ */
/* A sink in memory: memfds, cut into parts of per_part records             */
/* ------------------------------------------------------------------------ */

typedef struct part {
    int fd;
    rf_writer w;
    unsigned char *buf;
    uint64_t records; /* advanced into it */
    off_t seen;       /* strict: bytes already counted */
} part;

typedef struct tsink {
    rf_engine_sink sink;
    unsigned char delim;
    uint64_t per_part; /* UINT64_MAX: a single writer */
    int strict;        /* flush at each advance and count what came */
    size_t wcap;
    part *parts;
    size_t nparts;
    int begins;
    uint64_t announced, advanced, header_records;
    int bad;
    char why[256];
    int begin_fail;     /* begin returns this when nonzero */
    long advance_fail;  /* advance number (from 1) that returns fail_value */
    int fail_value;
    long advances;
} tsink;

__attribute__((format(printf, 2, 3))) static void violate(tsink *s, const char *fmt, ...)
{
    if (s->bad++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
}

static void part_open(tsink *s)
{
    s->parts = realloc(s->parts, (s->nparts + 1) * sizeof *s->parts);
    assert_non_null(s->parts);
    part *p = &s->parts[s->nparts++];
    memset(p, 0, sizeof *p);
    p->fd = memfd_create("riffle-test-part", MFD_CLOEXEC);
    assert_true(p->fd >= 0);
    p->buf = malloc(s->wcap);
    assert_non_null(p->buf);
    rf_writer_init(&p->w, p->fd, p->buf, s->wcap);
}

static size_t count_delims(const unsigned char *p, size_t len, unsigned char delim)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += p[i] == delim;
    return n;
}

/* Bytes [from, size) of fd, appended to b; returns the size. */
static off_t read_from(int fd, off_t from, buf *b)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    const size_t n = (size_t)(st.st_size - from);
    if (n) {
        unsigned char *tmp = malloc(n);
        assert_non_null(tmp);
        size_t got = 0;
        while (got < n) {
            const ssize_t k = pread(fd, tmp + got, n - got, from + (off_t)got);
            assert_true(k > 0);
            got += (size_t)k;
        }
        buf_put(b, tmp, n);
        free(tmp);
    }
    return st.st_size;
}

/* The part that takes the next records. */
static part *settle(tsink *s)
{
    part *p = &s->parts[s->nparts - 1];
    if (s->per_part != UINT64_MAX && p->records == s->per_part && s->advanced < s->announced) {
        part_open(s);
        p = &s->parts[s->nparts - 1];
    }
    return p;
}

static int ts_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    tsink *s = ctx;
    if (s->begins++)
        violate(s, "begin called twice");
    if (len && ((const unsigned char *)header)[len - 1] != s->delim)
        violate(s, "begin: the header does not end with the delimiter");
    s->header_records = len ? count_delims(header, len, s->delim) : 0;
    s->announced = records;
    if (s->begin_fail)
        return s->begin_fail;
    part *p = &s->parts[0];
    if (len)
        rf_writer_put(&p->w, header, len);
    if (s->strict) {
        assert_int_equal(rf_writer_flush(&p->w), 0);
        buf ignore = {0};
        p->seen = read_from(p->fd, 0, &ignore);
        buf_free(&ignore);
    }
    return 0;
}

static rf_writer *ts_writer(void *ctx)
{
    tsink *s = ctx;
    if (!s->begins)
        violate(s, "writer before begin");
    return &settle(s)->w;
}

static uint64_t ts_room(void *ctx)
{
    tsink *s = ctx;
    if (!s->begins)
        violate(s, "room before begin");
    part *p = settle(s);
    if (s->per_part == UINT64_MAX)
        return UINT64_MAX;
    return s->per_part - p->records;
}

static int ts_advance(void *ctx, uint64_t k)
{
    tsink *s = ctx;
    s->advances++;
    if (!s->begins)
        violate(s, "advance before begin");
    if (s->advances == s->advance_fail)
        return s->fail_value;
    part *p = &s->parts[s->nparts - 1];
    if (s->per_part != UINT64_MAX && p->records + k > s->per_part)
        violate(s, "advance(%llu) beyond room (%llu left)", (unsigned long long)k,
                (unsigned long long)(s->per_part - p->records));
    if (s->advanced + k > s->announced)
        violate(s, "advance past the %llu records announced", (unsigned long long)s->announced);
    if (s->strict) {
        assert_int_equal(rf_writer_flush(&p->w), 0);
        buf nb = {0};
        const off_t size = read_from(p->fd, p->seen, &nb);
        const size_t got = count_delims(nb.p, nb.len, s->delim);
        if (got != k)
            violate(s, "advance(%llu) after %zu records were written", (unsigned long long)k, got);
        if (nb.len && nb.p[nb.len - 1] != s->delim)
            violate(s, "advance after a partial record");
        p->seen = size;
        buf_free(&nb);
    }
    p->records += k;
    s->advanced += k;
    return 0;
}

static void tsink_init(tsink *s, unsigned char delim, uint64_t per_part, size_t wcap)
{
    memset(s, 0, sizeof *s);
    s->delim = delim;
    s->per_part = per_part;
    s->wcap = wcap;
    s->sink.begin = ts_begin;
    s->sink.writer = ts_writer;
    s->sink.room = ts_room;
    s->sink.advance = ts_advance;
    s->sink.ctx = s;
    part_open(s);
}

/* After a successful run: flush every part, check the parts' sizes, and
 * return the concatenation in out. */
static void tsink_finish(tsink *s, buf *out)
{
    if (s->bad)
        fail_msg("sink contract broken: %s", s->why);
    assert_int_equal(s->begins, 1);
    assert_int_equal(s->advanced, s->announced);
    for (size_t i = 0; i < s->nparts; i++) {
        part *p = &s->parts[i];
        assert_int_equal(rf_writer_flush(&p->w), 0);
        const size_t at = out->len;
        read_from(p->fd, 0, out);
        const size_t recs = count_delims(out->p + at, out->len - at, s->delim);
        const uint64_t want = p->records + (i == 0 ? s->header_records : 0);
        if (recs != want)
            fail_msg("part %zu holds %zu records, advanced %llu", i, recs,
                     (unsigned long long)want);
        if (s->per_part != UINT64_MAX && i + 1 < s->nparts)
            assert_int_equal(p->records, s->per_part);
    }
}

static void tsink_free(tsink *s)
{
    for (size_t i = 0; i < s->nparts; i++) {
        close(s->parts[i].fd);
        free(s->parts[i].buf);
    }
    free(s->parts);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------ */
/* Watching the callbacks                                                   */
/* ------------------------------------------------------------------------ */

typedef struct tempwatch {
    char under[4096]; /* the directory it must be in ("" : not checked) */
    char dir[4096];
    int refuse_at;    /* the call (from 1) with a directory that returns `refuse` */
    int refuse;
    int dir_calls, null_calls;
    unsigned long last_files;
    int bad;
    char why[256];
} tempwatch;

__attribute__((format(printf, 2, 3))) static void tw_violate(tempwatch *t, const char *fmt,
                                                             ...)
{
    if (t->bad++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
}

static int on_temp(void *ctx, const char *dir, unsigned long files)
{
    tempwatch *t = ctx;
    if (!dir) {
        if (t->null_calls++)
            tw_violate(t, "called with NULL twice");
        if (!t->dir_calls)
            tw_violate(t, "called with NULL before any directory");
        else if (access(t->dir, F_OK) == 0)
            tw_violate(t, "called with NULL while %s still exists", t->dir);
        return 0;
    }
    if (t->null_calls)
        tw_violate(t, "called with a directory after NULL");
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        tw_violate(t, "%s is not a directory during the call", dir);
    if (t->dir_calls == 0) {
        snprintf(t->dir, sizeof t->dir, "%s", dir);
        if (files != 0)
            tw_violate(t, "first call with %lu files", files);
        const size_t n = strlen(t->under);
        if (n && (strncmp(dir, t->under, n) != 0 || dir[n] != '/'))
            tw_violate(t, "directory %s is not in %s", dir, t->under);
    } else {
        if (strcmp(dir, t->dir) != 0)
            tw_violate(t, "directory changed from %s to %s", t->dir, dir);
        if (files <= t->last_files)
            tw_violate(t, "file count went from %lu to %lu", t->last_files, files);
    }
    t->last_files = files;
    t->dir_calls++;
    return t->dir_calls == t->refuse_at ? t->refuse : 0;
}

static void tempwatch_init(tempwatch *t, const char *under)
{
    memset(t, 0, sizeof *t);
    if (under)
        snprintf(t->under, sizeof t->under, "%s", under);
}

/* The directory, when one was made, is reported gone and is gone. */
static void tempwatch_check(const tempwatch *t)
{
    if (t->bad)
        fail_msg("temp callback: %s", t->why);
    if (t->dir_calls) {
        assert_int_equal(t->null_calls, 1);
        assert_int_equal(access(t->dir, F_OK), -1);
    } else {
        assert_int_equal(t->null_calls, 0);
    }
}

typedef struct progwatch {
    int calls;
    int phase;
    uint64_t done;
    unsigned seen; /* bit p: phase p reported */
    int bad;
    char why[256];
} progwatch;

static void on_progress(void *ctx, rf_engine_phase phase, uint64_t done, uint64_t total)
{
    progwatch *w = ctx;
    w->calls++;
    const int p = (int)phase;
    char why[256] = "";
    if (p < RF_ENGINE_READ || p > RF_ENGINE_WRITE)
        snprintf(why, sizeof why, "phase %d", p);
    else if (p != w->phase && !(w->seen & (1u << p)) && done != 0)
        snprintf(why, sizeof why, "phase %d starts at %llu", p, (unsigned long long)done);
    else if (p == w->phase && done < w->done)
        snprintf(why, sizeof why, "phase %d went back from %llu to %llu", p,
                 (unsigned long long)w->done, (unsigned long long)done);
    else if (total && done > total)
        snprintf(why, sizeof why, "phase %d: done %llu > total %llu", p,
                 (unsigned long long)done, (unsigned long long)total);
    if (*why && !w->bad++)
        snprintf(w->why, sizeof w->why, "%s", why);
    if (p >= RF_ENGINE_READ && p <= RF_ENGINE_WRITE)
        w->seen |= 1u << p;
    w->phase = p;
    w->done = done;
}

/* ------------------------------------------------------------------------ */
/* Inputs of every kind                                                     */
/* ------------------------------------------------------------------------ */

enum kind { K_BYTES, K_PATH, K_FD, K_PIPE, K_FORK, K_MIXED };
static const char *const kind_name[] = {"bytes", "path", "fd", "pipe", "child", "mixed"};

#define MAXIN 8

typedef struct feed {
    pthread_t th;
    int fd;
    const buf *b;
} feed;

typedef struct inputs {
    rf_engine_input in[MAXIN];
    size_t n;
    char names[MAXIN][128];
    int fds[MAXIN];
    int nfds;
    feed feeds[MAXIN];
    int nfeeds;
    pid_t pids[MAXIN];
    int npids;
} inputs;

static void write_all(int fd, const unsigned char *p, size_t n)
{
    while (n) {
        const ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return; /* the reader is gone (EPIPE): stop */
        p += k;
        n -= (size_t)k;
    }
}

static void *feeder(void *arg)
{
    feed *f = arg;
    write_all(f->fd, f->b->p, f->b->len);
    close(f->fd);
    return NULL;
}

static void inputs_make(inputs *x, const buf *parts, size_t n, enum kind kind)
{
    memset(x, 0, sizeof *x);
    assert_true(n <= MAXIN);
    x->n = n;
    for (size_t i = 0; i < n; i++) {
        enum kind k = kind == K_MIXED ? (enum kind)((i + 1) % K_MIXED) : kind;
        snprintf(x->names[i], sizeof x->names[i], "%s/input-%zu", scratch, i);
        if (k == K_PATH || k == K_FD) {
            const int fd = open(x->names[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            assert_true(fd >= 0);
            write_all(fd, parts[i].p, parts[i].len);
            assert_int_equal(close(fd), 0);
        }
        if (k == K_BYTES) {
            /* data must not be NULL, even for no bytes: NULL makes a path */
            const void *data = parts[i].p ? (const void *)parts[i].p : "";
            x->in[i] = rf_engine_input_bytes(data, parts[i].len, x->names[i]);
        } else if (k == K_PATH) {
            x->in[i] = rf_engine_input_path(x->names[i]);
        } else if (k == K_FD) {
            const int fd = open(x->names[i], O_RDONLY | O_CLOEXEC);
            assert_true(fd >= 0);
            x->fds[x->nfds++] = fd;
            x->in[i] = rf_engine_input_fd(fd, x->names[i]);
        } else {
            int pfd[2];
            assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
            if (k == K_PIPE) {
                feed *f = &x->feeds[x->nfeeds++];
                f->fd = pfd[1];
                f->b = &parts[i];
                assert_int_equal(pthread_create(&f->th, NULL, feeder, f), 0);
            } else {
                const pid_t pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                    for (int fd = 3; fd < 1024; fd++)
                        if (fd != pfd[1])
                            close(fd);
                    write_all(pfd[1], parts[i].p, parts[i].len);
                    _exit(0);
                }
                close(pfd[1]);
                x->pids[x->npids++] = pid;
            }
            x->fds[x->nfds++] = pfd[0];
            x->in[i] = rf_engine_input_fd(pfd[0], x->names[i]);
        }
    }
}

/* Descriptors are still open (never closed by the engine), then closed;
 * feeders and children end. */
static void inputs_done(inputs *x)
{
    for (int i = 0; i < x->nfds; i++) {
        assert_int_not_equal(fcntl(x->fds[i], F_GETFD), -1);
        close(x->fds[i]);
    }
    for (int i = 0; i < x->nfeeds; i++)
        assert_int_equal(pthread_join(x->feeds[i].th, NULL), 0);
    for (int i = 0; i < x->npids; i++) {
        int status;
        assert_int_equal(waitpid(x->pids[i], &status, 0), x->pids[i]);
    }
    for (size_t i = 0; i < x->n; i++)
        unlink(x->names[i]);
}

/* ------------------------------------------------------------------------ */
/* Data sets                                                                */
/* ------------------------------------------------------------------------ */

#define NSETS 2
/* [d][0]: one input of about 150 KB; [d][1]: six inputs -- empty first, an
 * unterminated one, a one-byte unterminated one, another empty one, and
 * two more (terminated, unterminated) -- about 140 KB in all. */
static buf set_parts[2][NSETS][MAXIN];
static size_t set_n[2][NSETS];
static recset set_recs[2][NSETS];

static int delim_index(unsigned char delim)
{
    return delim == '\0';
}

static int make_data(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    snprintf(scratch, sizeof scratch, "/tmp/riffle-enginetest-in-XXXXXX");
    if (!mkdtemp(scratch))
        return -1;
    for (int d = 0; d < 2; d++) {
        const unsigned char delim = d ? '\0' : '\n';
        uint64_t s = 12345 + (uint64_t)d;
        gen_part(&set_parts[d][0][0], &s, 150000, delim, 1);
        set_n[d][0] = 1;
        buf *m = set_parts[d][1];
        gen_part(&m[1], &s, 50000, delim, 0);
        buf_put(&m[2], "x", 1);
        gen_part(&m[4], &s, 70000, delim, 1);
        gen_part(&m[5], &s, 20000, delim, 0);
        set_n[d][1] = 6;
        for (int i = 0; i < NSETS; i++)
            recset_build(&set_recs[d][i], set_parts[d][i], set_n[d][i], delim);
    }
    return 0;
}

static int free_data(void **state)
{
    (void)state;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < NSETS; i++) {
            for (int j = 0; j < MAXIN; j++)
                buf_free(&set_parts[d][i][j]);
            recset_free(&set_recs[d][i]);
        }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* One run                                                                  */
/* ------------------------------------------------------------------------ */

static void key_u64(uint8_t *key, uint64_t seed)
{
    assert_int_equal(rf_seed_u64(key, seed), RF_OK);
}

static void key_str(uint8_t *key, const char *s)
{
    assert_int_equal(rf_seed_string(key, s, strlen(s)), RF_OK);
}

static void options(rf_engine_options *o, const uint8_t *key, unsigned char delim,
                    uint64_t header, uint64_t count, uint64_t memory, unsigned threads)
{
    rf_engine_options_init(o);
    memcpy(o->key, key, RF_KEY_BYTES);
    o->delim = delim;
    o->header = header;
    o->count = count;
    o->memory = memory;
    o->threads = threads;
    /* The external engine's named files: the temp callback shows when it
     * runs; unnamed_temps checks the unnamed ones. */
    o->named_temps = 1;
}

/* Which engine the options must pick: 'h' (head), 'x' (external), 'm' (in
 * memory), or '?' near the limits. */
static char engine_for(const rf_engine_options *o, const recset *r)
{
    const uint64_t memory = o->memory ? o->memory : rf_engine_default_memory();
    if (o->count != RF_ENGINE_ALL && o->count <= ((uint64_t)1 << 22) &&
        o->count <= memory / 256)
        return 'h';
    const uint64_t need = r->norm.len + 8 * (uint64_t)r->n;
    if (r->norm.len > memory)
        return 'x';
    if (need + need / 4 < memory)
        return 'm';
    return '?';
}

typedef struct outcome {
    rf_status st;
    rf_engine_error err;
    buf out;
    tempwatch tw;
    progwatch pw;
} outcome;

/* Run o on the inputs with a tsink (per_part, strict), in a fresh temporary
 * directory checked empty afterwards; the temp callback is checked, the
 * progress callback recorded in res->pw. */
static void run(outcome *res, rf_engine_options *o, const inputs *x, tsink *ts)
{
    char tmp[128];
    fresh_dir(tmp, sizeof tmp);
    memset(res, 0, sizeof *res);
    tempwatch_init(&res->tw, tmp);
    o->tmpdir = tmp;
    o->temp = on_temp;
    o->temp_ctx = &res->tw;
    o->progress = on_progress;
    o->progress_ctx = &res->pw;
    memset(&res->err, 0x5a, sizeof res->err);
    res->st = rf_engine_shuffle(o, x->n ? x->in : NULL, x->n, &ts->sink, &res->err);
    o->tmpdir = NULL;
    assert_empty_and_remove(tmp);
    tempwatch_check(&res->tw);
    /* progress is checked by progress_callback, on its own */
    if (res->st == RF_OK)
        tsink_finish(ts, &res->out);
}

/* Run and compare with the reference; returns the output in out. */
static void run_checked(buf *out, rf_engine_options *o, const buf *parts, size_t nparts,
                        enum kind kind, const recset *r, uint64_t per_part, int strict,
                        const char *what)
{
    inputs x;
    inputs_make(&x, parts, nparts, kind);
    tsink ts;
    tsink_init(&ts, o->delim, per_part, 4096);
    ts.strict = strict;
    outcome res;
    run(&res, o, &x, &ts);
    inputs_done(&x);
    tsink_free(&ts);
    if (res.st != RF_OK) {
        char msg[512];
        rf_engine_error_message(&res.err, msg, sizeof msg);
        fail_msg("%s: status %d (%s)", what, (int)res.st, msg);
    }
    const char engine = engine_for(o, r);
    if (engine == 'x' && !res.tw.dir_calls)
        fail_msg("%s: the budget is below the input but no temporary directory was made", what);
    if ((engine == 'h' || engine == 'm') && res.tw.dir_calls)
        fail_msg("%s: a temporary directory was made for the %s engine", what,
                 engine == 'h' ? "head" : "in-memory");
    const char *why = check_permutation(&res.out, r, o->header, o->count);
    if (why)
        fail_msg("%s: %s", what, why);
    buf want = {0};
    expect(&want, r, o->rng, o->key, o->header, o->count);
    if (!buf_equal(&want, &res.out))
        fail_msg("%s: the output (%zu bytes) is not the keyed order (%zu bytes)", what,
                 res.out.len, want.len);
    buf_free(&want);
    *out = res.out;
}

static void describe(char *s, size_t len, const rf_engine_options *o, const char *extra)
{
    snprintf(s, len, "delim %d header %llu count %lld memory %llu threads %u %s",
             o->delim, (unsigned long long)o->header,
             o->count == RF_ENGINE_ALL ? -1LL : (long long)o->count,
             (unsigned long long)o->memory, o->threads, extra);
}

/* ------------------------------------------------------------------------ */
/* (a) Every engine, budget and thread count writes the keyed order         */
/* ------------------------------------------------------------------------ */

static void matrix(unsigned char delim)
{
    const int d = delim_index(delim);
    const recset *r = &set_recs[d][1];
    const uint64_t headers[] = {0, 1, 3};
    const uint64_t budgets[] = {TINY, MID, BIG};
    uint8_t keys[2][RF_KEY_BYTES];
    key_u64(keys[0], 1);
    key_str(keys[1], "engine tests");
    for (int ki = 0; ki < 2; ki++)
        for (size_t hi = 0; hi < 3; hi++) {
            const uint64_t m = r->n - headers[hi];
            const uint64_t counts[] = {RF_ENGINE_ALL, 0, 1, 100, 300, 2500, m - 1, m, m + 5};
            buf first = {0};
            for (size_t bi = 0; bi < 3; bi++)
                for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
                    for (unsigned t = 1; t <= 3; t++) {
                        /* every thread count for some counts, one for the
                         * others (in turn), to keep the run short */
                        const int all_threads = ki == 0 && (ci == 0 || ci == 4 || ci == 5);
                        if (!all_threads && t != 1 + (ci + bi) % 3)
                            continue;
                        rf_engine_options o;
                        options(&o, keys[ki], delim, headers[hi], counts[ci], budgets[bi], t);
                        char what[256];
                        describe(what, sizeof what, &o, ki ? "string seed" : "seed 1");
                        buf out;
                        run_checked(&out, &o, set_parts[d][1], set_n[d][1], K_BYTES, r,
                                    UINT64_MAX, 0, what);
                        if (counts[ci] == RF_ENGINE_ALL && !first.p)
                            first = out;
                        else if (counts[ci] == RF_ENGINE_ALL) {
                            if (!buf_equal(&first, &out))
                                fail_msg("%s: differs from the first full output", what);
                            buf_free(&out);
                        } else
                            buf_free(&out);
                    }
            buf_free(&first);
        }
}

static void matrix_lines(void **state)
{
    (void)state;
    matrix('\n');
}

static void matrix_nul(void **state)
{
    (void)state;
    matrix('\0');
}

/* Paths, descriptors of files, pipes fed by a thread, pipes fed by a child,
 * bytes, and all of them mixed: for the single input and the six. */
static void input_kinds(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 2026);
    for (int d = 0; d < 2; d++) {
        const unsigned char delim = d ? '\0' : '\n';
        for (int set = 0; set < NSETS; set++)
            for (int k = K_BYTES; k <= K_MIXED; k++) {
                if (delim == '\0' && k != K_BYTES && k != K_MIXED)
                    continue; /* NUL: bytes and all kinds mixed, for time */
                const struct {
                    uint64_t count, memory;
                } cfg[] = {{RF_ENGINE_ALL, BIG}, {RF_ENGINE_ALL, TINY}, {200, TINY}, {2500, MID}};
                for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
                    rf_engine_options o;
                    options(&o, key, delim, 1, cfg[c].count, cfg[c].memory, 2);
                    char what[256], extra[64];
                    snprintf(extra, sizeof extra, "%s, set %d", kind_name[k], set);
                    describe(what, sizeof what, &o, extra);
                    buf out;
                    run_checked(&out, &o, set_parts[d][set], set_n[d][set], (enum kind)k,
                                &set_recs[d][set], UINT64_MAX, 0, what);
                    buf_free(&out);
                }
            }
    }
}

/* The other generators give their own keyed order. */
static void generator_kinds(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 99);
    const rf_rng_kind kinds[] = {RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    for (int i = 0; i < 2; i++)
        for (int b = 0; b < 2; b++) {
            rf_engine_options o;
            options(&o, key, '\n', 0, RF_ENGINE_ALL, b ? TINY : BIG, 2);
            o.rng = kinds[i];
            buf out;
            run_checked(&out, &o, set_parts[0][1], set_n[0][1], K_BYTES, &set_recs[0][1],
                        UINT64_MAX, 0, rf_rng_kind_name(kinds[i]));
            buf_free(&out);
        }
}

/* More than 2^16 records: several keyed blocks. */
static void many_records(void **state)
{
    (void)state;
    buf in = {0};
    uint64_t s = 7;
    for (int i = 0; i < 70000; i++) {
        char line[16];
        const int n = snprintf(line, sizeof line, "%x\n", (unsigned)(mix_next(&s) % 4096));
        buf_put(&in, line, (size_t)n);
    }
    recset r;
    recset_build(&r, &in, 1, '\n');
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 5);
    const struct {
        uint64_t count, memory;
        unsigned threads;
    } cfg[] = {{RF_ENGINE_ALL, BIG, 1}, {RF_ENGINE_ALL, BIG, 3}, {RF_ENGINE_ALL, TINY, 2},
               {66000, TINY, 2}, {1000, BIG, 2}, {66000, 128 * MIB, 2},
               {RF_ENGINE_ALL, TINY, 8}};
    for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
        rf_engine_options o;
        options(&o, key, '\n', 2, cfg[c].count, cfg[c].memory, cfg[c].threads);
        char what[256];
        describe(what, sizeof what, &o, "70000 records");
        buf out;
        run_checked(&out, &o, &in, 1, c % 2 ? K_PIPE : K_PATH, &r, UINT64_MAX, 0, what);
        buf_free(&out);
    }
    recset_free(&r);
    buf_free(&in);
}

/* A record longer than the whole budget, among short ones. */
static void record_longer_than_budget(void **state)
{
    (void)state;
    buf in = {0};
    uint64_t s = 11;
    gen_part(&in, &s, 60000, '\n', 1);
    for (int i = 0; i < 100000; i++)
        buf_put(&in, "L", 1);
    buf_put(&in, "\n", 1);
    gen_part(&in, &s, 60000, '\n', 0);
    recset r;
    recset_build(&r, &in, 1, '\n');
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 3);
    rf_engine_options o;
    options(&o, key, '\n', 0, RF_ENGINE_ALL, TINY, 2);
    buf out;
    run_checked(&out, &o, &in, 1, K_BYTES, &r, UINT64_MAX, 0, "a 100 KB record, 64 KiB budget");
    buf_free(&out);
    recset_free(&r);
    buf_free(&in);
}

/* No inputs at all, and only empty inputs: begin(0 records), nothing out. */
static void no_records(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    buf empty[3] = {{0}, {0}, {0}};
    for (size_t n = 0; n <= 3; n += 3)
        for (int b = 0; b < 2; b++) {
            rf_engine_options o;
            options(&o, key, '\n', 1, RF_ENGINE_ALL, b ? TINY : BIG, 2);
            inputs x;
            inputs_make(&x, empty, n, K_MIXED);
            tsink ts;
            tsink_init(&ts, '\n', UINT64_MAX, 64);
            outcome res;
            run(&res, &o, &x, &ts);
            inputs_done(&x);
            assert_int_equal(res.st, RF_OK);
            assert_int_equal(ts.announced, 0);
            assert_int_equal(res.out.len, 0);
            buf_free(&res.out);
            tsink_free(&ts);
        }
}

/* More header records than the input has: all of them, unshuffled, and
 * begin announces no records after them. */
static void header_longer_than_input(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    for (int b = 0; b < 2; b++) {
        rf_engine_input in[2] = {rf_engine_input_bytes("a\nb", 3, "ab"),
                                 rf_engine_input_bytes("c\n", 2, "c")};
        rf_engine_options o;
        options(&o, key, '\n', 5, b ? 1 : RF_ENGINE_ALL, BIG, 1);
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 16);
        inputs x;
        memset(&x, 0, sizeof x);
        memcpy(x.in, in, sizeof in);
        x.n = 2;
        outcome res;
        run(&res, &o, &x, &ts);
        assert_int_equal(res.st, RF_OK);
        assert_int_equal(ts.announced, 0);
        assert_int_equal(ts.header_records, 3);
        assert_int_equal(res.out.len, 6);
        assert_memory_equal(res.out.p, "a\nb\nc\n", 6);
        buf_free(&res.out);
        tsink_free(&ts);
    }
}

/* A delimiter that is neither newline nor NUL. */
static void other_delimiter(void **state)
{
    (void)state;
    buf pieces[2] = {{0}, {0}};
    uint64_t s = 3;
    gen_part(&pieces[0], &s, 30000, ',', 0);
    gen_part(&pieces[1], &s, 30000, ',', 1);
    recset r;
    recset_build(&r, pieces, 2, ',');
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 6);
    for (int b = 0; b < 3; b++) {
        rf_engine_options o;
        options(&o, key, ',', 1, b == 2 ? 50 : RF_ENGINE_ALL, b ? 16 * KIB : BIG, 2);
        buf out;
        run_checked(&out, &o, pieces, 2, K_MIXED, &r, UINT64_MAX, 0, "delimiter ','");
        buf_free(&out);
    }
    recset_free(&r);
    buf_free(&pieces[0]);
    buf_free(&pieces[1]);
}

/* A descriptor is read from its current offset. */
static void fd_from_offset(void **state)
{
    (void)state;
    const buf *whole = &set_parts[0][0][0];
    const unsigned char *nl = memchr(whole->p + 5000, '\n', whole->len - 5000);
    assert_non_null(nl);
    const size_t cut = (size_t)(nl - whole->p) + 1;
    buf tail = {0};
    buf_put(&tail, whole->p + cut, whole->len - cut);
    recset r;
    recset_build(&r, &tail, 1, '\n');
    char path[128];
    snprintf(path, sizeof path, "%s/offset", scratch);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    write_all(fd, whole->p, whole->len);
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 8);
    for (int b = 0; b < 2; b++) {
        assert_int_equal(lseek(fd, (off_t)cut, SEEK_SET), (off_t)cut);
        rf_engine_options o;
        options(&o, key, '\n', 0, RF_ENGINE_ALL, b ? TINY : BIG, 1);
        inputs x;
        memset(&x, 0, sizeof x);
        x.n = 1;
        x.in[0] = rf_engine_input_fd(fd, "offset");
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        outcome res;
        run(&res, &o, &x, &ts);
        assert_int_equal(res.st, RF_OK);
        buf want = {0};
        expect(&want, &r, o.rng, key, 0, RF_ENGINE_ALL);
        assert_true(buf_equal(&want, &res.out));
        assert_int_not_equal(fcntl(fd, F_GETFD), -1);
        buf_free(&want);
        buf_free(&res.out);
        tsink_free(&ts);
    }
    close(fd);
    unlink(path);
    recset_free(&r);
    buf_free(&tail);
}

/* ------------------------------------------------------------------------ */
/* (b) The head property                                                    */
/* ------------------------------------------------------------------------ */

static void head_property(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_str(key, "head");
    for (int d = 0; d < 2; d++) {
        const unsigned char delim = d ? '\0' : '\n';
        const recset *r = &set_recs[d][1];
        const uint64_t header = 2, m = r->n - header;
        const uint64_t budgets[] = {TINY, MID, BIG};
        for (size_t bi = 0; bi < 3; bi++) {
            inputs x;
            inputs_make(&x, set_parts[d][1], set_n[d][1], K_BYTES);
            rf_engine_options o;
            options(&o, key, delim, header, RF_ENGINE_ALL, budgets[bi], 2);
            tsink ts;
            tsink_init(&ts, delim, UINT64_MAX, 4096);
            outcome full;
            run(&full, &o, &x, &ts);
            assert_int_equal(full.st, RF_OK);
            tsink_free(&ts);
            const uint64_t counts[] = {0, 1, 7, 255, 256, 257, 2049, m - 1, m, m + 1};
            for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                options(&o, key, delim, header, counts[ci], budgets[bi], 2);
                tsink_init(&ts, delim, UINT64_MAX, 4096);
                outcome cut;
                run(&cut, &o, &x, &ts);
                assert_int_equal(cut.st, RF_OK);
                /* header + the first counts[ci] records of the full output */
                size_t end = 0, recs = 0;
                while (end < full.out.len && recs < header + counts[ci])
                    recs += full.out.p[end++] == delim;
                if (cut.out.len != end || memcmp(cut.out.p, full.out.p, end) != 0)
                    fail_msg("delim %d memory %llu: count %llu is not the first records of "
                             "the full output",
                             delim, (unsigned long long)budgets[bi],
                             (unsigned long long)counts[ci]);
                buf_free(&cut.out);
                tsink_free(&ts);
            }
            buf_free(&full.out);
            inputs_done(&x);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* (c) A sink in parts                                                      */
/* ------------------------------------------------------------------------ */

static void split_sink(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 77);
    for (int d = 0; d < 2; d++) {
        const unsigned char delim = d ? '\0' : '\n';
        const recset *r = &set_recs[d][1];
        const struct {
            uint64_t count, memory, per_part;
        } cfg[] = {{RF_ENGINE_ALL, BIG, 97},   {RF_ENGINE_ALL, TINY, 97},
                   {RF_ENGINE_ALL, TINY, 1000}, {RF_ENGINE_ALL, BIG, r->n - 3},
                   {RF_ENGINE_ALL, TINY, r->n - 3}, {200, TINY, 13},
                   {40, BIG, 1},               {2500, MID, 500},
                   {RF_ENGINE_ALL, MID, 2}};
        for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
            rf_engine_options o;
            options(&o, key, delim, 3, cfg[c].count, cfg[c].memory, 2);
            char what[256], extra[64];
            snprintf(extra, sizeof extra, "parts of %llu", (unsigned long long)cfg[c].per_part);
            describe(what, sizeof what, &o, extra);
            buf out;
            run_checked(&out, &o, set_parts[d][1], set_n[d][1], c % 2 ? K_PATH : K_BYTES, r,
                        cfg[c].per_part, 1, what);
            buf_free(&out);
        }
    }
}

/* rf_fd_sink: the same bytes whatever its buffer size. */
static void fd_sink(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 4);
    const recset *r = &set_recs[0][1];
    const size_t caps[] = {1, 4096, 1 << 20};
    for (uint64_t header = 0; header <= 1; header++) {
        buf want = {0};
        expect(&want, r, RF_RNG_CHACHA20, key, header, RF_ENGINE_ALL);
        for (size_t ci = 0; ci < 3; ci++)
            for (int b = 0; b < 2; b++) {
                const int fd = memfd_create("riffle-test-out", MFD_CLOEXEC);
                assert_true(fd >= 0);
                unsigned char *wbuf = malloc(caps[ci]);
                assert_non_null(wbuf);
                rf_fd_sink s;
                rf_fd_sink_init(&s, fd, wbuf, caps[ci]);
                rf_engine_options o;
                options(&o, key, '\n', header, RF_ENGINE_ALL, b ? TINY : BIG, 2);
                inputs x;
                inputs_make(&x, set_parts[0][1], set_n[0][1], K_PATH);
                rf_engine_error err;
                char tmp[128];
                fresh_dir(tmp, sizeof tmp);
                o.tmpdir = tmp;
                assert_int_equal(rf_engine_shuffle(&o, x.in, x.n, &s.sink, &err), RF_OK);
                assert_empty_and_remove(tmp);
                inputs_done(&x);
                assert_int_equal(rf_fd_sink_flush(&s), 0);
                buf got = {0};
                read_from(fd, 0, &got);
                if (!buf_equal(&want, &got))
                    fail_msg("rf_fd_sink with a %zu-byte buffer, header %llu, memory %s: wrong "
                             "output",
                             caps[ci], (unsigned long long)header, b ? "64 KiB" : "64 MiB");
                buf_free(&got);
                free(wbuf);
                close(fd);
            }
        buf_free(&want);
    }
}

/* Two runs at once on different sinks. */
typedef struct concurrent_run {
    pthread_t th;
    rf_engine_options o;
    const buf *parts;
    size_t n;
    tsink ts;
    rf_status st;
    char tmp[128];
} concurrent_run;

static void *concurrent_body(void *arg)
{
    concurrent_run *c = arg;
    rf_engine_input in[MAXIN];
    for (size_t i = 0; i < c->n; i++)
        in[i] = rf_engine_input_bytes(c->parts[i].p ? (const void *)c->parts[i].p : "",
                                      c->parts[i].len, "concurrent");
    rf_engine_error err;
    c->st = rf_engine_shuffle(&c->o, in, c->n, &c->ts.sink, &err);
    return NULL;
}

static void concurrent_calls(void **state)
{
    (void)state;
    concurrent_run c[2];
    for (int i = 0; i < 2; i++) {
        uint8_t key[RF_KEY_BYTES];
        key_u64(key, 100 + (uint64_t)i);
        options(&c[i].o, key, '\n', 0, RF_ENGINE_ALL, i ? TINY : BIG, 2);
        fresh_dir(c[i].tmp, sizeof c[i].tmp);
        c[i].o.tmpdir = c[i].tmp;
        c[i].parts = set_parts[0][1];
        c[i].n = set_n[0][1];
        tsink_init(&c[i].ts, '\n', UINT64_MAX, 4096);
    }
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&c[i].th, NULL, concurrent_body, &c[i]), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(c[i].th, NULL), 0);
        assert_int_equal(c[i].st, RF_OK);
        buf out = {0}, want = {0};
        tsink_finish(&c[i].ts, &out);
        expect(&want, &set_recs[0][1], RF_RNG_CHACHA20, c[i].o.key, 0, RF_ENGINE_ALL);
        assert_true(buf_equal(&out, &want));
        buf_free(&out);
        buf_free(&want);
        tsink_free(&c[i].ts);
        assert_empty_and_remove(c[i].tmp);
    }
}

/* ------------------------------------------------------------------------ */
/* (d) Errors, and nothing left behind                                      */
/* ------------------------------------------------------------------------ */

/* Run expecting a failure; the temporary directory is checked empty. */
static void run_failing(outcome *res, rf_engine_options *o, const rf_engine_input *in, size_t n,
                        tsink *ts)
{
    inputs x;
    memset(&x, 0, sizeof x);
    memcpy(x.in, in, n * sizeof *in);
    x.n = n;
    run(res, o, &x, ts);
    assert_int_not_equal(res->st, RF_OK);
}

static void missing_input(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    char missing[128];
    snprintf(missing, sizeof missing, "%s/no-such-file", scratch);
    const buf *big = &set_parts[0][0][0];
    /* alone; after a large input (the external engine under way); head */
    const struct {
        int after_big;
        uint64_t memory, count;
    } cfg[] = {{0, BIG, RF_ENGINE_ALL}, {1, TINY, RF_ENGINE_ALL}, {1, BIG, RF_ENGINE_ALL},
               {1, TINY, 10}};
    for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
        rf_engine_input in[2];
        size_t n = 0;
        if (cfg[c].after_big)
            in[n++] = rf_engine_input_bytes(big->p, big->len, "big");
        in[n++] = rf_engine_input_path(missing);
        rf_engine_options o;
        options(&o, key, '\n', 0, cfg[c].count, cfg[c].memory, 2);
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        outcome res;
        run_failing(&res, &o, in, n, &ts);
        assert_int_equal(res.st, RF_EIO);
        assert_int_equal(res.err.status, RF_EIO);
        assert_int_equal(res.err.op, RF_ENGINE_OP_INPUT);
        assert_int_equal(res.err.err, ENOENT);
        assert_string_equal(res.err.path, missing);
        char msg[512], want[512];
        const size_t len = rf_engine_error_message(&res.err, msg, sizeof msg);
        snprintf(want, sizeof want, "%s: No such file or directory", missing);
        assert_string_equal(msg, want);
        assert_int_equal(len, strlen(want));
        tsink_free(&ts);
        /* err may be NULL on failure too */
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        char tmp[128];
        fresh_dir(tmp, sizeof tmp);
        o.tmpdir = tmp;
        o.temp = NULL;
        o.progress = NULL;
        assert_int_equal(rf_engine_shuffle(&o, in, n, &ts.sink, NULL), RF_EIO);
        assert_empty_and_remove(tmp);
        tsink_free(&ts);
    }
}

/* A descriptor that cannot be read (open for writing only): EBADF. */
static void unreadable_fd(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    char path[128];
    snprintf(path, sizeof path, "%s/write-only", scratch);
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    write_all(fd, (const unsigned char *)"a\nb\n", 4);
    for (int b = 0; b < 2; b++) {
        rf_engine_input in = rf_engine_input_fd(fd, "write-only");
        rf_engine_options o;
        options(&o, key, '\n', 0, b ? 1 : RF_ENGINE_ALL, b ? TINY : BIG, 1);
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        outcome res;
        run_failing(&res, &o, &in, 1, &ts);
        assert_int_equal(res.st, RF_EIO);
        assert_int_equal(res.err.op, RF_ENGINE_OP_READ);
        assert_int_equal(res.err.err, EBADF);
        assert_string_equal(res.err.path, "write-only");
        assert_int_not_equal(fcntl(fd, F_GETFD), -1);
        tsink_free(&ts);
    }
    close(fd);
    unlink(path);
}

static void directory_input(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    const buf *big = &set_parts[0][0][0];
    for (int how = 0; how < 3; how++) {
        rf_engine_input in[2];
        size_t n = 0;
        int fd = -1;
        if (how == 2)
            in[n++] = rf_engine_input_bytes(big->p, big->len, "big");
        if (how == 1) {
            fd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            assert_true(fd >= 0);
            in[n++] = rf_engine_input_fd(fd, "a directory");
        } else {
            in[n++] = rf_engine_input_path(scratch);
        }
        rf_engine_options o;
        options(&o, key, '\n', 0, RF_ENGINE_ALL, how == 2 ? TINY : BIG, 1);
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        outcome res;
        run_failing(&res, &o, in, n, &ts);
        assert_int_equal(res.st, RF_EIO);
        assert_int_equal(res.err.op, RF_ENGINE_OP_READ);
        assert_int_equal(res.err.err, EISDIR);
        assert_string_equal(res.err.path, how == 1 ? "a directory" : scratch);
        if (fd >= 0) {
            assert_int_not_equal(fcntl(fd, F_GETFD), -1);
            close(fd);
        }
        tsink_free(&ts);
    }
}

/* The external engine needs a temporary directory it cannot make. */
static void bad_tmpdir(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    const buf *big = &set_parts[0][0][0];
    char dir[128];
    fresh_dir(dir, sizeof dir);
    char missing[160], file[160], ro[160];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(ro, sizeof ro, "%s/readonly", dir);
    const int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(mkdir(ro, 0500), 0);
    const char *const dirs[] = {missing, file, ro};
    const int errs[] = {ENOENT, ENOTDIR, EACCES};
    const int tries = geteuid() == 0 ? 2 : 3; /* root writes in a mode 0500 directory */
    for (int i = 0; i < tries; i++) {
        rf_engine_input in = rf_engine_input_bytes(big->p, big->len, "big");
        rf_engine_options o;
        options(&o, key, '\n', 0, RF_ENGINE_ALL, TINY, 2);
        o.tmpdir = dirs[i];
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        rf_engine_error err;
        assert_int_equal(rf_engine_shuffle(&o, &in, 1, &ts.sink, &err), RF_EIO);
        assert_int_equal(err.status, RF_EIO);
        assert_int_equal(err.op, RF_ENGINE_OP_TEMP_DIR);
        assert_int_equal(err.err, errs[i]);
        assert_string_equal(err.path, dirs[i]);
        char msg[512], want[512];
        rf_engine_error_message(&err, msg, sizeof msg);
        snprintf(want, sizeof want, "cannot create a temporary directory in %s: %s", dirs[i],
                 strerror(errs[i]));
        assert_string_equal(msg, want);
        tsink_free(&ts);
        /* In memory, no temporary directory is needed. */
        options(&o, key, '\n', 0, RF_ENGINE_ALL, BIG, 2);
        o.tmpdir = dirs[i];
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        assert_int_equal(rf_engine_shuffle(&o, &in, 1, &ts.sink, &err), RF_OK);
        tsink_free(&ts);
    }
    assert_int_equal(dir_entries(ro), 0);
    assert_int_equal(rmdir(ro), 0);
    assert_int_equal(unlink(file), 0);
    assert_empty_and_remove(dir);
}

/* The sink's begin fails, its advance fails at the first or a later call. */
static void sink_fails(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    const buf *big = &set_parts[0][0][0];
    const struct {
        uint64_t memory, count;
    } engines[] = {{BIG, RF_ENGINE_ALL}, {TINY, RF_ENGINE_ALL}, {TINY, 200}};
    for (size_t e = 0; e < 3; e++)
        for (int mode = 0; mode < 4; mode++) {
            rf_engine_input in = rf_engine_input_bytes(big->p, big->len, "big");
            rf_engine_options o;
            options(&o, key, '\n', 1, engines[e].count, engines[e].memory, 2);
            tsink ts;
            tsink_init(&ts, '\n', 50, 4096); /* parts: many advance calls */
            if (mode == 0)
                ts.begin_fail = EPIPE;
            else if (mode == 1)
                ts.begin_fail = -1;
            else
                ts.advance_fail = mode == 2 ? 1 : 3;
            ts.fail_value = ENOSPC;
            outcome res;
            run_failing(&res, &o, &in, 1, &ts);
            assert_int_equal(res.st, RF_EIO);
            assert_int_equal(res.err.status, RF_EIO);
            assert_int_equal(res.err.op, RF_ENGINE_OP_OUTPUT);
            if (mode == 0)
                assert_int_equal(res.err.err, EPIPE);
            if (mode >= 2) {
                assert_int_equal(res.err.err, ENOSPC);
                if (ts.advances != ts.advance_fail)
                    fail_msg("the run went on after advance failed (%ld calls)", ts.advances);
            }
            tsink_free(&ts);
        }
}

/* A writer on /dev/full: ENOSPC sticks in the writer and stops the run. */
static void output_full(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    const buf *big = &set_parts[0][0][0];
    const struct {
        uint64_t memory, count;
    } engines[] = {{BIG, RF_ENGINE_ALL}, {TINY, RF_ENGINE_ALL}, {BIG, 2000}, {TINY, 250}};
    for (size_t e = 0; e < 4; e++) {
        const int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            skip();
        unsigned char wbuf[4096];
        rf_fd_sink s;
        rf_fd_sink_init(&s, fd, wbuf, sizeof wbuf);
        rf_engine_input in = rf_engine_input_bytes(big->p, big->len, "big");
        rf_engine_options o;
        options(&o, key, '\n', 0, engines[e].count, engines[e].memory, 2);
        char tmp[128];
        fresh_dir(tmp, sizeof tmp);
        o.tmpdir = tmp;
        tempwatch tw;
        tempwatch_init(&tw, tmp);
        o.temp = on_temp;
        o.temp_ctx = &tw;
        rf_engine_error err;
        const rf_status st = rf_engine_shuffle(&o, &in, 1, &s.sink, &err);
        if (st != RF_EIO)
            fail_msg("memory %llu count %lld: status %d, not RF_EIO",
                     (unsigned long long)engines[e].memory,
                     engines[e].count == RF_ENGINE_ALL ? -1LL : (long long)engines[e].count,
                     (int)st);
        assert_int_equal(err.op, RF_ENGINE_OP_OUTPUT);
        assert_int_equal(err.err, ENOSPC);
        tempwatch_check(&tw);
        assert_empty_and_remove(tmp);
        close(fd);
    }
}

/* RF_EINVAL for unusable arguments. */
static void invalid_arguments(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    rf_engine_input in = rf_engine_input_bytes("a\nb\n", 4, "ab");
    rf_engine_options o;
    options(&o, key, '\n', 0, RF_ENGINE_ALL, BIG, 1);
    tsink ts;
    tsink_init(&ts, '\n', UINT64_MAX, 64);
    rf_engine_error err;
    rf_engine_sink bad = ts.sink;
    bad.writer = NULL;
    assert_int_equal(rf_engine_shuffle(&o, &in, 1, &bad, &err), RF_EINVAL);
    bad = ts.sink;
    bad.begin = NULL;
    assert_int_equal(rf_engine_shuffle(&o, &in, 1, &bad, &err), RF_EINVAL);
    assert_int_equal(rf_engine_shuffle(&o, NULL, 1, &ts.sink, &err), RF_EINVAL);
    assert_int_equal(rf_engine_shuffle(&o, &in, 1, NULL, &err), RF_EINVAL);
    assert_int_equal(rf_engine_shuffle(NULL, &in, 1, &ts.sink, &err), RF_EINVAL);
    const rf_engine_input nameless = rf_engine_input_path(NULL);
    assert_int_equal(rf_engine_shuffle(&o, &nameless, 1, &ts.sink, &err), RF_EINVAL);
    o.rng = (rf_rng_kind)77;
    assert_int_equal(rf_engine_shuffle(&o, &in, 1, &ts.sink, &err), RF_EINVAL);
    assert_int_equal(err.status, RF_EINVAL);
    o.rng = RF_RNG_SOURCE;
    assert_int_equal(rf_engine_shuffle(&o, &in, 1, &ts.sink, &err), RF_EINVAL);
    assert_int_equal(ts.begins, 0);
    /* err may be NULL */
    o.rng = RF_RNG_CHACHA20;
    assert_int_equal(rf_engine_shuffle(&o, &in, 1, &ts.sink, NULL), RF_OK);
    tsink_free(&ts);
}

/* (h) The temporary directory's file system fills up. */
static void temp_disk_full(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char dir[128];
    fresh_dir(dir, sizeof dir);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=64k tmpfs '%s' 2>/dev/null", dir);
    if (system(cmd) != 0) {
        rmdir(dir);
        skip();
    }
    buf in = {0};
    uint64_t s = 21;
    gen_part(&in, &s, 400000, '\n', 1);
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    rf_engine_options o;
    options(&o, key, '\n', 0, RF_ENGINE_ALL, TINY, 2);
    o.tmpdir = dir;
    tempwatch tw;
    tempwatch_init(&tw, dir);
    o.temp = on_temp;
    o.temp_ctx = &tw;
    rf_engine_input input = rf_engine_input_bytes(in.p, in.len, "big");
    tsink ts;
    tsink_init(&ts, '\n', UINT64_MAX, 4096);
    rf_engine_error err;
    const rf_status st = rf_engine_shuffle(&o, &input, 1, &ts.sink, &err);
    const int left = dir_entries(dir);
    snprintf(cmd, sizeof cmd, "umount '%s'", dir);
    const int unmounted = system(cmd);
    rmdir(dir);
    tsink_free(&ts);
    buf_free(&in);
    assert_int_equal(unmounted, 0);
    assert_int_equal(st, RF_EIO);
    if (err.op != RF_ENGINE_OP_TEMP_FILE && err.op != RF_ENGINE_OP_TEMP_DIR)
        fail_msg("op %d, not TEMP_FILE or TEMP_DIR", (int)err.op);
    assert_int_equal(err.err, ENOSPC);
    assert_int_equal(left, 0);
    tempwatch_check(&tw);
}

/* ------------------------------------------------------------------------ */
/* (e) (f) The callbacks                                                    */
/* ------------------------------------------------------------------------ */

static void temp_callback(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    const recset *r = &set_recs[1][1];
    for (int b = 0; b < 2; b++) {
        rf_engine_options o;
        options(&o, key, '\0', 0, RF_ENGINE_ALL, b ? 16 * KIB : TINY, 2);
        inputs x;
        inputs_make(&x, set_parts[1][1], set_n[1][1], b ? K_PATH : K_PIPE);
        tsink ts;
        tsink_init(&ts, '\0', UINT64_MAX, 4096);
        outcome res;
        run(&res, &o, &x, &ts);
        inputs_done(&x);
        assert_int_equal(res.st, RF_OK);
        assert_true(res.tw.dir_calls >= 2); /* the directory, then files */
        assert_true(res.tw.last_files >= 1);
        assert_int_equal(res.tw.null_calls, 1);
        assert_int_equal(access(res.tw.dir, F_OK), -1);
        const char *why = check_permutation(&res.out, r, 0, RF_ENGINE_ALL);
        if (why)
            fail_msg("%s", why);
        buf_free(&res.out);
        tsink_free(&ts);
    }
}

/* Unnamed temporary files (O_TMPFILE): the temporary directory stays empty
 * through the whole run (checked at every progress call), the temp callback
 * is never called, and the output is the keyed order -- records out of line
 * included (one longer than the budget), through the external engine and
 * through the streamed head (for this key, the first 3 records of the order
 * hold the long one: checked). */
struct unnamed_watch {
    const char *dir;
    int calls, seen, phases;
};

static void unnamed_progress(void *ctx, rf_engine_phase ph, uint64_t done, uint64_t total)
{
    struct unnamed_watch *w = ctx;
    (void)done;
    (void)total;
    w->calls++;
    w->phases |= 1 << ph;
    if (dir_entries(w->dir) != 0)
        w->seen++;
}

static int unnamed_temp(void *ctx, const char *dir, unsigned long files)
{
    (void)dir;
    (void)files;
    ((struct unnamed_watch *)ctx)->seen += 1000;
    return 0;
}

static void unnamed_temps(void **state)
{
    (void)state;
    char dir[128];
    fresh_dir(dir, sizeof dir);
    const int fd = open(dir, O_TMPFILE | O_RDWR, 0600);
    if (fd < 0) {
        rmdir(dir);
        skip(); /* the file system has none: the named path is the only one */
    }
    close(fd);
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    buf in = {0};
    uint64_t s = 23;
    gen_part(&in, &s, 300000, '\n', 1);
    for (size_t i = 0; i < 200000; i++) /* one record of 200 kB */
        buf_put(&in, "g", 1);
    buf_put(&in, "\n", 1);
    gen_part(&in, &s, 300000, '\n', 1);
    recset r;
    recset_build(&r, &in, 1, '\n');
    for (int b = 0; b < 4; b++) {
        rf_engine_options o;
        options(&o, key, '\n', 0, b < 2 ? RF_ENGINE_ALL : 3, 64 * KIB, 2);
        o.named_temps = 0;
        o.tmpdir = dir;
        struct unnamed_watch w = {dir, 0, 0, 0};
        o.temp = unnamed_temp;
        o.temp_ctx = &w;
        o.progress = unnamed_progress;
        o.progress_ctx = &w;
        rf_engine_input input = rf_engine_input_bytes(in.p, in.len, "big");
        int pipefd[2] = {-1, -1};
        pid_t child = -1;
        if (b % 2 == 0) { /* a pipe: the long record is spilled as it comes */
            assert_int_equal(pipe(pipefd), 0);
            child = fork();
            assert_true(child >= 0);
            if (child == 0) {
                close(pipefd[0]);
                const unsigned char *p = in.p;
                for (size_t left = in.len; left > 0;) {
                    const ssize_t k = write(pipefd[1], p, left);
                    if (k <= 0)
                        _exit(1);
                    p += k;
                    left -= (size_t)k;
                }
                _exit(0);
            }
            close(pipefd[1]);
            input = rf_engine_input_fd(pipefd[0], "pipe");
        }
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        rf_engine_error err;
        const rf_status st = rf_engine_shuffle(&o, &input, 1, &ts.sink, &err);
        if (b % 2 == 0) {
            close(pipefd[0]);
            waitpid(child, NULL, 0);
        }
        assert_int_equal(st, RF_OK);
        assert_int_equal(w.seen, 0);
        assert_true(w.phases & (1 << (b < 2 ? RF_ENGINE_SCATTER : RF_ENGINE_READ)));
        buf out = {0};
        tsink_finish(&ts, &out);
        buf want = {0};
        expect(&want, &r, o.rng, o.key, 0, o.count);
        assert_true(buf_equal(&want, &out));
        if (b >= 2 && !memchr(out.p, 'g', out.len))
            fail_msg("the head's 3 records do not hold the long one: pick another key");
        buf_free(&want);
        buf_free(&out);
        tsink_free(&ts);
    }
    recset_free(&r);
    buf_free(&in);
    assert_empty_and_remove(dir);
}

/* The temp callback refuses the directory or a file: RF_EIO, and whatever
 * was made is gone. */
static void temp_refused(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    const buf *big = &set_parts[0][0][0];
    for (int at = 1; at <= 3; at++) {
        rf_engine_input in = rf_engine_input_bytes(big->p, big->len, "big");
        rf_engine_options o;
        options(&o, key, '\n', 0, RF_ENGINE_ALL, TINY, 2);
        tsink ts;
        tsink_init(&ts, '\n', UINT64_MAX, 4096);
        outcome res;
        memset(&res, 0, sizeof res);
        char tmp[128];
        fresh_dir(tmp, sizeof tmp);
        tempwatch_init(&res.tw, tmp);
        res.tw.refuse_at = at;
        res.tw.refuse = EPERM;
        o.tmpdir = tmp;
        o.temp = on_temp;
        o.temp_ctx = &res.tw;
        res.st = rf_engine_shuffle(&o, &in, 1, &ts.sink, &res.err);
        assert_empty_and_remove(tmp);
        if (res.st != RF_EIO)
            fail_msg("refused at call %d: status %d, not RF_EIO", at, (int)res.st);
        if (res.tw.bad)
            fail_msg("temp callback: %s", res.tw.why);
        assert_int_equal(access(res.tw.dir, F_OK), -1);
        tsink_free(&ts);
    }
}

/* Without tmpdir, $TMPDIR is where the directory goes. */
static void tmpdir_from_environment(void **state)
{
    (void)state;
    char dir[128];
    fresh_dir(dir, sizeof dir);
    const char *old = getenv("TMPDIR");
    char *saved = old ? strdup(old) : NULL;
    assert_int_equal(setenv("TMPDIR", dir, 1), 0);
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    rf_engine_options o;
    options(&o, key, '\n', 0, RF_ENGINE_ALL, TINY, 1);
    tempwatch tw;
    tempwatch_init(&tw, dir);
    o.temp = on_temp;
    o.temp_ctx = &tw;
    const buf *big = &set_parts[0][0][0];
    rf_engine_input in = rf_engine_input_bytes(big->p, big->len, "big");
    tsink ts;
    tsink_init(&ts, '\n', UINT64_MAX, 4096);
    rf_engine_error err;
    const rf_status st = rf_engine_shuffle(&o, &in, 1, &ts.sink, &err);
    if (saved) {
        setenv("TMPDIR", saved, 1);
        free(saved);
    } else {
        unsetenv("TMPDIR");
    }
    tsink_free(&ts);
    assert_int_equal(st, RF_OK);
    assert_true(tw.dir_calls > 0);
    tempwatch_check(&tw);
    assert_empty_and_remove(dir);
}

/* Phases are valid, begin at 0, done never goes back within a phase nor
 * past a known total, and each engine reports its phases; every engine and
 * input kind, on the single input (set 0) or the six inputs (set 1: several
 * inputs, empty ones, unterminated ones). */
static void progress_on(int set)
{
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 1);
    const struct {
        uint64_t memory, count;
        unsigned need; /* phases that must be reported */
    } cfg[] = {{BIG, RF_ENGINE_ALL, 1u << RF_ENGINE_WRITE},
               {TINY, RF_ENGINE_ALL, 1u << RF_ENGINE_SCATTER | 1u << RF_ENGINE_SHUFFLE},
               {BIG, 10, 1u << RF_ENGINE_READ}};
    int failures = 0;
    for (size_t c = 0; c < 3; c++)
        for (int k = K_BYTES; k <= K_PIPE; k++) {
            rf_engine_options o;
            options(&o, key, '\n', 0, cfg[c].count, cfg[c].memory, 2);
            inputs x;
            inputs_make(&x, set_parts[0][set], set_n[0][set], (enum kind)k);
            tsink ts;
            tsink_init(&ts, '\n', UINT64_MAX, 4096);
            outcome res;
            run(&res, &o, &x, &ts);
            inputs_done(&x);
            assert_int_equal(res.st, RF_OK);
            assert_true(res.pw.calls > 0);
            const char *input = set ? "six inputs" : "one input";
            if (res.pw.bad) {
                print_error("memory %llu count %lld, %s as %s: %s\n",
                            (unsigned long long)cfg[c].memory,
                            cfg[c].count == RF_ENGINE_ALL ? -1LL : (long long)cfg[c].count,
                            input, kind_name[k], res.pw.why);
                failures++;
            }
            if ((res.pw.seen & cfg[c].need) != cfg[c].need) {
                print_error("memory %llu, %s as %s: phases seen 0x%x, expected 0x%x\n",
                            (unsigned long long)cfg[c].memory, input, kind_name[k],
                            res.pw.seen, cfg[c].need);
                failures++;
            }
            buf_free(&res.out);
            tsink_free(&ts);
        }
    assert_int_equal(failures, 0);
}

static void progress_one_input(void **state)
{
    (void)state;
    progress_on(0);
}

static void progress_several_inputs(void **state)
{
    (void)state;
    progress_on(1);
}

/* ------------------------------------------------------------------------ */
/* (g) Messages, options                                                    */
/* ------------------------------------------------------------------------ */

static void error_messages(void **state)
{
    (void)state;
    rf_engine_error e;
    memset(&e, 0, sizeof e);
    e.status = RF_ENOMEM;
    e.op = RF_ENGINE_OP_NONE;
    char msg[256];
    assert_int_equal(rf_engine_error_message(&e, msg, sizeof msg), strlen("memory exhausted"));
    assert_string_equal(msg, "memory exhausted");

    e.status = RF_EIO;
    e.op = RF_ENGINE_OP_INPUT;
    e.err = ENOENT;
    snprintf(e.path, sizeof e.path, "data.txt");
    assert_int_equal(rf_engine_error_message(&e, msg, sizeof msg),
                     strlen("data.txt: No such file or directory"));
    assert_string_equal(msg, "data.txt: No such file or directory");
    /* truncated as snprintf: the whole length returned, NUL within len */
    memset(msg, 'z', sizeof msg);
    assert_int_equal(rf_engine_error_message(&e, msg, 5),
                     strlen("data.txt: No such file or directory"));
    assert_string_equal(msg, "data");
    assert_int_equal((unsigned char)msg[5], 'z');
    assert_int_equal(rf_engine_error_message(&e, NULL, 0),
                     strlen("data.txt: No such file or directory"));

    e.op = RF_ENGINE_OP_TEMP_DIR;
    e.err = EACCES;
    snprintf(e.path, sizeof e.path, "/tmp");
    rf_engine_error_message(&e, msg, sizeof msg);
    assert_string_equal(msg, "cannot create a temporary directory in /tmp: Permission denied");

    /* the output's and a temporary file's errors give the errno text; the
     * temporary files' ones name the file */
    const rf_engine_op ops[] = {RF_ENGINE_OP_OUTPUT, RF_ENGINE_OP_TEMP_FILE,
                                RF_ENGINE_OP_TEMP_REMOVE};
    for (int i = 0; i < 3; i++) {
        e.op = ops[i];
        e.err = ENOSPC;
        snprintf(e.path, sizeof e.path, "/tmp/riffle-x/3");
        const size_t n = rf_engine_error_message(&e, msg, sizeof msg);
        assert_int_equal(n, strlen(msg));
        if (ops[i] != RF_ENGINE_OP_TEMP_REMOVE)
            assert_non_null(strstr(msg, strerror(ENOSPC)));
        if (ops[i] != RF_ENGINE_OP_OUTPUT)
            assert_non_null(strstr(msg, "/tmp/riffle-x"));
    }
}

static void options_defaults(void **state)
{
    (void)state;
    rf_engine_options o;
    memset(&o, 0xa5, sizeof o);
    rf_engine_options_init(&o);
    assert_int_equal(o.rng, RF_RNG_CHACHA20);
    for (int i = 0; i < RF_KEY_BYTES; i++)
        assert_int_equal(o.key[i], 0);
    assert_int_equal(o.delim, '\n');
    assert_int_equal(o.header, 0);
    assert_true(o.count == RF_ENGINE_ALL);
    assert_int_equal(o.memory, 0);
    assert_null(o.tmpdir);
    assert_int_equal(o.threads, 0);
    assert_null(o.progress);
    assert_null(o.temp);
    assert_true(rf_engine_default_memory() > 0);

    const rf_engine_input p = rf_engine_input_path("f");
    assert_string_equal(p.name, "f");
    assert_true(p.fd < 0);
    assert_null(p.data);
    const rf_engine_input f = rf_engine_input_fd(3, "g");
    assert_int_equal(f.fd, 3);
    assert_string_equal(f.name, "g");
    assert_null(f.data);
    const rf_engine_input b = rf_engine_input_bytes("xy", 2, "h");
    assert_non_null(b.data);
    assert_int_equal(b.size, 2);
    assert_true(b.fd < 0);
}

/* The default memory budget (0) and threads (0) give the same bytes. */
static void defaults_same_output(void **state)
{
    (void)state;
    uint8_t key[RF_KEY_BYTES];
    key_u64(key, 31);
    rf_engine_options o;
    options(&o, key, '\n', 1, RF_ENGINE_ALL, 0, 0);
    buf out;
    run_checked(&out, &o, set_parts[0][1], set_n[0][1], K_FD, &set_recs[0][1], UINT64_MAX, 0,
                "default memory and threads");
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(options_defaults),
        cmocka_unit_test(error_messages),
        cmocka_unit_test(matrix_lines),
        cmocka_unit_test(matrix_nul),
        cmocka_unit_test(input_kinds),
        cmocka_unit_test(generator_kinds),
        cmocka_unit_test(many_records),
        cmocka_unit_test(record_longer_than_budget),
        cmocka_unit_test(no_records),
        cmocka_unit_test(header_longer_than_input),
        cmocka_unit_test(other_delimiter),
        cmocka_unit_test(fd_from_offset),
        cmocka_unit_test(defaults_same_output),
        cmocka_unit_test(head_property),
        cmocka_unit_test(split_sink),
        cmocka_unit_test(fd_sink),
        cmocka_unit_test(concurrent_calls),
        cmocka_unit_test(missing_input),
        cmocka_unit_test(directory_input),
        cmocka_unit_test(unreadable_fd),
        cmocka_unit_test(bad_tmpdir),
        cmocka_unit_test(sink_fails),
        cmocka_unit_test(output_full),
        cmocka_unit_test(invalid_arguments),
        cmocka_unit_test(temp_disk_full),
        cmocka_unit_test(temp_callback),
        cmocka_unit_test(unnamed_temps),
        cmocka_unit_test(temp_refused),
        cmocka_unit_test(tmpdir_from_environment),
        cmocka_unit_test(progress_one_input),
        cmocka_unit_test(progress_several_inputs),
    };
    return cmocka_run_group_tests_name("engine", tests, make_data, free_data);
}
