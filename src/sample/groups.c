/* rf_groups: a reservoir per group (riffle_sample.h).
 *
 * Each group is a Li Algorithm L reservoir (reservoir.c).  Its draws are
 * made only when an item may be kept, from a generator (xoshiro256++ seeded
 * by one ChaCha20 block: a few draws need no more) keyed by the
 * group's unit value and the item's number in the group, so no generator
 * state is held per group and the groups do not share a stream whose
 * position would depend on how their records interleave.  Groups are found
 * through an open-addressing table of their unit values (linear probing,
 * kept at most half full). */
#include "riffle_sample.h"

#include <assert.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rng/rng_internal.h"

struct group {
    uint64_t h;          /* unit value of the group's bytes */
    size_t off, len;     /* the bytes, in the arena */
    rf_reservoir res;
};

struct rf_groups {
    rf_keyhash hk;       /* the groups' unit values */
    uint8_t key[RF_KEY_BYTES]; /* the reservoirs' draws */
    size_t k;
    struct group *groups;
    size_t n, cap;
    size_t *table;       /* group index + 1; 0: empty */
    size_t mask;         /* table size - 1 (a power of two) */
    unsigned char *arena;
    size_t used, room;
};

rf_groups *rf_groups_new(const uint8_t key[RF_KEY_BYTES], size_t k, rf_status *status)
{
    if (k == 0) {
        *status = RF_EINVAL;
        return NULL;
    }
    rf_groups *gs = calloc(1, sizeof *gs);
    if (!gs) {
        *status = RF_ENOMEM;
        return NULL;
    }
    gs->k = k;
    /* Its own key: streams unrelated to the keyed order's of the seed. */
    *status = rfi_seed_prefixed(gs->key, "riffle groups", key, RF_KEY_BYTES);
    if (*status == RF_OK)
        *status = rf_keyhash_init(&gs->hk, key);
    if (*status == RF_OK && !(gs->table = calloc(16, sizeof *gs->table)))
        *status = RF_ENOMEM;
    if (*status != RF_OK) {
        rf_groups_free(gs);
        return NULL;
    }
    gs->mask = 15;
    return gs;
}

void rf_groups_free(rf_groups *gs)
{
    if (!gs)
        return;
    free(gs->groups);
    free(gs->table);
    free(gs->arena);
    sodium_memzero(gs, sizeof *gs);
    free(gs);
}

size_t rf_groups_count(const rf_groups *gs)
{
    return gs->n;
}

/* The table slot holding group bytes[0..len) of unit value h, or the empty
 * slot where it belongs. */
static size_t probe(const rf_groups *gs, uint64_t h, const void *bytes, size_t len)
{
    for (size_t i = (size_t)h & gs->mask;; i = (i + 1) & gs->mask) {
        const size_t e = gs->table[i];
        if (e == 0)
            return i;
        const struct group *g = &gs->groups[e - 1];
        if (g->h == h && g->len == len && memcmp(gs->arena + g->off, bytes, len) == 0)
            return i;
    }
}

/* Double the table: every group placed again. */
static int grow_table(rf_groups *gs)
{
    const size_t size = (gs->mask + 1) * 2;
    size_t *t = calloc(size, sizeof *t);
    if (!t)
        return -1;
    free(gs->table);
    gs->table = t;
    gs->mask = size - 1;
    for (size_t j = 0; j < gs->n; j++) {
        size_t i = (size_t)gs->groups[j].h & gs->mask;
        while (t[i])
            i = (i + 1) & gs->mask;
        t[i] = j + 1;
    }
    return 0;
}

/* Room for one more group and its len bytes. */
static int make_room(rf_groups *gs, size_t len)
{
    if (gs->n == gs->cap) {
        const size_t cap = gs->cap ? gs->cap * 2 : 16;
        struct group *g = realloc(gs->groups, cap * sizeof *g);
        if (!g)
            return -1;
        gs->groups = g;
        gs->cap = cap;
    }
    if (len > gs->room - gs->used) {
        size_t room = gs->room ? gs->room : 256;
        while (len > room - gs->used)
            room *= 2;
        unsigned char *a = realloc(gs->arena, room);
        if (!a)
            return -1;
        gs->arena = a;
        gs->room = room;
    }
    return 0;
}

/* The index of group bytes[0..len), added if new; SIZE_MAX when out of
 * memory. */
static size_t find_or_add(rf_groups *gs, const void *bytes, size_t len)
{
    const uint64_t h = rf_keyhash_unit(&gs->hk, bytes, len);
    size_t i = probe(gs, h, bytes, len);
    if (gs->table[i])
        return gs->table[i] - 1;
    if ((gs->n + 1) * 2 > gs->mask + 1) {
        if (grow_table(gs) != 0)
            return SIZE_MAX;
        i = probe(gs, h, bytes, len);
    }
    if (make_room(gs, len) != 0)
        return SIZE_MAX;
    struct group *g = &gs->groups[gs->n];
    g->h = h;
    g->off = gs->used;
    g->len = len;
    const rf_status st = rf_reservoir_init(&g->res, gs->k);
    assert(st == RF_OK); /* k >= 1 */
    (void)st;
    if (len)
        memcpy(gs->arena + gs->used, bytes, len);
    gs->used += len;
    gs->table[i] = ++gs->n;
    return gs->n - 1;
}

/* Whether Algorithm L draws for the item arriving now (reservoir.c: when the
 * fill ends, and when the item is the next one kept). */
static int draws_now(const rf_reservoir *r)
{
    return r->seen + 1 == r->k || (r->seen >= r->k && r->seen == r->next);
}

rf_status rf_groups_offer(rf_groups *gs, const void *bytes, size_t len, size_t *group,
                          size_t *slot)
{
    const size_t j = find_or_add(gs, bytes, len);
    if (j == SIZE_MAX)
        return RF_ENOMEM;
    struct group *g = &gs->groups[j];
    *group = j;
    if (!draws_now(&g->res)) {
        *slot = rf_reservoir_offer(&g->res, NULL); /* draws nothing */
        return RF_OK;
    }
    uint8_t in[16];
    for (int b = 0; b < 8; b++) {
        in[b] = (uint8_t)(g->h >> (8 * b));
        in[8 + b] = (uint8_t)(g->res.seen >> (8 * b));
    }
    rf_rng r;
    const rf_status st =
        rf_rng_init(&r, RF_RNG_XOSHIRO256PP, gs->key, rf_keyhash_unit(&gs->hk, in, sizeof in));
    if (st != RF_OK)
        return st;
    *slot = rf_reservoir_offer(&g->res, &r);
    sodium_memzero(&r, sizeof r);
    return RF_OK;
}
