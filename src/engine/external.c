/* external.c -- inputs larger than memory (engine_internal.h).
 *
 * Pass 1 (scatter): every record after the header gets its key (the keyed
 * order's stream, in input order) and goes, with its key, to the bucket named
 * by the top bits of the key: two temporary files per bucket, the records
 * (each with its delimiter) and their keys (8 bytes each, host order), in
 * input order.  The bucket also notes where each keyed block of 2^16 of its
 * records starts (8 bytes per 2^16 records, in memory).  Pass 2: bucket by
 * bucket in key order, the records are mapped and put in the keyed order by
 * rf_keyed_index_vals, which reads their keys back from the key file and
 * their offsets from the mapping (one delimiter scan per block from its
 * noted start), and written.  riffle.h ("Keyed order") shows why this is the
 * same output as sorting everything at once: a bucket holds exactly the keys
 * with its prefix, in input order, and ties never cross buckets.  A bucket
 * too large for --memory is scattered again by the next bits of its keys.
 *
 * Out-of-line records (reader.h): a record too long to hold reaches the
 * scatter as a one-byte proxy, its bytes already in the spill file (a
 * temporary file like the others); the bucket keeps, beside the proxy's
 * offset, where they are, and pass 2 copies them to the sink from there in
 * pieces.  Proxies keep their places through a second scatter.  The order is
 * unchanged: it depends on the keys alone.
 *
 * Bucket files (keyfiles.h, as the distributed gather's): unnamed where the
 * file system allows, else the numbered files of a fresh directory
 * DIR/riffle-XXXXXX, announced through the temp callback before each is
 * created (so a program's signal handler can remove them); every exit path
 * removes them.  Memory: the scatter
 * buffers (1 MiB per bucket and a few spares, less if that is more than half
 * of --memory, but at least 8 KiB each) and, in
 * pass 2, one or two buckets (their bytes + 8 bytes per record: the order,
 * as offsets; no offsets table beside it).
 *
 * Threads (--threads > 1), none of which changes a byte of the files or the
 * output:
 *   - pass 1: copying the bucket buffers into the page cache (write(2)) costs
 *     about as much CPU as finding, keying and buffering the records
 *     together, so a writer thread does it.  A full buffer is queued and its
 *     bucket goes on with a spare one; every buffer knows where its bytes go
 *     in the files (pwrite), so the order of the writes does not matter.
 *     The buckets fill at the same rate, so their first buffers are cut
 *     short in steps (bucket i's after (i + 1) / nb of a buffer): the
 *     flushes come one at a time rather than all at once.
 *   - pass 2: while a bucket is written (gather and write(2)), a helper
 *     thread maps and orders the next one, when the two fit in the budget
 *     together.
 * What each bought is in docs/BENCHMARKS_CLI.md ("Engine"). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/thread.h"
#include "bounds.h"
#include "engine_internal.h"
#include "keyfiles.h"
#include "reader.h"
#include "temp.h"

/* Buckets per scatter, at most. */
#define MAX_FANOUT (1u << RFI_KEYFILES_MAX_BITS)
/* A bucket's files (keyfiles.h): its records, and their keys. */
#define REC 0
#define KEY 1
#define MIN_BUFFER ((size_t)8 << 10)
#define KEY_BATCH 512
/* Buffers beyond one per bucket when a writer thread is on: the queue. */
#define SPARES 4
/* Records of one keyed block (riffle.h: keys come in blocks of 2^16, and
 * rf_keyed_index_vals asks for values block by block). */
#define BLOCK ((uint64_t)1 << 16)
/* Record bytes per buffer at most: 1 MiB was the fastest of 256 KiB, 1 MiB
 * and 4 MiB (docs/BENCHMARKS_CLI.md, "Engine"). */
#define MAX_BUFFER ((size_t)1 << 20)

struct bucket;

/* A bucket's records (each with its delimiter) and their keys, waiting to be
 * written at their places in the bucket's files (so the order in which
 * pieces are written does not matter). */
struct piece {
    unsigned char *rec;
    size_t len;
    uint64_t *keys;
    size_t nkeys;
    uint64_t rec_at, key_at; /* file offsets of rec[0] and keys[0] */
    struct bucket *b;    /* whose, while queued */
    struct piece *next;  /* in the queue or the free list */
};

/* A bucket: its two files and, while it is being filled, its piece. */
struct bucket {
    struct rfi_keybucket *kb;     /* its files: kb->f[REC], kb->f[KEY] */
    struct piece *cur;
    size_t rec_limit, key_limit;  /* the piece is written beyond these */
    uint64_t bytes, records;      /* in the files */
    uint64_t *starts;             /* starts[c]: offset of record c * BLOCK */
    size_t starts_cap;
    struct outline *outs;         /* its out-of-line records, by proxy offset (temp.h) */
    size_t nouts, outs_cap;
};

struct ext {
    struct engine *e;
    struct rfi_keyfiles kf;       /* the files */
    size_t rec_cap, key_cap;      /* per piece, for the scatter under way */
    uint64_t left;                /* records still to write (-n) */
    uint64_t scattered;           /* bytes in bucket files (progress) */
    uint64_t done;                /* of them, sorted and written */
    struct spill spill;           /* out-of-line records' bytes */
};

static int io_error(const struct ext *x, const struct rfi_keyfile *f, int err)
{
    return rfi_keyfile_error(&x->kf, f, err);
}

/* A bucket's files are open from the scatter that makes them until the
 * bucket is written or scattered again (an unnamed file can only be reached
 * through its descriptor); then they go. */
static void drop_bucket(const struct ext *x, struct bucket *b)
{
    if (b->kb)
        rfi_keybucket_drop(&x->kf, b->kb);
}

/* A piece to its bucket's files: 0, or an errno value and the file in *f. */
static int write_piece(const struct piece *p, const struct rfi_keyfile **f)
{
    const struct rfi_keybucket *kb = p->b->kb;
    int err = rfi_write_at(kb->f[REC].fd, p->rec, p->len, p->rec_at);
    if (err) {
        *f = &kb->f[REC];
        return err;
    }
    err = rfi_write_at(kb->f[KEY].fd, p->keys, p->nkeys * sizeof *p->keys, p->key_at);
    if (err)
        *f = &kb->f[KEY];
    return err;
}

/* ------------------------------------------------------------------------ */
/* Scatter                                                                  */

/* The budget pass 2 orders buckets under (keyfiles.h: at least 64 KiB). */
static uint64_t order_budget(const struct ext *x)
{
    return rfi_keyfiles_order_budget(x->e->budget);
}

/* The writes of one scatter: on the calling thread, or on a writer thread
 * fed through a queue (see the top). */
struct flusher {
    int threaded;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t work, freed;  /* a piece queued; a piece written */
    struct piece *head, *tail;   /* the queue */
    struct piece *free;          /* written pieces, to reuse */
    int busy, stop;
    int err;                     /* first failed write: errno, and its file */
    const struct rfi_keyfile *err_file;
};

/* One scatter into a key set's buckets (keyfiles.h). */
struct scatter {
    struct bucket b[MAX_FANOUT];
    struct rfi_keyset *set;
    unsigned nb;        /* set->n */
    uint64_t lo;        /* bucket = (key - lo) >> shift, as set's */
    unsigned shift;
    unsigned char *mem; /* every piece's buffers */
    struct piece *pieces;
    struct flusher f;
};

static void *writer_main(void *arg)
{
    struct flusher *f = arg;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (!f->head && !f->stop)
            pthread_cond_wait(&f->work, &f->mu);
        if (f->stop)
            break;
        struct piece *p = f->head;
        f->head = p->next;
        if (!f->head)
            f->tail = NULL;
        f->busy = 1;
        const int skip = f->err != 0; /* after an error the pieces only go round */
        pthread_mutex_unlock(&f->mu);
        const struct rfi_keyfile *file = NULL;
        const int err = skip ? 0 : write_piece(p, &file);
        pthread_mutex_lock(&f->mu);
        if (err && !f->err) {
            f->err = err;
            f->err_file = file;
        }
        f->busy = 0;
        p->len = p->nkeys = 0;
        p->next = f->free;
        f->free = p;
        pthread_cond_broadcast(&f->freed);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

/* Start the writer thread (a library thread: asynchronous signals blocked);
 * if it cannot start, the writes stay on this thread. */
static void flusher_start(struct flusher *f)
{
    if (pthread_mutex_init(&f->mu, NULL) != 0)
        return;
    if (pthread_cond_init(&f->work, NULL) != 0) {
        pthread_mutex_destroy(&f->mu);
        return;
    }
    if (pthread_cond_init(&f->freed, NULL) != 0) {
        pthread_cond_destroy(&f->work);
        pthread_mutex_destroy(&f->mu);
        return;
    }
    f->threaded = rfi_thread_start(&f->tid, writer_main, f);
    if (!f->threaded) {
        pthread_cond_destroy(&f->freed);
        pthread_cond_destroy(&f->work);
        pthread_mutex_destroy(&f->mu);
    }
}

/* End the writer thread at once (what is still queued is dropped). */
static void flusher_stop(struct flusher *f)
{
    if (!f->threaded)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_signal(&f->work);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->tid, NULL);
    pthread_cond_destroy(&f->freed);
    pthread_cond_destroy(&f->work);
    pthread_mutex_destroy(&f->mu);
    f->threaded = 0;
}

/* Wait until every queued piece is written.  Returns 0, or 1 with the
 * error recorded. */
static int flusher_drain(struct ext *x, struct flusher *f)
{
    if (!f->threaded)
        return 0;
    pthread_mutex_lock(&f->mu);
    while ((f->head || f->busy) && !f->err)
        pthread_cond_wait(&f->freed, &f->mu);
    const int err = f->err;
    const struct rfi_keyfile *file = f->err_file;
    pthread_mutex_unlock(&f->mu);
    return err ? io_error(x, file, err) : 0;
}

/* The buffers go; the files stay open for pass 2 (drop_bucket), in the set
 * until it is freed (free_scatter). */
static void free_buffers(struct scatter *s)
{
    flusher_stop(&s->f);
    for (unsigned i = 0; i < s->nb; i++)
        s->b[i].cur = NULL;
    free(s->mem);
    free(s->pieces);
    s->mem = NULL;
    s->pieces = NULL;
}

/* Pieces: one per bucket of the set, SPARES more for the queue of a writer
 * thread; MAX_BUFFER record bytes each, less if they would take more than
 * half the budget together.  Keys take a fifth of a piece: records of 32
 * bytes or more fill the record part first.  The set is s's from now on,
 * success or not (free_scatter). */
static int scatter_open(struct ext *x, struct scatter *s, struct rfi_keyset *set)
{
    memset(s, 0, sizeof *s);
    s->set = set;
    s->nb = set->n;
    s->lo = set->lo;
    s->shift = set->shift;
    for (unsigned i = 0; i < s->nb; i++)
        s->b[i].kb = &set->b[i];
    if (x->e->threads > 1)
        flusher_start(&s->f);
    const size_t npieces = s->nb + (s->f.threaded ? SPARES : 0);
    uint64_t share = x->e->budget / 2 / npieces / 5 * 4;
    if (share > MAX_BUFFER)
        share = MAX_BUFFER;
    x->rec_cap = share > MIN_BUFFER ? (size_t)share / 32 * 32 : MIN_BUFFER;
    x->key_cap = x->rec_cap / 32;
    const size_t piece_bytes = x->rec_cap + x->key_cap * sizeof(uint64_t);
    s->mem = malloc(npieces * piece_bytes);
    s->pieces = calloc(npieces, sizeof *s->pieces);
    if (!s->mem || !s->pieces)
        return rfi_engine_nomem(x->e->err);
    for (size_t j = 0; j < npieces; j++) {
        struct piece *p = &s->pieces[j];
        p->keys = (uint64_t *)(void *)(s->mem + j * piece_bytes);
        p->rec = (unsigned char *)(p->keys + x->key_cap);
        if (j >= s->nb) {
            p->next = s->f.free;
            s->f.free = p;
        }
    }
    for (unsigned i = 0; i < s->nb; i++) {
        struct bucket *b = &s->b[i];
        b->cur = &s->pieces[i];
        b->cur->b = b;
        /* staggered first flushes (see the top) */
        const unsigned step = s->f.threaded ? i + 1 : s->nb;
        b->rec_limit = x->rec_cap / s->nb * step;
        b->key_limit = x->key_cap / s->nb * step;
        if (b->key_limit == 0)
            b->key_limit = 1;
    }
    return rfi_keyset_create(&x->kf, set);
}

/* Queue p for the writer thread (f->mu held). */
static void queue_piece(struct flusher *f, struct piece *p)
{
    p->next = NULL;
    if (f->tail)
        f->tail->next = p;
    else
        f->head = p;
    f->tail = p;
    pthread_cond_signal(&f->work);
}

/* The bucket's piece to its files (queued, with a writer thread: the bucket
 * then gets a written one back).  Returns 0, or 1 with the error recorded. */
static int flush_bucket(struct ext *x, struct scatter *s, struct bucket *b)
{
    struct piece *p = b->cur;
    struct flusher *f = &s->f;
    b->rec_limit = x->rec_cap;
    b->key_limit = x->key_cap;
    if (!f->threaded) {
        const struct rfi_keyfile *file = NULL;
        const int err = write_piece(p, &file);
        p->len = p->nkeys = 0;
        return err ? io_error(x, file, err) : 0;
    }
    pthread_mutex_lock(&f->mu);
    queue_piece(f, p);
    while (!f->free && !f->err)
        pthread_cond_wait(&f->freed, &f->mu);
    const int err = f->err;
    const struct rfi_keyfile *file = f->err_file;
    if (!err) {
        b->cur = f->free;
        f->free = b->cur->next;
        b->cur->b = b;
    }
    pthread_mutex_unlock(&f->mu);
    return err ? io_error(x, file, err) : 0;
}

/* Note where record b->records, the first of a block, starts. */
static int add_start(const struct ext *x, struct bucket *b)
{
    const size_t c = (size_t)(b->records / BLOCK);
    if (c == b->starts_cap) {
        uint64_t *p = rfi_grow(b->starts, &b->starts_cap, sizeof *p, 16);
        if (!p)
            return rfi_engine_nomem(x->e->err);
        b->starts = p;
    }
    b->starts[c] = b->bytes;
    return 0;
}

/* Note that the proxy about to be added to b stands for the record at sp. */
static int add_outline(const struct ext *x, struct bucket *b, const struct spilled *sp)
{
    if (b->nouts == b->outs_cap) {
        struct outline *o = rfi_grow(b->outs, &b->outs_cap, sizeof *o, 4);
        if (!o)
            return rfi_engine_nomem(x->e->err);
        b->outs = o;
    }
    b->outs[b->nouts].proxy = b->bytes;
    b->outs[b->nouts++].sp = *sp;
    return 0;
}

/* A record to its bucket: its bytes, or for an out-of-line record (out
 * not NULL) its proxy. */
static int add_record(struct ext *x, struct scatter *s, uint64_t key,
                      const unsigned char *rec, size_t len, const struct spilled *out)
{
    struct bucket *b = &s->b[(key - s->lo) >> s->shift];
    struct piece *p = b->cur;
    if (b->records % BLOCK == 0 && add_start(x, b) != 0)
        return 1;
    if (out && add_outline(x, b, out) != 0)
        return 1;
    if ((p->len + len > b->rec_limit || p->nkeys == b->key_limit) && p->nkeys > 0) {
        if (flush_bucket(x, s, b) != 0)
            return 1;
        p = b->cur;
    }
    if (p->nkeys == 0) { /* a fresh piece: where its bytes go */
        p->rec_at = b->bytes;
        p->key_at = b->records * sizeof *p->keys;
    }
    if (len > x->rec_cap) { /* longer than a buffer: straight to its place */
        const int err = rfi_write_at(b->kb->f[REC].fd, rec, len, b->bytes);
        if (err)
            return io_error(x, &b->kb->f[REC], err);
        p->rec_at += len; /* the piece's records come after it */
    } else {
        memcpy(p->rec + p->len, rec, len);
        p->len += len;
    }
    p->keys[p->nkeys++] = key;
    b->bytes += len;
    b->records++;
    return 0;
}

/* Write every bucket's last piece and close the files (the buffers go,
 * success or not). */
static int scatter_close(struct ext *x, struct scatter *s)
{
    int status = 0;
    for (unsigned i = 0; i < s->nb && status == 0; i++) {
        struct piece *p = s->b[i].cur;
        if (p->nkeys == 0)
            continue;
        if (!s->f.threaded) {
            status = flush_bucket(x, s, &s->b[i]);
            continue;
        }
        pthread_mutex_lock(&s->f.mu); /* no piece taken back */
        queue_piece(&s->f, p);
        pthread_mutex_unlock(&s->f.mu);
        s->b[i].cur = NULL;
    }
    if (status == 0)
        status = flusher_drain(x, &s->f);
    for (unsigned i = 0; i < s->nb && status == 0; i++)
        x->scattered += s->b[i].bytes;
    free_buffers(s);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Pass 2                                                                   */

/* A bucket's keys and record offsets, for rf_keyed_index_vals: the keys
 * read back from the key file, the offsets found in the mapped records from
 * the block starts noted in pass 1 (no table of offsets: 8 bytes per record
 * in all, the order).  Called from its threads on disjoint blocks. */
struct items {
    const struct bucket *b;
    const unsigned char *data;
    struct bounds bd;
    int fd;      /* the key file */
    int key_err; /* errno of a failed read, or 0 */
    int rec_bad; /* the records are not where pass 1 put them */
};

static rf_status file_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    struct items *it = ctx;
    unsigned char *p = (unsigned char *)out;
    size_t want = n * sizeof *out;
    off_t at = (off_t)(first * sizeof *out);
    while (want > 0) {
        const ssize_t got = pread(it->fd, p, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            __atomic_store_n(&it->key_err, got < 0 ? errno : EIO, __ATOMIC_RELAXED);
            return RF_EINVAL;
        }
        p += got;
        at += got;
        want -= (size_t)got;
    }
    return RF_OK;
}

/* The offsets of records first .. first+n-1, a whole block: its start, then
 * the record after each delimiter in it but the last one's (every record of
 * a bucket file ends with its delimiter). */
static rf_status record_offsets(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    struct items *it = ctx;
    const struct bucket *b = it->b;
    const uint64_t c = first / BLOCK, blocks = (b->records + BLOCK - 1) / BLOCK;
    if (first % BLOCK != 0 || c >= blocks || n == 0)
        return RF_EINVAL;
    const uint64_t at = b->starts[c];
    const uint64_t end = (c + 1 < blocks ? b->starts[c + 1] : b->bytes) - 1;
    out[0] = at;
    if (rfi_bounds_find(it->bd, it->data + at, (size_t)(end - at), at, out + 1) == n - 1)
        return RF_OK;
    __atomic_store_n(&it->rec_bad, 1, __ATOMIC_RELAXED);
    return RF_EINVAL;
}

/* A bucket that fits, ready to be written: its records mapped and their
 * offsets in the keyed order.  Made without a message (on the helper
 * thread, see below): a failure is kept for ready_report. */
struct ready {
    struct bucket *b;
    rf_records r;         /* mapped, not indexed */
    uint64_t *offs;       /* b->records record starts, in the keyed order */
    int err;              /* an errno value for file err_file, */
    const struct rfi_keyfile *err_file;
    rf_status st;         /* or a failed rf_keyed_index_vals, */
    int nomem;            /* or no memory */
};

/* Bytes of memory a bucket needs in pass 2: its records and their order
 * (and about 1.5 MiB per thread of rf_keyed_index_vals's tables). */
static uint64_t bucket_memory(const struct bucket *b)
{
    return b->bytes + 8 * b->records;
}

static void ready_free(struct ready *rd)
{
    free(rd->offs);
    rf_records_free(&rd->r);
    rd->offs = NULL;
}

static void ready_make(const struct ext *x, struct ready *rd)
{
    const struct bucket *b = rd->b;
    rf_records_init(&rd->r, x->e->delim);
    if (x->e->csv)
        rf_records_csv(&rd->r);
    const struct rfi_keyfile *rf = &b->kb->f[REC], *kf = &b->kb->f[KEY];
    int e = lseek(rf->fd, 0, SEEK_SET) < 0 ? errno : rf_records_add_fd(&rd->r, rf->fd);
    if (!e && rd->r.size != b->bytes)
        e = EIO; /* the file changed under us */
    if (e) {
        rd->err = e;
        rd->err_file = rf;
        return;
    }
    struct items it = {b, rd->r.data, {x->e->csv, x->e->delim}, kf->fd, 0, 0};
    uint64_t *order = malloc(b->records * sizeof *order);
    if (!order) {
        rd->nomem = 1;
    } else {
        const rf_status st = rf_keyed_index_vals(&x->e->order, b->records, file_keys,
                                                 record_offsets, &it, b->bytes,
                                                 x->e->threads, order);
        if (st != RF_OK && it.key_err) {
            rd->err = it.key_err;
            rd->err_file = kf;
        } else if (st != RF_OK && it.rec_bad) {
            rd->err = EIO;
            rd->err_file = rf;
        } else if (st != RF_OK) {
            rd->st = st;
        } else {
            rd->offs = order;
            order = NULL;
        }
    }
    free(order);
}

/* Returns 0, or 1 with the error of a failed ready_make recorded. */
static int ready_report(const struct ext *x, const struct ready *rd)
{
    if (rd->err)
        return io_error(x, rd->err_file, rd->err);
    if (rd->nomem)
        return rfi_engine_nomem(x->e->err);
    if (rd->st != RF_OK)
        return rfi_engine_status(x->e->err, rd->st);
    return 0;
}

/* Write a ready bucket (as much as -n leaves), then let it go. */
static int ready_emit(struct ext *x, struct ready *rd)
{
    int status = ready_report(x, rd);
    if (status == 0) {
        const size_t k = (size_t)(x->left < rd->b->records ? x->left : rd->b->records);
        status = rd->b->nouts ? rfi_spill_emit_mixed(&x->spill, &rd->r, rd->offs, k, rd->b->outs,
                                                     rd->b->nouts)
                              : rfi_engine_emit(x->e, &rd->r, rd->offs, k);
        x->left -= k;
    }
    ready_free(rd);
    drop_bucket(x, rd->b);
    x->done += rd->b->bytes;
    rfi_engine_progress(x->e, x->done);
    return status;
}

/* The next bucket is made ready on a helper thread while this one is
 * written, when both fit in the budget together: the gather and the writes
 * of one bucket overlap the mapping and ordering of the next. */
struct helper {
    const struct ext *x;
    struct ready rd;
    pthread_t tid;
    int running;
};

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    ready_make(h->x, &h->rd);
    return NULL;
}

static void helper_start(struct helper *h, const struct ext *x, struct bucket *b)
{
    memset(&h->rd, 0, sizeof h->rd);
    h->x = x;
    h->rd.b = b;
    h->running = rfi_thread_start(&h->tid, helper_main, h);
}

/* The helper's bucket, made ready (here, if the thread could not start). */
static void helper_join(struct helper *h, struct ready *rd)
{
    if (h->running)
        pthread_join(h->tid, NULL);
    else
        ready_make(h->x, &h->rd);
    h->running = 0;
    *rd = h->rd;
}

static int finish_buckets(struct ext *x, struct scatter *s);

/* Every bucket of s that is still there (after a failure, or buckets never
 * opened) goes, with its set. */
static void free_scatter(struct ext *x, struct scatter *s)
{
    for (unsigned i = 0; i < s->nb; i++) {
        drop_bucket(x, &s->b[i]);
        free(s->b[i].starts);
        free(s->b[i].outs);
        s->b[i].starts = NULL;
        s->b[i].outs = NULL;
        s->b[i].kb = NULL;
    }
    rfi_keyset_free(&x->kf, s->set);
    s->set = NULL;
    s->nb = 0;
}

/* Scatter bucket i of ps again by the next bits of its keys (keyfiles.h:
 * a child set over its keys). */
static int split_bucket(struct ext *x, struct scatter *ps, unsigned i)
{
    struct bucket *b = &ps->b[i];
    struct rfi_keybucket *kb = b->kb;
    struct scatter *s = calloc(1, sizeof *s);
    if (!s)
        return rfi_engine_nomem(x->e->err);
    if (rfi_keyset_split(&x->kf, ps->set, i, bucket_memory(b), x->e->budget) != 0) {
        free(s);
        return 1;
    }
    int status = scatter_open(x, s, kb->child);
    kb->child = NULL; /* s's now: freed with it */
    char rec_name[PATH_MAX];
    rfi_keyfile_name(&x->kf, &kb->f[REC], rec_name);
    const rf_engine_input in = rf_engine_input_fd(kb->f[REC].fd, rec_name);
    struct reader rd;
    const int key_fd = kb->f[KEY].fd;
    if (status == 0 && rfi_reader_open(&rd, &in, 1, x->e->delim, x->e->err) != 0)
        status = 1;
    else if (status == 0) {
        rd.op = RF_ENGINE_OP_TEMP_FILE;
        rfi_reader_map(&rd, rfi_reader_window(x->e->budget));
        if (x->e->csv)
            rfi_reader_csv(&rd, 0);
        if (lseek(kb->f[REC].fd, 0, SEEK_SET) < 0 || lseek(key_fd, 0, SEEK_SET) < 0)
            status = io_error(x, &kb->f[REC], errno);
        const unsigned char *data;
        size_t len;
        int got = 0;
        uint64_t keys[KEY_BATCH];
        size_t nkeys = 0, used = 0, outs = 0;
        uint64_t at = 0; /* offset of p in the bucket's record file */
        const struct bounds bd = {x->e->csv, x->e->delim};
        while (status == 0 && (got = rfi_reader_next(&rd, &data, &len)) > 0) {
            for (const unsigned char *p = data, *end = data + len; p < end && status == 0;) {
                const unsigned char *q = p + rfi_bounds_nth(bd, p, (size_t)(end - p), 0);
                if (used == nkeys) {
                    const ssize_t k = read(key_fd, keys, sizeof keys);
                    if (k <= 0 || k % (ssize_t)sizeof *keys != 0) {
                        status = io_error(x, &kb->f[KEY], k < 0 ? errno : EIO);
                        break;
                    }
                    nkeys = (size_t)k / sizeof *keys;
                    used = 0;
                }
                const struct outline *o =
                    outs < b->nouts && b->outs[outs].proxy == at ? &b->outs[outs++] : NULL;
                status = add_record(x, s, keys[used++], p, (size_t)(q - p) + 1, o ? &o->sp : NULL);
                at += (uint64_t)(q - p) + 1;
                p = q + 1;
            }
        }
        if (got < 0)
            status = 1;
        rfi_reader_close(&rd);
    }
    drop_bucket(x, b);
    x->scattered -= b->bytes; /* counted again in the sub-buckets */
    if (status == 0)
        status = scatter_close(x, s);
    else
        free_buffers(s);
    if (status == 0)
        status = finish_buckets(x, s);
    free_scatter(x, s);
    free(s);
    return status;
}

/* Whether bucket i of s is ordered in memory (else split again). */
static int bucket_fits(const struct ext *x, const struct scatter *s, unsigned i)
{
    const struct bucket *b = &s->b[i];
    return rfi_keyset_fits(s->set, i, bucket_memory(b), b->records, x->e->budget);
}

/* Pass 2 over the buckets of one scatter, in key order. */
static int finish_buckets(struct ext *x, struct scatter *s)
{
    struct helper h = {.running = 0};
    int helping = 0; /* h holds bucket i (started while i - 1 was written) */
    int status = 0;
    const unsigned nb = s->nb;
    for (unsigned i = 0; i < nb && status == 0; i++) {
        struct bucket *b = &s->b[i];
        if (!helping && (x->left == 0 || b->records == 0)) {
            drop_bucket(x, b);
            continue;
        }
        if (!helping && !bucket_fits(x, s, i)) {
            status = split_bucket(x, s, i);
            continue;
        }
        struct ready rd;
        if (helping) {
            helper_join(&h, &rd);
            helping = 0;
        } else {
            memset(&rd, 0, sizeof rd);
            rd.b = b;
            ready_make(x, &rd);
        }
        struct bucket *n = i + 1 < nb ? &s->b[i + 1] : NULL;
        if (n && x->e->threads > 1 && rd.offs && x->left > b->records && n->records > 0 &&
            bucket_fits(x, s, i + 1) &&
            bucket_memory(b) + bucket_memory(n) <= order_budget(x)) {
            helper_start(&h, x, n);
            helping = 1;
        }
        status = ready_emit(x, &rd);
    }
    if (helping) { /* stopped early (an error): its bucket goes too */
        struct ready rd;
        helper_join(&h, &rd);
        ready_free(&rd);
    }
    return status;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */

/* Pass 1 over the input: every record after the header to its bucket. */
struct walk {
    struct ext *x;
    struct scatter *s;
    uint64_t records;
};

static int scatter_one(void *ctx, uint64_t key, const unsigned char *rec, size_t len,
                       const struct spilled *out)
{
    struct walk *w = ctx;
    w->records++;
    return add_record(w->x, w->s, key, rec, len, out);
}

int rfi_engine_external(struct engine *e, struct reader *rd)
{
    struct ext x = {.e = e};
    struct scatter *s = calloc(1, sizeof *s);
    unsigned char *hbuf = NULL;
    size_t hlen = 0;
    int status = 1;
    if (!s)
        return rfi_engine_nomem(e->err);
    rfi_keyfiles_init(&x.kf, e);
    rfi_spill_init(&x.spill, &x.kf.t);
    if (rfi_keyfiles_open(&x.kf) != 0) {
        free(s);
        return 1;
    }
    struct rfi_keyset *root =
        rfi_keyset_new(0, UINT64_MAX, rfi_keyfiles_fanout(e->size_hint, e->budget), 2);
    if (!root) {
        rfi_engine_nomem(e->err);
        goto done;
    }
    rfi_engine_phase(e, RF_ENGINE_SCATTER, e->size_hint);
    struct walk w = {&x, s, 0};
    rd->giant = e->csv ? 0 : rfi_reader_giant(e->budget); /* CSV: held whole */
    rd->spill = rfi_spill_write;
    rd->spill_ctx = &x.spill;
    if (scatter_open(&x, s, root) != 0 || rfi_engine_walk(e, rd, scatter_one, &w, &hbuf, &hlen) != 0) {
        free_buffers(s);
        goto done;
    }
    if (scatter_close(&x, s) != 0)
        goto done;
    rfi_engine_phase(e, RF_ENGINE_SHUFFLE, x.scattered);
    x.left = e->count < w.records ? e->count : w.records;
    e->record_bytes = 0; /* pass 2 reports bucket bytes itself */
    if (rfi_engine_begin(e, hbuf, hlen, x.left) != 0)
        goto done;
    status = finish_buckets(&x, s);
done:
    free_scatter(&x, s);
    rfi_spill_close(&x.spill);
    const int err = rfi_keyfiles_close(&x.kf);
    if (err && status == 0)
        status = rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_TEMP_REMOVE, x.kf.t.dir, err);
    free(hbuf);
    free(s);
    return status;
}
