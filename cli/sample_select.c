/*
 * sample_select.c -- `riffle sample --prob=P`, `--key=FIELD` (with --prob or
 * -n K) and `--group=FIELD -n K`: selections that each record's key, group
 * or number decides as it streams past (riffle_sample.h), all keyed by
 * --seed (or --random-source, or the OS; --rng does not enter: the
 * selections draw from SipHash, and ChaCha20-seeded generators, under that
 * key).
 *
 * Contract (pinned by tests/cli/cli_bykey.bats):
 *   --prob=P          record i (from 0, over all inputs) is kept when its
 *                     unit value u_i < P (rf_bernoulli: geometric skips;
 *                     a larger P keeps a superset with the same seed);
 *   --key=F --prob=P  every record whose key k has u(k) < P (rf_keyhash_unit),
 *                     so a key's records are all kept or all dropped, and a
 *                     larger P keeps a superset of keys;
 *   --key=F -n K      every record of the K keys with the smallest u(k)
 *                     (all keys if fewer): a uniform K-subset of the keys,
 *                     the head of the order --prob grows in;
 *   --group=F -n K    K records of each group (all of a smaller one), a
 *                     uniform subset per group (rf_groups).
 * The kept records come out in input order, once the whole input was read
 * (an error leaves no output): memory holds the sample, never the input --
 * with --prob its bytes alone, appended as they arrive.
 * Keys are told apart by their 64-bit unit values in --key -n K (two keys
 * collide with probability about 2^-64 per pair).
 */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_numbers.h"
#include "riffle_io.h"
#include "riffle_sample.h"
#include "sample_select.h"

#define SELECT_OUT_BUFFER ((size_t)1 << 16)

/* A kept record: its bytes, input position and the unit value that kept it. */
struct rec {
    char *data;
    size_t len;
    uint64_t pos, u;
};

struct recs {
    struct rec *v;
    size_t n, cap;
};

/* The K smallest distinct unit values of keys seen (--key -n K): a max-heap,
 * and an open-addressing set of its values (linear probing; a cell holds
 * value + 1, 0 when empty). */
struct bottom {
    size_t k, n, cap;
    uint64_t *heap;
    uint64_t *set;
    size_t mask, used;
};

struct selector {
    const struct sample_select *s;
    rf_keyhash hk;
    uint64_t t;                /* --prob's threshold */
    int all;
    rf_bernoulli *b;
    uint64_t next;             /* rf_bernoulli's next record */
    rf_groups *gs;
    struct recs *group_recs;   /* per group, its slots */
    size_t n_groups, groups_cap;
    struct recs kept;          /* --key -n K */
    struct bottom bot;
    unsigned char *out;        /* --prob: the kept records, delimited, in order */
    size_t out_n, out_cap;
};

static int report_memory(void)
{
    cli_error("memory exhausted");
    return -1;
}

/* ---- kept records ---- */

static int rec_set(struct rec *r, const char *data, size_t len, uint64_t pos, uint64_t u)
{
    char *d = realloc(r->data, len ? len : 1);
    if (!d)
        return -1;
    memcpy(d, data, len);
    r->data = d;
    r->len = len;
    r->pos = pos;
    r->u = u;
    return 0;
}

/* Store in slot (== n appends). */
static int recs_put(struct recs *rs, size_t slot, const char *data, size_t len, uint64_t pos,
                    uint64_t u)
{
    if (slot == rs->n) {
        if (rs->n == rs->cap) {
            struct rec *v = cli_grow(rs->v, &rs->cap, sizeof *v, 16);
            if (!v)
                return -1;
            rs->v = v;
        }
        memset(&rs->v[rs->n++], 0, sizeof *rs->v);
    }
    return rec_set(&rs->v[slot], data, len, pos, u);
}

static void recs_free(struct recs *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        free(rs->v[i].data);
    free(rs->v);
}

/* Append a kept record and its delimiter to the output held (--prob): in
 * input order already, so no record needs more than its bytes. */
static int append(struct selector *sel, const char *data, size_t len)
{
    if (len + 1 > sel->out_cap - sel->out_n) {
        size_t cap = sel->out_cap ? sel->out_cap : 1 << 16;
        while (len + 1 > cap - sel->out_n) {
            if (cap > SIZE_MAX / 2)
                return report_memory();
            cap *= 2;
        }
        unsigned char *p = realloc(sel->out, cap);
        if (!p)
            return report_memory();
        sel->out = p;
        sel->out_cap = cap;
    }
    memcpy(sel->out + sel->out_n, data, len);
    sel->out[sel->out_n + len] = sel->s->delim;
    sel->out_n += len + 1;
    return 0;
}

/* ---- the K smallest key values ---- */

static size_t set_home(const struct bottom *b, uint64_t u)
{
    return (size_t)(u ^ (u >> 29)) & b->mask;
}

static size_t set_find(const struct bottom *b, uint64_t u)
{
    size_t i = set_home(b, u);
    while (b->set[i] && b->set[i] != u + 1)
        i = (i + 1) & b->mask;
    return i;
}

/* The set again, at most a quarter full. */
static int set_rebuild(struct bottom *b)
{
    size_t size = 16;
    while (size < 4 * b->n + 16)
        size *= 2;
    uint64_t *set = calloc(size, sizeof *set);
    if (!set)
        return -1;
    free(b->set);
    b->set = set;
    b->mask = size - 1;
    b->used = 0;
    for (size_t i = 0; i < b->n; i++) {
        b->set[set_find(b, b->heap[i])] = b->heap[i] + 1;
        b->used++;
    }
    return 0;
}

/* Remove u (present) and close the hole: a later cell of the run moves back
 * when its home is not cyclically in (hole, cell] (Knuth, TAOCP vol. 3,
 * 6.4, Algorithm R). */
static void set_remove(struct bottom *b, uint64_t u)
{
    size_t i = set_find(b, u);
    b->set[i] = 0;
    for (size_t j = (i + 1) & b->mask; b->set[j]; j = (j + 1) & b->mask) {
        const size_t h = set_home(b, b->set[j] - 1);
        const int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!stays) {
            b->set[i] = b->set[j];
            b->set[j] = 0;
            i = j;
        }
    }
    b->used--;
}

static void heap_down(uint64_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && h[c + 1] > h[c])
            c++;
        if (h[i] >= h[c])
            return;
        const uint64_t x = h[i];
        h[i] = h[c];
        h[c] = x;
        i = c;
    }
}

static void heap_up(uint64_t *h, size_t i)
{
    while (i > 0 && h[(i - 1) / 2] < h[i]) {
        const uint64_t x = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = x;
        i = (i - 1) / 2;
    }
}

/* Whether a key of value u is among the K smallest so far (adding it, and
 * evicting the largest, when it is new and small enough); u < UINT64_MAX.
 * -1: out of memory. */
static int bottom_offer(struct bottom *b, uint64_t u)
{
    if (b->set[set_find(b, u)])
        return 1;
    if (b->n == b->k && u >= b->heap[0])
        return 0;
    if (b->n == b->k) {
        set_remove(b, b->heap[0]);
        b->heap[0] = u;
        heap_down(b->heap, b->n, 0);
    } else {
        if (b->n == b->cap) {
            uint64_t *h = cli_grow(b->heap, &b->cap, sizeof *h, 64);
            if (!h)
                return -1;
            b->heap = h;
        }
        b->heap[b->n] = u;
        heap_up(b->heap, b->n++);
        if (4 * (b->used + 1) > b->mask + 1 && set_rebuild(b) != 0)
            return -1;
        if (b->set[set_find(b, u)]) /* rebuilt with u in it */
            return 1;
    }
    b->set[set_find(b, u)] = u + 1;
    b->used++;
    return 1;
}

/* ---- deciding ---- */

/* Drop the records of keys evicted from the K smallest, when they are as
 * many as those kept: the memory stays within twice the sample. */
static void compact(struct selector *sel)
{
    if (sel->bot.n < sel->bot.k || sel->kept.n < 64)
        return;
    const uint64_t max = sel->bot.heap[0];
    size_t live = 0;
    for (size_t i = 0; i < sel->kept.n; i++)
        live += sel->kept.v[i].u <= max;
    if (2 * live > sel->kept.n)
        return;
    size_t j = 0;
    for (size_t i = 0; i < sel->kept.n; i++) {
        if (sel->kept.v[i].u <= max) {
            struct rec t = sel->kept.v[j];
            sel->kept.v[j++] = sel->kept.v[i];
            sel->kept.v[i] = t;
        }
    }
    for (size_t i = j; i < sel->kept.n; i++)
        free(sel->kept.v[i].data);
    sel->kept.n = j;
}

static int offer_group(struct selector *sel, const char *s, size_t len, const unsigned char *k,
                       size_t klen, uint64_t pos)
{
    size_t g, slot;
    const rf_status st = rf_groups_offer(sel->gs, k, klen, &g, &slot);
    if (st != RF_OK)
        return report_memory();
    if (g == sel->n_groups) {
        if (g == sel->groups_cap) {
            struct recs *v = cli_grow(sel->group_recs, &sel->groups_cap, sizeof *v, 16);
            if (!v)
                return report_memory();
            sel->group_recs = v;
        }
        memset(&sel->group_recs[sel->n_groups++], 0, sizeof *sel->group_recs);
    }
    if (slot == RF_RESERVOIR_DISCARD)
        return 0;
    return recs_put(&sel->group_recs[g], slot, s, len, pos, 0) ? report_memory() : 0;
}

static int offer_key(struct selector *sel, const char *s, size_t len, const unsigned char *k,
                     size_t klen, uint64_t pos)
{
    uint64_t u = rf_keyhash_unit(&sel->hk, k, klen);
    if (!sel->s->have_prob && u == UINT64_MAX)
        u--; /* the set holds u + 1: the largest value shares its neighbour's cell */
    int keep;
    if (sel->s->have_prob)
        return sel->all || u < sel->t ? append(sel, s, len) : 0;
    if ((keep = bottom_offer(&sel->bot, u)) < 0)
        return report_memory();
    if (!keep)
        return 0;
    if (recs_put(&sel->kept, sel->kept.n, s, len, pos, u) != 0)
        return report_memory();
    compact(sel);
    return 0;
}

/* One record, number pos (line `line` of file `name`).  0, or -1 after a
 * message. */
static int offer(struct selector *sel, const char *s, size_t len, uint64_t pos,
                 const char *name, uint64_t line)
{
    if (!sel->s->key.field) { /* --prob alone */
        if (pos != sel->next)
            return 0;
        sel->next = rf_bernoulli_next(sel->b);
        return append(sel, s, len);
    }
    const unsigned char *k;
    size_t klen;
    if (key_field_find(&sel->s->key, (const unsigned char *)s, len, &k, &klen) != 0) {
        key_field_missing(&sel->s->key, name, (unsigned long long)line);
        return -1;
    }
    return sel->s->by_group ? offer_group(sel, s, len, k, klen, pos)
                            : offer_key(sel, s, len, k, klen, pos);
}

/* A record of the input, offered (cli_each_record). */
static int offer_record(void *ctx, char *rec, size_t len, uint64_t pos, const char *name,
                        uint64_t line)
{
    return offer(ctx, rec, len, pos, name, line);
}

/* ---- output ---- */

static int by_pos(const void *a, const void *b)
{
    const uint64_t x = (*(const struct rec *const *)a)->pos;
    const uint64_t y = (*(const struct rec *const *)b)->pos;
    return (x > y) - (x < y);
}

/* Every kept record, in input order, into *out (*n of them). */
static int gather(const struct selector *sel, struct rec ***out, size_t *n)
{
    size_t total = 0;
    const uint64_t max = sel->bot.n ? sel->bot.heap[0] : 0;
    const int bottom = sel->s->key.field && !sel->s->by_group && !sel->s->have_prob;
    for (size_t g = 0; g < sel->n_groups; g++)
        total += sel->group_recs[g].n;
    total += sel->kept.n;
    struct rec **v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return report_memory();
    size_t j = 0;
    for (size_t g = 0; g < sel->n_groups; g++)
        for (size_t i = 0; i < sel->group_recs[g].n; i++)
            v[j++] = &sel->group_recs[g].v[i];
    for (size_t i = 0; i < sel->kept.n; i++)
        if (!bottom || sel->kept.v[i].u <= max)
            v[j++] = &sel->kept.v[i];
    qsort(v, j, sizeof *v, by_pos);
    *out = v;
    *n = j;
    return 0;
}

static int write_out(const struct selector *sel)
{
    static unsigned char buf[SELECT_OUT_BUFFER];
    rf_writer w;
    rf_writer_init(&w, STDOUT_FILENO, buf, sizeof buf);
    sample_input_put_header(sel->s->input, &w);
    if (sel->s->have_prob) {
        if (sel->out_n)
            rf_writer_put(&w, sel->out, sel->out_n);
        return nums_write_failed(rf_writer_flush(&w)) ? CLI_FAIL : CLI_OK;
    }
    struct rec **v;
    size_t n;
    if (gather(sel, &v, &n) != 0)
        return CLI_FAIL;
    for (size_t i = 0; i < n; i++) {
        rf_writer_put(&w, v[i]->data, v[i]->len);
        rf_writer_putc(&w, sel->s->delim);
    }
    free(v);
    return nums_write_failed(rf_writer_flush(&w)) ? CLI_FAIL : CLI_OK;
}

/* ---- the run ---- */

static int start(struct selector *sel, const uint8_t key[RF_KEY_BYTES])
{
    const struct sample_select *s = sel->s;
    rf_status st = rf_keyhash_init(&sel->hk, key);
    if (st == RF_OK && s->have_prob)
        st = rf_unit_threshold(s->prob, &sel->t, &sel->all);
    if (st == RF_OK && s->have_prob && !s->key.field) {
        sel->b = rf_bernoulli_new(key, s->prob, &st);
        if (sel->b)
            sel->next = rf_bernoulli_next(sel->b);
    }
    if (st == RF_OK && s->by_group) {
        const size_t k = s->count > SIZE_MAX ? SIZE_MAX : (size_t)s->count;
        sel->gs = rf_groups_new(key, k, &st);
    }
    if (st == RF_OK && s->key.field && !s->by_group && !s->have_prob) {
        sel->bot.k = s->count > SIZE_MAX / 8 ? SIZE_MAX / 8 : (size_t)s->count;
        st = set_rebuild(&sel->bot) == 0 ? RF_OK : RF_ENOMEM;
    }
    if (st != RF_OK)
        cli_error("cannot start the sample: %s", rf_strerror(st));
    return st == RF_OK ? 0 : -1;
}

static void finish(struct selector *sel)
{
    rf_bernoulli_free(sel->b);
    rf_groups_free(sel->gs);
    for (size_t g = 0; g < sel->n_groups; g++)
        recs_free(&sel->group_recs[g]);
    free(sel->group_recs);
    recs_free(&sel->kept);
    free(sel->bot.heap);
    free(sel->bot.set);
    free(sel->out);
}

int sample_run_select(const struct sample_select *s)
{
    struct selector sel;
    memset(&sel, 0, sizeof sel);
    sel.s = s;
    uint8_t key[RF_KEY_BYTES];
    if (cli_rng_key(s->rng, key) != 0)
        return CLI_FAIL;
    const int ok = start(&sel, key) == 0;
    sodium_memzero(key, sizeof key);
    const int fed = ok && sample_input_each(s->input, offer_record, &sel) == 0;
    const int status = fed ? write_out(&sel) : CLI_FAIL;
    finish(&sel);
    return status;
}
