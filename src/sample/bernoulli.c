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

/* The top level, drawn directly: u_i < 2^-62 there (2 bits of u left).
 * (The tests walk shorter ladders through rfi_bernoulli_new_scripted.) */
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
    unsigned top;    /* TOP, or a test's */
    uint64_t last_u;
    rfi_bernoulli_draw_fn script; /* a test's draws, or NULL */
    void *script_ctx;
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
 * under the level's key (or a test's script).  A gap needs a draw or two on average, so a keyed
 * function of the counter costs less than starting a buffered stream. */
static uint64_t draw(const rf_bernoulli *b, unsigned m, struct level *L, int kind, uint64_t at)
{
    if (b->script) {
        L->draws++;
        return b->script(b->script_ctx, kind, m, at, L->log1m);
    }
    unsigned char in[16], out[crypto_shorthash_siphash24_BYTES];
    const uint64_t j = L->draws++;
    for (int i = 0; i < 8; i++) {
        in[i] = (unsigned char)(L->start >> (8 * i));
        in[8 + i] = (unsigned char)(j >> (8 * i));
    }
    (void)crypto_shorthash_siphash24(out, in, sizeof in, L->key);
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--)
        w = w << 8 | out[i];
    return w;
}

static uint64_t skip(const rf_bernoulli *b, unsigned m, struct level *L)
{
    if (isinf(L->log1m))
        return 0; /* no draw: level 0 holds every record */
    /* 53 bits, as rf_double: a uniform in (0, 1] */
    const uint64_t w = draw(b, m, L, RFI_DRAW_SKIP, L->pos);
    return rfi_geometric_skip(1.0 - (double)(w >> 11) * 0x1.0p-53, L->log1m);
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

/* The top level: a Bernoulli(2^-top) set by geometric skips from record 0. */
static void top_next(rf_bernoulli *b, uint64_t *idx, uint64_t *u)
{
    struct level *L = &b->lev[b->top];
    const uint64_t s = L->pos == RF_BERNOULLI_END ? UINT64_MAX : skip(b, b->top, L);
    if (s >= RF_BERNOULLI_END - L->pos) {
        L->pos = RF_BERNOULLI_END;
        *idx = RF_BERNOULLI_END;
        return;
    }
    *idx = L->pos + s;
    *u = draw(b, b->top, L, RFI_DRAW_VALUE, *idx) >> b->top;
    L->pos = *idx + 1;
}

/* The next member of T_m, with its unit value. */
static void level_next(rf_bernoulli *b, unsigned m, uint64_t *idx, uint64_t *u)
{
    struct level *L = &b->lev[m];
    if (m == b->top) {
        top_next(b, idx, u);
        return;
    }
    if (L->pos < L->right) {
        const uint64_t s = skip(b, m, L);
        if (s < L->right - L->pos) {
            *idx = L->pos + s;
            *u = (UINT64_C(1) << (63 - m)) | (draw(b, m, L, RFI_DRAW_VALUE, *idx) >> (m + 1));
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
static unsigned low_level(uint64_t t, int all, unsigned top)
{
    if (all)
        return 0;
    for (unsigned m = top; m >= 1; m--)
        if (t <= UINT64_C(1) << (64 - m))
            return m;
    return 0;
}

/* log(1 - r) of level m: r = 2^-top at the top, else r_m = 2^-(m+1) /
 * (1 - 2^-(m+1)) = 1 / (2^(m+1) - 1), which is 1 at level 0. */
static double level_log1m(unsigned m, unsigned top)
{
    if (m == top)
        return log1p(-ldexp(1.0, -(int)top));
    return m == 0 ? -INFINITY : log1p(-1.0 / (ldexp(1.0, (int)m + 1) - 1.0));
}

static rf_status level_key(struct level *L, const uint8_t key[RF_KEY_BYTES], unsigned m)
{
    uint8_t in[RF_KEY_BYTES + 1], derived[RF_KEY_BYTES];
    memcpy(in, key, RF_KEY_BYTES);
    in[RF_KEY_BYTES] = (uint8_t)m;
    const rf_status st = rfi_seed_prefixed(derived, "riffle bernoulli level", in, sizeof in);
    memcpy(L->key, derived, sizeof L->key);
    sodium_memzero(derived, sizeof derived);
    return st;
}

/* A stream for p over levels low .. top, not started. */
static rf_bernoulli *make(double p, unsigned top, rf_status *status)
{
    rf_bernoulli *b = calloc(1, sizeof *b);
    if (!b) {
        *status = RF_ENOMEM;
        return NULL;
    }
    *status = rf_unit_threshold(p, &b->t, &b->all);
    if (*status != RF_OK) {
        free(b);
        return NULL;
    }
    b->top = top;
    b->none = !b->all && b->t == 0;
    b->low = low_level(b->t, b->all, top);
    for (unsigned m = b->low; m <= top; m++)
        b->lev[m].log1m = level_log1m(m, top);
    return b;
}

/* The top level from record 0, then each level's first gap, top down. */
static void begin(rf_bernoulli *b)
{
    if (b->none)
        return;
    start_draws(&b->lev[b->top], 0);
    for (unsigned m = b->top; m-- > b->low;)
        open_gap(b, m, 0);
}

rf_bernoulli *rf_bernoulli_new(const uint8_t key[RF_KEY_BYTES], double p, rf_status *status)
{
    rf_bernoulli *b = make(p, TOP, status);
    if (!b)
        return NULL;
    for (unsigned m = TOP + 1; *status == RF_OK && !b->none && m-- > b->low;)
        *status = level_key(&b->lev[m], key, m);
    if (*status != RF_OK) {
        rf_bernoulli_free(b);
        return NULL;
    }
    begin(b);
    return b;
}

rf_bernoulli *rfi_bernoulli_new_scripted(double p, unsigned top, rfi_bernoulli_draw_fn script,
                                         void *ctx, rf_status *status)
{
    if (top < 1 || top > TOP) {
        *status = RF_EINVAL;
        return NULL;
    }
    rf_bernoulli *b = make(p, top, status);
    if (!b)
        return NULL;
    b->script = script;
    b->script_ctx = ctx;
    begin(b);
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
