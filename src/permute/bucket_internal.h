/* Internal: the cache-aware bucket shuffle (Sanders 1998) split into phases
 * that src/permute/parallel.c runs on one or more threads.  Tests reach the
 * phases through rfi_shuffle_buckets, which takes the bucket count and the
 * flush path explicitly (the public functions fix both).
 *
 * The stream layout (part of the stream contract of rf_shuffle_bucket and
 * rf_shuffle_parallel; include/riffle.h states it for users):
 *   key      = 32 bytes rf_rng_fill(g): g advances by exactly 4 words;
 *   block b  = input elements [b*2^16, (b+1)*2^16); their buckets come from
 *              substream rf_rng_init(kind(g), key, stream = b): each 64-bit word
 *              gives floor(64/k) bucket numbers of k bits, most significant
 *              first (Lemire's batched draw with every bound 2^k: no word is
 *              ever rejected), element by element in input order;
 *   bucket j = its elements, in input order, are shuffled by rf_shuffle with
 *              substream rf_rng_init(kind(g), key, stream = 2^63 + j).
 * With B = 2^k = 1 the array is one bucket: rf_shuffle on substream 2^63.
 * A generator of kind RF_RNG_SOURCE is not split (it has no key): every draw
 * comes from g itself, in this order: one rf_below(g, B) per element in input
 * order, then bucket 0's rf_shuffle, bucket 1's, ... */
#ifndef RF_SHUFFLE_BUCKET_INTERNAL_H
#define RF_SHUFFLE_BUCKET_INTERNAL_H

#include "riffle.h"

#include <pthread.h>
#include <stdatomic.h>

#define RFI_BLOCK_SHIFT 16       /* elements per block: 2^16 */
#define RFI_BUCKET_ELEMS_SHIFT 17 /* target bucket: at most 2^17 elements */
#define RFI_BUCKET_MAX_SHIFT 12  /* at most 4096 buckets */
#define RFI_BUCKET_STREAM (UINT64_C(1) << 63)
#define RFI_LINE 64              /* cache line: the unit of non-temporal writes */
#ifndef RFI_STAGE
#define RFI_STAGE 128            /* staging bytes per bucket: whole lines */
#endif
/* flags for rfi_shuffle_buckets */
#define RFI_FLUSH_PORTABLE 1u /* plain stores even where SSE2 is available */

/* log2 of the bucket count for n elements (a function of n alone). */
unsigned rfi_bucket_shift(size_t n);

/* Scratch bytes for n elements of `size` bytes in nbuckets buckets: SIZE_MAX
 * when it overflows, 0 when nbuckets == 1 (no scratch is used). */
size_t rfi_bucket_scratch_size(size_t n, size_t size, size_t nbuckets);

/* The whole shuffle with nbuckets buckets (1 <= nbuckets <= 2^12; a power of
 * two unless g is an RF_RNG_SOURCE, whose draws are rf_below(g, nbuckets)),
 * `threads` workers (>= 1) and `flags`.  scratch holds rfi_bucket_scratch_size
 * bytes (NULL: mapped here).  Output is independent of threads and flags. */
rf_status rfi_shuffle_buckets(rf_rng *g, void *base, size_t n, size_t size, void *scratch,
                              size_t nbuckets, unsigned threads, unsigned flags);

/* Phase machinery shared by bucket.c (the algorithm) and
 * parallel.c (the threads). */
struct rfi_bucket_plan {
    rf_rng *g;                  /* the caller's generator (RF_RNG_SOURCE: draws) */
    uint8_t key[RF_KEY_BYTES];  /* substream key, unless g is a source */
    const uint16_t *recorded;   /* RF_RNG_SOURCE: every element's bucket */
    unsigned char *base, *data; /* the array; the scatter target in scratch */
    size_t n, size, nblocks, nchunks, nbuckets;
    unsigned k;                 /* nbuckets == 2^k (real generators) */
    unsigned flags;
    size_t *start;              /* nbuckets + 1 bucket boundaries (elements) */
    size_t *table;              /* nchunks x nbuckets: counts, then offsets */
    atomic_size_t next;         /* the next chunk (or bucket) to take */
};

/* Work is handed out in chunks of 2^4 blocks (2^20 elements) taken in any
 * order by any thread: each chunk's part of each bucket is fixed by the
 * counts, so scheduling never changes the output, and a preempted thread
 * does not hold the others up. */
#define RFI_CHUNK_BLOCKS_SHIFT 4

struct rfi_bucket_worker {
    struct rfi_bucket_plan *p;
    unsigned char *stage;       /* nbuckets staging blocks, 64-byte aligned */
    unsigned char **pos, **lo;  /* per bucket: next byte to write, part start */
    void (*phase)(struct rfi_bucket_worker *);
};

/* Bytes of one worker's area (a multiple of RFI_LINE). */
size_t rfi_bucket_worker_bytes(size_t nbuckets);
/* Lay a worker's arrays out in area (RFI_LINE-aligned). */
void rfi_bucket_worker_init(struct rfi_bucket_worker *w, struct rfi_bucket_plan *p,
                            unsigned char *area);

/* Phase 1: take chunks until none is left; count each one's buckets. */
void rfi_bucket_count(struct rfi_bucket_worker *w);
/* Between the phases (one thread): bucket boundaries, and each chunk's write
 * offset in each bucket, so that a bucket holds its elements in input order. */
void rfi_bucket_offsets(struct rfi_bucket_plan *p);
/* Phase 2: take chunks until none is left; scatter each into p->data. */
void rfi_bucket_scatter(struct rfi_bucket_worker *w);
/* Phase 3: take buckets until none is left; shuffle each where the scatter
 * left it and copy it to its final place. */
void rfi_bucket_shuffle(struct rfi_bucket_worker *w);

#endif
