/* The cache-aware bucket shuffle (P. Sanders, "Random permutation on parallel
 * and external memory machines", Information Processing Letters 66, 1998):
 * give every element an independent uniform bucket out of B, gather the
 * buckets (keeping input order inside each), then Fisher-Yates each bucket.
 * With buckets of at most 2^17 elements (1 MiB of 8-byte elements: about half
 * of a 2 MiB L2), each bucket's Fisher-Yates runs in cache; the scatter and the
 * copy back are streaming passes.
 *
 * The result is exactly uniform: for a fixed output order, each count vector
 * allows exactly one bucket assignment, and summing B^-n * prod 1/c_j! over
 * the count vectors gives 1/n! by the multinomial theorem (the proof in full:
 * docs/proofs.md).  tests/unit/test_bucket.c checks it by exact enumeration
 * of every draw sequence with B = 2, 3 and n <= 6.
 *
 * Speed: the bucket numbers are never stored -- they are drawn twice from
 * the block substreams, once to count and once to scatter, with the digits
 * of each word taken straight from the register -- and the scatter writes
 * through small per-bucket staging blocks flushed as whole cache lines with
 * non-temporal stores (bucket_flush.h).  Each bucket is then shuffled in the
 * scratch, in cache, and streamed to its final place.  The cost of each
 * phase: docs/BENCHMARKS_BIG.md. */
#include "bucket_internal.h"
#include "bucket_flush.h"
#include "rng/word_local.h"

#include <assert.h>
#include <string.h>

#define CHUNK 512 /* bucket numbers drawn at a time: 1 KiB on the stack */

unsigned rfi_bucket_shift(size_t n)
{
    unsigned k = 0;
    while (k < RFI_BUCKET_MAX_SHIFT && n > (size_t)1 << (RFI_BUCKET_ELEMS_SHIFT + k))
        k++;
    return k;
}

size_t rfi_bucket_worker_bytes(size_t nbuckets)
{
    const size_t bytes = nbuckets * (RFI_STAGE + 2 * sizeof(unsigned char *));
    return (bytes + RFI_LINE - 1) & ~(size_t)(RFI_LINE - 1); /* workers stay aligned */
}

static size_t chunk_count(size_t n)
{
    const unsigned shift = RFI_BLOCK_SHIFT + RFI_CHUNK_BLOCKS_SHIFT;
    return n == 0 ? 0 : ((n - 1) >> shift) + 1;
}

/* The n elements, then (64-byte aligned) one worker's area, the bucket
 * boundaries and the chunk table: src/permute/parallel.c lays it out. */
size_t rfi_bucket_scratch_size(size_t n, size_t size, size_t nb)
{
    if (nb <= 1)
        return 0;
    const size_t table = chunk_count(n) * nb * sizeof(size_t); /* <= n/32 + 32 KiB */
    const size_t aux = RFI_LINE - 1 + rfi_bucket_worker_bytes(nb) + (nb + 1) * sizeof(size_t);
    if (table > SIZE_MAX - aux || (size != 0 && n > (SIZE_MAX - aux - table) / size))
        return SIZE_MAX;
    return n * size + aux + table;
}

void rfi_bucket_worker_init(struct rfi_bucket_worker *w, struct rfi_bucket_plan *p,
                            unsigned char *area)
{
    const size_t nb = p->nbuckets;
    assert(((uintptr_t)area & (RFI_LINE - 1)) == 0);
    w->p = p;
    w->stage = area;
    w->pos = (unsigned char **)(void *)(area + nb * RFI_STAGE);
    w->lo = w->pos + nb;
    w->phase = NULL;
}

/* The blocks of chunk c: [*lo, *hi). */
static void chunk_blocks(const struct rfi_bucket_plan *p, size_t c, size_t *lo, size_t *hi)
{
    *lo = c << RFI_CHUNK_BLOCKS_SHIFT;
    *hi = *lo + ((size_t)1 << RFI_CHUNK_BLOCKS_SHIFT);
    if (*hi > p->nblocks)
        *hi = p->nblocks;
}

/* ------------------------------------------------------------------------ */
/* Bucket numbers of a block                                                */
/* ------------------------------------------------------------------------ */

struct ids {
    rf_rng sub;          /* the block's substream (real generators) */
    const uint16_t *rec; /* the next recorded bucket (RF_RNG_SOURCE) */
    uint64_t word;       /* unread digits, most significant first */
    unsigned left;       /* how many */
};

static void ids_begin(const struct rfi_bucket_plan *p, size_t block, struct ids *s)
{
    s->word = 0;
    s->left = 0;
    if (p->recorded != NULL) {
        s->rec = p->recorded + (block << RFI_BLOCK_SHIFT);
        return;
    }
    /* Cannot fail: the driver made one substream already (libsodium is up). */
    const rf_status st = rf_rng_init(&s->sub, p->g->kind, p->key, (uint64_t)block);
    assert(st == RF_OK);
    (void)st;
}

#if defined(__GNUC__)
#define UNROLL_ALL _Pragma("GCC unroll 64")
#else
#define UNROLL_ALL
#endif

/* k-bit digits of words from NEXT, most significant first: the numbers
 * Lemire's batched draw (include/riffle_lemire.h) gives with every bound 2^k
 * -- multiplying by 2^k takes the top k bits -- and since 2^64 is a multiple
 * of the product 2^(k*floor(64/k)), no word is ever rejected.  Whole words
 * go through FULL_WORDS with a constant K, where the digit loop unrolls into
 * independent shift-and-mask steps (the generic loop is a serial shift chain;
 * unrolling roughly halved the count pass: docs/BENCHMARKS_BIG.md). */
#define FULL_WORDS(K, NEXT)                                                     \
    case K:                                                                     \
        for (; count - i >= 64 / (K); i += 64 / (K)) {                          \
            const uint64_t v = (NEXT);                                          \
            UNROLL_ALL                                                          \
            for (unsigned d = 0; d < 64 / (K); d++)                             \
                out[i + d] = (uint16_t)((v >> (64 - (K) * (d + 1))) &           \
                                        ((1u << (K)) - 1));                     \
        }                                                                       \
        break;

#define IDS_LOOP(NEXT)                                                          \
    do {                                                                        \
        const unsigned k = p->k, sh = 64 - k;                                   \
        uint64_t w = s->word;                                                   \
        unsigned left = s->left;                                                \
        size_t i = 0;                                                           \
        for (; i < count && left > 0; i++, left--, w <<= k)                     \
            out[i] = (uint16_t)(w >> sh); /* digits left from the last call */  \
        switch (k) {                                                            \
            FULL_WORDS(1, NEXT) FULL_WORDS(2, NEXT) FULL_WORDS(3, NEXT)         \
            FULL_WORDS(4, NEXT) FULL_WORDS(5, NEXT) FULL_WORDS(6, NEXT)         \
            FULL_WORDS(7, NEXT) FULL_WORDS(8, NEXT) FULL_WORDS(9, NEXT)         \
            FULL_WORDS(10, NEXT) FULL_WORDS(11, NEXT) FULL_WORDS(12, NEXT)      \
        default:                                                                \
            break;                                                              \
        }                                                                       \
        if (i < count) { /* a word split across calls */                        \
            w = (NEXT);                                                         \
            left = 64 / k;                                                      \
            for (; i < count; i++, left--, w <<= k)                             \
                out[i] = (uint16_t)(w >> sh);                                   \
        }                                                                       \
        s->word = w;                                                            \
        s->left = left;                                                         \
    } while (0)

/* The next `count` bucket numbers of the block.  The fast generators run on a
 * local copy of their state, which the stores to out cannot alias. */
static void ids_next(const struct rfi_bucket_plan *p, struct ids *s, uint16_t *out,
                     size_t count)
{
    if (p->recorded != NULL) {
        memcpy(out, s->rec, count * sizeof *out);
        s->rec += count;
        return;
    }
    switch (s->sub.kind) {
    case RF_RNG_XOSHIRO256PP: {
        rf_xoshiro x = s->sub.u.xoshiro;
        IDS_LOOP(rf_xoshiro_next64(&x));
        s->sub.u.xoshiro = x;
        break;
    }
    case RF_RNG_PCG64: {
        rf_pcg64 q = s->sub.u.pcg;
        IDS_LOOP(rf_pcg64_next64(&q));
        s->sub.u.pcg = q;
        break;
    }
    default:
        IDS_LOOP(rf_rng_next64(&s->sub));
        break;
    }
}

static size_t block_end(const struct rfi_bucket_plan *p, size_t block)
{
    const size_t first = block << RFI_BLOCK_SHIFT;
    return p->n - first > ((size_t)1 << RFI_BLOCK_SHIFT) ? first + ((size_t)1 << RFI_BLOCK_SHIFT)
                                                         : p->n;
}

/* ------------------------------------------------------------------------ */
/* Phase 1: count                                                           */
/* ------------------------------------------------------------------------ */

/* With few buckets the same counter is incremented back to back, each
 * increment waiting for the store of the one before; four interleaved tables
 * (summed once per block) break that chain. */
#define FEW_BUCKETS 64

static void count_few(const struct rfi_bucket_plan *p, size_t blo, size_t bhi, size_t *count)
{
    uint32_t h[4][FEW_BUCKETS];
    uint16_t ids[CHUNK];
    for (size_t b = blo; b < bhi; b++) {
        struct ids s;
        const size_t end = block_end(p, b);
        memset(h, 0, sizeof h); /* a block has 2^16 elements: no overflow */
        ids_begin(p, b, &s);
        for (size_t i = b << RFI_BLOCK_SHIFT; i < end; i += CHUNK) {
            const size_t m = end - i < CHUNK ? end - i : CHUNK;
            size_t t = 0;
            ids_next(p, &s, ids, m);
            for (; t + 4 <= m; t += 4) {
                h[0][ids[t]]++;
                h[1][ids[t + 1]]++;
                h[2][ids[t + 2]]++;
                h[3][ids[t + 3]]++;
            }
            for (; t < m; t++)
                h[0][ids[t]]++;
        }
        for (size_t j = 0; j < p->nbuckets; j++)
            count[j] += (size_t)h[0][j] + h[1][j] + h[2][j] + h[3][j];
    }
}

static void count_many(const struct rfi_bucket_plan *p, size_t blo, size_t bhi, size_t *count)
{
    uint16_t ids[CHUNK];
    for (size_t b = blo; b < bhi; b++) {
        struct ids s;
        const size_t end = block_end(p, b);
        ids_begin(p, b, &s);
        for (size_t i = b << RFI_BLOCK_SHIFT; i < end; i += CHUNK) {
            const size_t m = end - i < CHUNK ? end - i : CHUNK;
            ids_next(p, &s, ids, m);
            for (size_t t = 0; t < m; t++)
                count[ids[t]]++;
        }
    }
}

/* Real generators, many buckets: two blocks at a time, each word's digits
 * counted straight from the register.  The two substreams are independent
 * dependency chains, so the generator's latency overlaps (one chain waits
 * ~4 cycles per word), and no bucket number goes through memory.  A block's
 * last word is partly used (2^16 is rarely a multiple of 64/k): its unused
 * digits are dropped, as ids_next does. */
#define COUNT_DIGITS(K, V)                                                      \
    do {                                                                        \
        UNROLL_ALL                                                              \
        for (unsigned d = 0; d < 64 / (K); d++)                                 \
            h[((V) >> (64 - (K) * (d + 1))) & ((1u << (K)) - 1)]++;              \
    } while (0)

#define COUNT_PAIR(K, NEXT0, NEXT1)                                             \
    case K: {                                                                   \
        size_t i = 0;                                                           \
        for (; i < both; i++) {                                                 \
            const uint64_t v0 = (NEXT0), v1 = (NEXT1);                          \
            COUNT_DIGITS(K, v0);                                                \
            COUNT_DIGITS(K, v1);                                                \
        }                                                                       \
        for (; i < words0; i++) {                                               \
            const uint64_t v0 = (NEXT0);                                        \
            COUNT_DIGITS(K, v0);                                                \
        }                                                                       \
        break;                                                                  \
    }

#define COUNT_SWITCH(NEXT0, NEXT1)                                              \
    switch (k) { /* more than FEW_BUCKETS = 2^6 buckets */                     \
        COUNT_PAIR(7, NEXT0, NEXT1) COUNT_PAIR(8, NEXT0, NEXT1)                 \
        COUNT_PAIR(9, NEXT0, NEXT1) COUNT_PAIR(10, NEXT0, NEXT1)                \
        COUNT_PAIR(11, NEXT0, NEXT1) COUNT_PAIR(12, NEXT0, NEXT1)               \
    default:                                                                    \
        assert(0);                                                              \
        break;                                                                  \
    }

/* The last `rest` (< 64/k) digits of a block: one more word. */
static void count_rest(uint32_t *h, unsigned k, uint64_t v, size_t rest)
{
    for (size_t d = 0; d < rest; d++, v <<= k)
        h[v >> (64 - k)]++;
}

/* Blocks b0 (whole) and b1 (any length; none if len1 == 0). */
static void count_two(const struct rfi_bucket_plan *p, size_t b0, size_t b1, size_t len0,
                      size_t len1, uint32_t *h)
{
    const unsigned k = p->k;
    const size_t per = 64 / k, words0 = len0 / per, both = len1 / per;
    rf_rng s0, s1;
    /* cannot fail: the driver made one substream already */
    const rf_status st0 = rf_rng_init(&s0, p->g->kind, p->key, (uint64_t)b0);
    const rf_status st1 = len1 > 0 ? rf_rng_init(&s1, p->g->kind, p->key, (uint64_t)b1) : RF_OK;
    assert(st0 == RF_OK && st1 == RF_OK);
    (void)st0;
    (void)st1;
    switch (p->g->kind) {
    case RF_RNG_XOSHIRO256PP: {
        rf_xoshiro x0 = s0.u.xoshiro, x1 = len1 > 0 ? s1.u.xoshiro : x0;
        COUNT_SWITCH(rf_xoshiro_next64(&x0), rf_xoshiro_next64(&x1));
        s0.u.xoshiro = x0;
        s1.u.xoshiro = x1;
        break;
    }
    case RF_RNG_PCG64: {
        rf_pcg64 q0 = s0.u.pcg, q1 = len1 > 0 ? s1.u.pcg : q0;
        COUNT_SWITCH(rf_pcg64_next64(&q0), rf_pcg64_next64(&q1));
        s0.u.pcg = q0;
        s1.u.pcg = q1;
        break;
    }
    default:
        COUNT_SWITCH(rf_rng_next64(&s0), rf_rng_next64(&s1));
        break;
    }
    if (len0 % per)
        count_rest(h, k, rf_rng_next64(&s0), len0 % per);
    if (len1 % per)
        count_rest(h, k, rf_rng_next64(&s1), len1 % per);
}

static void count_pairs(const struct rfi_bucket_plan *p, size_t blo, size_t bhi, size_t *count)
{
    uint32_t h[(size_t)1 << RFI_BUCKET_MAX_SHIFT]; /* a chunk has 2^20 elements */
    memset(h, 0, p->nbuckets * sizeof *h);
    for (size_t b = blo; b < bhi; b += 2) {
        const size_t len0 = block_end(p, b) - (b << RFI_BLOCK_SHIFT);
        const size_t len1 = b + 1 < bhi ? block_end(p, b + 1) - ((b + 1) << RFI_BLOCK_SHIFT) : 0;
        count_two(p, b, b + 1, len0, len1, h);
    }
    for (size_t j = 0; j < p->nbuckets; j++)
        count[j] = h[j];
}

void rfi_bucket_count(struct rfi_bucket_worker *w)
{
    struct rfi_bucket_plan *p = w->p;
    for (;;) {
        const size_t c = atomic_fetch_add(&p->next, 1);
        size_t blo, bhi;
        if (c >= p->nchunks)
            return;
        size_t *count = p->table + c * p->nbuckets;
        chunk_blocks(p, c, &blo, &bhi);
        memset(count, 0, p->nbuckets * sizeof *count);
        if (p->nbuckets <= FEW_BUCKETS)
            count_few(p, blo, bhi, count);
        else if (p->recorded == NULL)
            count_pairs(p, blo, bhi, count);
        else
            count_many(p, blo, bhi, count);
    }
}

/* Bucket j holds chunk 0's elements of bucket j, then chunk 1's, ...: input
 * order, whichever thread scatters which chunk. */
void rfi_bucket_offsets(struct rfi_bucket_plan *p)
{
    size_t at = 0;
    for (size_t j = 0; j < p->nbuckets; j++) {
        p->start[j] = at;
        for (size_t c = 0; c < p->nchunks; c++) {
            size_t *cell = p->table + c * p->nbuckets + j;
            const size_t count = *cell;
            *cell = at;
            at += count;
        }
    }
    p->start[p->nbuckets] = at;
    assert(at == p->n);
}

/* ------------------------------------------------------------------------ */
/* Phase 2: scatter through staging lines                                   */
/* ------------------------------------------------------------------------ */

/* The staging block of bucket j (RFI_STAGE bytes, two cache lines) mirrors
 * the RFI_STAGE-aligned stretch of scratch that holds pos[j]: byte o of the
 * block stands for the scratch byte whose address is o mod RFI_STAGE.  The
 * block is written out when it fills.  Only lines wholly inside this chunk's
 * part of the bucket are written whole (non-temporal where available); the
 * partial lines at either end share their cache line with a neighbouring
 * bucket or chunk and are written byte-exactly with memcpy.  RFI_STAGE = 128
 * rather than 64 halves the unpredictable "block full" branches; 128 was the
 * fastest of 64, 128 and 256 for the scatter at n = 10^8
 * (docs/BENCHMARKS_BIG.md). */
static inline void line_full(const unsigned char *line, unsigned char *end, size_t have,
                             int stream)
{
    if (have >= RFI_LINE) {
        if (stream)
            rfi_flush_line_stream(end - RFI_LINE, line);
        else
            rfi_flush_line_plain(end - RFI_LINE, line);
    } else {
        memcpy(end - have, line + RFI_LINE - have, have);
    }
}

/* A bucket's staging block (RFI_STAGE bytes, whole lines) is full: write its
 * lines; the last ends at `end`, and this part of the bucket starts at lo
 * (lines wholly before lo are not ours: skipped). */
static inline void stage_full(const unsigned char *blk, unsigned char *end,
                              unsigned char *lo, int stream)
{
    const size_t have = (size_t)(end - lo);
    for (size_t l = 0; l < RFI_STAGE; l += RFI_LINE) {
        const size_t after = RFI_STAGE - RFI_LINE - l; /* bytes from line end to end */
        if (have > after)
            line_full(blk + l, end - after, have - after, stream);
    }
}

/* Append `size` bytes at e to bucket j, any size, any alignment. */
static void put_bytes(unsigned char **pos_, unsigned char *const *lo, unsigned char *stage,
                      size_t j, const unsigned char *e, size_t size, int stream)
{
    unsigned char *pos = pos_[j], *blk = stage + j * RFI_STAGE;
    while (size > 0) {
        const size_t o = (uintptr_t)pos & (RFI_STAGE - 1);
        const size_t c = RFI_STAGE - o < size ? RFI_STAGE - o : size;
        memcpy(blk + o, e, c);
        pos += c;
        e += c;
        size -= c;
        if (o + c == RFI_STAGE)
            stage_full(blk, pos, lo[j], stream);
    }
    pos_[j] = pos;
}

/* Fixed width W: one W-byte move while the element fits in the block.  The
 * worker's arrays are held in locals: the byte stores into the staging lines
 * could otherwise alias the worker struct and force reloads. */
#define SCATTER_WIDTH(NAME, W, STREAM)                                          \
    static void NAME(struct rfi_bucket_worker *w, size_t blo, size_t bhi)       \
    {                                                                           \
        const struct rfi_bucket_plan *p = w->p;                                 \
        unsigned char **const pos = w->pos, *const *const lo = w->lo;           \
        unsigned char *const stage = w->stage;                                  \
        uint16_t ids[CHUNK];                                                    \
        for (size_t b = blo; b < bhi; b++) {                                    \
            struct ids s;                                                       \
            const size_t end = block_end(p, b);                                 \
            ids_begin(p, b, &s);                                                \
            for (size_t i = b << RFI_BLOCK_SHIFT; i < end; i += CHUNK) {        \
                const size_t m = end - i < CHUNK ? end - i : CHUNK;             \
                const unsigned char *e = p->base + i * (W);                     \
                ids_next(p, &s, ids, m);                                        \
                for (size_t t = 0; t < m; t++, e += (W)) {                      \
                    const size_t j = ids[t];                                    \
                    unsigned char *q = pos[j];                                  \
                    const size_t o = (uintptr_t)q & (RFI_STAGE - 1);            \
                    if (o + (W) > RFI_STAGE) {                                  \
                        put_bytes(pos, lo, stage, j, e, (W), (STREAM));         \
                        continue;                                               \
                    }                                                           \
                    memcpy(stage + j * RFI_STAGE + o, e, (W));                  \
                    pos[j] = q + (W);                                           \
                    if (o + (W) == RFI_STAGE)                                   \
                        stage_full(stage + j * RFI_STAGE, q + (W), lo[j], (STREAM)); \
                }                                                               \
            }                                                                   \
        }                                                                       \
    }
SCATTER_WIDTH(scatter_w4_plain, 4, 0)
SCATTER_WIDTH(scatter_w8_plain, 8, 0)
SCATTER_WIDTH(scatter_w16_plain, 16, 0)
SCATTER_WIDTH(scatter_w4_stream, 4, 1)
SCATTER_WIDTH(scatter_w8_stream, 8, 1)
SCATTER_WIDTH(scatter_w16_stream, 16, 1)

/* The fast generators with at least 2^FUSED_K_MIN buckets (n > 2^24): the
 * digits of each word are taken straight from the register, one unrolled
 * step per digit with k a compile-time constant, instead of going through
 * an array of bucket numbers (ids_next) first.  The generator's dependency
 * chain then overlaps the stores, which made the scatter faster at n = 10^8
 * (B = 1024; docs/BENCHMARKS_BIG.md).  Same digits in the same order as
 * ids_next.  (With k a run-time value the per-word digit loop cost the gain
 * back.) */
#define FUSED_K_MIN 8 /* fewer buckets: ids_next (less code, a little slower) */

#if defined(__GNUC__)
#define RARELY(x) __builtin_expect(!!(x), 0)
#define COLD __attribute__((noinline, cold))
#else
#define RARELY(x) (x)
#define COLD
#endif

/* Out of line: the unrolled loops stay small. */
static COLD void full_cold(unsigned char *stage, size_t j, unsigned char *end,
                           unsigned char *lo, int stream)
{
    stage_full(stage + j * RFI_STAGE, end, lo, stream);
}

static COLD void put_cold(unsigned char **pos, unsigned char *const *lo, unsigned char *stage,
                          size_t j, const unsigned char *e, size_t size, int stream)
{
    put_bytes(pos, lo, stage, j, e, size, stream);
}

#define PUT_ONE(W, J, E)                                                        \
    do {                                                                        \
        const size_t j_ = (J);                                                  \
        unsigned char *const q_ = pos[j_];                                      \
        const size_t o_ = (uintptr_t)q_ & (RFI_STAGE - 1);                      \
        if (RARELY(o_ + (W) > RFI_STAGE)) {                                     \
            put_cold(pos, lo, stage, j_, (E), (W), stream);                     \
        } else {                                                                \
            memcpy(stage + j_ * RFI_STAGE + o_, (E), (W));                      \
            pos[j_] = q_ + (W);                                                 \
            if (RARELY(o_ + (W) == RFI_STAGE))                                  \
                full_cold(stage, j_, q_ + (W), lo[j_], stream);                 \
        }                                                                       \
    } while (0)

#define FUSED_WORDS(W, K, NEXT)                                                 \
    case K:                                                                     \
        for (; words > 0; words--, e += (64 / (K)) * (W)) {                     \
            const uint64_t v = (NEXT);                                          \
            UNROLL_ALL                                                          \
            for (unsigned d = 0; d < 64 / (K); d++)                             \
                PUT_ONE(W, (v >> (64 - (K) * (d + 1))) & ((1u << (K)) - 1),     \
                        e + d * (W));                                           \
        }                                                                       \
        break;

#define SCATTER_FUSED(NAME, W, STATE_T, INIT, NEXT)                             \
    static void NAME(struct rfi_bucket_worker *w, size_t blo, size_t bhi, int stream) \
    {                                                                           \
        const struct rfi_bucket_plan *p = w->p;                                 \
        unsigned char **const pos = w->pos, *const *const lo = w->lo;           \
        unsigned char *const stage = w->stage;                                  \
        const unsigned k = p->k;                                                \
        for (size_t b = blo; b < bhi; b++) {                                    \
            rf_rng sub;                                                         \
            const rf_status st = rf_rng_init(&sub, p->g->kind, p->key, (uint64_t)b); \
            assert(st == RF_OK);                                                \
            (void)st;                                                           \
            STATE_T x = INIT;                                                   \
            const size_t first = b << RFI_BLOCK_SHIFT, len = block_end(p, b) - first; \
            const unsigned char *e = p->base + first * (W);                     \
            const unsigned char *const end = e + len * (W);                     \
            size_t words = len / (64 / k);                                      \
            switch (k) {                                                        \
                FUSED_WORDS(W, 8, NEXT(&x)) FUSED_WORDS(W, 9, NEXT(&x))         \
                FUSED_WORDS(W, 10, NEXT(&x)) FUSED_WORDS(W, 11, NEXT(&x))       \
                FUSED_WORDS(W, 12, NEXT(&x))                                    \
            default:                                                            \
                assert(0);                                                      \
                break;                                                          \
            }                                                                   \
            if (e < end) { /* the block's last word, partly used */             \
                uint64_t v = NEXT(&x);                                          \
                for (; e < end; e += (W), v <<= k)                              \
                    PUT_ONE(W, (size_t)(v >> (64 - k)), e);                     \
            }                                                                   \
        }                                                                       \
    }
/* ChaCha20 keeps only its read position local (src/rng/word_local.h). */
#define CC_INIT {&sub.u.chacha, sub.u.chacha.avail}
SCATTER_FUSED(fused_w4_xoshiro, 4, rf_xoshiro, sub.u.xoshiro, rf_xoshiro_next64)
SCATTER_FUSED(fused_w8_xoshiro, 8, rf_xoshiro, sub.u.xoshiro, rf_xoshiro_next64)
SCATTER_FUSED(fused_w16_xoshiro, 16, rf_xoshiro, sub.u.xoshiro, rf_xoshiro_next64)
SCATTER_FUSED(fused_w4_pcg, 4, rf_pcg64, sub.u.pcg, rf_pcg64_next64)
SCATTER_FUSED(fused_w8_pcg, 8, rf_pcg64, sub.u.pcg, rf_pcg64_next64)
SCATTER_FUSED(fused_w16_pcg, 16, rf_pcg64, sub.u.pcg, rf_pcg64_next64)
SCATTER_FUSED(fused_w4_chacha, 4, struct cc_local, CC_INIT, cc_next)
SCATTER_FUSED(fused_w8_chacha, 8, struct cc_local, CC_INIT, cc_next)
SCATTER_FUSED(fused_w16_chacha, 16, struct cc_local, CC_INIT, cc_next)

typedef void (*fused_fn)(struct rfi_bucket_worker *, size_t, size_t, int);

/* 1 if a fused loop took these blocks. */
static int scatter_fused(struct rfi_bucket_worker *w, size_t blo, size_t bhi, int stream)
{
    static const fused_fn fns[3][3] = {
        {fused_w4_xoshiro, fused_w8_xoshiro, fused_w16_xoshiro},
        {fused_w4_pcg, fused_w8_pcg, fused_w16_pcg},
        {fused_w4_chacha, fused_w8_chacha, fused_w16_chacha},
    };
    const struct rfi_bucket_plan *p = w->p;
    size_t kind, width;
    if (p->recorded != NULL || p->k < FUSED_K_MIN || p->k > RFI_BUCKET_MAX_SHIFT)
        return 0;
    switch (p->g->kind) {
    case RF_RNG_XOSHIRO256PP:
        kind = 0;
        break;
    case RF_RNG_PCG64:
        kind = 1;
        break;
    case RF_RNG_CHACHA20:
        kind = 2;
        break;
    default:
        return 0;
    }
    switch (p->size) {
    case 4:
        width = 0;
        break;
    case 8:
        width = 1;
        break;
    case 16:
        width = 2;
        break;
    default:
        return 0;
    }
    fns[kind][width](w, blo, bhi, stream);
    return 1;
}

static void scatter_any(struct rfi_bucket_worker *w, size_t blo, size_t bhi, int stream)
{
    const struct rfi_bucket_plan *p = w->p;
    uint16_t ids[CHUNK];
    for (size_t b = blo; b < bhi; b++) {
        struct ids s;
        const size_t end = block_end(p, b);
        ids_begin(p, b, &s);
        for (size_t i = b << RFI_BLOCK_SHIFT; i < end; i += CHUNK) {
            const size_t m = end - i < CHUNK ? end - i : CHUNK;
            ids_next(p, &s, ids, m);
            for (size_t t = 0; t < m; t++)
                put_bytes(w->pos, w->lo, w->stage, ids[t], p->base + (i + t) * p->size,
                          p->size, stream);
        }
    }
}

/* The last, partial line of each bucket part: only its own bytes. */
static void flush_tails(struct rfi_bucket_worker *w)
{
    for (size_t j = 0; j < w->p->nbuckets; j++) {
        unsigned char *pos = w->pos[j];
        const size_t o = (uintptr_t)pos & (RFI_STAGE - 1);
        const size_t have = (size_t)(pos - w->lo[j]);
        const size_t d = o < have ? o : have;
        memcpy(pos - d, w->stage + j * RFI_STAGE + o - d, d);
    }
}

static void scatter_blocks(struct rfi_bucket_worker *w, size_t blo, size_t bhi)
{
    const int stream = RFI_HAVE_STREAM && !(w->p->flags & RFI_FLUSH_PORTABLE);
    if (scatter_fused(w, blo, bhi, stream))
        return;
    switch (w->p->size) {
    case 4:
        (stream ? scatter_w4_stream : scatter_w4_plain)(w, blo, bhi);
        break;
    case 8:
        (stream ? scatter_w8_stream : scatter_w8_plain)(w, blo, bhi);
        break;
    case 16:
        (stream ? scatter_w16_stream : scatter_w16_plain)(w, blo, bhi);
        break;
    default:
        scatter_any(w, blo, bhi, stream);
    }
}

void rfi_bucket_scatter(struct rfi_bucket_worker *w)
{
    struct rfi_bucket_plan *p = w->p;
    for (;;) {
        const size_t c = atomic_fetch_add(&p->next, 1);
        size_t blo, bhi;
        if (c >= p->nchunks)
            break;
        const size_t *off = p->table + c * p->nbuckets;
        for (size_t j = 0; j < p->nbuckets; j++)
            w->pos[j] = w->lo[j] = p->data + off[j] * p->size;
        chunk_blocks(p, c, &blo, &bhi);
        scatter_blocks(w, blo, bhi);
        flush_tails(w);
    }
    rfi_flush_fence(); /* the non-temporal stores are visible before we finish */
}

/* ------------------------------------------------------------------------ */
/* Phase 3: shuffle each bucket                                             */
/* ------------------------------------------------------------------------ */

/* Each bucket is shuffled where the scatter left it, in the scratch, and then
 * copied to its final place with non-temporal stores: the array is written
 * once, without first reading its lines from memory (a read-for-ownership)
 * only to overwrite them, as copying back first and shuffling in the array
 * did.  The scatter's non-temporal stores left the scratch in memory, not in
 * cache: before a bucket is shuffled, its lines are loaded once in sequence
 * (which the hardware prefetcher streams well; random first touches during
 * the Fisher-Yates would each wait for memory).  A worker claims its next
 * bucket before copying out the current one and loads the next bucket's
 * lines in the same loop, so both streams overlap; this beat
 * copy-back-then-shuffle at n = 10^8 (docs/BENCHMARKS_BIG.md).  (Software
 * prefetches of the next bucket spread over the Fisher-Yates were tried:
 * slower -- they seem to compete with its own L2 accesses for the L1 miss
 * buffers.) */

/* Touch every line of [q, end): one load per line, in order. */
static void load_lines(const unsigned char *q, const unsigned char *end)
{
    uint64_t acc = 0;
    for (; q < end; q += RFI_LINE)
        acc += *(const volatile unsigned char *)q;
    (void)acc;
}

static const unsigned char *bucket_data(const struct rfi_bucket_plan *p, size_t j)
{
    return p->data + p->start[j] * p->size;
}

/* Copy n bytes from src to dst (dst's partial end lines byte-exactly: they
 * may be a neighbour's), and load the lines of [next, next_end) on the way. */
static void copy_out(unsigned char *dst, const unsigned char *src, size_t n,
                     const unsigned char *next, const unsigned char *next_end, int stream)
{
    enum { PIECE = 4096 };
    while (n > 0) {
        /* pieces end on line boundaries of dst: only the bucket's first and
         * last lines can be partial */
        const size_t to_line = PIECE - ((uintptr_t)dst & (RFI_LINE - 1));
        const size_t c = n < to_line ? n : to_line;
        if (next != NULL) {
            const unsigned char *stop = (size_t)(next_end - next) > c ? next + c : next_end;
            load_lines(next, stop);
            next = stop;
        }
        if (stream)
            rfi_copy_stream(dst, src, c);
        else
            memcpy(dst, src, c);
        dst += c;
        src += c;
        n -= c;
    }
    if (next != NULL)
        load_lines(next, next_end); /* a next bucket larger than this one */
}

/* Shuffle bucket j in the scratch and copy it out; bucket `next` (if any)
 * is loaded meanwhile. */
static void shuffle_one(struct rfi_bucket_plan *p, size_t j, size_t next)
{
    const size_t a = p->start[j], c = p->start[j + 1] - a;
    unsigned char *src = p->data + a * p->size;
    const unsigned char *nlo = NULL, *nhi = NULL;
    if (p->g->kind == RF_RNG_SOURCE) {
        rf_shuffle(p->g, src, c, p->size); /* one worker: buckets in order */
    } else {
        rf_rng sub;
        const rf_status st = rf_rng_init(&sub, p->g->kind, p->key, RFI_BUCKET_STREAM | j);
        assert(st == RF_OK);
        (void)st;
        rf_shuffle(&sub, src, c, p->size);
    }
    if (next < p->nbuckets) {
        nlo = bucket_data(p, next);
        nhi = bucket_data(p, next + 1);
    }
    copy_out(p->base + a * p->size, src, c * p->size, nlo, nhi,
             RFI_HAVE_STREAM && !(p->flags & RFI_FLUSH_PORTABLE));
}

/* Buckets are claimed in increasing order by any worker; with one worker
 * (the only case for an RF_RNG_SOURCE generator) in bucket order. */
void rfi_bucket_shuffle(struct rfi_bucket_worker *w)
{
    struct rfi_bucket_plan *p = w->p;
    size_t j = atomic_fetch_add(&p->next, 1);
    if (j < p->nbuckets)
        load_lines(bucket_data(p, j), bucket_data(p, j + 1));
    while (j < p->nbuckets) {
        const size_t next = atomic_fetch_add(&p->next, 1);
        shuffle_one(p, j, next);
        j = next;
    }
    rfi_flush_fence(); /* the non-temporal stores are visible before we finish */
}
