/* libFuzzer target: any key, domain size, mode and index for rf_perm; any
 * bytes as a rank string or a permutation.  Always-on checks: a cipher
 * permutation stays in the domain and its inverse undoes it (also near the
 * top of the domain, where cycle walking happens); ranking and unranking
 * agree, and invalid input is rejected with the documented status. */
#include <riffle_perm.h>

#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static uint64_t take(const uint8_t **d, size_t *n, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes && *n > 0; i++, (*d)++, (*n)--)
        v |= (uint64_t)**d << (8 * i);
    return v;
}

static void fuzz_perm(const uint8_t *data, size_t size)
{
    uint8_t key[RF_KEY_BYTES] = {0};
    for (size_t i = 0; i < RF_KEY_BYTES && size > 0; i++, data++, size--)
        key[i] = *data;
    const rf_perm_mode mode = (rf_perm_mode)(2 + take(&data, &size, 1) % 2);
    const uint64_t max = take(&data, &size, 8) >> (take(&data, &size, 1) % 64);
    rf_perm p;
    CHECK(rf_perm_init(&p, key, max, mode, NULL, 0) == RF_OK);
    for (int t = 0; t < 8; t++) {
        const uint64_t r = take(&data, &size, 8);
        const uint64_t x = t < 4 ? (max == UINT64_MAX ? r : r % (max + 1))
                                 : max - (r % 16 > max ? max : r % 16);
        const uint64_t y = rf_perm_at(&p, x), z = rf_perm_inverse(&p, x);
        CHECK(y <= max && z <= max);
        CHECK(rf_perm_inverse(&p, y) == x && rf_perm_at(&p, z) == x);
    }
}

static void fuzz_rank(const uint8_t *data, size_t size)
{
    size_t n = (size_t)(take(&data, &size, 1) % 64);
    size_t perm[64], back[64], where;
    char text[256];
    const size_t len = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, len);
    text[len] = '\0';
    rf_status st = rf_unrank_string(text, n, perm, NULL, 0);
    CHECK(st == RF_OK || st == RF_EINVAL || st == RF_ERANGE);
    if (st == RF_OK) {
        char again[256];
        CHECK(rf_rank_string(perm, n, again, sizeof again, NULL, NULL, 0) == RF_OK);
        CHECK(rf_unrank_string(again, n, back, NULL, 0) == RF_OK);
        CHECK(memcmp(perm, back, n * sizeof *perm) == 0);
    }
    /* the bytes as a permutation: valid iff the rank round-trips */
    n = len < 64 ? len : 64;
    for (size_t i = 0; i < n; i++)
        perm[i] = (size_t)(unsigned char)text[i] % (n + 1);
    st = rf_rank_string(perm, n, text, sizeof text, &where, NULL, 0);
    if (st == RF_OK) {
        CHECK(rf_unrank_string(text, n, back, NULL, 0) == RF_OK);
        CHECK(memcmp(perm, back, n * sizeof *perm) == 0);
    } else {
        CHECK(st == RF_EINVAL && where < n);
        int repeat = 0;
        for (size_t j = 0; j < where; j++)
            repeat |= perm[j] == perm[where];
        CHECK(perm[where] >= n || repeat);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 0 && data[0] % 2 == 0)
        fuzz_perm(data + 1, size - 1);
    else if (size > 0)
        fuzz_rank(data + 1, size - 1);
    return 0;
}
