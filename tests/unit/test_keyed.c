/* The keyed order (riffle.h, "Keyed order"; src/keyed/keyed.c,
 * src/keyed/keyed_sort.c): exact fairness by enumerating every short key and
 * every tie draw; the sort against a plain reference (qsort, then the ties)
 * on the radix paths, ties included; the same result for every thread count
 * and for every bucketing by top key bits (what the external engine relies
 * on); the documented key streams, derived here independently with
 * libsodium; golden keys. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sodium.h>

#include "keyed/keyed_internal.h"
#include "riffle.h"
#include "scripted.h"

static const rf_rng_kind kinds[] = {RF_RNG_CHACHA20, RF_RNG_XOSHIRO256PP, RF_RNG_PCG64};

/* Tie shuffles from one generator, for scripted runs. */
static rf_status tie_from(void *ctx, uint64_t key, rf_keyed *run, size_t m)
{
    (void)key;
    rf_shuffle(ctx, run, m, sizeof *run);
    return RF_OK;
}

/* Every assignment of `bits`-bit keys (as the top bits of 64) to n items and
 * every tie draw: each of the n! orders must have the same total probability.
 * A run's probability is 1/den with den = 2^(bits*n) * (product of the tie
 * sizes' factorials), which divides 2^(bits*n) * n!: weights are exact. */
static void enumerate(size_t n, unsigned bits)
{
    const uint64_t nf = rf_test_factorial((unsigned)n);
    const uint64_t total = ((uint64_t)1 << (bits * n)) * nf;
    uint64_t *weight = calloc(nf, sizeof *weight);
    assert_non_null(weight);
    rf_script s;
    rf_script_init(&s);
    size_t runs = 0, tied_runs = 0;
    do {
        rf_rng g;
        rf_keyed a[8];
        rf_script_rng(&s, &g);
        for (size_t i = 0; i < n; i++) {
            a[i].key = rf_below(&g, (uint64_t)1 << bits) << (64 - bits);
            a[i].val = i;
        }
        assert_int_equal(rfi_keyed_sort_with(a, n, 1, tie_from, &g), RF_OK);
        size_t p[8];
        for (size_t i = 0; i < n; i++) {
            p[i] = (size_t)a[i].val;
            if (i > 0)
                assert_true(a[i - 1].key <= a[i].key);
        }
        const uint64_t den = rf_script_den(&s);
        assert_int_equal(total % den, 0);
        weight[rf_test_perm_rank(p, n)] += total / den;
        runs++;
        tied_runs += den > ((uint64_t)1 << (bits * n));
    } while (rf_script_next(&s));
    assert_false(s.error);
    uint64_t sum = 0;
    for (uint64_t r = 0; r < nf; r++) {
        assert_int_equal(weight[r], weight[0]);
        sum += weight[r];
    }
    assert_int_equal(sum, total); /* the probabilities add up to 1 */
    if (n >= 2) /* ties were exercised, and so was the untied path where possible */
        assert_true(tied_runs > 0 && (n > ((size_t)1 << bits) || tied_runs < runs));
    free(weight);
}

static void exact_enumeration(void **state)
{
    (void)state;
    for (size_t n = 0; n <= 6; n++) {
        enumerate(n, 1);
        enumerate(n, 2);
    }
    for (size_t n = 0; n <= 4; n++)
        enumerate(n, 3);
}

/* ------------------------------------------------------------------------ */
/* The radix paths against a reference                                      */

static int cmp_keyval(const void *x, const void *y)
{
    const rf_keyed *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->val < b->val ? -1 : a->val > b->val;
}

/* A deterministic tie "shuffle" that shows which items a tie held, in which
 * order they came: it reverses them and counts the call. */
struct tie_log {
    size_t calls, items;
};

static rf_status tie_reverse(void *ctx, uint64_t key, rf_keyed *run, size_t m)
{
    struct tie_log *log = ctx;
    for (size_t i = 0; i < m; i++)
        assert_int_equal(run[i].key, key);
    for (size_t i = 1; i < m; i++)
        assert_true(run[i - 1].val < run[i].val); /* handed over in input order */
    for (size_t i = 0, j = m - 1; i < j; i++, j--) {
        const rf_keyed t = run[i];
        run[i] = run[j];
        run[j] = t;
    }
    __atomic_fetch_add(&log->calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&log->items, m, __ATOMIC_RELAXED);
    return RF_OK;
}

static void reference(rf_keyed *a, size_t n, struct tie_log *log)
{
    qsort(a, n, sizeof *a, cmp_keyval);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && a[j].key == a[i].key)
            j++;
        if (j - i >= 2)
            tie_reverse(log, a[i].key, a + i, j - i);
        i = j;
    }
}

/* Keys with many ties: `distinct` values spread over the key space, or
 * masked to few bits; vals are a scrambled increasing sequence. */
static void make_items(rf_keyed *a, size_t n, uint64_t seed, uint64_t mask)
{
    rf_rng g;
    assert_int_equal(rf_rng_seed_u64(&g, RF_RNG_XOSHIRO256PP, seed), RF_OK);
    for (size_t i = 0; i < n; i++) {
        a[i].key = rf_rng_next64(&g) & mask;
        a[i].val = 3 * (uint64_t)i + 7; /* distinct, increasing */
    }
}

static void check_against_reference(size_t n, uint64_t mask, unsigned threads)
{
    rf_keyed *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_true(a && b);
    make_items(a, n, n ^ mask, mask);
    memcpy(b, a, n * sizeof *a);
    struct tie_log la = {0, 0}, lb = {0, 0};
    assert_int_equal(rfi_keyed_sort_with(a, n, threads, tie_reverse, &la), RF_OK);
    reference(b, n, &lb);
    assert_memory_equal(a, b, n * sizeof *a);
    assert_int_equal(la.calls, lb.calls);
    assert_int_equal(la.items, lb.items);
    free(a);
    free(b);
}

static void sort_matches_reference(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 100, 1000, 70000, 300000};
    static const uint64_t masks[] = {
        ~(uint64_t)0,                       /* random keys: ties unlikely */
        0xF000000000000000u,                /* 16 keys: huge ties, radix runs out of key bits */
        0xFFFF000000000000u,                /* many ties of a few items */
        0x00000000000000FFu,                /* keys differ only in the low bits */
        0,                                  /* one tie of everything */
        0x8000000000000001u,                /* top and bottom bit */
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t m = 0; m < sizeof masks / sizeof *masks; m++)
            check_against_reference(sizes[i], masks[m], 1);
}

static void threads_do_not_matter(void **state)
{
    (void)state;
    const size_t n = 600000; /* above the parallel threshold */
    static const uint64_t masks[] = {~(uint64_t)0, 0xFFFFF00000000000u, 0xFF00000000000000u};
    for (size_t m = 0; m < sizeof masks / sizeof *masks; m++)
        for (unsigned t = 0; t <= 3; t++)
            check_against_reference(n, masks[m], t);
}

/* ------------------------------------------------------------------------ */
/* The documented streams                                                   */

static void derive(uint8_t out[32], const char *prefix, const uint8_t key[32])
{
    crypto_generichash_state st;
    assert_int_equal(crypto_generichash_init(&st, NULL, 0, 32), 0);
    crypto_generichash_update(&st, (const unsigned char *)prefix, strlen(prefix));
    crypto_generichash_update(&st, key, 32);
    crypto_generichash_final(&st, out, 32);
}

/* k_i = word (i mod 2^16) of rf_rng_init(kind, K, i / 2^16), K derived as
 * documented: checked item by item across block boundaries. */
static void keys_follow_documented_streams(void **state)
{
    (void)state;
    uint8_t seed[32], kk[32];
    assert_int_equal(rf_seed_u64(seed, 2026), RF_OK);
    derive(kk, "riffle/keyed/key", seed);
    for (size_t t = 0; t < 3; t++) {
        rf_keyed_order o;
        assert_int_equal(rf_keyed_order_init(&o, kinds[t], seed), RF_OK);
        const size_t n = 3 * 65536 + 100;
        rf_keyed *a = calloc(n, sizeof *a);
        assert_non_null(a);
        assert_int_equal(rf_keyed_fill(&o, 0, a, n, 1), RF_OK);
        for (uint64_t block = 0; block * 65536 < n; block++) {
            rf_rng g;
            assert_int_equal(rf_rng_init(&g, kinds[t], kk, block), RF_OK);
            for (uint64_t i = block * 65536; i < n && i < (block + 1) * 65536; i++)
                assert_true(a[i].key == rf_rng_next64(&g));
        }
        /* Any start, any length, any thread count, the stream form: the same keys. */
        static const uint64_t starts[] = {0, 1, 7, 8, 9, 65535, 65536, 65537, 131000};
        for (size_t s = 0; s < sizeof starts / sizeof *starts; s++) {
            const size_t len = n - (size_t)starts[s];
            rf_keyed *b = calloc(len, sizeof *b);
            assert_non_null(b);
            for (unsigned th = 1; th <= 3; th++) {
                memset(b, 0, len * sizeof *b);
                assert_int_equal(rf_keyed_fill(&o, starts[s], b, len, th), RF_OK);
                for (size_t i = 0; i < len; i++)
                    assert_true(b[i].key == a[starts[s] + i].key);
            }
            rf_keyed_stream ks;
            assert_int_equal(rf_keyed_stream_init(&ks, &o, starts[s]), RF_OK);
            for (size_t i = 0; i < len;) {
                /* uneven pieces, some crossing block boundaries, and single keys */
                size_t piece = 1 + (i * 7919) % 40000;
                if (piece > len - i)
                    piece = len - i;
                if (i % 3 == 0) {
                    assert_true(rf_keyed_stream_next(&ks) == a[starts[s] + i].key);
                    i++;
                    continue;
                }
                memset(b, 0, piece * sizeof *b);
                assert_int_equal(rf_keyed_stream_fill(&ks, b, piece), RF_OK);
                for (size_t j = 0; j < piece; j++)
                    assert_true(b[j].key == a[starts[s] + i + j].key);
                i += piece;
            }
            free(b);
        }
        free(a);
    }
}

/* A tie with key v is rf_shuffle of its items, in input order, under
 * rf_rng_init(kind, T, stream = v). */
static void ties_follow_documented_streams(void **state)
{
    (void)state;
    uint8_t seed[32], tk[32];
    assert_int_equal(rf_seed_string(seed, "ties", 4), RF_OK);
    derive(tk, "riffle/keyed/tie", seed);
    for (size_t t = 0; t < 3; t++) {
        rf_keyed_order o;
        assert_int_equal(rf_keyed_order_init(&o, kinds[t], seed), RF_OK);
        enum { N = 2000 };
        rf_keyed a[N];
        make_items(a, N, 99, 0xFC00000000000000u); /* 64 keys: ties of ~31 */
        rf_keyed b[N];
        memcpy(b, a, sizeof a);
        assert_int_equal(rf_keyed_sort(&o, a, N, 1), RF_OK);
        qsort(b, N, sizeof *b, cmp_keyval);
        size_t ties = 0;
        for (size_t i = 0; i < N;) {
            size_t j = i + 1;
            while (j < N && b[j].key == b[i].key)
                j++;
            if (j - i >= 2) {
                rf_rng g;
                assert_int_equal(rf_rng_init(&g, kinds[t], tk, b[i].key), RF_OK);
                rf_shuffle(&g, b + i, j - i, sizeof *b);
                ties++;
            }
            i = j;
        }
        assert_true(ties > 50);
        assert_memory_equal(a, b, sizeof a);
    }
}

/* Scatter by the top `bits` of the keys (input order kept in a bucket), sort
 * each bucket, concatenate: the same as sorting everything, for every b.
 * This is the external engine's whole correctness argument. */
static void bucketing_does_not_matter(void **state)
{
    (void)state;
    rf_keyed_order o;
    uint8_t seed[32];
    assert_int_equal(rf_seed_u64(seed, 5), RF_OK);
    assert_int_equal(rf_keyed_order_init(&o, RF_RNG_XOSHIRO256PP, seed), RF_OK);
    const size_t n = 50000;
    rf_keyed *all = malloc(n * sizeof *all), *parts = malloc(n * sizeof *parts);
    assert_true(all && parts);
    for (size_t i = 0; i < n; i++)
        all[i].val = i;
    assert_int_equal(rf_keyed_fill(&o, 0, all, n, 1), RF_OK);
    for (size_t i = 0; i < n; i += 97) /* plant ties */
        all[i].key = all[(i * 31) % n].key;
    rf_keyed *orig = malloc(n * sizeof *orig);
    assert_non_null(orig);
    memcpy(orig, all, n * sizeof *all);
    assert_int_equal(rf_keyed_sort(&o, all, n, 1), RF_OK);
    for (unsigned bits = 1; bits <= 12; bits += 3) {
        size_t at = 0;
        for (uint64_t b = 0; b < ((uint64_t)1 << bits); b++) {
            const size_t first = at;
            for (size_t i = 0; i < n; i++)
                if (orig[i].key >> (64 - bits) == b)
                    parts[at++] = orig[i];
            assert_int_equal(rf_keyed_sort(&o, parts + first, at - first, 1), RF_OK);
        }
        assert_int_equal(at, n);
        assert_memory_equal(parts, all, n * sizeof *all);
    }
    free(all);
    free(parts);
    free(orig);
}

/* Pinned keys: the keyed order is part of the stream contract, so changing
 * them is a new stream version. */
static void golden_keys(void **state)
{
    (void)state;
    static const uint64_t want[3][3] = {
        {0x8d0ff01bb6f9b551u, 0xaa1d8667ba988928u, 0xc5ae0d5b1d68c928u}, /* chacha20 */
        {0xed6dfed16aa8673au, 0x08ac824a3c721f21u, 0x11ee7930199851f3u}, /* xoshiro256++ */
        {0x3ca2f6136915063du, 0xb9b872d19247b2d5u, 0x134db9fb55551b51u}, /* pcg64 */
    };
    uint8_t seed[32];
    assert_int_equal(rf_seed_u64(seed, 1), RF_OK);
    uint64_t got[3][3];
    int ok = 1;
    for (size_t t = 0; t < 3; t++) {
        rf_keyed_order o;
        static rf_keyed a[65537];
        assert_int_equal(rf_keyed_order_init(&o, kinds[t], seed), RF_OK);
        assert_int_equal(rf_keyed_fill(&o, 0, a, 65537, 1), RF_OK);
        got[t][0] = a[0].key;
        got[t][1] = a[1].key;
        got[t][2] = a[65536].key;
        for (size_t i = 0; i < 3; i++)
            if (got[t][i] != want[t][i]) {
                print_message("kind %zu key %zu: 0x%016llxu\n", t, i,
                              (unsigned long long)got[t][i]);
                ok = 0;
            }
    }
    assert_true(ok);
}

/* rf_keyed_index against rf_keyed_sort, with keys from a callback: the
 * order's own stream, or keys masked to few bits so that near ties and exact
 * ties are everywhere (and cross bucket boundaries). */
struct masked {
    rf_keyed_order o;
    uint64_t mask;
    int fail_at; /* item whose key "cannot be read", or -1 */
};

static rf_status masked_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    struct masked *k = ctx;
    rf_keyed tmp[512];
    for (size_t done = 0; done < n;) {
        const size_t c = n - done < 512 ? n - done : 512;
        if (rf_keyed_fill(&k->o, first + done, tmp, c, 1) != RF_OK)
            return RF_ECRYPTO;
        for (size_t j = 0; j < c; j++)
            out[done + j] = tmp[j].key & k->mask;
        done += c;
    }
    if (k->fail_at >= 0 && (uint64_t)k->fail_at >= first && (uint64_t)k->fail_at < first + n)
        return RF_ERANGE;
    return RF_OK;
}

static void index_matches_sort(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {1, 2, 3, 100, 8191, 8192, 8193, 70000, 200003};
    static const uint64_t masks[] = {~(uint64_t)0, 0xFFFFFFFFFF000000u, 0xFFC0000000000000u,
                                     0xC000000000000003u, 0};
    uint8_t seed[32];
    assert_int_equal(rf_seed_u64(seed, 77), RF_OK);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t mi = 0; mi < sizeof masks / sizeof *masks; mi++) {
            const uint64_t m = sizes[si];
            struct masked k = {.mask = masks[mi], .fail_at = -1};
            assert_int_equal(rf_keyed_order_init(&k.o, RF_RNG_XOSHIRO256PP, seed), RF_OK);
            rf_keyed *items = malloc(m * sizeof *items);
            uint64_t *idx = malloc(m * sizeof *idx), *keys = malloc(m * sizeof *keys);
            assert_true(items && idx && keys);
            assert_int_equal(masked_keys(&k, 0, keys, m), RF_OK);
            for (uint64_t i = 0; i < m; i++)
                items[i] = (rf_keyed){keys[i], i};
            assert_int_equal(rf_keyed_sort(&k.o, items, m, 1), RF_OK);
            for (unsigned t = 1; t <= 3; t++) {
                memset(idx, 0xAB, m * sizeof *idx);
                assert_int_equal(rf_keyed_index(&k.o, m, masked_keys, &k, t, idx), RF_OK);
                for (uint64_t j = 0; j < m; j++)
                    assert_true(idx[j] == items[j].val);
            }
            free(items);
            free(idx);
            free(keys);
        }
}

/* Values for rf_keyed_index_vals: strictly increasing, with gaps of 1 to
 * `gap`, from a fixed pattern (so the same on every call unless `drift`). */
struct spaced {
    struct masked k;
    uint64_t *v; /* all m values */
    int drift;   /* 1: every call after the first m items' worth shifts by 1 */
    uint64_t calls;
};

static rf_status spaced_vals(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    struct spaced *sp = ctx;
    const uint64_t shift = sp->drift && sp->calls++ > 0 ? 1 : 0;
    for (size_t j = 0; j < n; j++)
        out[j] = sp->v[first + j] + shift;
    return RF_OK;
}

static rf_status spaced_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    return masked_keys(&((struct spaced *)ctx)->k, first, out, n);
}

/* rf_keyed_index_vals gives rf_keyed_sort's order as values, for narrow and
 * wide values (a 64-bit-wide value keeps no key bits beside it: every bucket
 * is one near tie), every thread count, near and exact ties everywhere. */
static void index_vals_matches_sort(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {1, 2, 100, 8193, 70000, 140001};
    static const uint64_t masks[] = {~(uint64_t)0, 0xFFFFFFFFFF000000u, 0xC000000000000003u, 0};
    static const uint64_t gaps[] = {1, 37, (uint64_t)1 << 40, UINT64_MAX / 140002};
    uint8_t seed[32];
    assert_int_equal(rf_seed_u64(seed, 78), RF_OK);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t mi = 0; mi < sizeof masks / sizeof *masks; mi++)
            for (size_t gi = 0; gi < sizeof gaps / sizeof *gaps; gi++) {
                const uint64_t m = sizes[si];
                struct spaced sp = {.k = {.mask = masks[mi], .fail_at = -1}};
                assert_int_equal(rf_keyed_order_init(&sp.k.o, RF_RNG_PCG64, seed), RF_OK);
                rf_keyed *items = malloc(m * sizeof *items);
                uint64_t *out = malloc(m * sizeof *out), *keys = malloc(m * sizeof *keys);
                sp.v = malloc(m * sizeof *sp.v);
                assert_true(items && out && keys && sp.v);
                uint64_t v = gaps[gi] / 3, x = 12345;
                for (uint64_t i = 0; i < m; i++) {
                    x = x * 6364136223846793005u + 1442695040888963407u;
                    sp.v[i] = v;
                    v += 1 + (x >> 11) % gaps[gi];
                }
                assert_int_equal(masked_keys(&sp.k, 0, keys, m), RF_OK);
                for (uint64_t i = 0; i < m; i++)
                    items[i] = (rf_keyed){keys[i], i};
                assert_int_equal(rf_keyed_sort(&sp.k.o, items, m, 1), RF_OK);
                for (unsigned t = 1; t <= 3; t += 2) {
                    memset(out, 0xAB, m * sizeof *out);
                    assert_int_equal(rf_keyed_index_vals(&sp.k.o, m, spaced_keys, spaced_vals,
                                                         &sp, sp.v[m - 1], t, out),
                                     RF_OK);
                    for (uint64_t j = 0; j < m; j++)
                        assert_true(out[j] == sp.v[items[j].val]);
                }
                free(items);
                free(out);
                free(keys);
                free(sp.v);
            }
}

/* Values that change between calls are caught where they are read twice
 * (near ties); a missing vals function is refused. */
static void index_vals_misuse(void **state)
{
    (void)state;
    uint8_t seed[32] = {3};
    const uint64_t m = 5000;
    struct spaced sp = {.k = {.mask = 0xF000000000000000u, .fail_at = -1}, .drift = 1};
    assert_int_equal(rf_keyed_order_init(&sp.k.o, RF_RNG_CHACHA20, seed), RF_OK);
    uint64_t *out = malloc(m * sizeof *out);
    sp.v = malloc(m * sizeof *sp.v);
    assert_true(out && sp.v);
    for (uint64_t i = 0; i < m; i++)
        sp.v[i] = 10 * i;
    assert_int_equal(rf_keyed_index_vals(&sp.k.o, m, spaced_keys, spaced_vals, &sp, 10 * m, 1,
                                         out),
                     RF_EINVAL);
    assert_int_equal(rf_keyed_index_vals(&sp.k.o, m, spaced_keys, NULL, &sp, 10 * m, 1, out),
                     RF_EINVAL);
    free(out);
    free(sp.v);
}

/* The ordering of a list of items (rfi_keyed_index_list) as each owner of
 * a distributed run orders its records: for every number of key ranges
 * and every range, its items listed with their places in the range
 * (rfi_keyed_part_place), ordered, one range after another, give
 * rf_keyed_index_vals' whole order, value for value -- with near and exact
 * ties everywhere (a mask of 0 makes every key equal: one tie of m items,
 * all in the range holding key 0, the other lists empty), on 1 and 3
 * threads. */
static void index_list_matches_whole(void **state)
{
    (void)state;
    static const uint64_t sizes[] = {1, 2, 100, 8193, 140001};
    static const uint64_t masks[] = {~(uint64_t)0, 0xFFFFFFFFFF000000u, 0xC000000000000003u, 0};
    uint8_t seed[32];
    assert_int_equal(rf_seed_u64(seed, 79), RF_OK);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (size_t mi = 0; mi < sizeof masks / sizeof *masks; mi++) {
            const uint64_t m = sizes[si], blocks = (m + 65535) / 65536;
            struct spaced sp = {.k = {.mask = masks[mi], .fail_at = -1}};
            assert_int_equal(rf_keyed_order_init(&sp.k.o, RF_RNG_CHACHA20, seed), RF_OK);
            uint64_t *whole = malloc(m * sizeof *whole), *keys = malloc(m * sizeof *keys);
            uint64_t *at = malloc(m * sizeof *at), *val = malloc(m * sizeof *val);
            uint64_t *idx = malloc(m * sizeof *idx), first_val[3];
            sp.v = malloc(m * sizeof *sp.v);
            assert_true(whole && keys && at && val && idx && sp.v);
            uint64_t v = 5, x = 999;
            for (uint64_t i = 0; i < m; i++) {
                x = x * 6364136223846793005u + 1442695040888963407u;
                sp.v[i] = v;
                v += 1 + (x >> 11) % 300;
            }
            for (uint64_t c = 0; c < blocks; c++)
                first_val[c] = sp.v[c * 65536];
            assert_int_equal(masked_keys(&sp.k, 0, keys, m), RF_OK);
            assert_int_equal(rf_keyed_index_vals(&sp.k.o, m, spaced_keys, spaced_vals, &sp,
                                                 sp.v[m - 1], 1, whole),
                             RF_OK);
            for (unsigned parts = 1; parts <= 7; parts += 1 + (parts >= 3))
                for (unsigned t = 1; t <= 3; t += 2) {
                    uint64_t done = 0;
                    for (unsigned part = 0; part < parts; part++) {
                        size_t n = 0;
                        for (uint64_t i = 0; i < m; i++) {
                            val[n] = sp.v[i];
                            n += (size_t)rfi_keyed_part_place(keys[i], part, parts, &at[n]);
                        }
                        assert_int_equal(rfi_keyed_index_list(&sp.k.o, m, at, val, n,
                                                              spaced_keys, spaced_vals, &sp,
                                                              first_val, sp.v[m - 1], t, idx),
                                         RF_OK);
                        assert_true(done + n <= m);
                        for (size_t j = 0; j < n; j++)
                            assert_true(idx[j] == whole[done + j]);
                        done += n;
                    }
                    assert_true(done == m);
                }
            free(whole);
            free(keys);
            free(at);
            free(val);
            free(idx);
            free(sp.v);
        }
}

/* No keys, vals or first values, or more listed items than items: refused. */
static void index_list_misuse(void **state)
{
    (void)state;
    uint8_t seed[32] = {4};
    struct spaced sp = {.k = {.mask = ~(uint64_t)0, .fail_at = -1}};
    assert_int_equal(rf_keyed_order_init(&sp.k.o, RF_RNG_CHACHA20, seed), RF_OK);
    uint64_t v[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, at[10] = {0}, idx[10], first[1] = {0};
    sp.v = v;
    assert_int_equal(rfi_keyed_index_list(&sp.k.o, 10, at, v, 3, NULL, spaced_vals, &sp, first,
                                          9, 1, idx),
                     RF_EINVAL);
    assert_int_equal(rfi_keyed_index_list(&sp.k.o, 10, at, v, 3, spaced_keys, NULL, &sp, first,
                                          9, 1, idx),
                     RF_EINVAL);
    assert_int_equal(rfi_keyed_index_list(&sp.k.o, 10, at, v, 3, spaced_keys, spaced_vals, &sp,
                                          NULL, 9, 1, idx),
                     RF_EINVAL);
    assert_int_equal(rfi_keyed_index_list(&sp.k.o, 2, at, v, 3, spaced_keys, spaced_vals, &sp,
                                          first, 9, 1, idx),
                     RF_EINVAL);
    assert_int_equal(rfi_keyed_index_list(&sp.k.o, 10, at, v, 0, spaced_keys, spaced_vals, &sp,
                                          first, 9, 1, idx),
                     RF_OK);
}

/* The library's worker threads block asynchronous signals (riffle.h,
 * "Threads"): the keys callback looks at its thread's mask. */
struct mask_probe {
    struct masked k;
    pthread_t main;
    int worker_calls, unblocked;
};

static rf_status probing_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    struct mask_probe *mp = ctx;
    if (!pthread_equal(pthread_self(), mp->main)) {
        sigset_t cur;
        pthread_sigmask(SIG_BLOCK, NULL, &cur);
        __atomic_add_fetch(&mp->worker_calls, 1, __ATOMIC_RELAXED);
        if (!sigismember(&cur, SIGINT) || !sigismember(&cur, SIGTERM) ||
            !sigismember(&cur, SIGPIPE) || sigismember(&cur, SIGBUS))
            __atomic_add_fetch(&mp->unblocked, 1, __ATOMIC_RELAXED);
    }
    return masked_keys(&mp->k, first, out, n);
}

static void workers_block_signals(void **state)
{
    (void)state;
    uint8_t seed[32] = {9};
    const uint64_t m = 4 << 16; /* four blocks: work for three threads */
    struct mask_probe mp = {.k = {.mask = ~(uint64_t)0, .fail_at = -1}, .main = pthread_self()};
    assert_int_equal(rf_keyed_order_init(&mp.k.o, RF_RNG_XOSHIRO256PP, seed), RF_OK);
    uint64_t *idx = malloc(m * sizeof *idx);
    assert_non_null(idx);
    assert_int_equal(rf_keyed_index(&mp.k.o, m, probing_keys, &mp, 3, idx), RF_OK);
    assert_true(mp.worker_calls > 0);
    assert_int_equal(mp.unblocked, 0);
    free(idx);
}

static void index_reports_key_failure(void **state)
{
    (void)state;
    uint8_t seed[32] = {1};
    struct masked k = {.mask = ~(uint64_t)0, .fail_at = 5000};
    assert_int_equal(rf_keyed_order_init(&k.o, RF_RNG_CHACHA20, seed), RF_OK);
    uint64_t *idx = malloc(10000 * sizeof *idx);
    assert_non_null(idx);
    assert_int_equal(rf_keyed_index(&k.o, 10000, masked_keys, &k, 2, idx), RF_ERANGE);
    free(idx);
}

static void bad_kind(void **state)
{
    (void)state;
    rf_keyed_order o;
    uint8_t seed[32] = {0};
    assert_int_equal(rf_keyed_order_init(&o, RF_RNG_SOURCE, seed), RF_EINVAL);
    assert_int_equal(rf_keyed_order_init(&o, (rf_rng_kind)42, seed), RF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_enumeration),
        cmocka_unit_test(index_vals_matches_sort),
        cmocka_unit_test(index_vals_misuse),
        cmocka_unit_test(index_list_matches_whole),
        cmocka_unit_test(index_list_misuse),
        cmocka_unit_test(workers_block_signals),
        cmocka_unit_test(sort_matches_reference),
        cmocka_unit_test(threads_do_not_matter),
        cmocka_unit_test(keys_follow_documented_streams),
        cmocka_unit_test(ties_follow_documented_streams),
        cmocka_unit_test(bucketing_does_not_matter),
        cmocka_unit_test(golden_keys),
        cmocka_unit_test(index_matches_sort),
        cmocka_unit_test(index_reports_key_failure),
        cmocka_unit_test(bad_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
