/* Running the bucket shuffle (src/permute/bucket.c) on one or more threads,
 * and the public entry points rf_shuffle_bucket / rf_shuffle_parallel.
 *
 * The output never depends on the number of threads: every random number
 * comes from a substream named by a block or a bucket (the layout is in
 * src/permute/bucket_internal.h); the counts fix where each chunk of input
 * writes in each bucket, so that a bucket lists its elements in input order
 * whichever thread scatters which chunk; and a bucket's shuffle is a function
 * of its contents and its own substream, whichever thread runs it.
 * So a thread that cannot be started costs time, never correctness: its share
 * is run by the calling thread. */
#include "common/huge.h"
#include "common/thread.h"
#include "bucket_internal.h"

#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Memory the library owns                                                  */
/* ------------------------------------------------------------------------ */

static unsigned char *align_line(unsigned char *p)
{
    const uintptr_t mis = (uintptr_t)p & (RFI_LINE - 1);
    return mis ? p + (RFI_LINE - mis) : p;
}

/* ------------------------------------------------------------------------ */
/* Phases on threads                                                        */
/* ------------------------------------------------------------------------ */

static void *phase_main(void *arg)
{
    struct rfi_bucket_worker *w = arg;
    w->phase(w);
    return NULL;
}

/* Run fn for every worker: workers 1.. on their own threads, worker 0 here;
 * a worker whose thread could not start runs here afterwards. */
static void run_phase(struct rfi_bucket_worker *ws, unsigned nworkers,
                      void (*fn)(struct rfi_bucket_worker *))
{
    pthread_t tid[RFI_THREADS_MAX];
    int started[RFI_THREADS_MAX];
    for (unsigned w = 1; w < nworkers; w++) {
        ws[w].phase = fn;
        started[w] = rfi_thread_start(&tid[w], phase_main, &ws[w]);
    }
    fn(&ws[0]);
    for (unsigned w = 1; w < nworkers; w++) {
        if (started[w])
            pthread_join(tid[w], NULL);
        else
            fn(&ws[w]);
    }
}

/* ------------------------------------------------------------------------ */
/* The driver                                                               */
/* ------------------------------------------------------------------------ */

static unsigned shift_of(size_t nbuckets)
{
    unsigned k = 0;
    while (((size_t)1 << k) < nbuckets)
        k++;
    return k;
}

/* RF_RNG_SOURCE: the bucket of every element, drawn from g in input order
 * (the source cannot replay its draws, so they are kept for the scatter). */
static void record_buckets(rf_rng *g, uint16_t *rec, size_t n, size_t nbuckets)
{
    for (size_t i = 0; i < n; i++)
        rec[i] = (uint16_t)rf_below(g, nbuckets);
}

/* Workers 1.. get their areas from one allocation (NULL: run on one). */
static unsigned char *extra_areas(size_t area, unsigned nworkers)
{
    if (nworkers < 2)
        return NULL;
    return aligned_alloc(RFI_LINE, area * (nworkers - 1));
}

static unsigned worker_count(unsigned threads, const struct rfi_bucket_plan *p)
{
    const size_t most = p->nchunks > p->nbuckets ? p->nchunks : p->nbuckets;
    if (threads > RFI_THREADS_MAX)
        threads = RFI_THREADS_MAX;
    return threads > most ? (unsigned)most : threads;
}

static void run_phases(struct rfi_bucket_plan *p, struct rfi_bucket_worker *ws,
                       unsigned nworkers)
{
    atomic_store(&p->next, 0);
    run_phase(ws, nworkers, rfi_bucket_count);
    rfi_bucket_offsets(p);
    atomic_store(&p->next, 0);
    run_phase(ws, nworkers, rfi_bucket_scatter);
    atomic_store(&p->next, 0);
    run_phase(ws, nworkers, rfi_bucket_shuffle);
}

/* Scratch layout: the n elements, then (64-byte aligned) worker 0's area, the
 * bucket boundaries and the chunk table.  Workers 1.. live in extra_areas. */
static rf_status run_plan(struct rfi_bucket_plan *p, unsigned char *scratch, unsigned threads)
{
    const size_t area = rfi_bucket_worker_bytes(p->nbuckets); /* a multiple of 64 */
    struct rfi_bucket_worker ws[RFI_THREADS_MAX];
    unsigned nworkers = worker_count(threads, p);
    unsigned char *aux = align_line(scratch + p->n * p->size);
    unsigned char *more = extra_areas(area, nworkers);
    if (more == NULL)
        nworkers = 1;
    p->data = scratch;
    p->start = (size_t *)(void *)(aux + area);
    p->table = p->start + p->nbuckets + 1;
    rfi_bucket_worker_init(&ws[0], p, aux);
    for (unsigned w = 1; w < nworkers; w++)
        rfi_bucket_worker_init(&ws[w], p, more + (size_t)(w - 1) * area);
    run_phases(p, ws, nworkers);
    free(more);
    return RF_OK;
}

static void plan_init(struct rfi_bucket_plan *p, rf_rng *g, void *base, size_t n, size_t size,
                      size_t nbuckets, unsigned flags)
{
    memset(p, 0, sizeof *p);
    p->g = g;
    p->base = base;
    p->n = n;
    p->size = size;
    p->nbuckets = nbuckets;
    p->k = shift_of(nbuckets);
    p->flags = flags;
    p->nblocks = ((n - 1) >> RFI_BLOCK_SHIFT) + 1;
    p->nchunks = ((p->nblocks - 1) >> RFI_CHUNK_BLOCKS_SHIFT) + 1;
}

/* Memory first (so that RF_ENOMEM leaves g and base untouched), then the key
 * and a probe substream (the one-bucket case needs nothing else), then the
 * phases. */
rf_status rfi_shuffle_buckets(rf_rng *g, void *base, size_t n, size_t size, void *scratch,
                              size_t nbuckets, unsigned threads, unsigned flags)
{
    struct rfi_bucket_plan p;
    struct rfi_huge map = {NULL, 0};
    uint16_t *rec = NULL;
    rf_status st = RF_OK;
    const int source = g->kind == RF_RNG_SOURCE;
    assert(nbuckets >= 1 && nbuckets <= ((size_t)1 << RFI_BUCKET_MAX_SHIFT));
    assert(source || (nbuckets & (nbuckets - 1)) == 0);
    if (n < 2 || size == 0)
        return RF_OK;
    const size_t need = rfi_bucket_scratch_size(n, size, nbuckets);
    if (need == SIZE_MAX)
        return RF_ERANGE;
    plan_init(&p, g, base, n, size, nbuckets, flags);
    /* scratch of our own in huge pages: the scatter's thousands of
     * concurrent write streams and the in-bucket random accesses then need
     * few TLB entries, and first-touch faults are 512 times fewer */
    if (nbuckets > 1 && scratch == NULL && (scratch = rfi_huge_map(&map, need)) == NULL)
        return RF_ENOMEM;
    if (nbuckets > 1 && source && (rec = malloc(n * sizeof *rec)) == NULL) {
        st = RF_ENOMEM;
        goto done;
    }
    if (source) {
        if (nbuckets == 1) {
            rf_shuffle(g, base, n, size);
            goto done;
        }
        record_buckets(g, rec, n, nbuckets);
        p.recorded = rec;
        threads = 1; /* g's draws must come in the documented order */
    } else {
        rf_rng probe;
        rf_rng_fill(g, p.key, sizeof p.key);
        st = rf_rng_init(&probe, g->kind, p.key, RFI_BUCKET_STREAM);
        if (st != RF_OK)
            goto done;
        if (nbuckets == 1) {
            rf_shuffle(&probe, base, n, size); /* bucket 0 is the whole array */
            goto done;
        }
    }
    st = run_plan(&p, scratch, threads ? threads : 1);
done:
    free(rec);
    rfi_huge_unmap(&map);
    memset(p.key, 0, sizeof p.key);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Public                                                                   */
/* ------------------------------------------------------------------------ */

static size_t public_buckets(size_t n)
{
    return (size_t)1 << rfi_bucket_shift(n);
}

size_t rf_shuffle_bucket_scratch_size(size_t n, size_t size)
{
    if (n < 2 || size == 0)
        return 0;
    return rfi_bucket_scratch_size(n, size, public_buckets(n));
}

rf_status rf_shuffle_bucket(rf_rng *g, void *base, size_t n, size_t size, void *scratch)
{
    return rfi_shuffle_buckets(g, base, n, size, scratch, public_buckets(n), 1, 0);
}

rf_status rf_shuffle_parallel(rf_rng *g, void *base, size_t n, size_t size, unsigned threads,
                              void *scratch)
{
    if (threads == 0)
        threads = rfi_online_cpus();
    return rfi_shuffle_buckets(g, base, n, size, scratch, public_buckets(n), threads, 0);
}
