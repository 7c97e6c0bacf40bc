/* rf_bernoulli: Bernoulli sampling with geometric skips whose selections are
 * nested in P (riffle_sample.h).
 *
 * Plain geometric skips (draw the gap to the next selected record from
 * Geometric(P)) select each record with probability P, but two values of P
 * then give unrelated selections.  Giving every record its own uniform u_i
 * nests them (keep u_i < P) but costs a draw per record.  The ladder of
 * nested sets T_m = { i : u_i < 2^-m } has both: T_m is built from T_{m+1}
 * by filling its gaps with Geometric(r_m) skips, r_m the probability that
 * makes T_m a Bernoulli(2^-m) set, and each record takes its u_i in the band
 * of the level that added it.  The draws of a gap are keyed by (level, first
 * record of the gap, draw number), so a level's members do not depend on which levels
 * below it a caller walks, nor on P. */
#include "riffle_sample.h"

#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "bernoulli_internal.h"
#include "rng/rng_internal.h"

/* The top level, drawn directly: u_i < 2^-62 there (2 bits of u left). */
#define TOP 62

struct level {
    uint8_t key[crypto_shorthash_siphash24_KEYBYTES];
    uint64_t start;  /* the current gap's first record ... */
    uint64_t draws;  /* ... and the draws made in it */
    uint64_t pos;    /* the gap's next candidate record */
    uint64_t right;  /* the next member of the level above (END: none) */
    uint64_t right_u;
    double log1m;    /* log(1 - r); -inf when r = 1 (every record) */
};

struct rf_bernoulli {
    uint64_t t;      /* keep u < t ... */
    int all, none;   /* ... or every record (P = 1), or none (P = 0) */
    unsigned low;    /* the level walked: its members include the selection */
    uint64_t last_u;
    struct level lev[TOP + 1];
};

/* Geometric(r) on {0, 1, ...} by inversion, saturated at UINT64_MAX: the
 * records passed over before the next member. */
uint64_t rfi_geometric_skip(double u, double log1m)
{
    if (isinf(log1m))
        return 0;
    const double s = floor(log(u) / log1m);
    if (!(s < 18446744073709551616.0))
        return UINT64_MAX;
    return s > 0.0 ? (uint64_t)s : 0;
}

/* Draw j of the gap at record s of level m: SipHash-2-4 (a PRF) of (s, j)
 * under the level's key.  A gap needs a draw or two on average, so a keyed
 * function of the counter costs less than starting a buffered stream. */
static uint64_t draw(struct level *L)
{
    unsigned char in[16], out[crypto_shorthash_siphash24_BYTES];
    const uint64_t j = L->draws++;
    for (int b = 0; b < 8; b++) {
        in[b] = (unsigned char)(L->start >> (8 * b));
        in[8 + b] = (unsigned char)(j >> (8 * b));
    }
    (void)crypto_shorthash_siphash24(out, in, sizeof in, L->key);
    uint64_t w = 0;
    for (int b = 7; b >= 0; b--)
        w = w << 8 | out[b];
    return w;
}

static uint64_t skip(struct level *L)
{
    if (isinf(L->log1m))
        return 0; /* no draw: level 0 holds every record */
    /* 53 bits, as rf_double: a uniform in (0, 1] */
    return rfi_geometric_skip(1.0 - (double)(draw(L) >> 11) * 0x1.0p-53, L->log1m);
}

static void level_next(rf_bernoulli *b, unsigned m, uint64_t *idx, uint64_t *u);

static void start_draws(struct level *L, uint64_t start)
{
    L->start = start;
    L->draws = 0;
}

/* Start level m's gap at record `start`: its draws, and its right end. */
static void open_gap(rf_bernoulli *b, unsigned m, uint64_t start)
{
    struct level *L = &b->lev[m];
    L->pos = start;
    start_draws(L, start);
    level_next(b, m + 1, &L->right, &L->right_u);
}

/* The top level: a Bernoulli(2^-62) set by geometric skips from record 0. */
static void top_next(struct level *L, uint64_t *idx, uint64_t *u)
{
    const uint64_t s = L->pos == RF_BERNOULLI_END ? UINT64_MAX : skip(L);
    if (s >= RF_BERNOULLI_END - L->pos) {
        L->pos = RF_BERNOULLI_END;
        *idx = RF_BERNOULLI_END;
        return;
    }
    *idx = L->pos + s;
    *u = draw(L) >> TOP;
    L->pos = *idx + 1;
}

/* The next member of T_m, with its unit value. */
static void level_next(rf_bernoulli *b, unsigned m, uint64_t *idx, uint64_t *u)
{
    struct level *L = &b->lev[m];
    if (m == TOP) {
        top_next(L, idx, u);
        return;
    }
    if (L->pos < L->right) {
        const uint64_t s = skip(L);
        if (s < L->right - L->pos) {
            *idx = L->pos + s;
            *u = (UINT64_C(1) << (63 - m)) | (draw(L) >> (m + 1));
            L->pos = *idx + 1;
            return;
        }
        L->pos = L->right; /* nothing more in this gap */
    }
    *idx = L->right;
    if (L->right == RF_BERNOULLI_END)
        return;
    *u = L->right_u;
    open_gap(b, m, L->right + 1);
}

/* The lowest level whose members include every u below t: the largest m
 * with t <= 2^(64-m). */
static unsigned low_level(uint64_t t, int all)
{
    if (all)
        return 0;
    for (unsigned m = TOP; m >= 1; m--)
        if (t <= UINT64_C(1) << (64 - m))
            return m;
    return 0;
}

static rf_status level_init(struct level *L, const uint8_t key[RF_KEY_BYTES], unsigned m)
{
    uint8_t in[RF_KEY_BYTES + 1], derived[RF_KEY_BYTES];
    memcpy(in, key, RF_KEY_BYTES);
    in[RF_KEY_BYTES] = (uint8_t)m;
    const rf_status st = rfi_seed_prefixed(derived, "riffle bernoulli level", in, sizeof in);
    memcpy(L->key, derived, sizeof L->key);
    sodium_memzero(derived, sizeof derived);
    if (m == TOP)
        L->log1m = log1p(-ldexp(1.0, -TOP));
    else /* r_m = 2^-(m+1) / (1 - 2^-(m+1)) = 1 / (2^(m+1) - 1) */
        L->log1m = m == 0 ? -INFINITY : log1p(-1.0 / (ldexp(1.0, (int)m + 1) - 1.0));
    return st;
}

rf_bernoulli *rf_bernoulli_new(const uint8_t key[RF_KEY_BYTES], double p, rf_status *status)
{
    rf_bernoulli *b = calloc(1, sizeof *b);
    if (!b) {
        *status = RF_ENOMEM;
        return NULL;
    }
    *status = rf_unit_threshold(p, &b->t, &b->all);
    b->none = !b->all && b->t == 0;
    b->low = low_level(b->t, b->all);
    for (unsigned m = TOP + 1; *status == RF_OK && !b->none && m-- > b->low;)
        *status = level_init(&b->lev[m], key, m);
    if (*status != RF_OK) {
        rf_bernoulli_free(b);
        return NULL;
    }
    if (!b->none) {
        start_draws(&b->lev[TOP], 0);
        for (unsigned m = TOP; m-- > b->low;)
            open_gap(b, m, 0);
    }
    return b;
}

void rf_bernoulli_free(rf_bernoulli *b)
{
    if (b) {
        sodium_memzero(b, sizeof *b); /* keys of the seed's streams */
        free(b);
    }
}

uint64_t rf_bernoulli_next(rf_bernoulli *b)
{
    if (b->none)
        return RF_BERNOULLI_END;
    for (;;) {
        uint64_t i, u = 0;
        level_next(b, b->low, &i, &u);
        if (i == RF_BERNOULLI_END)
            return i;
        if (b->all || u < b->t) {
            b->last_u = u;
            return i;
        }
    }
}

uint64_t rf_bernoulli_unit(const rf_bernoulli *b)
{
    return b->last_u;
}
