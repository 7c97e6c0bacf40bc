/* rf_perm: the keyed random-access permutation object -- mode choice, the
 * exact table mode, and dispatch to the Feistel network (feistel.c).
 *
 * The table is the identity shuffled by rf_shuffle_u32 under ChaCha20(key,
 * stream 0), so a table permutation is exactly what shuffling the range with
 * the same key gives (riffle.h: rf_shuffle draws the same for every element
 * size), and its uniformity is the one proven for rf_shuffle. */
#include "perm_internal.h"
#include "common/sodium.h"

#include <assert.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static rf_perm_mode resolve(uint64_t max, rf_perm_mode mode)
{
    if (mode != RF_PERM_AUTO)
        return mode;
    return max < RF_PERM_TABLE_MAX ? RF_PERM_TABLE : RF_PERM_SIPHASH;
}

static unsigned bit_width(uint64_t x)
{
    unsigned b = 0;
    while (x) {
        b++;
        x >>= 1;
    }
    return b;
}

size_t rf_perm_scratch_size(uint64_t max, rf_perm_mode mode)
{
    if (resolve(max, mode) != RF_PERM_TABLE)
        return 0;
    if (max > UINT32_MAX || max >= SIZE_MAX / (2 * sizeof(uint32_t)))
        return SIZE_MAX;
    return (size_t)(max + 1) * 2 * sizeof(uint32_t);
}

static rf_status build_table(rf_perm *p, const uint8_t key[RF_KEY_BYTES], void *scratch)
{
    const size_t n = (size_t)p->max + 1;
    rf_rng g;
    rf_status st = rf_rng_init(&g, RF_RNG_CHACHA20, key, 0);
    if (st != RF_OK)
        return st;
    p->fwd = scratch;
    p->inv = p->fwd + n;
    for (size_t i = 0; i < n; i++)
        p->fwd[i] = (uint32_t)i;
    rf_shuffle_u32(&g, p->fwd, n);
    for (size_t i = 0; i < n; i++)
        p->inv[p->fwd[i]] = (uint32_t)i;
    sodium_memzero(&g, sizeof g);
    return RF_OK;
}

rf_status rf_perm_init(rf_perm *p, const uint8_t key[RF_KEY_BYTES], uint64_t max,
                       rf_perm_mode mode, void *scratch, size_t scratch_size)
{
    if (mode < RF_PERM_AUTO || mode > RF_PERM_MULTIPLY)
        return RF_EINVAL;
    memset(p, 0, sizeof *p);
    p->max = max;
    p->mode = resolve(max, mode);
    if (p->mode == RF_PERM_TABLE) {
        const size_t need = rf_perm_scratch_size(max, mode);
        if (need == SIZE_MAX)
            return RF_ERANGE;
        if (scratch == NULL || scratch_size < need ||
            (uintptr_t)scratch % _Alignof(uint32_t) != 0)
            return RF_EINVAL;
        return build_table(p, key, scratch);
    }
    const unsigned b = bit_width(max);
    p->hi_bits = b / 2;
    p->lo_bits = b - b / 2;
    p->rounds = p->mode == RF_PERM_SIPHASH ? 8 : 10; /* as feistel.c */
    if (rfi_sodium_ready() != RF_OK)
        return RF_ECRYPTO;
    return rfi_feistel_keys(p, key);
}

rf_perm *rf_perm_new(const uint8_t key[RF_KEY_BYTES], uint64_t max, rf_perm_mode mode,
                     rf_status *status)
{
    rf_status st = RF_ENOMEM;
    rf_perm *p = NULL;
    void *table = NULL;
    const size_t need = rf_perm_scratch_size(max, mode);
    if (need == SIZE_MAX) {
        st = RF_ERANGE;
        goto fail;
    }
    p = malloc(sizeof *p);
    if (p == NULL)
        goto fail;
    if (need > 0 && (table = malloc(need)) == NULL)
        goto fail;
    st = rf_perm_init(p, key, max, mode, table, need);
    if (st != RF_OK)
        goto fail;
    p->owned = table != NULL ? table : (void *)p;
    if (status)
        *status = RF_OK;
    return p;
fail:
    free(table);
    free(p);
    if (status)
        *status = st;
    return NULL;
}

void rf_perm_free(rf_perm *p)
{
    if (p == NULL)
        return;
    void *owned = p->owned;
    if (p->mode == RF_PERM_TABLE && p->fwd != NULL)
        sodium_memzero(p->fwd, ((size_t)p->max + 1) * 2 * sizeof(uint32_t));
    if (owned != NULL && owned != (void *)p)
        free(owned);
    sodium_memzero(p, sizeof *p);
    if (owned != NULL)
        free(p);
}

uint64_t rf_perm_at(const rf_perm *p, uint64_t i)
{
    assert(i <= p->max);
    if (p->mode == RF_PERM_TABLE)
        return p->fwd[i];
    return rfi_feistel_at(p, i);
}

uint64_t rf_perm_inverse(const rf_perm *p, uint64_t y)
{
    assert(y <= p->max);
    if (p->mode == RF_PERM_TABLE)
        return p->inv[y];
    return rfi_feistel_inverse(p, y);
}

void rf_perm_at_range(const rf_perm *p, uint64_t first, size_t count, uint64_t *out)
{
    if (count == 0)
        return;
    assert(first <= p->max && count - 1 <= p->max - first);
    if (p->mode == RF_PERM_TABLE) {
        for (size_t j = 0; j < count; j++)
            out[j] = p->fwd[first + j];
        return;
    }
    rfi_feistel_range(p, first, count, out);
}

uint64_t rf_perm_max(const rf_perm *p)
{
    return p->max;
}

rf_perm_mode rf_perm_get_mode(const rf_perm *p)
{
    return p->mode;
}

static const char *const mode_names[] = {"auto", "table", "siphash", "multiply"};

const char *rf_perm_mode_name(rf_perm_mode mode)
{
    if (mode < RF_PERM_AUTO || mode > RF_PERM_MULTIPLY)
        return "unknown";
    return mode_names[mode];
}

rf_status rf_perm_mode_parse(const char *name, rf_perm_mode *mode)
{
    for (int m = RF_PERM_AUTO; m <= RF_PERM_MULTIPLY; m++) {
        if (strcmp(name, mode_names[m]) == 0) {
            *mode = (rf_perm_mode)m;
            return RF_OK;
        }
    }
    return RF_EINVAL;
}
