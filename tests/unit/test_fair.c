/* Provably fair dealing (riffle_fair.h): known-answer vectors of the
 * commitment and of the key derivation, computed independently of riffle
 * with Python's hashlib and hmac:
 *
 *   import hmac, hashlib, struct
 *   msg = b"riffle-deal-v1" + struct.pack(">Q", len(client)) + client \
 *         + struct.pack(">Q", nonce)
 *   hmac.new(server_seed, msg, hashlib.sha256).hexdigest()
 *
 * and a pinned 52-card deal (the stream contract), which the Python check of
 * docs/provably-fair.md (its own ChaCha20 and Lemire draws) deals too
 * (tests/cli/cli_verify.bats).  The deal is rf_deck's
 * dealing under a ChaCha20 generator, so its fairness is the deck's, proven
 * by exact enumeration of every draw sequence in test_deck.c
 * (exact_dealing); here the deal is held to that same code path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "riffle.h"
#include "riffle_fair.h"

static void from_hex(uint8_t *out, size_t n, const char *hex)
{
    assert_int_equal(strlen(hex), 2 * n);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
}

static void seed_0_to_31(uint8_t seed[RF_FAIR_SEED_BYTES])
{
    for (int i = 0; i < RF_FAIR_SEED_BYTES; i++)
        seed[i] = (uint8_t)i;
}

static void commitment_is_sha256(void **state)
{
    (void)state;
    uint8_t seed[RF_FAIR_SEED_BYTES], got[RF_FAIR_COMMIT_BYTES], want[RF_FAIR_COMMIT_BYTES];
    seed_0_to_31(seed);
    assert_int_equal(rf_fair_commit(got, seed), RF_OK);
    from_hex(want, sizeof want,
             "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd");
    assert_memory_equal(got, want, sizeof want);
    memset(seed, 0x9f, sizeof seed);
    assert_int_equal(rf_fair_commit(got, seed), RF_OK);
    from_hex(want, sizeof want,
             "5c5cfbd0d57154c7d850850aca75ec190560e99bd34032f1e69c2f75883595da");
    assert_memory_equal(got, want, sizeof want);
}

struct key_vector {
    int seed_9f; /* server seed 32 x 0x9f, else the bytes 0 .. 31 */
    const char *client;
    uint64_t nonce;
    const char *key;
};

static const struct key_vector key_vectors[] = {
    {0, "alice", 0, "af8b1affc4f961d2b5491f2978ebe98cecbde30c2680475415aa83cedd29f46b"},
    {0, "alice", 1, "99e460c78c738bf8b7788be40c387cb93cdfc68e429ed4d34cad7857ce85f4d1"},
    {0, "", 0, "de15b1f867344632c23210ca694f64c640a1bbe19062a43be8e8dc6f5170622e"},
    {0, "alic", 0, "1a07362f388ec50f1946bcaf090bed24996e512acb4e88ba2669c2d9b1a8097e"},
    {1, "player-42:table-7", 0x0102030405060708u,
     "1c3c35de80b5ac2889adae120ab27f85d116d665a86c38eecfbe166647346e6c"},
};

static void key_vectors_match_python(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof key_vectors / sizeof key_vectors[0]; i++) {
        const struct key_vector *v = &key_vectors[i];
        uint8_t seed[RF_FAIR_SEED_BYTES], got[RF_KEY_BYTES], want[RF_KEY_BYTES];
        if (v->seed_9f)
            memset(seed, 0x9f, sizeof seed);
        else
            seed_0_to_31(seed);
        assert_int_equal(rf_fair_key(got, seed, v->client, strlen(v->client), v->nonce), RF_OK);
        from_hex(want, sizeof want, v->key);
        assert_memory_equal(got, want, sizeof want);
    }
}

/* The whole deal for server seed 0 .. 31, client seed "alice", nonce 0:
 * pinned, as the golden seeded deals are. */
static const size_t alice_deal[52] = {
    9,  40, 19, 24, 49, 33, 7,  3,  48, 36, 41, 17, 45, 6,  31, 0,  37, 25,
    39, 10, 1,  50, 34, 18, 38, 42, 16, 29, 20, 2,  4,  23, 30, 5,  28, 11,
    43, 51, 15, 26, 46, 12, 47, 8,  32, 13, 44, 21, 22, 35, 14, 27,
};

static void deal_is_pinned(void **state)
{
    (void)state;
    uint8_t seed[RF_FAIR_SEED_BYTES];
    seed_0_to_31(seed);
    size_t order[52];
    assert_int_equal(rf_fair_deal(order, 52, seed, "alice", 5, 0), RF_OK);
    assert_memory_equal(order, alice_deal, sizeof order);
}

/* rf_fair_deal is the deck's deal (rf_deck_deal_n, what `riffle deal` runs)
 * under ChaCha20 keyed by rf_fair_key, stream 0, and a partial deal is its
 * prefix. */
static void deal_is_the_deck_path(void **state)
{
    (void)state;
    uint8_t seed[RF_FAIR_SEED_BYTES], key[RF_KEY_BYTES];
    memset(seed, 0x9f, sizeof seed);
    const char *client = "player-42:table-7";
    const uint64_t nonce = 77;
    assert_int_equal(rf_fair_key(key, seed, client, strlen(client), nonce), RF_OK);
    for (size_t n = 1; n <= 54; n++) {
        size_t order[54], storage[54], dealt[54];
        rf_rng g;
        rf_deck d;
        assert_int_equal(rf_fair_deal(order, n, seed, client, strlen(client), nonce), RF_OK);
        assert_int_equal(rf_rng_init(&g, RF_RNG_CHACHA20, key, 0), RF_OK);
        rf_deck_init(&d, storage, n);
        assert_int_equal(rf_deck_deal_n(&d, &g, n / 2, dealt), RF_OK);
        assert_memory_equal(dealt, order, (n / 2) * sizeof *dealt);
        assert_int_equal(rf_rng_init(&g, RF_RNG_CHACHA20, key, 0), RF_OK);
        rf_deck_init(&d, storage, n);
        assert_int_equal(rf_deck_deal_n(&d, &g, n, dealt), RF_OK);
        assert_memory_equal(dealt, order, n * sizeof *dealt);
        rf_rng h;
        assert_int_equal(rf_fair_rng_init(&h, seed, client, strlen(client), nonce), RF_OK);
        rf_deck_init(&d, storage, n);
        assert_int_equal(rf_deck_deal_n(&d, &h, n, dealt), RF_OK);
        assert_memory_equal(dealt, order, n * sizeof *dealt);
    }
}

/* Each input changes the deal: another server seed, client seed or nonce. */
static void every_input_counts(void **state)
{
    (void)state;
    uint8_t seed[RF_FAIR_SEED_BYTES];
    seed_0_to_31(seed);
    size_t base[52], other[52];
    assert_int_equal(rf_fair_deal(base, 52, seed, "alice", 5, 0), RF_OK);
    assert_int_equal(rf_fair_deal(other, 52, seed, "alice", 5, 1), RF_OK);
    assert_memory_not_equal(base, other, sizeof base);
    assert_int_equal(rf_fair_deal(other, 52, seed, "alicf", 5, 0), RF_OK);
    assert_memory_not_equal(base, other, sizeof base);
    /* "alic" with the length prefix is not "alice" cut short */
    assert_int_equal(rf_fair_deal(other, 52, seed, "alice", 4, 0), RF_OK);
    assert_memory_not_equal(base, other, sizeof base);
    seed[31] ^= 1;
    assert_int_equal(rf_fair_deal(other, 52, seed, "alice", 5, 0), RF_OK);
    assert_memory_not_equal(base, other, sizeof base);
}

static void bad_arguments(void **state)
{
    (void)state;
    uint8_t seed[RF_FAIR_SEED_BYTES] = {0}, key[RF_KEY_BYTES];
    size_t order[1];
    assert_int_equal(rf_fair_key(key, seed, NULL, 1, 0), RF_EINVAL);
    assert_int_equal(rf_fair_key(key, seed, NULL, 0, 0), RF_OK);
    assert_int_equal(rf_fair_deal(order, 0, seed, "", 0, 0), RF_EINVAL);
    assert_int_equal(rf_fair_deal(order, 1, seed, "", 0, 0), RF_OK);
    assert_int_equal(order[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(commitment_is_sha256),  cmocka_unit_test(key_vectors_match_python),
        cmocka_unit_test(deal_is_pinned),        cmocka_unit_test(deal_is_the_deck_path),
        cmocka_unit_test(every_input_counts),    cmocka_unit_test(bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
