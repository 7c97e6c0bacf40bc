/* libFuzzer target: a deck driven by any sequence of deal / deal_n / reset.
 * Always-on checks: a card is never dealt twice between resets, every card is
 * dealt once per full pass, remaining() is exact, and RF_EEMPTY happens exactly
 * when more cards are asked for than remain (and then nothing is dealt). */
#include <riffle.h>

#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const size_t n = data[0] % 64;
    rf_rng g;
    CHECK(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, data[1]) == RF_OK);
    size_t cards[64], out[64];
    unsigned char dealt[64] = {0};
    size_t left = n;
    rf_deck d;
    rf_deck_init(&d, cards, n);
    for (size_t i = 2; i < size; i++) {
        const unsigned op = data[i] >> 6, arg = data[i] & 63;
        if (op == 0) { /* reset */
            rf_deck_reset(&d);
            memset(dealt, 0, sizeof dealt);
            left = n;
        } else {
            const size_t k = op == 1 ? 1 : arg;
            rf_status st = rf_deck_deal_n(&d, &g, k, out);
            if (k > left) {
                CHECK(st == RF_EEMPTY);
            } else {
                CHECK(st == RF_OK);
                for (size_t j = 0; j < k; j++) {
                    CHECK(out[j] < n && !dealt[out[j]]);
                    dealt[out[j]] = 1;
                }
                left -= k;
            }
        }
        CHECK(rf_deck_remaining(&d) == left);
        size_t count;
        const size_t *seq = rf_deck_dealt(&d, &count);
        CHECK(count == n - left);
        for (size_t j = 0; j < count; j++)
            CHECK(dealt[seq[j]]);
    }
    return 0;
}
