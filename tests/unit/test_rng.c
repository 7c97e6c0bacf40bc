/* Generators: published known-answer vectors, seeding, substreams, filling,
 * names, OS entropy and the fork-safe default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <sodium.h>
#include <sys/wait.h>
#include <unistd.h>

#include "riffle.h"
#include "rng/rng_internal.h"

static void words_to_bytes(rf_chacha *c, uint8_t *out, size_t len)
{
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w = rf_chacha_next64(c);
        for (size_t b = 0; b < 8; b++)
            out[i + b] = (uint8_t)(w >> (8 * b));
    }
}

/* RFC 8439 section 2.3.2: key 00..1f, nonce 00000009 0000004a 00000000, block
 * counter 1.  In the 64/64 layout riffle uses, state words 12-13 (counter 1,
 * nonce word 0x09000000) are block 0x0900000000000001 and words 14-15 (nonce
 * 0x4a000000, 0) are stream 0x4a000000. */
static void chacha_rfc8439_2_3_2(void **state)
{
    (void)state;
    static const uint8_t want[64] = {
        0x10, 0xf1, 0xe7, 0xe4, 0xd1, 0x3b, 0x59, 0x15, 0x50, 0x0f, 0xdd, 0x1f, 0xa3,
        0x20, 0x71, 0xc4, 0xc7, 0xd1, 0xf4, 0xc7, 0x33, 0xc0, 0x68, 0x03, 0x04, 0x22,
        0xaa, 0x9a, 0xc3, 0xd4, 0x6c, 0x4e, 0xd2, 0x82, 0x64, 0x46, 0x07, 0x9f, 0xaa,
        0x09, 0x14, 0xc2, 0xd7, 0x05, 0xd9, 0x8b, 0x02, 0xa2, 0xb5, 0x12, 0x9c, 0xd1,
        0xde, 0x16, 0x4e, 0xb9, 0xcb, 0xd0, 0x83, 0xe8, 0xa2, 0x50, 0x3c, 0x4e};
    uint8_t key[32], got[64];
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    rf_chacha c;
    assert_int_equal(rf_chacha_init(&c, key, 0x4a000000u), RF_OK);
    rf_chacha_seek(&c, 0x0900000000000001ULL);
    words_to_bytes(&c, got, 64);
    assert_memory_equal(got, want, 64);
}

/* RFC 8439 appendix A.1, test vectors #1 and #2: all-zero key and nonce,
 * block counters 0 and 1 -- consecutive blocks of stream 0. */
static void chacha_rfc8439_a1(void **state)
{
    (void)state;
    static const uint8_t want[128] = {
        0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53,
        0x86, 0xbd, 0x28, 0xbd, 0xd2, 0x19, 0xb8, 0xa0, 0x8d, 0xed, 0x1a, 0xa8, 0x36,
        0xef, 0xcc, 0x8b, 0x77, 0x0d, 0xc7, 0xda, 0x41, 0x59, 0x7c, 0x51, 0x57, 0x48,
        0x8d, 0x77, 0x24, 0xe0, 0x3f, 0xb8, 0xd8, 0x4a, 0x37, 0x6a, 0x43, 0xb8, 0xf4,
        0x15, 0x18, 0xa1, 0x1c, 0xc3, 0x87, 0xb6, 0x69, 0xb2, 0xee, 0x65, 0x86,
        0x9f, 0x07, 0xe7, 0xbe, 0x55, 0x51, 0x38, 0x7a, 0x98, 0xba, 0x97, 0x7c, 0x73,
        0x2d, 0x08, 0x0d, 0xcb, 0x0f, 0x29, 0xa0, 0x48, 0xe3, 0x65, 0x69, 0x12, 0xc6,
        0x53, 0x3e, 0x32, 0xee, 0x7a, 0xed, 0x29, 0xb7, 0x21, 0x76, 0x9c, 0xe6, 0x4e,
        0x43, 0xd5, 0x71, 0x33, 0xb0, 0x74, 0xd8, 0x39, 0xd5, 0x31, 0xed, 0x1f, 0x28,
        0x51, 0x0a, 0xfb, 0x45, 0xac, 0xe1, 0x0a, 0x1f, 0x4b, 0x79, 0x4d, 0x6f};
    uint8_t key[32] = {0}, got[128];
    rf_chacha c;
    assert_int_equal(rf_chacha_init(&c, key, 0), RF_OK);
    words_to_bytes(&c, got, 128);
    assert_memory_equal(got, want, 128);
    /* seeking to block 1 gives vector #2 alone */
    rf_chacha_seek(&c, 1);
    words_to_bytes(&c, got, 64);
    assert_memory_equal(got, want + 64, 64);
}

/* Across buffer refills the generator is the plain keystream: compare 5000
 * bytes with libsodium's crypto_stream_chacha20 for a random key and stream. */
static void chacha_long_stream(void **state)
{
    (void)state;
    uint8_t key[32], nonce[8];
    enum { LEN = 5000 };
    static uint8_t want[LEN + 8], got[LEN + 8];
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)(i * 37 + 11);
    const uint64_t stream = 0x0123456789abcdefULL;
    for (int i = 0; i < 8; i++)
        nonce[i] = (uint8_t)(stream >> (8 * i));
    assert_true(sodium_init() >= 0);
    crypto_stream_chacha20(want, sizeof want, nonce, key);
    rf_chacha c;
    assert_int_equal(rf_chacha_init(&c, key, stream), RF_OK);
    words_to_bytes(&c, got, LEN);
    assert_memory_equal(got, want, LEN);
}

/* xoshiro256++ from state {1, 2, 3, 4}: the first ten outputs of the authors'
 * reference xoshiro256plusplus.c (prng.di.unimi.it), as also pinned by the
 * rand_xoshiro crate's `reference` test. */
static void xoshiro_reference(void **state)
{
    (void)state;
    static const uint64_t want[10] = {
        41943041ULL,           58720359ULL,           3588806011781223ULL,
        3591011842654386ULL,   9228616714210784205ULL, 9973669472204895162ULL,
        14011001112246962877ULL, 12406186145184390807ULL, 15849039046786891736ULL,
        10450023813501588000ULL};
    const uint64_t s[4] = {1, 2, 3, 4};
    rf_xoshiro x;
    rf_xoshiro_init(&x, s);
    for (int i = 0; i < 10; i++)
        assert_true(rf_xoshiro_next64(&x) == want[i]);
    /* the all-zero state is replaced, never used */
    const uint64_t z[4] = {0, 0, 0, 0};
    rf_xoshiro_init(&x, z);
    assert_true((x.s[0] | x.s[1] | x.s[2] | x.s[3]) != 0);
}

/* PCG64 (XSL-RR 128/64) seeded pcg64_srandom_r(42, 54): the first six outputs
 * of pcg-c's check-pcg64 (test-high/expected/check-pcg64.out, round 1). */
static void pcg64_reference(void **state)
{
    (void)state;
    static const uint64_t want[6] = {0x86b1da1d72062b68ULL, 0x1304aa46c9853d39ULL,
                                     0xa3670e9e0dd50358ULL, 0xf9090e529a7dae00ULL,
                                     0xc85b9fd837996f2cULL, 0x606121f8e3919196ULL};
    rf_pcg64 p;
    rf_pcg64_init(&p, 0, 42, 0, 54);
    for (int i = 0; i < 6; i++)
        assert_true(rf_pcg64_next64(&p) == want[i]);
}

/* The documented seed derivations, recomputed independently with libsodium. */
static void seed_derivations(void **state)
{
    (void)state;
    uint8_t key[32], want[32];
    unsigned char msg[64];
    assert_int_equal(rf_seed_u64(key, 0x0102030405060708ULL), RF_OK);
    memcpy(msg, "riffle/seed/u64", 15);
    for (int i = 0; i < 8; i++)
        msg[15 + i] = (unsigned char)(0x0102030405060708ULL >> (8 * i));
    crypto_generichash(want, 32, msg, 23, NULL, 0);
    assert_memory_equal(key, want, 32);

    assert_int_equal(rf_seed_string(key, "42", 2), RF_OK);
    memcpy(msg, "riffle/seed/str42", 17);
    crypto_generichash(want, 32, msg, 17, NULL, 0);
    assert_memory_equal(key, want, 32);
    /* integer 42 and string "42" differ */
    uint8_t k42[32];
    assert_int_equal(rf_seed_u64(k42, 42), RF_OK);
    assert_memory_not_equal(k42, key, 32);
    assert_int_equal(rf_seed_string(key, "", 0), RF_OK);
    assert_int_equal(rf_seed_string(key, NULL, 1), RF_EINVAL);
}

/* The fast generators' state is the first 32 bytes of ChaCha20(key, stream). */
static void fast_generator_derivation(void **state)
{
    (void)state;
    uint8_t key[32], b[32], nonce[8] = {5, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)(200 - i);
    assert_true(sodium_init() >= 0);
    crypto_stream_chacha20(b, 32, nonce, key);
    rf_rng g;
    assert_int_equal(rf_rng_init(&g, RF_RNG_XOSHIRO256PP, key, 5), RF_OK);
    for (int i = 0; i < 4; i++) {
        uint64_t w = 0;
        for (int j = 0; j < 8; j++)
            w |= (uint64_t)b[8 * i + j] << (8 * j);
        assert_true(g.u.xoshiro.s[i] == w);
    }
    rf_pcg64 p;
    uint64_t w[4] = {0};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            w[i] |= (uint64_t)b[8 * i + j] << (8 * j);
    rf_pcg64_init(&p, w[1], w[0], w[3], w[2]);
    assert_int_equal(rf_rng_init(&g, RF_RNG_PCG64, key, 5), RF_OK);
    for (int i = 0; i < 8; i++)
        assert_true(rf_rng_next64(&g) == rf_pcg64_next64(&p));
}

/* Substreams: same (key, stream) gives the same words, different streams or
 * keys give different ones, for every kind; unknown kinds are refused. */
static void substreams(void **state)
{
    (void)state;
    const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};
    uint8_t key[32] = {1}, key2[32] = {2};
    for (size_t k = 0; k < 3; k++) {
        rf_rng a, b, c, d;
        assert_int_equal(rf_rng_init(&a, kinds[k], key, 7), RF_OK);
        assert_int_equal(rf_rng_init(&b, kinds[k], key, 7), RF_OK);
        assert_int_equal(rf_rng_init(&c, kinds[k], key, 8), RF_OK);
        assert_int_equal(rf_rng_init(&d, kinds[k], key2, 7), RF_OK);
        for (int i = 0; i < 100; i++) {
            uint64_t wa = rf_rng_next64(&a);
            assert_true(wa == rf_rng_next64(&b));
            assert_true(wa != rf_rng_next64(&c));
            assert_true(wa != rf_rng_next64(&d));
        }
    }
    rf_rng g;
    assert_int_equal(rf_rng_init(&g, RF_RNG_SOURCE, key, 0), RF_EINVAL);
    assert_int_equal(rf_rng_init(&g, (rf_rng_kind)99, key, 0), RF_EINVAL);
    rf_source empty = {NULL, NULL, NULL};
    assert_int_equal(rf_rng_from_source(&g, &empty), RF_EINVAL);
}

static void names(void **state)
{
    (void)state;
    rf_rng_kind k;
    assert_int_equal(rf_rng_kind_parse("chacha20", &k), RF_OK);
    assert_int_equal(k, RF_RNG_CHACHA20);
    assert_int_equal(rf_rng_kind_parse("xoshiro256++", &k), RF_OK);
    assert_int_equal(k, RF_RNG_XOSHIRO256PP);
    assert_int_equal(rf_rng_kind_parse("pcg64", &k), RF_OK);
    assert_int_equal(k, RF_RNG_PCG64);
    assert_int_equal(rf_rng_kind_parse("mt19937", &k), RF_EINVAL);
    assert_int_equal(rf_rng_kind_parse("source", &k), RF_EINVAL);
    assert_int_equal(rf_rng_kind_parse(NULL, &k), RF_EINVAL);
    assert_string_equal(rf_rng_kind_name(RF_RNG_XOSHIRO256PP), "xoshiro256++");
    assert_string_equal(rf_rng_kind_name((rf_rng_kind)42), "unknown");
    assert_string_equal(rf_strerror(RF_EEMPTY), "not enough cards left in the deck");
    assert_string_equal(rf_strerror((rf_status)1000), "unknown error");
    assert_string_equal(rf_version(), RF_VERSION_STRING);
    assert_int_equal(rf_version_number(), RF_VERSION_NUMBER);
}

static void fill_is_words(void **state)
{
    (void)state;
    rf_rng a, b;
    assert_int_equal(rf_rng_seed_u64(&a, RF_RNG_XOSHIRO256PP, 1), RF_OK);
    b = a;
    uint8_t buf[21];
    rf_rng_fill(&a, buf, sizeof buf);
    for (int w = 0; w < 3; w++) {
        uint64_t v = rf_rng_next64(&b);
        for (int i = 0; i < 8 && 8 * w + i < 21; i++)
            assert_int_equal(buf[8 * w + i], (uint8_t)(v >> (8 * i)));
    }
}

/* rf_rng_fill of every generator gives the bytes of its words, whole words
 * then the head of one more, from any point of ChaCha20's 512-byte buffer
 * (its fill copies the buffer in blocks), and leaves the generator where the
 * words would. */
static void fill_is_words_everywhere(void **state)
{
    (void)state;
    static const size_t skips[] = {0, 1, 63, 64, 65};
    static const size_t lens[] = {0, 1, 7, 8, 9, 511, 512, 513, 4100};
    static uint8_t buf[4100];
    for (int kind = 0; kind <= RF_RNG_PCG64; kind++)
        for (size_t s = 0; s < sizeof skips / sizeof skips[0]; s++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                rf_rng a, b;
                assert_int_equal(rf_rng_seed_u64(&a, (rf_rng_kind)kind, 9), RF_OK);
                for (size_t k = 0; k < skips[s]; k++)
                    (void)rf_rng_next64(&a);
                b = a;
                rf_rng_fill(&a, buf, lens[l]);
                for (size_t w = 0; w < (lens[l] + 7) / 8; w++) {
                    const uint64_t v = rf_rng_next64(&b);
                    for (size_t i = 0; i < 8 && 8 * w + i < lens[l]; i++)
                        assert_int_equal(buf[8 * w + i], (uint8_t)(v >> (8 * i)));
                }
                assert_int_equal(rf_rng_next64(&a), rf_rng_next64(&b));
            }
}

/* rfi_chacha_fill64 (the keyed order's bulk keys) gives the words of
 * rf_chacha_next64, from any point of the 512-byte buffer, for counts
 * around whole 64-byte blocks, and leaves the generator where the words
 * would: the next words agree too.  An OS-keyed generator (word path) as
 * well. */
static void chacha_fill64_is_words(void **state)
{
    (void)state;
    static const size_t skips[] = {0, 1, 7, 8, 63, 64, 65};
    static const size_t counts[] = {0, 1, 7, 8, 9, 63, 64, 65, 1000, 4099};
    uint8_t key[RF_KEY_BYTES];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(7 * i + 1);
    uint64_t got[4099 + 3], want[4099 + 3];
    for (int os = 0; os < 2; os++)
        for (size_t s = 0; s < sizeof skips / sizeof skips[0]; s++)
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
                rf_rng g, *o = NULL;
                if (os)
                    assert_non_null(o = rf_rng_new_os(NULL));
                else
                    assert_int_equal(rf_rng_init(&g, RF_RNG_CHACHA20, key, 5), RF_OK);
                rf_chacha a = os ? o->u.chacha : g.u.chacha, b = a;
                rf_rng_free(o);
                for (size_t j = 0; j < skips[s]; j++) {
                    (void)rf_chacha_next64(&a);
                    (void)rf_chacha_next64(&b);
                }
                rfi_chacha_fill64(&a, got, counts[k]);
                for (size_t j = 0; j < counts[k]; j++)
                    want[j] = rf_chacha_next64(&b);
                for (size_t j = 0; j < 3; j++) {
                    got[counts[k] + j] = rf_chacha_next64(&a);
                    want[counts[k] + j] = rf_chacha_next64(&b);
                }
                assert_memory_equal(got, want, (counts[k] + 3) * sizeof *got);
            }
}

static void os_entropy(void **state)
{
    (void)state;
    uint8_t a[64], b[64];
    assert_int_equal(rf_entropy(a, sizeof a), RF_OK);
    assert_int_equal(rf_entropy(b, sizeof b), RF_OK);
    assert_memory_not_equal(a, b, sizeof a);
    assert_int_equal(rf_entropy(a, 0), RF_OK);
    uint8_t k1[32], k2[32];
    assert_int_equal(rf_seed_os(k1), RF_OK);
    assert_int_equal(rf_seed_os(k2), RF_OK);
    assert_memory_not_equal(k1, k2, 32);
}

/* Draw 4 words in a forked child and send them back. */
static void child_words(rf_rng *g, uint64_t out[4])
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t w[4];
        for (int i = 0; i < 4; i++)
            w[i] = rf_rng_next64(g);
        ssize_t r = write(fd[1], w, sizeof w);
        _exit(r == (ssize_t)sizeof w ? 0 : 1);
    }
    close(fd[1]);
    assert_int_equal(read(fd[0], out, 4 * sizeof out[0]), (ssize_t)(4 * sizeof out[0]));
    close(fd[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The OS-seeded generator rekeys in a child: the child's words differ from
 * the parent's next words, even though a buffer was already filled before the
 * fork.  A seeded generator is plain data: the child repeats the parent. */
static void fork_rekeys_os_generator(void **state)
{
    (void)state;
    rf_status st = RF_EINVAL;
    rf_rng *g = rf_rng_new_os(&st);
    assert_non_null(g);
    assert_int_equal(st, RF_OK);
    (void)rf_rng_next64(g); /* fill the buffer before forking */
    uint64_t child[4], parent[4];
    child_words(g, child);
    for (int i = 0; i < 4; i++)
        parent[i] = rf_rng_next64(g);
    assert_memory_not_equal(child, parent, sizeof child);
    rf_rng_free(g);
    rf_rng_free(NULL);

    rf_rng s;
    assert_int_equal(rf_rng_seed_u64(&s, RF_RNG_CHACHA20, 11), RF_OK);
    (void)rf_rng_next64(&s);
    child_words(&s, child);
    for (int i = 0; i < 4; i++)
        parent[i] = rf_rng_next64(&s);
    assert_memory_equal(child, parent, sizeof child);
}

/* Two OS-seeded generators are independent. */
static void os_generators_differ(void **state)
{
    (void)state;
    rf_rng *a = rf_rng_new_os(NULL), *b = rf_rng_new_os(NULL);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(rf_rng_next64(a) != rf_rng_next64(b));
    rf_rng_free(a);
    rf_rng_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chacha_rfc8439_2_3_2),
        cmocka_unit_test(chacha_rfc8439_a1),
        cmocka_unit_test(chacha_long_stream),
        cmocka_unit_test(xoshiro_reference),
        cmocka_unit_test(pcg64_reference),
        cmocka_unit_test(seed_derivations),
        cmocka_unit_test(fast_generator_derivation),
        cmocka_unit_test(substreams),
        cmocka_unit_test(names),
        cmocka_unit_test(fill_is_words),
        cmocka_unit_test(fill_is_words_everywhere),
        cmocka_unit_test(chacha_fill64_is_words),
        cmocka_unit_test(os_entropy),
        cmocka_unit_test(fork_rekeys_os_generator),
        cmocka_unit_test(os_generators_differ),
    };
    return cmocka_run_group_tests_name("rng", tests, NULL, NULL);
}
