/* memory.c -- the in-memory engine (engine_internal.h).
 *
 * The records are one buffer (a mapped file, or bytes read).  Nothing is
 * stored per record but the order itself: rf_keyed_index_vals writes the
 * records' byte offsets in keyed order straight into one array (8 bytes per
 * record), and the gather copies each record from its offset to its
 * delimiter.  Where a record starts is found again when asked for: a first
 * pass counts the delimiters (SIMD, on every thread) and notes where every
 * keyed block of 2^16 records begins; the offsets of a block are then one
 * delimiter scan away.  Against an offsets table (rf_records_index) this
 * saves 8 bytes per record and a random read of the table per record. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "common/thread.h"
#include "engine_internal.h"
#include "records/bytesum.h"

/* Records of one keyed block (riffle.h: keys come in blocks of 2^16). */
#define BLOCK ((uint64_t)1 << 16)
/* Delimiters are counted in pieces of this many bytes; a block start is
 * then found by scanning one piece. */
#define PIECE ((size_t)1 << 18)

int rfi_engine_memory_fits(const struct engine *e, const struct layout *l)
{
    return l->size + 8 * l->m <= e->budget;
}

/* ------------------------------------------------------------------------ */
/* Counting the records, on every thread                                    */

struct counter {
    const struct layout *l;
    size_t *counts; /* per piece */
    size_t *lfs;    /* CSV: per piece, its line feeds */
    unsigned char *flips; /* CSV: per piece, whether it leaves quotes flipped */
    size_t lo, hi;  /* pieces */
    uint64_t sum;   /* of the pieces' bytes, when the layout is hashed */
};

/* A CSV piece is counted as if it started outside quotes; started inside,
 * every byte's side flips, so its record ends are its other line feeds and
 * its end state flips too: the pieces are counted in parallel and their
 * true states set in order afterwards (csv_resolve).  A mapped file is
 * hashed here too (watch.h), each piece right after its count, while it is
 * in the cache: no pass of its own over the file. */
static void count_pieces(struct counter *c)
{
    const struct layout *l = c->l;
    for (size_t i = c->lo; i < c->hi; i++) {
        const uint64_t at = l->begin + (uint64_t)i * PIECE;
        const uint64_t len = l->size - at < PIECE ? l->size - at : PIECE;
        if (l->csv) {
            int quoted = 0;
            c->counts[i] = rf_csv_count(l->data + at, (size_t)len, &quoted);
            c->lfs[i] = rf_delims_count(l->data + at, (size_t)len, '\n');
            c->flips[i] = (unsigned char)quoted;
        } else {
            c->counts[i] = rf_delims_count(l->data + at, (size_t)len, l->delim);
        }
        if (l->hashed)
            c->sum += rfi_bytesum_range(l->data, l->size, at, at + len);
    }
}

/* The CSV pieces' counts for the states they really start in; flips[i]
 * becomes whether piece i starts inside quotes. */
static void csv_resolve(size_t *counts, const size_t *lfs, unsigned char *flips, size_t pieces)
{
    unsigned char quoted = 0;
    for (size_t i = 0; i < pieces; i++) {
        const unsigned char flip = flips[i];
        if (quoted)
            counts[i] = lfs[i] - counts[i];
        flips[i] = quoted;
        quoted ^= flip;
    }
}

static void *count_main(void *arg)
{
    count_pieces(arg);
    return NULL;
}

/* counts[i] = delimiters in piece i, pieces shared among threads (a thread
 * that cannot start is counted here). */
static void count_all(struct layout *l, size_t *counts, size_t *lfs, unsigned char *flips,
                      size_t pieces, unsigned threads)
{
    struct counter c[RFI_THREADS_MAX];
    pthread_t tid[RFI_THREADS_MAX];
    int started[RFI_THREADS_MAX] = {0};
    threads = rfi_threads(threads);
    if (threads > pieces)
        threads = pieces ? (unsigned)pieces : 1;
    for (unsigned t = 0; t < threads; t++) {
        c[t] = (struct counter){l, counts, lfs, flips, pieces * t / threads,
                                pieces * (t + 1) / threads, 0};
        if (t > 0)
            started[t] = rfi_thread_start(&tid[t], count_main, &c[t]);
    }
    count_pieces(&c[0]);
    for (unsigned t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            count_pieces(&c[t]);
    }
    for (unsigned t = 0; t < threads; t++)
        l->sum += c[t].sum;
}

/* Block starts: record c * BLOCK begins after the delimiter numbered
 * c * BLOCK - 1 (from 0) of the items' bytes. */
static void find_blocks(struct layout *l, const size_t *counts, const unsigned char *quoted,
                        size_t pieces)
{
    const struct bounds b = {l->csv, l->delim};
    uint64_t before = 0; /* delimiters in the pieces before piece i */
    size_t i = 0;
    l->starts[0] = l->begin;
    for (uint64_t c = 1; c < l->blocks; c++) {
        const uint64_t want = c * BLOCK - 1;
        while (i < pieces && before + counts[i] <= want)
            before += counts[i++];
        const uint64_t at = l->begin + (uint64_t)i * PIECE;
        const uint64_t len = l->size - at < PIECE ? l->size - at : PIECE;
        l->starts[c] = at + rfi_bounds_nth_from(b, l->data + at, (size_t)len,
                                                (size_t)(want - before),
                                                quoted ? quoted[i] : 0) + 1;
    }
}

void rfi_layout_head(struct layout *l, const struct engine *e, const rf_records *r)
{
    *l = (struct layout){.data = r->data, .size = r->size, .delim = r->delim, .csv = e->csv};
    l->hashed = e->mapped >= 0 && r->map_ != NULL;
    const struct bounds b = {e->csv, r->delim};
    /* The --header records: kept in place, before the items. */
    uint64_t head = 0;
    for (; head < e->header && l->begin < l->size; head++) {
        const size_t rest = (size_t)(l->size - l->begin);
        l->begin += rfi_bounds_nth(b, l->data + l->begin, rest, 0) + 1;
    }
    if (l->begin > l->size)
        l->begin = l->size; /* the header ended with an unterminated record */
    l->header = head;
}

int rfi_layout_init(struct layout *l, const struct engine *e, const rf_records *r)
{
    rfi_layout_head(l, e, r);
    if (l->hashed)
        l->sum = rfi_bytesum_range(l->data, l->size, 0, l->begin);
    if (l->begin == l->size)
        return 0;
    const uint64_t bytes = l->size - l->begin;
    const size_t pieces = (size_t)((bytes + PIECE - 1) / PIECE);
    size_t *counts = malloc(pieces * sizeof *counts);
    size_t *lfs = e->csv ? malloc(pieces * sizeof *lfs) : NULL;
    unsigned char *flips = e->csv ? malloc(pieces) : NULL;
    if (!counts || (e->csv && (!lfs || !flips))) {
        free(counts);
        free(lfs);
        free(flips);
        return rfi_engine_nomem(e->err);
    }
    count_all(l, counts, lfs, flips, pieces, e->threads);
    if (e->csv)
        csv_resolve(counts, lfs, flips, pieces);
    free(lfs);
    uint64_t delims = 0;
    for (size_t i = 0; i < pieces; i++)
        delims += counts[i];
    l->terminated = l->data[l->size - 1] == l->delim;
    l->m = delims + !l->terminated;
    l->blocks = (l->m + BLOCK - 1) / BLOCK;
    if (!(l->starts = malloc(l->blocks * sizeof *l->starts))) {
        free(counts);
        free(flips);
        return rfi_engine_nomem(e->err);
    }
    find_blocks(l, counts, flips, pieces);
    free(counts);
    free(flips);
    return 0;
}

void rfi_layout_free(struct layout *l)
{
    free(l->starts);
    l->starts = NULL;
}

/* ------------------------------------------------------------------------ */
/* The order                                                                */

struct order_ctx {
    const struct layout *l;
    const rf_keyed_order *order;
};

static rf_status block_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    const struct order_ctx *c = ctx;
    return rf_keyed_keys(c->order, first, out, n);
}

/* Where keyed block c's last record ends, its delimiter included (one
 * past the bytes for an unterminated last record): the next block's start,
 * or the end. */
static uint64_t block_end(const struct layout *l, uint64_t c)
{
    return c + 1 < l->blocks ? l->starts[c + 1] : l->size + (l->terminated ? 0 : 1);
}

/* The offsets of records first .. first+n-1, a whole block (rf_keyed_index
 * asks for blocks): its start, then the record after each delimiter in it
 * but the last one's. */
rf_status rfi_layout_offsets(const struct layout *l, uint64_t first, uint64_t *out, size_t n)
{
    const uint64_t c = first / BLOCK;
    if (first % BLOCK != 0 || c >= l->blocks || n == 0)
        return RF_EINVAL;
    const uint64_t at = l->starts[c];
    /* Up to the delimiter ending the block's last record, exclusive. */
    const uint64_t end = block_end(l, c) - 1;
    out[0] = at;
    const struct bounds b = {l->csv, l->delim};
    const size_t got = rfi_bounds_find(b, l->data + at, (size_t)(end - at), at, out + 1);
    return got == n - 1 ? RF_OK : RF_EINVAL;
}

static rf_status block_offsets(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    return rfi_layout_offsets(((const struct order_ctx *)ctx)->l, first, out, n);
}

/* The header records as complete records (the last input record may lack its
 * delimiter: then a copy with one).  *copy is to be freed. */
static int header_bytes(const struct layout *l, unsigned char **copy,
                        const unsigned char **bytes, size_t *len)
{
    *copy = NULL;
    *bytes = l->data;
    *len = (size_t)l->begin;
    if (l->header == 0 || l->begin == 0 || l->data[l->begin - 1] == l->delim)
        return 0;
    if (!(*copy = malloc(*len + 1)))
        return -1;
    memcpy(*copy, l->data, *len);
    (*copy)[*len] = l->delim;
    *bytes = *copy;
    *len += 1;
    return 0;
}

int rfi_engine_memory(struct engine *e, const rf_records *r, const struct layout *l)
{
    const uint64_t m = l->m;
    const size_t k = (size_t)(e->count < m ? e->count : m);
    unsigned char *copy;
    const unsigned char *hb;
    size_t hl;
    uint64_t *order = NULL;
    int status = 1;
    if (header_bytes(l, &copy, &hb, &hl) != 0 ||
        !(order = malloc((m ? m : 1) * sizeof *order))) {
        rfi_engine_nomem(e->err);
        goto done;
    }
    if (rfi_engine_begin(e, hb, hl, k) != 0)
        goto done;
    rfi_engine_phase(e, RF_ENGINE_SHUFFLE, 0);
    struct order_ctx ctx = {l, &e->order};
    const rf_status st =
        m ? rf_keyed_index_vals(&e->order, m, block_keys, block_offsets, &ctx, l->size,
                                e->threads, order)
          : RF_OK;
    if (st != RF_OK) {
        rfi_engine_status(e->err, st);
        goto done;
    }
    e->record_bytes = m ? (l->size - l->begin) / m : 0;
    rfi_engine_phase(e, RF_ENGINE_WRITE, (uint64_t)k * e->record_bytes);
    status = rfi_engine_emit(e, r, order, k);
done:
    free(copy);
    free(order);
    return status;
}
