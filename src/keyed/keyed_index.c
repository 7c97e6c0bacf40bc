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
    struct run *runs;     /* near ties found in pass 3 */
    size_t nruns, cap;
    rf_status st;
};

struct kx {
    const rf_keyed_order *o;
    uint64_t m;
    /* rfi_keyed_index_list: the items to order, given as their places and
     * values (NULL: every item, from keys and vals) */
    const uint64_t *list_at, *list_val;
    size_t nlist;
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

/* Passes 1 and 2: the worker's items' keys, counted or scattered. */
static void pass_keys(struct worker *w, int scatter)
{
    struct kx *x = w->x;
    uint64_t *buf = w->keys, lo, hi;
    item_range(x, w->t, &lo, &hi);
    for (uint64_t first = lo; first < hi && w->st == RF_OK; first += FETCH) {
        const size_t n = hi - first < FETCH ? (size_t)(hi - first) : (size_t)FETCH;
        w->st = x->keys(x->ctx, first, buf, n);
        if (w->st != RF_OK)
            return;
        if (!scatter) {
            for (size_t j = 0; j < n; j++)
                w->hist[bucket_of(x, buf[j])]++;
        } else if (!x->vals) {
            for (size_t j = 0; j < n; j++)
                x->idx[w->hist[bucket_of(x, buf[j])]++] = entry(x, buf[j], first + j);
        } else {
            const uint64_t *v = w->vals;
            if ((w->st = x->vals(x->ctx, first, w->vals, n)) != RF_OK)
                return;
            x->first_val[first / FETCH] = v[0];
            for (size_t j = 0; j < n; j++)
                x->idx[w->hist[bucket_of(x, buf[j])]++] = entry(x, buf[j], v[j]);
        }
    }
}

/* Passes 1 and 2 over a given list: worker t's share of it, in list
 * (item) order, counted or scattered by each item's place. */
static void pass_list(struct worker *w, int scatter)
{
    struct kx *x = w->x;
    const size_t lo = x->nlist * w->t / x->T, hi = x->nlist * (w->t + 1) / x->T;
    const uint64_t *at = x->list_at, *v = x->list_val;
    if (!scatter) {
        for (size_t i = lo; i < hi; i++)
            w->hist[bucket_of(x, at[i])]++;
        return;
    }
    for (size_t i = lo; i < hi; i++)
        x->idx[w->hist[bucket_of(x, at[i])]++] = entry(x, at[i], v[i]);
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
    case SCATTER:
        if (w->x->list_at)
            pass_list(w, p == SCATTER);
        else
            pass_keys(w, p == SCATTER);
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
    }
    free(x->start);
    free(x->first_val);
}

static unsigned vbits_for(uint64_t vmax)
{
    const unsigned b = bit_width(vmax);
    return b ? b : 1;
}

/* What is asked of keyed_index: the order of every item (keys and vals
 * give them), or of a list of them (their places and values given; keys
 * and vals only for near ties, and first_val the blocks' first values). */
struct request {
    rf_keyed_keys_fn keys;
    rf_keyed_vals_fn vals;
    void *ctx;
    uint64_t vmax;
    int list;
    const uint64_t *list_at, *list_val, *first_val;
    size_t nlist;
};

static rf_status keyed_index(const rf_keyed_order *o, uint64_t m, const struct request *q,
                             unsigned threads, uint64_t *idx)
{
    const int list = q->list;
    const uint64_t n = list ? q->nlist : m; /* the items ordered */
    if (n == 0)
        return RF_OK;
    struct kx *x = calloc(1, sizeof *x);
    if (!x)
        return RF_ENOMEM;
    if (threads == 0)
        threads = rfi_online_cpus();
    if (threads > RFI_THREADS_MAX)
        threads = RFI_THREADS_MAX;
    const uint64_t blocks = (m + FETCH - 1) / FETCH;
    /* a list is shared among workers in pieces of a block's size at least */
    const uint64_t pieces = list ? (n + FETCH - 1) / FETCH : blocks;
    *x = (struct kx){.o = o, .m = m, .keys = q->keys, .vals = q->vals, .ctx = q->ctx,
                     .idx = idx, .list_at = list ? q->list_at : NULL,
                     .list_val = q->list_val, .nlist = q->nlist};
    x->T = threads < pieces ? threads : (unsigned)pieces;
    x->vbits = vbits_for(q->vmax);
    const unsigned ibits = vbits_for(n - 1);
    x->B = ibits > BUCKET_LOG ? ibits - BUCKET_LOG : 0;
    if (x->B > MAX_BUCKET_BITS)
        x->B = MAX_BUCKET_BITS;
    x->R = 64 - x->vbits < 64 - x->B ? 64 - x->vbits : 64 - x->B;
    const size_t nb = (size_t)1 << x->B;
    rf_status st = RF_ENOMEM;
    x->start = malloc((nb + 1) * sizeof *x->start);
    if (!x->start || (q->vals && !(x->first_val = malloc(blocks * sizeof *x->first_val))))
        goto done;
    if (list) /* the scatter that notes them is the list's maker's */
        memcpy(x->first_val, q->first_val, blocks * sizeof *x->first_val);
    for (unsigned t = 0; t < x->T; t++) {
        x->w[t] = (struct worker){.x = x, .t = t, .st = RF_OK};
        if (!(x->w[t].hist = calloc(nb, sizeof *x->w[t].hist)) ||
            !(x->w[t].keys = malloc(FETCH * sizeof *x->w[t].keys)) ||
            !(x->w[t].vals = malloc(FETCH * sizeof *x->w[t].vals)))
            goto done;
    }
    if ((st = run_all(x, COUNT)) != RF_OK)
        goto done;
    const size_t largest = plan_buckets(x);
    if ((st = run_all(x, SCATTER)) != RF_OK)
        goto done;
    st = RF_ENOMEM;
    for (unsigned t = 0; t < x->T; t++)
        if (!(x->w[t].scratch = malloc((largest ? largest : 1) * sizeof(uint64_t))))
            goto done;
    st = run_all(x, SORT);
    if (st == RF_OK)
        st = near_ties(x);
done:
    release(x);
    free(x);
    return st;
}

rf_status rf_keyed_index(const rf_keyed_order *o, uint64_t m, rf_keyed_keys_fn keys,
                         void *ctx, unsigned threads, uint64_t *idx)
{
    const struct request q = {.keys = keys, .ctx = ctx, .vmax = m ? m - 1 : 0};
    return keyed_index(o, m, &q, threads, idx);
}

rf_status rf_keyed_index_vals(const rf_keyed_order *o, uint64_t m, rf_keyed_keys_fn keys,
                              rf_keyed_vals_fn vals, void *ctx, uint64_t vmax,
                              unsigned threads, uint64_t *out)
{
    if (!vals)
        return RF_EINVAL;
    const struct request q = {.keys = keys, .vals = vals, .ctx = ctx, .vmax = vmax};
    return keyed_index(o, m, &q, threads, out);
}

rf_status rfi_keyed_index_list(const rf_keyed_order *o, uint64_t m, const uint64_t *at,
                               const uint64_t *val, size_t n, rf_keyed_keys_fn keys,
                               rf_keyed_vals_fn vals, void *ctx, const uint64_t *first_val,
                               uint64_t vmax, unsigned threads, uint64_t *idx)
{
    if (!keys || !vals || !first_val || (n > 0 && (!at || !val || !idx)) || n > m)
        return RF_EINVAL;
    const struct request q = {.keys = keys, .vals = vals, .ctx = ctx, .vmax = vmax,
                              .list = 1, .list_at = at, .list_val = val,
                              .first_val = first_val, .nlist = n};
    return keyed_index(o, m, &q, threads, idx);
}
