/* Lexicographic rank and unrank for any n, with GMP integers (and decimal
 * strings on top of them).  Same mathematics as rank.c; the Lehmer digits are
 * computed with a Fenwick tree over the values (P. M. Fenwick, "A new data
 * structure for cumulative frequency tables", SPE 24(3), 1994): "how many
 * used values are below v" and "the d-th unused value" in O(log n) each.
 *
 * The rank is the mixed-radix number with digits d_0 .. d_{n-1} and radices
 * n, n-1, .., 1.  Horner's rule would need n multiplications of a number of
 * up to log2(n!) bits by a word, O(n^2 log n) bit operations; instead the
 * digits are cut into segments of SEGMENT, and two neighbouring segments
 * (value V and radix product P each) combine as V = V_left P_right + V_right,
 * P = P_left P_right -- a product tree (D. J. Bernstein, "Fast multiplication
 * and its applications", in Algorithmic Number Theory, MSRI Publ. 44, 2008:
 * its product and remainder trees).  Ranking combines segments as a binary counter does, so
 * that equal-sized neighbours meet and no digit array is needed; unranking
 * builds the tree of radix products and divides down it (a remainder tree),
 * each quotient going left and each remainder right.  With GMP's subquadratic
 * multiplication and division both take O(M(n log n) log n) bit operations,
 * M the cost of a multiplication. */
#include "riffle_gmp.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A 1-based Fenwick tree t[1..n] of counts (t[0] unused). */
typedef struct fenwick {
    size_t *t;
    size_t n;
} fenwick;

static void fw_add(fenwick *f, size_t i, size_t delta)
{
    for (i++; i <= f->n; i += i & (~i + 1))
        f->t[i] += delta;
}

static void fw_sub(fenwick *f, size_t i)
{
    for (i++; i <= f->n; i += i & (~i + 1))
        f->t[i]--;
}

/* Sum of counts of values 0 .. i-1. */
static size_t fw_below(const fenwick *f, size_t i)
{
    size_t s = 0;
    for (; i > 0; i &= i - 1)
        s += f->t[i];
    return s;
}

/* The value v with d counted values below it and a count at v (0-based d);
 * precondition: d < total count.  Binary lifting down the implicit tree. */
static size_t fw_select(const fenwick *f, size_t d)
{
    size_t pos = 0, step = 1;
    while (step <= f->n / 2)
        step *= 2;
    for (; step > 0; step /= 2) {
        if (pos + step <= f->n && f->t[pos + step] <= d) {
            pos += step;
            d -= f->t[pos];
        }
    }
    return pos; /* value pos (0-based) is node pos + 1 */
}

size_t rf_rank_scratch_size(size_t n)
{
    if (n >= SIZE_MAX / sizeof(size_t))
        return SIZE_MAX;
    return (n + 1) * sizeof(size_t);
}

/* Bits of n! are at most sum_{i=2..n} bit_width(i); digits at most bits *
 * log10(2) + 1 (1234/4096 > log10 2), plus one for mpz_sizeinbase's possible
 * excess and one for the NUL. */
size_t rf_rank_string_size(size_t n)
{
    uint64_t bits = 0;
    for (unsigned w = 2; w <= 64; w++) {
        const uint64_t lo = (uint64_t)1 << (w - 1);
        if (lo > n)
            break;
        const uint64_t hi = w == 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
        const uint64_t top = hi < n ? hi : n;
        const uint64_t count = top - lo + 1;
        if (count > (UINT64_MAX - bits) / w)
            return SIZE_MAX;
        bits += count * w;
    }
    const uint64_t digits = bits / 4096 * 1234 + (bits % 4096) * 1234 / 4096 + 1;
    return digits + 2 > SIZE_MAX ? SIZE_MAX : (size_t)(digits + 2);
}

/* Use the caller's scratch or allocate; *mem is what to free. */
static rf_status get_tree(fenwick *f, size_t n, void *scratch, size_t scratch_size,
                          void **mem)
{
    const size_t need = rf_rank_scratch_size(n);
    *mem = NULL;
    if (need == SIZE_MAX || n > ULONG_MAX)
        return RF_ERANGE;
    if (scratch == NULL) {
        scratch = *mem = malloc(need);
        if (scratch == NULL)
            return RF_ENOMEM;
    } else if (scratch_size < need || (uintptr_t)scratch % _Alignof(size_t) != 0) {
        return RF_EINVAL;
    }
    f->t = scratch;
    f->n = n;
    return RF_OK;
}

/* Digits per leaf of the trees: below this, multiplying by words is faster
 * than multiplying big numbers. */
#define SEGMENT 32

/* One segment of the rank: its value and the product of its radices. */
typedef struct segment {
    mpz_t value, radix;
    size_t len; /* digits */
} segment;

/* Combine stack[top-2] (left) and stack[top-1] (right) into stack[top-2]. */
static void join_top(segment *stack, size_t top)
{
    segment *l = &stack[top - 2], *r = &stack[top - 1];
    mpz_mul(l->value, l->value, r->radix);
    mpz_add(l->value, l->value, r->value);
    mpz_mul(l->radix, l->radix, r->radix);
    l->len += r->len;
}

rf_status rf_rank_mpz(mpz_t rank, const size_t *perm, size_t n, size_t *where,
                      void *scratch, size_t scratch_size)
{
    fenwick f;
    void *mem;
    rf_status st = get_tree(&f, n, scratch, scratch_size, &mem);
    if (st != RF_OK)
        return st;
    memset(f.t, 0, (n + 1) * sizeof *f.t);
    /* A stack of segments, lengths strictly decreasing from the bottom except
     * for the newest: at most one per bit of n / SEGMENT, plus two. */
    segment stack[sizeof(size_t) * CHAR_BIT + 2];
    size_t top = 0, inited = 0;
    for (size_t i = 0; i < n; i++) {
        const size_t v = perm[i];
        if (v >= n || fw_below(&f, v + 1) != fw_below(&f, v)) {
            if (where)
                *where = i;
            st = RF_EINVAL;
            break;
        }
        if (i % SEGMENT == 0) {
            /* Merge equal neighbours, then open a new segment. */
            while (top >= 2 && stack[top - 2].len == stack[top - 1].len)
                join_top(stack, top--);
            if (top == inited) {
                mpz_inits(stack[top].value, stack[top].radix, NULL);
                inited++;
            }
            mpz_set_ui(stack[top].value, 0);
            mpz_set_ui(stack[top].radix, 1);
            stack[top].len = 0;
            top++;
        }
        segment *s = &stack[top - 1];
        mpz_mul_ui(s->value, s->value, (unsigned long)(n - i));
        mpz_add_ui(s->value, s->value, (unsigned long)(v - fw_below(&f, v)));
        mpz_mul_ui(s->radix, s->radix, (unsigned long)(n - i));
        s->len++;
        fw_add(&f, v, 1);
    }
    if (st == RF_OK) {
        while (top >= 2)
            join_top(stack, top--);
        if (top == 1)
            mpz_swap(rank, stack[0].value);
        else
            mpz_set_ui(rank, 0);
    }
    for (size_t k = 0; k < inited; k++)
        mpz_clears(stack[k].value, stack[k].radix, NULL);
    free(mem);
    return st;
}

/* The product tree of the radices for unranking: node k covers digits
 * [lo, hi), its children 2k and 2k + 1 the halves [lo, mid) and [mid, hi);
 * leaves hold at most SEGMENT digits.  Digit i has radix n - i. */
typedef struct radix_tree {
    mpz_t *node;
    size_t count, n;
} radix_tree;

static size_t tree_mid(size_t lo, size_t hi)
{
    /* Split on a multiple of SEGMENT so that leaves are whole segments. */
    const size_t leaves = (hi - lo + SEGMENT - 1) / SEGMENT;
    return lo + (leaves / 2) * SEGMENT;
}

static void tree_build(radix_tree *t, size_t k, size_t lo, size_t hi)
{
    if (hi - lo <= SEGMENT) {
        mpz_set_ui(t->node[k], 1);
        for (size_t i = lo; i < hi; i++)
            mpz_mul_ui(t->node[k], t->node[k], (unsigned long)(t->n - i));
        return;
    }
    const size_t mid = tree_mid(lo, hi);
    tree_build(t, 2 * k, lo, mid);
    tree_build(t, 2 * k + 1, mid, hi);
    mpz_mul(t->node[k], t->node[2 * k], t->node[2 * k + 1]);
}

/* Digits [lo, hi) of v (v < the node's product) into digit[lo, hi); v is
 * consumed. */
static void tree_digits(const radix_tree *t, size_t k, size_t lo, size_t hi, mpz_t v,
                        size_t *digit)
{
    if (hi - lo <= SEGMENT) {
        for (size_t i = hi; i-- > lo;)
            digit[i] = (size_t)mpz_fdiv_q_ui(v, v, (unsigned long)(t->n - i));
        return;
    }
    const size_t mid = tree_mid(lo, hi);
    mpz_t q;
    mpz_init(q);
    mpz_tdiv_qr(q, v, v, t->node[2 * k + 1]);
    tree_digits(t, 2 * k + 1, mid, hi, v, digit);
    tree_digits(t, 2 * k, lo, mid, q, digit);
    mpz_clear(q);
}

/* The factorial-base digits of `rank` into digit[0..n); RF_ERANGE if rank >= n!. */
static rf_status rank_digits(const mpz_t rank, size_t n, size_t *digit)
{
    mpz_t r;
    mpz_init_set(r, rank);
    rf_status st = RF_OK;
    if (n <= SEGMENT) {
        for (size_t m = 1; m <= n; m++)
            digit[n - m] = (size_t)mpz_fdiv_q_ui(r, r, (unsigned long)m);
        if (mpz_sgn(r) != 0)
            st = RF_ERANGE;
        mpz_clear(r);
        return st;
    }
    /* Leaves: ceil(n / SEGMENT); a tree of them has fewer than 4 x nodes. */
    radix_tree t = {.n = n};
    t.count = 4 * ((n + SEGMENT - 1) / SEGMENT);
    t.node = malloc(t.count * sizeof *t.node);
    if (t.node == NULL) {
        mpz_clear(r);
        return RF_ENOMEM;
    }
    for (size_t k = 0; k < t.count; k++)
        mpz_init(t.node[k]);
    tree_build(&t, 1, 0, n);
    if (mpz_cmp(r, t.node[1]) >= 0)
        st = RF_ERANGE; /* rank >= n! */
    else
        tree_digits(&t, 1, 0, n, r, digit);
    for (size_t k = 0; k < t.count; k++)
        mpz_clear(t.node[k]);
    free(t.node);
    mpz_clear(r);
    return st;
}

rf_status rf_unrank_mpz(const mpz_t rank, size_t n, size_t *perm, void *scratch,
                        size_t scratch_size)
{
    if (mpz_sgn(rank) < 0)
        return RF_ERANGE;
    fenwick f;
    void *mem;
    rf_status st = get_tree(&f, n, scratch, scratch_size, &mem);
    if (st != RF_OK)
        return st;
    st = rank_digits(rank, n, perm);
    if (st != RF_OK)
        goto done;
    /* Every value unused: node i covers i & -i values. */
    f.t[0] = 0;
    for (size_t i = 1; i <= n; i++)
        f.t[i] = i & (~i + 1);
    for (size_t i = 0; i < n; i++) {
        const size_t v = fw_select(&f, perm[i]);
        fw_sub(&f, v);
        perm[i] = v;
    }
done:
    free(mem);
    return st;
}

rf_status rf_rank_string(const size_t *perm, size_t n, char *buf, size_t bufsize,
                         size_t *where, void *scratch, size_t scratch_size)
{
    if (buf == NULL || bufsize < rf_rank_string_size(n))
        return RF_EINVAL;
    mpz_t r;
    mpz_init(r);
    const rf_status st = rf_rank_mpz(r, perm, n, where, scratch, scratch_size);
    if (st == RF_OK)
        mpz_get_str(buf, 10, r);
    mpz_clear(r);
    return st;
}

rf_status rf_unrank_string(const char *rank, size_t n, size_t *perm, void *scratch,
                           size_t scratch_size)
{
    if (rank == NULL || rank[0] == '\0' || strspn(rank, "0123456789") != strlen(rank))
        return RF_EINVAL;
    mpz_t r;
    if (mpz_init_set_str(r, rank, 10) != 0) {
        mpz_clear(r);
        return RF_EINVAL;
    }
    const rf_status st = rf_unrank_mpz(r, n, perm, scratch, scratch_size);
    mpz_clear(r);
    return st;
}
