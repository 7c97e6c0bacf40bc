/* head.c -- the first K records of the keyed order in O(K) memory
 * (engine_internal.h).
 *
 * The first K records of the keyed order are those with the K smallest keys,
 * in key order, ties shuffled -- but a tie is shuffled as a whole, so when
 * the K-th smallest key t is shared, every record with key t must be kept to
 * know which of them come first.  The candidates are therefore
 *     every record with key < t, and every record with key == t,
 * where t is the smallest key with at least K records at or below it.  A
 * max-heap on the key holds them while the records stream past: a record
 * with a key above the heap's top is dropped at once (the common case, one
 * comparison); one below it enters, and the top's whole tie leaves if the
 * rest still make K.  At the end the candidates go through rf_keyed_sort
 * (with their input order as vals) exactly as a full run's records would, and
 * the first K are written: the head of the full output, byte for byte.
 *
 * Records come a chunk at a time with their keys (walk.h): the keys
 * are compared with the heap's top in a tight loop, and only a record whose
 * key passes is located (rf_delims_nth from the last one located, then its
 * end).  Past the first K records, record i passes with probability about
 * K / i, so for -n 1000 of 19.6 M records some 10^4 records are located in
 * all, and a run is: map or read the input, count its delimiters, draw the
 * keys (on a helper thread) -- no work per record.
 *
 * A record too long to hold comes out of line (reader.h): its bytes in the
 * spill file (temp.h, made at the first one), a proxy in the walk.  A
 * candidate among them holds in the arena only where its bytes are (a
 * struct spilled), flagged in its offset, and is copied from the spill
 * file when written. */
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "bounds.h"
#include "engine_internal.h"
#include "reader.h"
#include "temp.h"
#include "walk.h"

/* In a candidate's offset: its arena bytes are a struct spilled. */
#define OUT_OF_LINE ((uint64_t)1 << 63)

struct cand {
    uint64_t key;
    uint64_t off; /* in the arena (OUT_OF_LINE: see the top) */
    size_t len;   /* without the delimiter */
};

static uint64_t arena_at(const struct cand *c)
{
    return c->off & ~OUT_OF_LINE;
}

struct head {
    struct cand *heap; /* max-heap on key */
    size_t n, cap;
    unsigned char *arena; /* candidates' bytes, in input order */
    size_t used, live;    /* bytes appended; bytes of candidates still held */
    size_t arena_cap;
};

static void sift_up(struct cand *h, size_t i)
{
    const struct cand c = h[i];
    for (; i > 0 && h[(i - 1) / 2].key < c.key; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = c;
}

static void sift_down(struct cand *h, size_t n, size_t i)
{
    const struct cand c = h[i];
    for (;;) {
        size_t j = 2 * i + 1;
        if (j >= n)
            break;
        if (j + 1 < n && h[j + 1].key > h[j].key)
            j++;
        if (h[j].key <= c.key)
            break;
        h[i] = h[j];
        i = j;
    }
    h[i] = c;
}

static struct cand pop(struct head *hd)
{
    const struct cand top = hd->heap[0];
    hd->heap[0] = hd->heap[--hd->n];
    if (hd->n > 0)
        sift_down(hd->heap, hd->n, 0);
    hd->live -= top.len + 1;
    return top;
}

static int cmp_off(const void *x, const void *y)
{
    const uint64_t a = arena_at(x), b = arena_at(y);
    return a < b ? -1 : a > b;
}

/* Drop the bytes of candidates no longer held: copy the live ones to the
 * front in input order (their offsets keep increasing with input order, as
 * rf_keyed_sort needs), then rebuild the heap. */
static void compact(struct head *hd)
{
    if (hd->n == 0) {
        hd->used = 0;
        return;
    }
    qsort(hd->heap, hd->n, sizeof *hd->heap, cmp_off);
    size_t at = 0;
    for (size_t i = 0; i < hd->n; i++) {
        memmove(hd->arena + at, hd->arena + arena_at(&hd->heap[i]), hd->heap[i].len + 1);
        hd->heap[i].off = at | (hd->heap[i].off & OUT_OF_LINE);
        at += hd->heap[i].len + 1;
    }
    hd->used = at;
    for (size_t i = hd->n / 2; i-- > 0;)
        sift_down(hd->heap, hd->n, i);
}

static int push(struct head *hd, uint64_t key, const unsigned char *rec, size_t len,
                uint64_t flag)
{
    if (hd->n == hd->cap) {
        struct cand *h = rfi_grow(hd->heap, &hd->cap, sizeof *h, 1024);
        if (!h)
            return -1;
        hd->heap = h;
    }
    if (hd->used - hd->live > hd->live + ((size_t)1 << 20))
        compact(hd); /* garbage outweighs what is held: O(1) amortised */
    if (hd->arena_cap - hd->used < len + 1) {
        size_t cap = hd->arena_cap ? hd->arena_cap : (size_t)1 << 20;
        while (cap - hd->used < len + 1)
            cap *= 2;
        unsigned char *a = realloc(hd->arena, cap);
        if (!a)
            return -1;
        hd->arena = a;
        hd->arena_cap = cap;
    }
    memcpy(hd->arena + hd->used, rec, len + 1);
    hd->heap[hd->n] = (struct cand){key, hd->used | flag, len};
    hd->used += len + 1;
    hd->live += len + 1;
    sift_up(hd->heap, hd->n++);
    return 0;
}

/* After a key below the top entered: if the records below the top's key make
 * K on their own, the top's whole tie goes. */
static void trim(struct head *hd, uint64_t k)
{
    const uint64_t t = hd->heap[0].key;
    size_t tied = 0;
    struct cand held[64];
    while (hd->n > 0 && hd->heap[0].key == t && tied < 64)
        held[tied++] = pop(hd);
    if (hd->n >= k && (hd->n == 0 || hd->heap[0].key != t))
        return; /* dropped: the rest are K or more, all below t */
    for (size_t i = 0; i < tied; i++) { /* keep them (bytes are still in place) */
        hd->heap[hd->n] = held[i];
        hd->live += held[i].len + 1;
        sift_up(hd->heap, hd->n++);
    }
}

/* One record (with its delimiter at rec[len]; flag: OUT_OF_LINE or 0). */
static int offer(struct head *hd, uint64_t k, uint64_t key, const unsigned char *rec,
                 size_t len, uint64_t flag)
{
    if (hd->n < k || key == hd->heap[0].key)
        return push(hd, key, rec, len, flag);
    if (key > hd->heap[0].key)
        return 0;
    if (push(hd, key, rec, len, flag) != 0)
        return -1;
    trim(hd, k);
    return 0;
}

/* Candidate c as a record of r: its bytes, or for an out-of-line one an
 * empty record (its proxy) noted in *outs.  Returns 0 or -1 (no memory). */
static int add_cand(rf_records *r, const struct head *hd, const struct cand *c,
                    struct outline **outs, size_t *nouts, size_t *cap)
{
    const unsigned char *bytes = hd->arena + arena_at(c);
    if (!(c->off & OUT_OF_LINE))
        return rf_records_add_record(r, bytes, c->len) != 0 ? -1 : 0;
    if (*nouts == *cap) {
        struct outline *o = rfi_grow(*outs, cap, sizeof *o, 4);
        if (!o)
            return -1;
        *outs = o;
    }
    struct outline *o = &(*outs)[(*nouts)++];
    o->proxy = r->size;
    memcpy(&o->sp, bytes, sizeof o->sp);
    return rf_records_add_record(r, "", 0) != 0 ? -1 : 0;
}

/* The candidates as records, in input order, sorted and written after the
 * header. */
static int finish(struct engine *e, struct head *hd, uint64_t k, const unsigned char *hbuf,
                  size_t hlen, struct spill *sp)
{
    compact(hd); /* also leaves the candidates in input order */
    rf_records r;
    rf_records_init(&r, e->delim);
    if (e->csv)
        rf_records_csv(&r);
    rf_keyed *a = malloc((hd->n ? hd->n : 1) * sizeof *a);
    struct outline *outs = NULL;
    size_t nouts = 0, outs_cap = 0;
    int status = 1;
    if (!a)
        goto oom;
    for (size_t i = 0; i < hd->n; i++) {
        a[i] = (rf_keyed){hd->heap[i].key, r.size};
        if (add_cand(&r, hd, &hd->heap[i], &outs, &nouts, &outs_cap) != 0)
            goto oom;
    }
    const rf_status st = rf_keyed_sort(&e->order, a, hd->n, 1);
    if (st != RF_OK) {
        rfi_engine_status(e->err, st);
        goto done;
    }
    const size_t out = k < hd->n ? (size_t)k : hd->n;
    uint64_t *offs = (uint64_t *)a; /* the vals, packed in place */
    for (size_t i = 0; i < out; i++)
        offs[i] = a[i].val;
    if (rfi_engine_begin(e, hbuf, hlen, out) == 0)
        status = nouts ? rfi_spill_emit_mixed(sp, &r, offs, out, outs, nouts)
                       : rfi_engine_emit(e, &r, offs, out);
    goto done;
oom:
    rfi_engine_nomem(e->err);
done:
    free(outs);
    free(a);
    rf_records_free(&r);
    return status;
}

struct walk {
    struct head hd;
    uint64_t k;
    unsigned char delim;
    struct bounds b;
    rf_engine_error *err;
};

/* The largest key a record can have and still be offered a place: any key
 * until K are held, then the top's (a key equal to it joins its tie). */
static uint64_t threshold(const struct walk *w)
{
    return w->hd.n < w->k ? UINT64_MAX : w->hd.heap[0].key;
}

/* One chunk: its keys against the threshold, and only the records whose
 * keys pass located -- after the first K records, about K / i of record i,
 * so nearly every chunk is one pass over its keys and nothing else. */
static int take(void *ctx, const struct walk_chunk *c)
{
    struct walk *w = ctx;
    if (w->k == 0)
        return 0; /* -n 0 with a header: only the header is wanted */
    uint64_t t = threshold(w);
    size_t item = 0, at = 0; /* record `item` of the chunk starts at data[at] */
    for (size_t i = 0; i < c->n; i++) {
        if (c->keys[i] > t)
            continue;
        if (i > item) /* skip records item .. i-1 */
            at += rfi_bounds_nth(w->b, c->data + at, c->len - at, i - item - 1) + 1;
        const unsigned char *rec = c->data + at;
        const unsigned char *end = rec + rfi_bounds_nth(w->b, rec, c->len - at, 0);
        if (c->out) { /* a proxy (n is 1): where its bytes are is held instead */
            unsigned char where[sizeof *c->out + 1];
            memcpy(where, c->out, sizeof *c->out);
            where[sizeof *c->out] = w->delim;
            if (offer(&w->hd, w->k, c->keys[i], where, sizeof *c->out, OUT_OF_LINE) != 0)
                return rfi_engine_nomem(w->err);
        } else if (offer(&w->hd, w->k, c->keys[i], rec, (size_t)(end - rec), 0) != 0) {
            return rfi_engine_nomem(w->err);
        }
        item = i + 1;
        at = (size_t)(end - c->data) + 1;
        t = threshold(w);
    }
    return 0;
}

int rfi_engine_head(struct engine *e, struct reader *rd)
{
    struct walk w = {.k = e->count, .delim = e->delim, .b = {e->csv, e->delim}, .err = e->err};
    unsigned char *hbuf = NULL;
    size_t hlen = 0;
    int status = 1;
    struct temps t = {.e = e}; /* opened at the first out-of-line record */
    struct spill sp;
    rfi_spill_init(&sp, &t);
    rd->giant = e->csv ? 0 : rfi_reader_giant(e->budget); /* CSV: held whole */
    rd->spill = rfi_spill_write;
    rd->spill_ctx = &sp;
    rfi_engine_phase(e, RF_ENGINE_READ, e->size_hint);
    if (rfi_engine_walk_chunks(e, rd, take, &w, &hbuf, &hlen) == 0)
        status = finish(e, &w.hd, e->count, hbuf, hlen, &sp);
    rfi_spill_close(&sp);
    const int err = rfi_temps_close(&t);
    if (err && status == 0)
        status = rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_TEMP_REMOVE, t.dir, err);
    free(hbuf);
    free(w.hd.heap);
    free(w.hd.arena);
    return status;
}
