/* The keyed order's sort: an in-place MSD radix sort of (key, val) pairs
 * (American flag sort: McIlroy, Bostic & McIlroy, "Engineering radix sort",
 * Computing Systems 1993), then the tie shuffles.
 *
 * Items compare as the 128-bit numbers key:val.  Digits are taken from the
 * top; `pos` counts the bits of key:val not yet sorted on (128 at the start,
 * 64 once the key bits are used up).  A range whose key bits are all used up
 * holds one tie: it is sorted on val (input order) and shuffled.  Small
 * ranges are finished by insertion sort, and the ties inside them shuffled.
 * For random keys one wide pass leaves cache-sized buckets, and one narrow
 * pass inside each leaves a few items per bucket: O(n) in all. */
#include "common/thread.h"
#include "keyed_internal.h"

#include <pthread.h>
#include <stdlib.h>

/* Ranges this small are insertion-sorted. */
#define SMALL 32
/* Digits of 8 bits: 256 buckets.  Wider digits (11 bits were tried) make the
 * first pass over a large array slower, not faster: its 2048 write positions
 * lie on as many pages, more than the TLB holds. */
#define WIDE_BITS 8

struct sorter {
    rfi_tie_fn tie;
    void *ctx;
    rf_status st; /* first tie failure */
};

static inline int less(const rf_keyed *x, const rf_keyed *y)
{
    return x->key < y->key || (x->key == y->key && x->val < y->val);
}

static void insertion_sort(rf_keyed *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const rf_keyed v = a[i];
        size_t j = i;
        for (; j > 0 && less(&v, &a[j - 1]); j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

static void tie(struct sorter *s, rf_keyed *run, size_t m)
{
    const rf_status st = s->tie(s->ctx, run[0].key, run, m);
    if (st != RF_OK && s->st == RF_OK)
        s->st = st;
}

/* Shuffle every run of equal keys in sorted a[0..n). */
static void ties_in(struct sorter *s, rf_keyed *a, size_t n)
{
    for (size_t i = 0; i + 1 < n;) {
        size_t j = i + 1;
        while (j < n && a[j].key == a[i].key)
            j++;
        if (j - i >= 2)
            tie(s, a + i, j - i);
        i = j;
    }
}

/* Digit of `bits` bits just below bit `pos` of key:val (bits <= pos, and the
 * digit never straddles key and val). */
static inline size_t digit(const rf_keyed *e, unsigned pos, unsigned bits)
{
    const uint64_t w = pos > 64 ? e->key : e->val;
    const unsigned p = pos > 64 ? pos - 64 : pos;
    return (size_t)((w >> (p - bits)) & (((uint64_t)1 << bits) - 1));
}

static unsigned digit_bits(unsigned pos)
{
    const unsigned room = pos > 64 ? pos - 64 : pos;
    return WIDE_BITS < room ? WIDE_BITS : room;
}

/* One pass: permute a[0..n) in place so that digit d's items come before
 * digit d+1's; start[d] .. start[d+1] is digit d's range afterwards. */
static void partition(rf_keyed *a, size_t n, unsigned pos, unsigned bits, size_t *start)
{
    const size_t nb = (size_t)1 << bits;
    size_t next[(size_t)1 << WIDE_BITS];
    for (size_t d = 0; d <= nb; d++)
        start[d] = 0;
    for (size_t i = 0; i < n; i++)
        start[digit(&a[i], pos, bits) + 1]++;
    for (size_t d = 0; d < nb; d++) {
        start[d + 1] += start[d];
        next[d] = start[d];
    }
    for (size_t d = 0; d < nb; d++) {
        while (next[d] < start[d + 1]) {
            rf_keyed v = a[next[d]];
            size_t dv = digit(&v, pos, bits);
            while (dv != d) { /* follow the cycle, placing one item per step */
                const rf_keyed t = a[next[dv]];
                a[next[dv]++] = v;
                v = t;
                dv = digit(&v, pos, bits);
            }
            a[next[d]++] = v;
        }
    }
}

/* a[0..n): distinct vals, sorted on val bits below `pos`. */
static void sort_vals(rf_keyed *a, size_t n, unsigned pos)
{
    if (n < SMALL || pos == 0) {
        insertion_sort(a, n);
        return;
    }
    size_t start[((size_t)1 << WIDE_BITS) + 1];
    const unsigned bits = digit_bits(pos);
    partition(a, n, pos, bits, start);
    for (size_t d = 0; d < ((size_t)1 << bits); d++)
        sort_vals(a + start[d], start[d + 1] - start[d], pos - bits);
}

static void sort_keys(struct sorter *s, rf_keyed *a, size_t n, unsigned pos);

/* A digit's range after a pass that left `pos` key:val bits unsorted. */
static void sort_part(struct sorter *s, rf_keyed *a, size_t n, unsigned pos)
{
    if (pos > 64) {
        sort_keys(s, a, n, pos);
    } else if (n >= 2) { /* every key bit equal: one tie */
        sort_vals(a, n, 64);
        tie(s, a, n);
    }
}

/* a[0..n) sorted on the key bits below `pos` (64 < pos <= 128). */
static void sort_keys(struct sorter *s, rf_keyed *a, size_t n, unsigned pos)
{
    if (n < SMALL) {
        insertion_sort(a, n);
        ties_in(s, a, n);
        return;
    }
    size_t start[((size_t)1 << WIDE_BITS) + 1];
    const unsigned bits = digit_bits(pos);
    partition(a, n, pos, bits, start);
    for (size_t d = 0; d < ((size_t)1 << bits); d++)
        sort_part(s, a + start[d], start[d + 1] - start[d], pos - bits);
}

/* ------------------------------------------------------------------------ */
/* Threads: one wide pass here, then the digits' ranges shared out.  Each
 * range is sorted by exactly the code one thread would run, so the result
 * does not depend on the thread count. */

struct shared {
    rf_keyed *a;
    const size_t *start;
    size_t ndigits;
    unsigned pos; /* bits left after the first pass */
    size_t next;  /* next digit to take (atomic) */
    rfi_tie_fn tie;
    void *ctx;
};

struct worker {
    struct shared *sh;
    rf_status st;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    struct sorter s = {sh->tie, sh->ctx, RF_OK};
    for (;;) {
        const size_t d = __atomic_fetch_add(&sh->next, 1, __ATOMIC_RELAXED);
        if (d >= sh->ndigits)
            break;
        sort_part(&s, sh->a + sh->start[d], sh->start[d + 1] - sh->start[d], sh->pos);
    }
    w->st = s.st;
    return NULL;
}

/* Below this many items threads cost more than they save. */
#define PARALLEL_MIN ((size_t)1 << 18)

static rf_status sort_parallel(rf_keyed *a, size_t n, unsigned threads, rfi_tie_fn tie_fn,
                               void *ctx)
{
    static const unsigned bits = WIDE_BITS;
    size_t *start = malloc((((size_t)1 << bits) + 1) * sizeof *start);
    struct worker ws[RFI_THREADS_MAX];
    pthread_t tid[RFI_THREADS_MAX];
    int started[RFI_THREADS_MAX] = {0};
    if (!start) { /* no memory for the shared table: sort on this thread */
        struct sorter s = {tie_fn, ctx, RF_OK};
        sort_keys(&s, a, n, 128);
        return s.st;
    }
    partition(a, n, 128, bits, start);
    struct shared sh = {a, start, (size_t)1 << bits, 128 - bits, 0, tie_fn, ctx};
    for (unsigned t = 0; t < threads; t++)
        ws[t] = (struct worker){&sh, RF_OK};
    for (unsigned t = 1; t < threads; t++)
        started[t] = rfi_thread_start(&tid[t], worker_main, &ws[t]);
    worker_main(&ws[0]);
    rf_status st = ws[0].st;
    for (unsigned t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        if (st == RF_OK)
            st = ws[t].st;
    }
    free(start);
    return st;
}

rf_status rfi_keyed_sort_with(rf_keyed *a, size_t n, unsigned threads, rfi_tie_fn tie_fn,
                              void *ctx)
{
    if (threads == 0)
        threads = rfi_online_cpus();
    if (threads > RFI_THREADS_MAX)
        threads = RFI_THREADS_MAX;
    if (threads > 1 && n >= PARALLEL_MIN)
        return sort_parallel(a, n, threads, tie_fn, ctx);
    struct sorter s = {tie_fn, ctx, RF_OK};
    sort_keys(&s, a, n, 128);
    return s.st;
}
