/*
 * gather.c -- rf_records_write on several threads (include/riffle_io.h,
 * "Buffered output").
 *
 * The serial gather is bound by memory latency: each shuffled record is a
 * cache and TLB miss, and one core keeps only so many in flight.  So the
 * records are cut into consecutive slices, which T threads (T - 1 workers and
 * the calling thread) gather, each into a buffer of its own
 * (rfi_records_fill); the calling thread writes the gathered buffers in slice
 * order with write(2) straight from the buffer, and gathers a slice itself
 * whenever the next one to write is not ready yet.  So T threads run on T cores
 * and none of them only waits (a writer thread of its own beside T workers was
 * slower on 2 CPUs: docs/BENCHMARKS_CLI.md).  The bytes are those of
 * rf_records_write; only the write(2) calls differ.
 *
 * Slices.  A slice is a run of records aimed at `target` output bytes
 * (512 KiB by default, in 1 MiB buffers): its length in records is target
 * divided by the bytes per record, estimated before the start from up to 64
 * records spread over offs, then from the slices gathered (a running sum
 * that forgets a quarter at each slice, so the estimate follows offs that
 * change character along the way).  A slice is cut when a thread claims it,
 * so no cut waits for a slice to finish.
 *
 * Records that do not fit.  A gathering thread stops at the first record
 * that does not fit in what is left of its buffer (it searches for the
 * delimiter only as far as that room, so a record of a gigabyte costs one
 * buffer's worth of reading); the calling thread then writes the rest of
 * that slice through the caller's writer (rf_records_write, which sends a
 * record longer than w's buffer straight from the input).  So memory stays
 * two buffers per thread whatever the records, and the output is right
 * either way; the estimate above keeps such slices rare.
 *
 * Order.  Slot k mod 2T holds slice k, which may be claimed once slice
 * k - 2T is written: every thread can gather one slice ahead of the
 * writes.  One mutex and two condition variables guard the slots; the
 * calling thread sleeps only when it can neither write nor claim, and a
 * worker only when every slot is taken, so context switches stay few (far
 * fewer than with a writer thread of its own: docs/BENCHMARKS_CLI.md).
 *
 * Signals.  Workers start with every signal blocked except the synchronous
 * ones a fault raises in the faulting thread (SIGBUS from a mapped input
 * that shrank, SIGSEGV, ...: blocking those kills the process silently).
 * So a program's SIGINT/SIGTERM/SIGHUP handlers (temporary-file cleanup)
 * run on its own threads, never on a library worker, and SIGPIPE can only
 * come from the writes, which are all the calling thread's, as with
 * rf_records_write.
 *
 * Sources.  The driver reaches records only through a source
 * (gather_internal.h, struct rfi_gather_src): rf_records_write_threads's is
 * a record buffer and offsets (rfi_records_fill, rf_records_write); the
 * distributed gather gives records held in several buffers.  One call per
 * slice, not per record, goes through it.
 *
 * Sizes: 1 MiB buffers were the fastest of 256 KiB to 4 MiB on the gather
 * alone; the measurements (buffer sizes, a writer thread, prefetch
 * distances, serial against two threads) are in docs/BENCHMARKS_CLI.md.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/thread.h"
#include "gather_internal.h"

/* Records sampled for the first estimate of bytes per record. */
#define SAMPLE 64
/* Records between progress calls on the serial path. */
#define SERIAL_STEP ((size_t)1 << 16)

void rfi_gather_default_sizes(struct rfi_gather_sizes *s)
{
    s->buf = (size_t)1 << 20;
    s->target = s->buf / 2;
    s->parallel = s->buf;
}

/* ------------------------------------------------------------------------ */
/* The serial path                                                          */
/* ------------------------------------------------------------------------ */

static int write_serial(const struct rfi_gather_src *src, size_t count, rf_writer *w,
                        rf_records_progress_fn *progress, void *ctx)
{
    if (!progress)
        return src->write(src->ctx, 0, count, w);
    for (size_t done = 0; done < count && !w->err;) {
        const size_t k = count - done < SERIAL_STEP ? count - done : SERIAL_STEP;
        if (src->write(src->ctx, done, k, w) != 0)
            break;
        done += k;
        progress(ctx, done);
    }
    return w->err;
}

/* ------------------------------------------------------------------------ */
/* Slices                                                                   */
/* ------------------------------------------------------------------------ */

struct slot {
    unsigned char *buf;
    size_t slice;   /* the slice held, when ready */
    size_t first;   /* its records: offs[first .. first + n) */
    size_t n;
    size_t done;    /* records gathered into buf */
    size_t len;     /* their bytes */
    int ready;
};

struct gather {
    const struct rfi_gather_src *src;
    size_t count;
    const struct rfi_gather_sizes *sz;
    struct slot *slots;
    size_t nslots;
    pthread_mutex_t mu;
    pthread_cond_t ready_cv; /* a slot is ready: the writer waits */
    pthread_cond_t free_cv;  /* a slot is free, or stop: workers wait */
    size_t next_slice;       /* the next slice to claim ... */
    size_t next_first;       /* ... and its first record */
    size_t written;          /* slices written; their slots are free */
    uint64_t sum_bytes;      /* the running estimate: sum_bytes output bytes */
    uint64_t sum_recs;       /* for sum_recs records (>= 1) */
    int stop;
};

/* Seed the estimate from up to SAMPLE records spread over offs (one costs at
 * most `cap` + 1 bytes: no slice takes more).  Returns the estimated output
 * bytes of all count records, saturated. */
static uint64_t sample(struct gather *g, size_t cap)
{
    const size_t k = g->count < SAMPLE ? g->count : SAMPLE, step = g->count / k;
    uint64_t bytes = 0;
    for (size_t i = 0; i < k; i++) {
        const size_t size = g->src->size(g->src->ctx, i * step, cap);
        bytes += size < cap + 1 ? size : cap + 1;
    }
    g->sum_bytes = bytes;
    g->sum_recs = k;
    const uint64_t per = bytes / k + 1;
    return per > UINT64_MAX / g->count ? UINT64_MAX : per * g->count;
}

/* Records for the next slice (>= 1).  Under the lock. */
static size_t slice_records(const struct gather *g)
{
    const uint64_t per = g->sum_bytes / g->sum_recs + 1;
    const uint64_t n = g->sz->target / per;
    const size_t left = g->count - g->next_first;
    return n == 0 ? 1 : n < left ? (size_t)n : left;
}

/* A gathered slice updates the estimate: the record a worker stopped at did
 * not fit in the room left, so the slice's bytes up to it were more than
 * the whole buffer.  Under the lock. */
static void learn(struct gather *g, const struct slot *s)
{
    uint64_t bytes = s->len, recs = s->done;
    if (s->done < s->n) {
        bytes = (uint64_t)g->sz->buf + 1;
        recs++;
    }
    g->sum_bytes = g->sum_bytes - g->sum_bytes / 4 + bytes;
    g->sum_recs = g->sum_recs - g->sum_recs / 4 + recs;
}

/* Take the next slice if its slot is free; NULL when it is not, or every
 * slice is taken, or the writer stopped.  Under the lock. */
static struct slot *try_claim(struct gather *g)
{
    if (g->stop || g->next_first >= g->count || g->next_slice >= g->written + g->nslots)
        return NULL;
    struct slot *s = &g->slots[g->next_slice % g->nslots];
    s->slice = g->next_slice++;
    s->first = g->next_first;
    s->n = slice_records(g);
    g->next_first += s->n;
    s->ready = 0;
    return s;
}

/* Gather slice s, then mark it ready.  Called and returns under the lock. */
static void fill(struct gather *g, struct slot *s)
{
    pthread_mutex_unlock(&g->mu);
    s->done = g->src->fill(g->src->ctx, s->first, s->n, s->buf, g->sz->buf, &s->len);
    pthread_mutex_lock(&g->mu);
    learn(g, s);
    s->ready = 1;
}

static void *worker_main(void *arg)
{
    struct gather *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stop && g->next_first < g->count) {
        struct slot *s = try_claim(g);
        if (!s) { /* every slot is taken: wait for the writer */
            pthread_cond_wait(&g->free_cv, &g->mu);
            continue;
        }
        fill(g, s);
        pthread_cond_signal(&g->ready_cv);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The calling thread: writes, and gathers when it has nothing to write     */
/* ------------------------------------------------------------------------ */

/* Write the gathered slice in s, then the records it could not take.  Not
 * under the lock.  Returns w->err. */
static int write_slice(struct gather *g, const struct slot *s, rf_writer *w)
{
    if (s->len)
        rfi_writer_direct(w, s->buf, s->len);
    if (s->done < s->n)
        return g->src->write(g->src->ctx, s->first + s->done, s->n - s->done, w);
    return w->err;
}

static void drive(struct gather *g, rf_writer *w, rf_records_progress_fn *progress, void *ctx)
{
    size_t k = 0, done = 0; /* slices and records written */
    pthread_mutex_lock(&g->mu);
    while (done < g->count && !w->err) {
        struct slot *s = &g->slots[k % g->nslots];
        if (s->ready && s->slice == k) {
            pthread_mutex_unlock(&g->mu);
            const int err = write_slice(g, s, w);
            done = s->first + s->n;
            if (progress && !err)
                progress(ctx, done);
            pthread_mutex_lock(&g->mu);
            s->ready = 0;
            g->written = ++k;
            pthread_cond_broadcast(&g->free_cv);
        } else if ((s = try_claim(g)) != NULL) {
            fill(g, s);
        } else {
            pthread_cond_wait(&g->ready_cv, &g->mu);
        }
    }
    g->stop = 1;
    pthread_cond_broadcast(&g->free_cv);
    pthread_mutex_unlock(&g->mu);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

/* Start up to `workers` threads (rfi_thread_start: asynchronous signals
 * blocked in them); returns how many started. */
static unsigned start_workers(struct gather *g, pthread_t *tid, unsigned workers)
{
    unsigned started = 0;
    for (unsigned t = 0; t < workers; t++)
        started += (unsigned)rfi_thread_start(&tid[started], worker_main, g);
    return started;
}

static int init_sync(struct gather *g)
{
    if (pthread_mutex_init(&g->mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&g->ready_cv, NULL) != 0)
        goto fail_mu;
    if (pthread_cond_init(&g->free_cv, NULL) != 0)
        goto fail_ready;
    return 0;
fail_ready:
    pthread_cond_destroy(&g->ready_cv);
fail_mu:
    pthread_mutex_destroy(&g->mu);
    return -1;
}

static void free_sync(struct gather *g)
{
    pthread_cond_destroy(&g->free_cv);
    pthread_cond_destroy(&g->ready_cv);
    pthread_mutex_destroy(&g->mu);
}

/* Two slots per gathering thread and their buffers.  Returns 0 or -1. */
static int alloc_slots(struct gather *g, unsigned threads)
{
    g->nslots = 2 * (size_t)threads;
    if (g->sz->buf > SIZE_MAX / g->nslots)
        return -1;
    g->slots = calloc(g->nslots, sizeof *g->slots);
    unsigned char *mem = malloc(g->nslots * g->sz->buf);
    if (!g->slots || !mem) {
        free(g->slots);
        free(mem);
        return -1;
    }
    for (size_t i = 0; i < g->nslots; i++)
        g->slots[i].buf = mem + i * g->sz->buf;
    return 0;
}

/* The whole threaded run: threads - 1 workers and this thread.  Returns -1
 * (nothing written) when it cannot allocate or start a single worker, so
 * that the caller writes serially. */
static int run_threads(struct gather *g, unsigned threads, rf_writer *w,
                       rf_records_progress_fn *progress, void *ctx)
{
    pthread_t tid[RFI_THREADS_MAX];
    int status = -1;
    if (alloc_slots(g, threads) != 0)
        return -1;
    if (init_sync(g) != 0)
        goto fail_slots;
    const unsigned started = start_workers(g, tid, threads - 1);
    if (started > 0) {
        drive(g, w, progress, ctx);
        for (unsigned t = 0; t < started; t++)
            pthread_join(tid[t], NULL);
        status = 0;
    }
    free_sync(g);
fail_slots:
    free(g->slots[0].buf);
    free(g->slots);
    return status;
}

int rfi_gather_write(const struct rfi_gather_src *src, size_t count, rf_writer *w,
                     unsigned threads, rf_records_progress_fn *progress, void *ctx,
                     const struct rfi_gather_sizes *sz)
{
    if (w->err || count == 0)
        return w->err;
    if (threads == 0)
        threads = rfi_online_cpus();
    if (threads > RFI_THREADS_MAX)
        threads = RFI_THREADS_MAX;
    if (threads < 2)
        return write_serial(src, count, w, progress, ctx);
    struct gather g = {.src = src, .count = count, .sz = sz};
    const uint64_t bytes = sample(&g, sz->buf);
    if (bytes < sz->parallel)
        return write_serial(src, count, w, progress, ctx);
    const uint64_t slices = bytes / sz->target + 1;
    if (slices < threads)
        threads = slices < 2 ? 2 : (unsigned)slices;
    if (run_threads(&g, threads, w, progress, ctx) != 0)
        return write_serial(src, count, w, progress, ctx);
    return w->err;
}

/* ------------------------------------------------------------------------ */
/* Records of one buffer at given offsets (rf_records_write's)              */
/* ------------------------------------------------------------------------ */

struct offs_src {
    const rf_records *r;
    const uint64_t *offs;
};

static size_t offs_fill(const void *ctx, size_t first, size_t n, unsigned char *buf, size_t cap,
                        size_t *len)
{
    const struct offs_src *o = ctx;
    return rfi_records_fill(o->r, o->offs + first, n, buf, cap, len);
}

static int offs_write(const void *ctx, size_t first, size_t n, rf_writer *w)
{
    const struct offs_src *o = ctx;
    return rf_records_write(o->r, o->offs + first, n, w);
}

static size_t offs_size(const void *ctx, size_t i, size_t cap)
{
    const struct offs_src *o = ctx;
    const uint64_t off = o->offs[i];
    const size_t avail = o->r->size - (size_t)off, lim = avail < cap ? avail : cap;
    const unsigned char *p = o->r->data + off;
    if (o->r->csv_)
        return rf_csv_nth(p, lim, 0) + 1;
    const unsigned char *q = memchr(p, o->r->delim, lim);
    return (q ? (size_t)(q - p) : lim) + 1;
}

int rfi_records_write_sized(const rf_records *r, const uint64_t *offs, size_t count,
                            rf_writer *w, unsigned threads, rf_records_progress_fn *progress,
                            void *ctx, const struct rfi_gather_sizes *sz)
{
    const struct offs_src o = {r, offs};
    const struct rfi_gather_src src = {offs_fill, offs_write, offs_size, &o};
    return rfi_gather_write(&src, count, w, threads, progress, ctx, sz);
}

RF_API int rf_records_write_threads(const rf_records *r, const uint64_t *offs, size_t count,
                                    rf_writer *w, unsigned threads,
                                    rf_records_progress_fn *progress, void *ctx)
{
    struct rfi_gather_sizes sz;
    rfi_gather_default_sizes(&sz);
    return rfi_records_write_sized(r, offs, count, w, threads, progress, ctx, &sz);
}
