/* rf_sample_subset: Floyd's algorithm (Bentley & Floyd, "A sample of
 * brilliance", CACM 30(9), 1987).  Induction on j: after the step for j the set
 * S is a uniform (j - n + k + 1)-subset of [0, j]: t = below(j + 1) picks any
 * of the j + 1 values; a t already in S is replaced by the new value j, which
 * makes every subset containing j reachable in exactly |S| + 1 ways, the same
 * as every subset without j.  k draws and a hash set of k values. */
#include "sample_map.h"

#include "riffle_perm.h"

#include <stdlib.h>

size_t rf_sample_subset_scratch_size(size_t k)
{
    if (k == 0)
        return 0;
    const size_t cap = rfi_map_capacity(k, 1);
    return cap == 0 ? SIZE_MAX : cap * sizeof(uint64_t);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void floyd(rf_rng *g, uint64_t n, size_t k, uint64_t *out, void *mem)
{
    rfi_map set;
    rfi_map_init(&set, mem, rfi_map_capacity(k, 1), 1);
    size_t i = 0;
    for (uint64_t j = n - k; j < n; j++) {
        const uint64_t t = rf_below(g, j + 1);
        /* j itself cannot be in S yet: every member is below j. */
        out[i++] = rfi_set_add(&set, t) ? t : (rfi_set_add(&set, j), j);
    }
    qsort(out, k, sizeof *out, cmp_u64);
}

rf_status rf_sample_subset(rf_rng *g, uint64_t n, size_t k, uint64_t *out, void *scratch,
                           size_t scratch_size)
{
    if (k > n)
        return RF_EINVAL;
    if (k == 0)
        return RF_OK;
    const size_t need = rf_sample_subset_scratch_size(k);
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
    floyd(g, n, k, out, mem);
    if (scratch == NULL)
        free(mem);
    return RF_OK;
}
