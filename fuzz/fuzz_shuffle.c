/* libFuzzer target: any seed, generator, element size, n and k.  Always-on
 * checks: the output is a permutation of the input with every element intact,
 * and a partial shuffle is the head of the full shuffle. */
#include <riffle.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint64_t seed = take(&data, &size, 8);
    const rf_rng_kind kind = (rf_rng_kind)(take(&data, &size, 1) % 3);
    const size_t esize = 1 + take(&data, &size, 1) % 40;
    const size_t n = take(&data, &size, 2) % 3000;
    const size_t k = n ? take(&data, &size, 2) % (n + 2) : 0;
    rf_rng g, h;
    CHECK(rf_rng_seed_u64(&g, kind, seed) == RF_OK);
    h = g;

    unsigned char *a = malloc(n * esize + 1), *b = malloc(n * esize + 1);
    unsigned *seen = calloc(n + 1, sizeof *seen);
    CHECK(a && b && seen);
    /* element i holds i in its first two bytes (as far as they go), then a
     * checksum byte pattern */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < esize; j++)
            a[i * esize + j] = (unsigned char)(j == 0 ? i : j == 1 ? i >> 8 : i * 31 + j);
    memcpy(b, a, n * esize);
    rf_shuffle(&g, a, n, esize);
    rf_shuffle_partial(&h, b, n, k, esize);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *e = a + i * esize;
        size_t id = e[0] | (esize > 1 ? (size_t)e[1] << 8 : 0);
        if (esize == 1) {
            /* one byte cannot name the element: check the byte multiset */
            seen[e[0] % (n + 1)]++;
            continue;
        }
        CHECK(id < n);
        for (size_t j = 2; j < esize; j++)
            CHECK(e[j] == (unsigned char)(id * 31 + j));
        seen[id]++;
    }
    if (esize > 1)
        for (size_t i = 0; i < n; i++)
            CHECK(seen[i] == 1);
    const size_t head = k < n ? k : n;
    CHECK(memcmp(a, b, head * esize) == 0);
    free(a);
    free(b);
    free(seen);
    return 0;
}
