/* rf_sample: k of n in uniformly random order by Fisher-Yates stopped after k
 * steps (Durstenfeld's form; Knuth, TAOCP vol. 2, 3.4.2, Algorithm P), on a
 * virtual array a[i] = i.  Step t swaps a[t] with a[j], j = t + below(n - t):
 * each of the n (n-1) ... (n-k+1) draw sequences gives a distinct k-prefix,
 * so all k-permutations are equally likely (tests/unit/test_sample.c enumerates
 * them).  For huge n only displaced cells are stored, in a hash map: a step
 * reads a[t] and a[j] and writes a[j] only (a[t] is final and never read
 * again), so the map holds at most k entries -- the "sparse Fisher-Yates".
 * For small n the array itself is cheaper; both give identical output. */
#include "sample_internal.h"
#include "sample_map.h"

#include "riffle_perm.h"

#include <stdlib.h>

/* Dense when the array of n words is no larger than the map would be. */
static int use_dense(uint64_t n, size_t cap)
{
    return n <= (uint64_t)cap * 2;
}

size_t rf_sample_scratch_size(uint64_t n, size_t k)
{
    if (k == 0)
        return 0;
    const size_t cap = rfi_map_capacity(k, 2);
    if (cap == 0)
        return SIZE_MAX;
    if (use_dense(n, cap))
        return (size_t)n * sizeof(uint64_t);
    return cap * 2 * sizeof(uint64_t);
}

void rfi_sample_dense(rf_rng *g, uint64_t n, size_t k, uint64_t *out, uint64_t *a)
{
    for (uint64_t i = 0; i < n; i++)
        a[i] = i;
    for (size_t t = 0; t < k; t++) {
        const uint64_t j = t + rf_below(g, n - t);
        const uint64_t at = a[t];
        a[t] = a[j];
        a[j] = at;
        out[t] = a[t];
    }
}

void rfi_sample_sparse(rf_rng *g, uint64_t n, size_t k, uint64_t *out, void *mem,
                       size_t cap)
{
    rfi_map m;
    rfi_map_init(&m, mem, cap, 2);
    for (size_t t = 0; t < k; t++) {
        const uint64_t j = t + rf_below(g, n - t);
        const uint64_t at = rfi_map_get(&m, t, t);
        if (j == t) {
            out[t] = at;
            continue;
        }
        out[t] = rfi_map_get(&m, j, j);
        rfi_map_put(&m, j, at);
    }
}

rf_status rf_sample(rf_rng *g, uint64_t n, size_t k, uint64_t *out, void *scratch,
                    size_t scratch_size)
{
    if (k > n)
        return RF_EINVAL;
    if (k == 0)
        return RF_OK;
    const size_t need = rf_sample_scratch_size(n, k);
    if (need == SIZE_MAX)
        return RF_ENOMEM;
    void *mem = scratch;
    if (mem == NULL) {
        mem = malloc(need);
        if (mem == NULL)
            return RF_ENOMEM;
    } else if (scratch_size < need || (uintptr_t)scratch % _Alignof(uint64_t) != 0) {
        return RF_EINVAL;
    }
    const size_t cap = rfi_map_capacity(k, 2);
    if (use_dense(n, cap))
        rfi_sample_dense(g, n, k, out, mem);
    else
        rfi_sample_sparse(g, n, k, out, mem, cap);
    if (scratch == NULL)
        free(mem);
    return RF_OK;
}
