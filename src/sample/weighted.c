/* rf_wsample: weighted sampling without replacement, Efraimidis & Spirakis,
 * "Weighted random sampling with a reservoir", IPL 97(5):181-185, 2006,
 * algorithm A-ExpJ ("A-Res with exponential jumps").
 *
 * A-Res gives item i the key u_i^(1/w_i) and keeps the k largest; the keys
 * sorted in decreasing order are distributed as successive weighted draws
 * without replacement (ibid., Theorem 1 and its corollary).  We keep log keys,
 * log(u)/w, which are monotone in the keys and do not underflow.  A-ExpJ
 * replaces the per-item uniform by a jump: with T the smallest key in the
 * reservoir, the total weight passed before some item's key beats T is
 * X = log(U) / log(T); the item at which the running weight reaches X enters
 * with a key drawn uniformly from the part above T, r ~ U(T^w, 1), key =
 * r^(1/w).  One uniform per replacement instead of one per item.
 *
 * Range.  log(u)/w overflows for a subnormal w (1e-310: every key -inf, and
 * ties, so the first item nearly never won), and falls into the subnormals,
 * losing bits, for a huge one (1e308).  So every key and the jump are a
 * double m with an exponent e of their own, m * 2^e, and a weight w enters as
 * its mantissa wm = w * 2^-ilogb(w) in [1, 2): scaling by a power of two is
 * exact, and a quotient or product scaled by one rounds as the unscaled one
 * does, so in the range where the plain doubles were exact (all ordinary
 * weights) every key, jump and comparison is bit for bit what it was, and
 * seeded outputs are unchanged; outside it nothing over- or underflows. */
#include "riffle_perm.h"

#include <math.h>
#include <stdlib.h>

size_t rf_wsample_scratch_size(size_t k)
{
    if (k > SIZE_MAX / sizeof(rf_wsample_entry))
        return SIZE_MAX;
    return k * sizeof(rf_wsample_entry);
}

rf_status rf_wsample_init(rf_wsample *s, size_t k, void *scratch, size_t scratch_size)
{
    if (k == 0 || scratch == NULL || scratch_size < rf_wsample_scratch_size(k) ||
        (uintptr_t)scratch % _Alignof(rf_wsample_entry) != 0)
        return RF_EINVAL;
    s->k = k;
    s->filled = 0;
    s->heap = scratch;
    s->jump = 0.0;
    s->jump_exp = 0;
    s->have_jump = 0;
    s->finished = 0;
    s->owned = NULL;
    return RF_OK;
}

rf_wsample *rf_wsample_new(size_t k)
{
    const size_t need = rf_wsample_scratch_size(k);
    if (k == 0 || need == SIZE_MAX)
        return NULL;
    rf_wsample *s = malloc(sizeof *s);
    void *heap = malloc(need);
    if (s == NULL || heap == NULL || rf_wsample_init(s, k, heap, need) != RF_OK) {
        free(heap);
        free(s);
        return NULL;
    }
    s->owned = heap;
    return s;
}

void rf_wsample_free(rf_wsample *s)
{
    if (s == NULL)
        return;
    free(s->owned);
    free(s);
}

/* Uniform in (0, 1], so that its logarithm is finite. */
static double unit_open0(rf_rng *g)
{
    return 1.0 - rf_double(g);
}

/* A number m * 2^e with m = 0 or 0.5 <= |m| < 1 (frexp's form), so that
 * two of the same sign compare by exponent first.  m may be infinite. */
typedef struct xnum {
    double m;
    int e;
} xnum;

/* m * 2^e in the normal form. */
static xnum xnum_make(double m, int e)
{
    int x = 0;
    const double f = isfinite(m) ? frexp(m, &x) : m;
    if (f == 0.0 || !isfinite(f))
        return (xnum){f, 0};
    return (xnum){f, e + x};
}

/* a < b for keys (<= 0: zero is the largest). */
static int key_less(const rf_wsample_entry *a, const rf_wsample_entry *b)
{
    if (a->key == 0.0 || b->key == 0.0)
        return a->key < b->key;
    if (a->key_exp != b->key_exp) /* both negative: the larger exponent is smaller */
        return a->key_exp > b->key_exp;
    return a->key < b->key;
}

/* log(r) / w as a key, w = wm * 2^we. */
static void set_key(rf_wsample_entry *h, double log_r, double wm, int we)
{
    const xnum k = xnum_make(log_r / wm, -we);
    h->key = k.m;
    h->key_exp = k.e;
}

static void sift_down(rf_wsample_entry *h, size_t n, size_t i)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && key_less(&h[l], &h[m]))
            m = l;
        if (r < n && key_less(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        const rf_wsample_entry t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void sift_up(rf_wsample_entry *h, size_t i)
{
    while (i > 0 && key_less(&h[i], &h[(i - 1) / 2])) {
        const rf_wsample_entry t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

/* X = log(U) / log(T), T the smallest key (log T = heap[0].key <= 0).  A
 * smallest key of 1 (log 0) can never be beaten: an infinite jump. */
static void new_jump(rf_wsample *s, rf_rng *g)
{
    const double lt = s->heap[0].key;
    const double lu = log(unit_open0(g));
    const xnum x = lt == 0.0 ? (xnum){INFINITY, 0} : xnum_make(lu / lt, -s->heap[0].key_exp);
    s->jump = x.m;
    s->jump_exp = x.e;
    s->have_jump = 1;
}

static int bad_weight(double w)
{
    return !(w >= 0.0) || isinf(w);
}

rf_status rf_wsample_offer(rf_wsample *s, rf_rng *g, double weight, size_t *slot)
{
    *slot = RF_RESERVOIR_DISCARD;
    if (s->finished || bad_weight(weight))
        return RF_EINVAL;
    if (weight == 0.0)
        return RF_OK;
    const int we = ilogb(weight);
    const double wm = scalbn(weight, -we);
    if (s->filled < s->k) {
        const size_t i = s->filled++;
        set_key(&s->heap[i], log(unit_open0(g)), wm, we);
        s->heap[i].slot = i;
        sift_up(s->heap, i);
        if (s->filled == s->k)
            new_jump(s, g);
        *slot = i;
        return RF_OK;
    }
    /* The weight in the jump's scale: exact, or so far below the jump that
     * it rounds away as it would in the subtraction, or so far above it
     * (infinite) that the jump is passed. */
    const double left = s->jump - scalbn(weight, -s->jump_exp);
    if (left > 0.0) {
        const xnum x = xnum_make(left, s->jump_exp);
        s->jump = x.m;
        s->jump_exp = x.e;
        return RF_OK;
    }
    /* The new key is uniform on (T^w, 1] raised to 1/w: log(r) / w. */
    const double tw = exp(scalbn(s->heap[0].key * wm, s->heap[0].key_exp + we));
    const double r = tw + (1.0 - tw) * unit_open0(g);
    set_key(&s->heap[0], log(r), wm, we);
    *slot = s->heap[0].slot;
    sift_down(s->heap, s->k, 0);
    new_jump(s, g);
    return RF_OK;
}

size_t rf_wsample_result(rf_wsample *s, size_t *slots)
{
    const size_t n = s->filled;
    s->finished = 1;
    /* Heapsort with the min-heap: the smallest key goes to the back, so the
     * array ends in decreasing key order. */
    for (size_t end = n; end > 1; end--) {
        const rf_wsample_entry t = s->heap[0];
        s->heap[0] = s->heap[end - 1];
        s->heap[end - 1] = t;
        sift_down(s->heap, end - 1, 0);
    }
    for (size_t i = 0; i < n; i++)
        slots[i] = s->heap[i].slot;
    return n;
}

rf_status rf_sample_weighted(rf_rng *g, const double *w, size_t n, size_t k, size_t *out,
                             size_t *count)
{
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        if (bad_weight(w[i])) {
            *count = i;
            return RF_EINVAL;
        }
    }
    if (k == 0)
        return RF_OK;
    rf_wsample *s = rf_wsample_new(k);
    size_t *item = malloc(k * sizeof *item);
    if (s == NULL || item == NULL) {
        rf_wsample_free(s);
        free(item);
        return RF_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        size_t slot;
        if (rf_wsample_offer(s, g, w[i], &slot) == RF_OK && slot != RF_RESERVOIR_DISCARD)
            item[slot] = i;
    }
    *count = rf_wsample_result(s, out);
    for (size_t j = 0; j < *count; j++)
        out[j] = item[out[j]];
    rf_wsample_free(s);
    free(item);
    return RF_OK;
}
