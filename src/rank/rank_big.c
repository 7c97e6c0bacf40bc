/* Lexicographic rank and unrank for any n, with GMP integers (and decimal
 * strings on top of them).  Same mathematics as rank.c; the Lehmer digits are
 * computed with a Fenwick tree over the values (P. M. Fenwick, "A new data
 * structure for cumulative frequency tables", SPE 24(3), 1994): "how many
 * used values are below v" and "the d-th unused value" in O(log n) each.
 * The rank is accumulated by Horner's rule, n multiplications by a word, and
 * taken apart by n divisions by a word. */
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

rf_status rf_rank_mpz(mpz_t rank, const size_t *perm, size_t n, size_t *where,
                      void *scratch, size_t scratch_size)
{
    fenwick f;
    void *mem;
    rf_status st = get_tree(&f, n, scratch, scratch_size, &mem);
    if (st != RF_OK)
        return st;
    memset(f.t, 0, (n + 1) * sizeof *f.t);
    mpz_set_ui(rank, 0);
    for (size_t i = 0; i < n; i++) {
        const size_t v = perm[i];
        if (v >= n || fw_below(&f, v + 1) != fw_below(&f, v)) {
            if (where)
                *where = i;
            st = RF_EINVAL;
            break;
        }
        mpz_mul_ui(rank, rank, (unsigned long)(n - i));
        mpz_add_ui(rank, rank, (unsigned long)(v - fw_below(&f, v)));
        fw_add(&f, v, 1);
    }
    free(mem);
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
    mpz_t r;
    mpz_init_set(r, rank);
    for (size_t m = 1; m <= n; m++)
        perm[n - m] = (size_t)mpz_fdiv_q_ui(r, r, (unsigned long)m);
    if (mpz_sgn(r) != 0) {
        st = RF_ERANGE; /* rank >= n! */
        goto done;
    }
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
    mpz_clear(r);
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
