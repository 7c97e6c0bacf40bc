/*
 * _glue.c -- the C part of the Python package riffle, compiled into
 * riffle._riffle by cffi (python/build_ffi.py) against the public headers
 * only.  What cannot be one library call per Python call lives here: loops
 * that fill a whole numpy array in one call (the GIL is released for the
 * call), and the engine's sink wrapped so that a Python exception -- from the
 * progress callable, or KeyboardInterrupt -- stops a run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <riffle.h>
#include <riffle_engine.h>
#include <riffle_fair.h>
#include <riffle_io.h>
#include <riffle_perm.h>

/* ---- draws ---- */

/* out[j] = rf_below(g, n), j = 0 .. k-1, n >= 1: the draws `riffle -r`
 * makes, in order. */
static void py_fill_below(rf_rng *g, uint64_t n, uint64_t *out, size_t k)
{
    for (size_t j = 0; j < k; j++)
        out[j] = rf_below(g, n);
}

/* Raw words: the draws of a bound of 2^64 (rf_range's rule for the full
 * range, as `riffle -r -i 0-18446744073709551615`). */
static void py_fill_words(rf_rng *g, uint64_t *out, size_t k)
{
    for (size_t j = 0; j < k; j++)
        out[j] = rf_rng_next64(g);
}

static void py_fill_double(rf_rng *g, double *out, size_t k)
{
    for (size_t j = 0; j < k; j++)
        out[j] = rf_double(g);
}

/* ---- the keyed permutation over index arrays ---- */

/* Indices in a run of consecutive values go through rf_perm_at_range (the
 * vector kernel); isolated ones through rf_perm_at.  Runs shorter than this
 * are not worth the kernel's start. */
#define MIN_RUN 8

/* out[j] = p(idx[j]); every idx[j] <= max (checked by the caller). */
static void py_perm_gather(const rf_perm *p, const uint64_t *idx, size_t k, uint64_t *out)
{
    size_t j = 0;
    while (j < k) {
        size_t e = j + 1;
        while (e < k && idx[e] == idx[e - 1] + 1)
            e++;
        if (e - j >= MIN_RUN) {
            rf_perm_at_range(p, idx[j], e - j, out + j);
        } else {
            for (size_t t = j; t < e; t++)
                out[t] = rf_perm_at(p, idx[t]);
        }
        j = e;
    }
}

static void py_perm_inverse_gather(const rf_perm *p, const uint64_t *idx, size_t k,
                                   uint64_t *out)
{
    for (size_t j = 0; j < k; j++)
        out[j] = rf_perm_inverse(p, idx[j]);
}

/* p(first), ..., p(first + count - 1) on up to `threads` threads: the range
 * is cut into contiguous parts, one rf_perm_at_range call each (a shared
 * rf_perm is read-only, so the threads need no lock).  The result does not
 * depend on the number of threads.  A part is at least RANGE_PART_MIN
 * indices: below that, starting a thread (tens of microseconds) costs more
 * than it saves.  Part boundaries are multiples of RANGE_ALIGN, so each
 * part but the last fills whole vectors of the kernel and whole cache
 * lines of out. */
#define RANGE_PART_MIN ((size_t)1 << 16)
#define RANGE_ALIGN 64
#define RANGE_THREADS_MAX 64

typedef struct range_part {
    const rf_perm *p;
    uint64_t first;
    size_t count;
    uint64_t *out;
} range_part;

static void *range_run(void *arg)
{
    const range_part *r = arg;
    rf_perm_at_range(r->p, r->first, r->count, r->out);
    return NULL;
}

static void py_perm_range(const rf_perm *p, uint64_t first, size_t count, uint64_t *out,
                          unsigned threads)
{
    size_t parts = threads < 1 ? 1 : threads;
    if (parts > RANGE_THREADS_MAX)
        parts = RANGE_THREADS_MAX;
    if (parts > count / RANGE_PART_MIN)
        parts = count / RANGE_PART_MIN;
    if (parts <= 1) {
        rf_perm_at_range(p, first, count, out);
        return;
    }
    range_part part[RANGE_THREADS_MAX];
    pthread_t tid[RANGE_THREADS_MAX];
    int started[RANGE_THREADS_MAX];
    const size_t each = (count / parts + RANGE_ALIGN - 1) / RANGE_ALIGN * RANGE_ALIGN;
    size_t at = 0;
    for (size_t t = 0; t < parts; t++) {
        const size_t c = t + 1 == parts || count - at < each ? count - at : each;
        part[t] = (range_part){p, first + at, c, out + at};
        at += c;
    }
    for (size_t t = 1; t < parts; t++)
        started[t] = pthread_create(&tid[t], NULL, range_run, &part[t]) == 0;
    range_run(&part[0]);
    for (size_t t = 1; t < parts; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            range_run(&part[t]); /* no thread to be had: this one does it */
    }
}

/* The distributed sampler's positions: out[j] = p(q mod n) for q = first +
 * j*step, the list of n permuted indices continued by its own head (torch's
 * padding rule).  n = max + 1 of p; q never overflows (the caller keeps it
 * below 2^63).  A single rf_perm_at is latency-bound (riffle_perm.h), so for
 * a small step the whole span of positions goes through the vector kernel
 * and every step-th value is kept: step kernel values cost less than one
 * scalar evaluation up to STRIDE_KERNEL_MAX (measured: BENCHMARKS_PYTHON.md,
 * "DistributedSampler"). */
#define STRIDE_KERNEL_MAX 2
#define STRIDE_SPAN 1024

static size_t strided_by_kernel(const rf_perm *p, uint64_t n, uint64_t first, uint64_t step,
                                size_t k, int64_t *out)
{
    uint64_t buf[STRIDE_SPAN];
    size_t j = 0;
    while (j < k) {
        const uint64_t q = first + j * step;
        if (q >= n)
            break; /* the padding: the caller's scalar loop */
        size_t take = k - j;
        if (take > STRIDE_SPAN / step)
            take = STRIDE_SPAN / step;
        if ((n - 1 - q) / step + 1 < take)
            take = (size_t)((n - 1 - q) / step + 1); /* stay below n */
        rf_perm_at_range(p, q, (take - 1) * step + 1, buf);
        for (size_t t = 0; t < take; t++)
            out[j + t] = (int64_t)buf[t * step];
        j += take;
    }
    return j;
}

static void py_perm_strided(const rf_perm *p, uint64_t n, uint64_t first, uint64_t step,
                            size_t k, int64_t *out)
{
    size_t j = step <= STRIDE_KERNEL_MAX ? strided_by_kernel(p, n, first, step, k, out) : 0;
    for (uint64_t q = first + j * step; j < k; j++, q += step)
        out[j] = (int64_t)rf_perm_at(p, q % n);
}

/* The key of one epoch of the distributed sampler: the first 32 bytes of the
 * ChaCha20 substream `epoch` of the seed's key (counter-based, as every
 * substream in riffle.h), so every (seed, epoch) pair has its own
 * permutation and any epoch can be had directly. */
static rf_status py_epoch_key(const uint8_t seed_key[RF_KEY_BYTES], uint64_t epoch,
                              uint8_t key[RF_KEY_BYTES])
{
    rf_rng g;
    const rf_status s = rf_rng_init(&g, RF_RNG_CHACHA20, seed_key, epoch);
    if (s == RF_OK)
        rf_rng_fill(&g, key, RF_KEY_BYTES);
    memset(&g, 0, sizeof g);
    return s;
}

/* ---- record files ---- */

/* The start of every record of data[0..size), delimited by delim, and one
 * more value: offs[0] = 0, offs[j] = one past the j-th delimiter, and
 * offs[n] = one past where the last record's delimiter is or would be (size
 * + 1 for an unterminated last record), so that record j is data[offs[j] ..
 * offs[j+1] - 1) for every j < n.  offs has room for rf_delims_count(data,
 * size, delim) + 2 values.  Returns n, the number of records. */
static size_t py_records_scan(const unsigned char *data, size_t size, unsigned char delim,
                              uint64_t *offs)
{
    offs[0] = 0;
    if (size == 0)
        return 0;
    size_t n = rf_delims_find(data, size, delim, 0, offs + 1);
    if (data[size - 1] != delim)
        offs[++n] = (uint64_t)size + 1;
    return n;
}

/* The records idx[0..k) (each < n, checked by the caller) of data as laid
 * out by py_records_scan's offs: with out == NULL, store where each would
 * end in a gathered buffer (ends[j]: the sum of the lengths of records
 * idx[0..j]) and return the total; with out, copy them there, one after
 * another, and return the total again.  Two passes, so that the caller
 * allocates the buffer once. */
static uint64_t py_records_gather(const unsigned char *data, const uint64_t *offs,
                                  const uint64_t *idx, size_t k, uint64_t *ends,
                                  unsigned char *out)
{
    uint64_t at = 0;
    for (size_t j = 0; j < k; j++) {
        const uint64_t start = offs[idx[j]];
        const uint64_t len = offs[idx[j] + 1] - 1 - start;
        if (out)
            memcpy(out + at, data + start, len);
        at += len;
        if (ends)
            ends[j] = at;
    }
    return at;
}

/* 1 when a saved stamp still describes the file stamped now: the same
 * regular file (device and inode), unchanged (rf_file_changed).  A name
 * that has come to mean another file does not match either. */
static int py_stamp_same(const rf_file_stamp *then, const rf_file_stamp *now)
{
    return then->regular && now->regular && then->dev == now->dev && then->ino == now->ino &&
           !rf_file_changed(then, now);
}

/* ---- the keyed order ---- */

static rf_status order_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    return rf_keyed_keys(ctx, first, out, n);
}

/* idx[j] = the item in place j of the keyed order of m items (riffle.h):
 * the order `riffle --seed` gives m records. */
static rf_status py_keyed_index(const uint8_t key[RF_KEY_BYTES], rf_rng_kind kind,
                                uint64_t m, unsigned threads, uint64_t *idx)
{
    rf_keyed_order o;
    rf_status s = rf_keyed_order_init(&o, kind, key);
    if (s == RF_OK)
        s = rf_keyed_index(&o, m, order_keys, &o, threads, idx);
    memset(&o, 0, sizeof o);
    return s;
}

/* ---- engine runs ---- */

/* Records between two calls of the sink's advance: how often a cancelled
 * run notices it while writing. */
#define CHECK_RECORDS 65536
#define SINK_BUFFER ((size_t)1 << 20)

typedef struct py_run {
    rf_engine_sink sink;  /* the wrapper, passed to the engine */
    rf_engine_sink inner; /* the real sink */
    rf_fd_sink fd;
    unsigned char *buf;
    volatile int cancel;  /* set from the progress callback (same thread) */
} py_run;

static py_run *py_run_new(void)
{
    py_run *r = calloc(1, sizeof *r);
    if (r && !(r->buf = malloc(SINK_BUFFER))) {
        free(r);
        r = NULL;
    }
    return r;
}

static void py_run_free(py_run *r)
{
    if (r)
        free(r->buf);
    free(r);
}

static void py_run_cancel(py_run *r)
{
    r->cancel = 1;
}

static int w_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    py_run *r = ctx;
    return r->cancel ? -1 : r->inner.begin(r->inner.ctx, header, len, records);
}

static rf_writer *w_writer(void *ctx)
{
    py_run *r = ctx;
    return r->inner.writer(r->inner.ctx);
}

static uint64_t w_room(void *ctx)
{
    py_run *r = ctx;
    const uint64_t room = r->inner.room(r->inner.ctx);
    return room > CHECK_RECORDS ? CHECK_RECORDS : room;
}

static int w_advance(void *ctx, uint64_t records)
{
    py_run *r = ctx;
    return r->cancel ? -1 : r->inner.advance(r->inner.ctx, records);
}

static int w_temp(void *ctx, const char *dir, unsigned long files)
{
    py_run *r = ctx;
    (void)files;
    return dir && r->cancel ? EINTR : 0;
}

static void py_on_progress(void *ctx, rf_engine_phase phase, uint64_t done, uint64_t total);

static void on_progress(void *ctx, rf_engine_phase phase, uint64_t done, uint64_t total)
{
    py_run *r = ctx;
    if (!r->cancel)
        py_on_progress(r, phase, done, total);
}

static void wrap(py_run *r)
{
    r->sink.begin = w_begin;
    r->sink.writer = w_writer;
    r->sink.room = w_room;
    r->sink.advance = w_advance;
    r->sink.ctx = r;
}

static void options(rf_engine_options *o, py_run *r, const uint8_t key[RF_KEY_BYTES],
                    rf_rng_kind kind, unsigned char delim, uint64_t header, uint64_t count,
                    uint64_t memory, const char *tmpdir, unsigned threads)
{
    rf_engine_options_init(o);
    memcpy(o->key, key, RF_KEY_BYTES);
    o->rng = kind;
    o->delim = delim;
    o->header = header;
    o->count = count;
    o->memory = memory;
    o->tmpdir = tmpdir;
    o->threads = threads;
    o->progress = on_progress;
    o->progress_ctx = r;
    o->temp = w_temp;
    o->temp_ctx = r;
}

/* The run with r->inner as the sink; the key copy wiped. */
static rf_status run(py_run *r, rf_engine_options *o, const char **paths, size_t n,
                     rf_engine_error *err)
{
    rf_engine_input *in = malloc((n ? n : 1) * sizeof *in);
    rf_status s = RF_ENOMEM;
    memset(err, 0, sizeof *err);
    err->status = s;
    if (in) {
        for (size_t i = 0; i < n; i++)
            in[i] = rf_engine_input_path(paths[i]);
        wrap(r);
        s = rf_engine_shuffle(o, in, n, &r->sink, err);
        free(in);
    }
    memset(o->key, 0, sizeof o->key);
    return s;
}

/* A sink's failure to flush, reported as the engine reports the sink's. */
static rf_status flush_failed(rf_engine_error *err, int e)
{
    err->status = RF_EIO;
    err->op = RF_ENGINE_OP_OUTPUT;
    err->err = e;
    return RF_EIO;
}

/* rf_engine_shuffle of the files paths[0..n) into fd, flushed. */
static rf_status py_run_shuffle(py_run *r, const uint8_t key[RF_KEY_BYTES], rf_rng_kind kind,
                                const char **paths, size_t n, int fd, unsigned char delim,
                                uint64_t header, uint64_t count, uint64_t memory,
                                const char *tmpdir, unsigned threads, rf_engine_error *err)
{
    rf_engine_options o;
    options(&o, r, key, kind, delim, header, count, memory, tmpdir, threads);
    rf_fd_sink_init(&r->fd, fd, r->buf, SINK_BUFFER);
    r->inner = r->fd.sink;
    rf_status s = run(r, &o, paths, n, err);
    if (s == RF_OK) {
        const int e = rf_fd_sink_flush(&r->fd);
        if (e)
            s = flush_failed(err, e);
    }
    return s;
}

/* The same into the parts of a split (rf_split_sink over fds[0..parts)),
 * finished.  *split_err: why begin refused the plan (counts that do not fit
 * the records), problem RF_SPLIT_OK otherwise; *part: the part that failed
 * to write. */
static rf_status py_run_split(py_run *r, const uint8_t key[RF_KEY_BYTES], rf_rng_kind kind,
                              const char **paths, size_t n, const rf_split *split,
                              const int *fds, unsigned char delim, uint64_t header,
                              uint64_t count, uint64_t memory, const char *tmpdir,
                              unsigned threads, rf_engine_error *err,
                              rf_split_error *split_err, size_t *part)
{
    rf_engine_options o;
    options(&o, r, key, kind, delim, header, count, memory, tmpdir, threads);
    rf_split_sink ss;
    memset(split_err, 0, sizeof *split_err);
    memset(err, 0, sizeof *err);
    rf_status s = rf_split_sink_init(&ss, split, fds, r->buf, SINK_BUFFER);
    if (s != RF_OK) {
        err->status = s;
        memset(o.key, 0, sizeof o.key);
        return s;
    }
    r->inner = ss.sink;
    s = run(r, &o, paths, n, err);
    if (s == RF_OK) {
        const int e = rf_split_sink_finish(&ss);
        if (e)
            s = flush_failed(err, e);
    }
    *split_err = ss.error;
    *part = ss.cur;
    rf_split_sink_free(&ss);
    return s;
}

/* The number of parts of a parsed split. */
static size_t py_split_parts(const rf_split *s)
{
    return s->parts;
}
