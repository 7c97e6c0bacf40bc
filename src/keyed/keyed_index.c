/* rf_keyed_index and rf_keyed_index_vals: the keyed order as item numbers
 * or as the caller's values, 8 bytes per item (riffle.h, "Keyed order").
 *
 * An entry is  (kept key bits) << vbits | value,  where vbits is the width of
 * the largest value (of m-1 when the values are the item numbers) and the
 * kept bits are the R = 64 - vbits key bits just below the top B (bucket)
 * bits.  Values increase with the item number, so entries of one bucket
 * compared as plain numbers are in (key prefix of B + R bits, item) order,
 * as rf_keyed_sort's ties need.  Only runs of equal prefixes (near ties) need
 * the rest of their keys: their items are found again (the value's block by
 * the first values noted in the scatter, then the value in that block's
 * values), their keys fetched, and each run ordered by rf_keyed_sort itself,
 * so exact ties are shuffled by the same tie streams as everywhere else. */

#include "riffle.h"
#include "common/grow.h"
#include "common/thread.h"
#include "keyed_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Keys are asked for by whole keyed blocks (2^16 items, riffle.h), so that a
 * generator never has to skip into a block. */
#define FETCH ((uint64_t)1 << 16)
/* Buckets of about 2^13 entries (64 KiB: L2), at most 2^11 of them (the
 * scatter's write positions must stay within the TLB's reach). */
#define BUCKET_LOG 13
#define MAX_BUCKET_BITS 11

struct run {
    size_t pos, len;
};

struct wanted {
    uint64_t val, pos, key;
    size_t run; /* which near tie */
};

struct kx;

struct worker {
    struct kx *x;
    unsigned t;
    uint64_t *hist;       /* 2^B counters, then the scatter positions */
    uint64_t *keys;       /* FETCH keys */
    uint64_t *vals;       /* FETCH values (rf_keyed_index_vals) */
    uint64_t *scratch;    /* largest bucket */
    uint64_t size;        /* sized: the sizes of the worker's kept items */
    uint64_t *kat;        /* a part: the kept items' places in the range, */
    uint16_t *kj;         /* and their indices in their blocks (pass 1) */
    size_t kn, kcap, kread;
    struct run *runs;     /* near ties found in pass 3 */
    size_t nruns, cap;
    rf_status st;
};

struct kx {
    const rf_keyed_order *o;
    uint64_t m;
    /* Only the items of key range `part` of `parts` (rfi_keyed_index_part),
     * placed by their position inside it; parts 1: every item. */
    unsigned part, parts;
    int sized;            /* vals gives a block's end after its values */
    uint32_t *kblock;     /* a part: each block's kept items (pass 1) */
    rf_keyed_keys_fn keys;
    rf_keyed_vals_fn vals; /* NULL: the values are the item numbers */
    void *ctx;
    unsigned T, B, vbits, R;
    uint64_t *first_val;  /* per block of FETCH items: its first value */
    uint64_t *idx;
    uint64_t *start;      /* 2^B + 1 bucket bounds */
    size_t next;          /* pass 3: next bucket (atomic) */
    struct wanted *want;  /* pass 4 */
    size_t nwant;
    struct worker w[RFI_THREADS_MAX];
};

static unsigned bit_width(uint64_t x)
{
    unsigned b = 0;
    for (; x; x >>= 1)
        b++;
    return b;
}

/* Whether a key is in the kept range, and *at its place inside it: the low
 * word of key * parts, which grows with the key across the range (the high
 * word is the range, rf_engine_owner's floor(key * parts / 2^64)) and
 * spreads its keys over all 64 bits, as the bucket bits need. */
static int kept(const struct kx *x, uint64_t key, uint64_t *at)
{
    const unsigned __int128 p = (unsigned __int128)key * x->parts;
    *at = (uint64_t)p;
    return (uint64_t)(p >> 64) == x->part;
}

static size_t bucket_of(const struct kx *x, uint64_t key)
{
    return x->B ? (size_t)(key >> (64 - x->B)) : 0;
}

static uint64_t entry(const struct kx *x, uint64_t key, uint64_t val)
{
    const uint64_t rest = x->B ? key << x->B : key;
    return (x->R ? (rest >> (64 - x->R)) << x->vbits : 0) | val;
}

/* The kept key bits of an entry (0 when none are kept). */
static uint64_t prefix(const struct kx *x, uint64_t e)
{
    return x->vbits >= 64 ? 0 : e >> x->vbits;
}

static uint64_t value_mask(const struct kx *x)
{
    return x->vbits >= 64 ? UINT64_MAX : ((uint64_t)1 << x->vbits) - 1;
}

/* The values of items [first, first + n): the caller's, or the numbers. */
static rf_status get_vals(const struct kx *x, uint64_t first, uint64_t *out, size_t n)
{
    if (x->vals)
        return x->vals(x->ctx, first, out, n);
    for (size_t j = 0; j < n; j++)
        out[j] = first + j;
    return RF_OK;
}

/* Worker t's items: whole keyed blocks where possible. */
static void item_range(const struct kx *x, unsigned t, uint64_t *lo, uint64_t *hi)
{
    const uint64_t blocks = (x->m + FETCH - 1) / FETCH;
    *lo = blocks * t / x->T * FETCH;
    *hi = blocks * (t + 1) / x->T * FETCH;
    if (*lo > x->m)
        *lo = x->m;
    if (*hi > x->m)
        *hi = x->m;
}

/* Room in the worker's kept lists for n more items. */
static int reserve_kept(struct worker *w, size_t n)
{
    if (w->kn + n <= w->kcap)
        return 0;
    size_t cap = w->kcap, jcap = w->kcap;
    while (cap < w->kn + n) {
        uint64_t *a = rfi_grow(w->kat, &cap, sizeof *w->kat, FETCH);
        if (!a)
            return -1;
        w->kat = a;
    }
    while (jcap < cap) {
        uint16_t *b = rfi_grow(w->kj, &jcap, sizeof *w->kj, FETCH);
        if (!b)
            return -1;
        w->kj = b;
    }
    w->kcap = cap;
    return 0;
}

/* Pass 1 for a part of the key ranges: the block's kept items found and
 * counted.  Their places in the range and their indices in the block are
 * kept for pass 2, which so draws no key again.  Whether an item is kept
 * is a coin toss for two parts, so it is never branched on: every item is
 * written at the end of the lists, which move on by 0 or 1. */
static rf_status part_count(struct worker *w, uint64_t first, size_t n)
{
    struct kx *x = w->x;
    if (reserve_kept(w, n) != 0)
        return RF_ENOMEM;
    uint64_t *at = w->kat + w->kn;
    uint16_t *jn = w->kj + w->kn;
    size_t kn = 0;
    for (size_t j = 0; j < n; j++) {
        const int k = kept(x, w->keys[j], &at[kn]);
        jn[kn] = (uint16_t)j; /* j < 2^16: a keyed block */
        kn += (size_t)k;
    }
    for (size_t i = 0; i < kn; i++)
        w->hist[bucket_of(x, at[i])]++;
    w->kn += kn;
    x->kblock[first / FETCH] = (uint32_t)kn;
    return RF_OK;
}

/* Pass 2 for a part: the block's kept items scattered with their values
 * (w->vals), their sizes summed when the values are sized. */
static void part_scatter(struct worker *w, uint64_t first)
{
    struct kx *x = w->x;
    const size_t kn = x->kblock[first / FETCH];
    const uint64_t *at = w->kat + w->kread, *v = w->vals;
    const uint16_t *jn = w->kj + w->kread;
    uint64_t size = 0;
    for (size_t i = 0; i < kn; i++) {
        const size_t j = jn[i];
        if (x->sized)
            size += v[j + 1] - v[j];
        x->idx[w->hist[bucket_of(x, at[i])]++] = entry(x, at[i], v[j]);
    }
    w->kread += kn;
    w->size += size;
}

/* Passes 1 and 2: the worker's items' keys, counted or scattered (a
 * part's pass 2 takes its kept items from pass 1 instead). */
static void pass_keys(struct worker *w, int scatter)
{
    struct kx *x = w->x;
    const int part = x->kblock != NULL;
    uint64_t *buf = w->keys, lo, hi;
    item_range(x, w->t, &lo, &hi);
    for (uint64_t first = lo; first < hi && w->st == RF_OK; first += FETCH) {
        const size_t n = hi - first < FETCH ? (size_t)(hi - first) : (size_t)FETCH;
        if (!(scatter && part) && (w->st = x->keys(x->ctx, first, buf, n)) != RF_OK)
            return;
        if (scatter && x->vals) {
            if ((w->st = x->vals(x->ctx, first, w->vals, n)) != RF_OK)
                return;
            x->first_val[first / FETCH] = w->vals[0];
        }
        if (part && !scatter) {
            w->st = part_count(w, first, n);
        } else if (part) {
            part_scatter(w, first);
        } else if (!scatter) {
            for (size_t j = 0; j < n; j++)
                w->hist[bucket_of(x, buf[j])]++;
        } else if (!x->vals) {
            for (size_t j = 0; j < n; j++)
                x->idx[w->hist[bucket_of(x, buf[j])]++] = entry(x, buf[j], first + j);
        } else {
            const uint64_t *v = w->vals;
            for (size_t j = 0; j < n; j++)
                x->idx[w->hist[bucket_of(x, buf[j])]++] = entry(x, buf[j], v[j]);
        }
    }
}

/* Sort a bucket as plain numbers: two stable counting passes on the top 16
 * bits (both digits counted in one read, the passes going a -> tmp -> a),
 * then insertion sort, which finds the array nearly sorted. */
static void sort_entries(uint64_t *a, size_t n, uint64_t *tmp)
{
    if (n >= 64) {
        size_t lo[256] = {0}, hi[256] = {0};
        for (size_t i = 0; i < n; i++) {
            lo[(a[i] >> 48) & 0xFF]++;
            hi[a[i] >> 56]++;
        }
        size_t sl = 0, sh = 0;
        for (size_t d = 0; d < 256; d++) {
            const size_t cl = lo[d], ch = hi[d];
            lo[d] = sl;
            hi[d] = sh;
            sl += cl;
            sh += ch;
        }
        for (size_t i = 0; i < n; i++)
            tmp[lo[(a[i] >> 48) & 0xFF]++] = a[i];
        for (size_t i = 0; i < n; i++)
            a[hi[tmp[i] >> 56]++] = tmp[i];
    }
    for (size_t i = 1; i < n; i++) {
        const uint64_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static int add_run(struct worker *w, size_t pos, size_t len)
{
    if (w->nruns == w->cap) {
        struct run *r = rfi_grow(w->runs, &w->cap, sizeof *r, 64);
        if (!r)
            return -1;
        w->runs = r;
    }
    w->runs[w->nruns++] = (struct run){pos, len};
    return 0;
}

/* Pass 3: buckets, taken in turn; near ties noted. */
static void pass_sort(struct worker *w)
{
    struct kx *x = w->x;
    const size_t nb = (size_t)1 << x->B;
    for (;;) {
        const size_t b = __atomic_fetch_add(&x->next, 1, __ATOMIC_RELAXED);
        if (b >= nb || w->st != RF_OK)
            return;
        uint64_t *a = x->idx + x->start[b];
        const size_t n = (size_t)(x->start[b + 1] - x->start[b]);
        sort_entries(a, n, w->scratch);
        /* Near ties noted, and the values alone kept from here on (near
         * ties keep their positions and are fixed from full keys), while
         * the bucket is in cache. */
        const uint64_t mask = value_mask(x);
        size_t run = 0; /* where the current run of equal prefixes starts */
        for (size_t i = 1; i <= n; i++) {
            if (i < n && prefix(x, a[i]) == prefix(x, a[run]))
                continue;
            if (i - run >= 2 && add_run(w, (size_t)x->start[b] + run, i - run) != 0) {
                w->st = RF_ENOMEM;
                return;
            }
            for (; run < i; run++)
                a[run] &= mask;
        }
    }
}

/* The block of FETCH items holding value v: the last whose first value is
 * at most v. */
static uint64_t block_of(const struct kx *x, uint64_t v)
{
    if (!x->vals)
        return v / FETCH;
    uint64_t lo = 0, hi = (x->m + FETCH - 1) / FETCH; /* first_val[lo] <= v */
    while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (x->first_val[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Where v is among the n increasing values of a block. */
static size_t place_of(const uint64_t *vals, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (vals[mid] <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Pass 4: full keys of the wanted items (sorted by value), worker t's share,
 * fetched block by block with the block's values to find each item. */
static void pass_fetch(struct worker *w)
{
    struct kx *x = w->x;
    const size_t lo = x->nwant * w->t / x->T, hi = x->nwant * (w->t + 1) / x->T;
    uint64_t have = UINT64_MAX;
    size_t n = 0;
    for (size_t i = lo; i < hi && w->st == RF_OK; i++) {
        const uint64_t b = block_of(x, x->want[i].val);
        if (b != have) {
            const uint64_t first = b * FETCH;
            n = x->m - first < FETCH ? (size_t)(x->m - first) : (size_t)FETCH;
            w->st = x->keys(x->ctx, first, w->keys, n);
            if (w->st == RF_OK)
                w->st = get_vals(x, first, w->vals, n);
            have = b;
        }
        const size_t j = place_of(w->vals, n, x->want[i].val);
        if (w->st == RF_OK && w->vals[j] != x->want[i].val)
            w->st = RF_EINVAL; /* the values were not the same twice */
        x->want[i].key = w->keys[j];
    }
}

enum phase { COUNT, SCATTER, SORT, FETCH_KEYS };

struct job {
    struct worker *w;
    enum phase p;
};

static void run_phase(struct worker *w, enum phase p)
{
    switch (p) {
    case COUNT:
        pass_keys(w, 0);
        break;
    case SCATTER:
        pass_keys(w, 1);
        break;
    case SORT:
        pass_sort(w);
        break;
    case FETCH_KEYS:
        pass_fetch(w);
        break;
    }
}

static void *job_main(void *arg)
{
    struct job *j = arg;
    run_phase(j->w, j->p);
    return NULL;
}

/* Every worker runs phase p: workers 1.. on threads, worker 0 here; a thread
 * that cannot start is run here afterwards (same result). */
static rf_status run_all(struct kx *x, enum phase p)
{
    pthread_t tid[RFI_THREADS_MAX];
    struct job jobs[RFI_THREADS_MAX];
    int started[RFI_THREADS_MAX] = {0};
    for (unsigned t = 1; t < x->T; t++) {
        jobs[t] = (struct job){&x->w[t], p};
        started[t] = rfi_thread_start(&tid[t], job_main, &jobs[t]);
    }
    run_phase(&x->w[0], p);
    for (unsigned t = 1; t < x->T; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            run_phase(&x->w[t], p);
    }
    rf_status st = RF_OK;
    for (unsigned t = 0; t < x->T && st == RF_OK; t++)
        st = x->w[t].st;
    return st;
}

/* Exclusive prefix sums, bucket-major, thread-minor: bucket b's entries come
 * from worker 0's items, then worker 1's, ...: item order inside a bucket. */
static size_t plan_buckets(struct kx *x)
{
    const size_t nb = (size_t)1 << x->B;
    uint64_t base = 0;
    size_t largest = 0;
    for (size_t b = 0; b < nb; b++) {
        x->start[b] = base;
        for (unsigned t = 0; t < x->T; t++) {
            const uint64_t c = x->w[t].hist[b];
            x->w[t].hist[b] = base;
            base += c;
        }
        if (base - x->start[b] > largest)
            largest = (size_t)(base - x->start[b]);
    }
    x->start[nb] = base;
    return largest;
}

static int by_val(const void *p, const void *q)
{
    const struct wanted *a = p, *b = q;
    return a->val < b->val ? -1 : a->val > b->val;
}

static int by_pos(const void *p, const void *q)
{
    const struct wanted *a = p, *b = q;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Near ties: every entry of every run, their full keys, then each run in
 * the keyed order by rf_keyed_sort. */
static rf_status near_ties(struct kx *x)
{
    size_t total = 0, longest = 0;
    for (unsigned t = 0; t < x->T; t++)
        for (size_t r = 0; r < x->w[t].nruns; r++) {
            total += x->w[t].runs[r].len;
            if (x->w[t].runs[r].len > longest)
                longest = x->w[t].runs[r].len;
        }
    if (total == 0)
        return RF_OK;
    x->want = malloc(total * sizeof *x->want);
    rf_keyed *items = malloc(longest * sizeof *items);
    rf_status st = RF_ENOMEM;
    if (!x->want || !items)
        goto done;
    size_t at = 0, run = 0;
    for (unsigned t = 0; t < x->T; t++)
        for (size_t r = 0; r < x->w[t].nruns; r++, run++)
            for (size_t j = 0; j < x->w[t].runs[r].len; j++) {
                const size_t pos = x->w[t].runs[r].pos + j;
                x->want[at++] = (struct wanted){x->idx[pos], pos, 0, run};
            }
    x->nwant = total;
    qsort(x->want, total, sizeof *x->want, by_val);
    if ((st = run_all(x, FETCH_KEYS)) != RF_OK)
        goto done;
    qsort(x->want, total, sizeof *x->want, by_pos);
    /* A run's entries are consecutive in position order. */
    for (size_t i = 0; i < total && st == RF_OK;) {
        size_t j = i + 1;
        while (j < total && x->want[j].run == x->want[i].run)
            j++;
        for (size_t k = i; k < j; k++)
            items[k - i] = (rf_keyed){x->want[k].key, x->want[k].val};
        st = rf_keyed_sort(x->o, items, j - i, 1);
        for (size_t k = i; k < j; k++)
            x->idx[x->want[k].pos] = items[k - i].val;
        i = j;
    }
done:
    free(items);
    free(x->want);
    x->want = NULL;
    return st;
}

static void release(struct kx *x)
{
    for (unsigned t = 0; t < x->T; t++) {
        free(x->w[t].hist);
        free(x->w[t].keys);
        free(x->w[t].vals);
        free(x->w[t].scratch);
        free(x->w[t].runs);
        free(x->w[t].kat);
        free(x->w[t].kj);
    }
    free(x->kblock);
    free(x->start);
    free(x->first_val);
}

static unsigned vbits_for(uint64_t vmax)
{
    const unsigned b = bit_width(vmax);
    return b ? b : 1;
}

/* What is asked of keyed_index: the order of every item into idx, or of
 * one part's items into an array it allocates. */
struct request {
    rf_keyed_keys_fn keys;
    rf_keyed_vals_fn vals;
    void *ctx;
    uint64_t vmax;
    unsigned part, parts;
    int sized;
    uint64_t *idx;        /* every item: the caller's */
    uint64_t **part_idx;  /* a part (rfi_keyed_index_part): allocated here */
    uint64_t *count, *size;
};

/* Room for the order: the caller's, or (a part) as many as were counted. */
static rf_status place_order(struct kx *x, const struct request *q)
{
    if (!q->part_idx)
        return RF_OK;
    const uint64_t n = x->start[(size_t)1 << x->B];
    *q->count = n;
    if (n > SIZE_MAX / sizeof *x->idx)
        return RF_ENOMEM;
    x->idx = *q->part_idx = malloc((n ? (size_t)n : 1) * sizeof *x->idx);
    return x->idx ? RF_OK : RF_ENOMEM;
}

static rf_status keyed_index(const rf_keyed_order *o, uint64_t m, const struct request *q,
                             unsigned threads)
{
    if (q->part_idx) {
        *q->part_idx = NULL;
        *q->count = 0;
        if (q->size)
            *q->size = 0;
    }
    if (m == 0)
        return RF_OK;
    struct kx *x = calloc(1, sizeof *x);
    if (!x)
        return RF_ENOMEM;
    if (threads == 0)
        threads = rfi_online_cpus();
    if (threads > RFI_THREADS_MAX)
        threads = RFI_THREADS_MAX;
    const uint64_t blocks = (m + FETCH - 1) / FETCH;
    *x = (struct kx){.o = o, .m = m, .keys = q->keys, .vals = q->vals, .ctx = q->ctx,
                     .idx = q->idx, .part = q->part, .parts = q->parts, .sized = q->sized};
    x->T = threads < blocks ? threads : (unsigned)blocks;
    x->vbits = vbits_for(q->vmax);
    /* Buckets for the items expected in the part (its share of m). */
    const unsigned ibits = vbits_for((m - 1) / q->parts);
    x->B = ibits > BUCKET_LOG ? ibits - BUCKET_LOG : 0;
    if (x->B > MAX_BUCKET_BITS)
        x->B = MAX_BUCKET_BITS;
    x->R = 64 - x->vbits < 64 - x->B ? 64 - x->vbits : 64 - x->B;
    const size_t nb = (size_t)1 << x->B;
    rf_status st = RF_ENOMEM;
    x->start = malloc((nb + 1) * sizeof *x->start);
    if (!x->start || (q->vals && !(x->first_val = malloc(blocks * sizeof *x->first_val))) ||
        (q->part_idx && !(x->kblock = malloc(blocks * sizeof *x->kblock))))
        goto done;
    for (unsigned t = 0; t < x->T; t++) {
        x->w[t] = (struct worker){.x = x, .t = t, .st = RF_OK};
        /* a sized block's values end with its end: one more */
        if (!(x->w[t].hist = calloc(nb, sizeof *x->w[t].hist)) ||
            !(x->w[t].keys = malloc(FETCH * sizeof *x->w[t].keys)) ||
            !(x->w[t].vals = malloc((FETCH + 1) * sizeof *x->w[t].vals)))
            goto done;
        /* a part's kept lists: room for its share of the worker's items and
         * a sixteenth more, so that they seldom grow */
        uint64_t lo, hi;
        item_range(x, t, &lo, &hi);
        const uint64_t share = (hi - lo) / x->parts;
        if (x->kblock && share < SIZE_MAX / 32 &&
            reserve_kept(&x->w[t], (size_t)(share + share / 16)) != 0)
            goto done;
    }
    if ((st = run_all(x, COUNT)) != RF_OK)
        goto done;
    const size_t largest = plan_buckets(x);
    if ((st = place_order(x, q)) != RF_OK || (st = run_all(x, SCATTER)) != RF_OK)
        goto done;
    for (unsigned t = 0; t < x->T; t++) { /* a part's kept lists are used */
        free(x->w[t].kat);
        free(x->w[t].kj);
        x->w[t].kat = NULL;
        x->w[t].kj = NULL;
    }
    st = RF_ENOMEM;
    for (unsigned t = 0; t < x->T; t++)
        if (!(x->w[t].scratch = malloc((largest ? largest : 1) * sizeof(uint64_t))))
            goto done;
    st = run_all(x, SORT);
    if (st == RF_OK)
        st = near_ties(x);
    for (unsigned t = 0; t < x->T && q->size; t++)
        *q->size += x->w[t].size;
done:
    if (st != RF_OK && q->part_idx) {
        free(*q->part_idx);
        *q->part_idx = NULL;
        *q->count = 0;
    }
    release(x);
    free(x);
    return st;
}

rf_status rf_keyed_index(const rf_keyed_order *o, uint64_t m, rf_keyed_keys_fn keys,
                         void *ctx, unsigned threads, uint64_t *idx)
{
    const struct request q = {.keys = keys, .ctx = ctx, .vmax = m ? m - 1 : 0,
                              .parts = 1, .idx = idx};
    return keyed_index(o, m, &q, threads);
}

rf_status rf_keyed_index_vals(const rf_keyed_order *o, uint64_t m, rf_keyed_keys_fn keys,
                              rf_keyed_vals_fn vals, void *ctx, uint64_t vmax,
                              unsigned threads, uint64_t *out)
{
    if (!vals)
        return RF_EINVAL;
    const struct request q = {.keys = keys, .vals = vals, .ctx = ctx, .vmax = vmax,
                              .parts = 1, .idx = out};
    return keyed_index(o, m, &q, threads);
}

rf_status rfi_keyed_index_part(const rf_keyed_order *o, uint64_t m, rf_keyed_keys_fn keys,
                               rf_keyed_vals_fn vals, void *ctx, uint64_t vmax, unsigned part,
                               unsigned parts, unsigned threads, uint64_t **idx,
                               uint64_t *count, uint64_t *size)
{
    if (!vals || !idx || !count || parts == 0 || part >= parts)
        return RF_EINVAL;
    const struct request q = {.keys = keys, .vals = vals, .ctx = ctx, .vmax = vmax,
                              .part = part, .parts = parts, .sized = size != NULL,
                              .part_idx = idx, .count = count, .size = size};
    return keyed_index(o, m, &q, threads);
}
