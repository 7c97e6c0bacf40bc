/* dist_direct.c -- an owner that reads its records itself
 * (riffle_engine.h, rf_engine_gather_direct).
 *
 * Where every owner can map the whole input -- the processes of one
 * machine, which share its page cache -- nothing needs to travel.  Each
 * owner walks the input once: it finds the records' starts a window at a
 * time (the records layer's SIMD delimiter scan), and as each keyed block
 * of 2^16 records is complete, draws its keys and keeps the records whose
 * keys are its range -- each one's place in the range
 * (rfi_keyed_part_place) and its offset, its size summed -- noting where
 * every block starts.  The kept records are then ordered as their offsets
 * (rfi_keyed_index_list: 8 bytes per kept record, 24 while they are
 * ordered) and written by the engine's own write (rfi_engine_emit), from
 * the mapping.  Against a scatter and a gather, every owner finds every
 * delimiter and draws every key of the input, where those split that work
 * P ways; in exchange no record is framed, sent, parsed or keyed a second
 * time, nothing but the order is held, and the input is read in one pass
 * (the in-memory engine counts the records first, on all its threads, so
 * that its blocks can be found in parallel).  The order of an owner's
 * records is the keyed order's inside its key range, so the owners'
 * outputs one after another are rf_engine_shuffle's. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/thread.h"
#include "dist_internal.h"
#include "engine/bounds.h"
#include "engine/engine_internal.h"
#include "keyed/keyed_internal.h"

/* Bytes per kept record while the order is made: its entry (8), and its
 * place in the key range and its offset in the kept lists (16). */
#define ORDERING_BYTES 24
/* Records of a keyed block (riffle.h, "Keyed order"). */
#define BLOCK ((size_t)1 << RFI_KEYED_BLOCK_BITS)
/* Bytes searched for record starts at a time. */
#define WINDOW ((size_t)1 << 16)

struct rfi_direct {
    struct engine e;     /* settings, keyed order and the input's watch */
    rf_engine_error err; /* e.err between calls */
    rf_records r;        /* the input, mapped */
    struct layout l;
    int have_layout;
    uint64_t *order;     /* the kept records' offsets, in the keyed order */
    uint64_t count, bytes;
    uint64_t at, at_bytes; /* rfi_direct_bytes' cursor: bytes of order[0..at) */
    rfi_dist_key_fn test_keys;
    void *test_ctx;
};

static rf_status direct_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    const struct rfi_direct *d = ctx;
    if (!d->test_keys)
        return rf_keyed_keys(&d->e.order, first, out, n);
    for (size_t j = 0; j < n; j++)
        out[j] = d->test_keys(d->test_ctx, first + j);
    return RF_OK;
}

/* A block's offsets, for the near ties of the order. */
static rf_status direct_vals(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    return rfi_layout_offsets(&((const struct rfi_direct *)ctx)->l, first, out, n);
}

/* The input, mapped (read, where it cannot be) and watched. */
static int map_input(struct rfi_direct *d, const rf_engine_input *in)
{
    struct engine *e = &d->e;
    const int own = in->fd < 0;
    const int fd = own ? open(in->name, O_RDONLY | O_CLOEXEC) : in->fd;
    struct stat st;
    if (fd < 0)
        return rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_INPUT, in->name, errno);
    long slot = -1;
    int status = 1, more = 0;
    if (fstat(fd, &st) != 0) {
        rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_INPUT, in->name, errno);
    } else if (!S_ISREG(st.st_mode)) {
        rfi_engine_fail(e->err, RF_EINVAL, RF_ENGINE_OP_NONE, in->name, 0);
    } else if (rfi_watch_add(&e->inputs, fd, own, in->name, &slot, e->err) == 0) {
        const int err = rf_records_add_fd_max(&d->r, fd, SIZE_MAX, &more);
        if (err)
            rfi_engine_fail(e->err, err == ENOMEM ? RF_ENOMEM : RF_EIO,
                            err == ENOMEM ? RF_ENGINE_OP_NONE : RF_ENGINE_OP_READ, in->name, err);
        else if (!d->r.map_)
            rfi_watch_feed(&e->inputs, slot, d->r.data, d->r.size);
        /* A mapped input is not hashed: like every step of a distributed
         * run, this one checks its stamp (size, times, inode) at the end,
         * and every owner hashing all of it would cost each as much as
         * counting it. */
        status = err != 0;
    }
    if (own)
        close(fd);
    return status;
}

/* The records kept while the input is walked: their places in the key
 * range and their offsets, in record order; their bytes. */
struct kept {
    uint64_t *at, *off;
    size_t n, cap;
    uint64_t bytes;
};

static int keep_room(struct kept *k, size_t more)
{
    if (k->n + more <= k->cap)
        return 0;
    size_t cap = k->cap ? k->cap : BLOCK;
    while (cap < k->n + more)
        cap *= 2;
    uint64_t *at = realloc(k->at, cap * sizeof *at);
    if (at)
        k->at = at;
    uint64_t *off = at ? realloc(k->off, cap * sizeof *off) : NULL;
    if (off)
        k->off = off;
    if (!at || !off)
        return -1;
    k->cap = cap;
    return 0;
}

/* Block `first` / 2^16: its n records start at off[0..n), the last ends at
 * `end`.  Its start noted, its keys drawn, this owner's records kept
 * (branch-free: whether a record is kept is a coin toss for two owners). */
static int keep_block(struct rfi_direct *d, struct kept *k, uint64_t *starts, uint64_t first,
                      const uint64_t *off, size_t n, uint64_t end, uint64_t *keys,
                      unsigned owner, unsigned owners)
{
    struct engine *e = &d->e;
    starts[first / BLOCK] = off[0];
    const rf_status st = direct_keys(d, first, keys, n);
    if (st != RF_OK)
        return rfi_engine_status(e->err, st);
    if (keep_room(k, n) != 0 || (k->n + n) > e->budget / ORDERING_BYTES)
        return rfi_engine_nomem(e->err);
    size_t kn = k->n;
    uint64_t bytes = 0;
    for (size_t j = 0; j < n; j++) {
        const uint64_t in = (uint64_t)rfi_keyed_part_place(keys[j], owner, owners, &k->at[kn]);
        const uint64_t next = j + 1 < n ? off[j + 1] : end;
        k->off[kn] = off[j];
        bytes += (next - off[j]) & (0 - in);
        kn += (size_t)in;
    }
    k->n = kn;
    k->bytes += bytes;
    return 0;
}

/* Walk the input once: the layout (the records and every block's start)
 * and this owner's records, kept. */
static int walk(struct rfi_direct *d, struct kept *k, unsigned owner, unsigned owners)
{
    struct layout *l = &d->l;
    const struct bounds b = {0, l->delim};
    const uint64_t most = (l->size - l->begin) / BLOCK + 2; /* blocks, at most */
    uint64_t *buf = malloc((BLOCK + WINDOW + 1) * sizeof *buf);
    uint64_t *keys = malloc(BLOCK * sizeof *keys);
    l->starts = malloc(most * sizeof *l->starts);
    if (!buf || !keys || !l->starts) {
        free(buf);
        free(keys);
        return rfi_engine_nomem(d->e.err);
    }
    uint64_t pos = l->begin, first = 0;
    size_t have = 0, head = 0; /* buf[head..have): record starts not yet kept */
    if (pos < l->size)
        buf[have++] = pos;
    int status = 0;
    while (pos < l->size && status == 0) {
        const size_t w = l->size - pos < WINDOW ? (size_t)(l->size - pos) : WINDOW;
        have += rfi_bounds_find(b, l->data + pos, w, pos, buf + have);
        pos += w;
        /* a block is whole once the next record's start is known */
        for (; have - head > BLOCK && status == 0; head += BLOCK, first += BLOCK)
            status = keep_block(d, k, l->starts, first, buf + head, BLOCK, buf[head + BLOCK],
                                keys, owner, owners);
        memmove(buf, buf + head, (have - head) * sizeof *buf);
        have -= head;
        head = 0;
    }
    /* The last start is the end when the last record has its delimiter;
     * an unterminated one is written with one added. */
    l->terminated = l->begin == l->size || l->data[l->size - 1] == l->delim;
    if (have > 0 && buf[have - 1] == l->size)
        have--;
    if (status == 0 && have > 0) {
        status = keep_block(d, k, l->starts, first, buf, have, l->size + !l->terminated, keys,
                            owner, owners);
        first += have;
    }
    l->m = first;
    l->blocks = (first + BLOCK - 1) / BLOCK;
    free(buf);
    free(keys);
    return status;
}

/* Walk the input, then order this owner's records. */
static int order_owned(struct rfi_direct *d, unsigned owner, unsigned owners)
{
    struct engine *e = &d->e;
    struct kept k = {0};
    rfi_layout_head(&d->l, e, &d->r);
    d->have_layout = 1;
    int status = walk(d, &k, owner, owners);
    if (status == 0 && !(d->order = malloc((k.n ? k.n : 1) * sizeof *d->order)))
        status = rfi_engine_nomem(e->err);
    if (status == 0) {
        const rf_status st =
            rfi_keyed_index_list(&e->order, d->l.m, k.at, k.off, k.n, direct_keys, direct_vals,
                                 d, d->l.starts, d->l.size, e->threads, d->order);
        if (st != RF_OK)
            status = rfi_engine_status(e->err, st);
    }
    d->count = k.n;
    d->bytes = k.bytes;
    free(k.at);
    free(k.off);
    return status;
}

int rfi_direct_open(struct rfi_direct **dp, const rf_engine_options *o,
                    const rf_engine_input *in, size_t n, unsigned owner, unsigned owners,
                    rfi_dist_key_fn keys, void *kctx, rf_engine_error *err)
{
    *dp = NULL;
    if (rfi_dist_usable(o, in, n, err) != 0)
        return 1;
    if (n != 1 || in[0].data || o->csv || owners == 0 || owner >= owners)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
    struct rfi_direct *d = calloc(1, sizeof *d);
    if (!d)
        return rfi_engine_nomem(err);
    d->e = (struct engine){
        .delim = o->delim,
        .header = o->header,
        .count = RF_ENGINE_ALL,
        .budget = o->memory ? o->memory : rf_engine_default_memory(),
        .threads = rfi_threads(o->threads),
        .err = err,
        .mapped = -1,
    };
    d->test_keys = keys;
    d->test_ctx = kctx;
    rf_records_init(&d->r, o->delim);
    rf_records_defer_index(&d->r); /* the layout finds the records */
    const rf_status st = rf_keyed_order_init(&d->e.order, o->rng, o->key);
    if (st != RF_OK) {
        rfi_engine_status(err, st);
    } else if (map_input(d, &in[0]) == 0 && order_owned(d, owner, owners) == 0) {
        d->e.err = &d->err;
        *dp = d;
        return 0;
    }
    rfi_direct_close(d);
    return 1;
}

uint64_t rfi_direct_records(const struct rfi_direct *d)
{
    return d->count;
}

/* The bytes of the record at offset `at`, its delimiter included (an
 * unterminated last record is written with one added). */
static uint64_t record_size(const struct layout *l, uint64_t at)
{
    const unsigned char *p = memchr(l->data + at, l->delim, (size_t)(l->size - at));
    return p ? (uint64_t)(p - (l->data + at)) + 1 : l->size - at + 1;
}

void rfi_direct_bytes(struct rfi_direct *d, uint64_t k, uint64_t *bytes)
{
    if (k >= d->count) {
        *bytes = d->bytes;
        return;
    }
    /* Split parts and counts ask for increasing k: walk on from the last. */
    if (k < d->at) {
        d->at = 0;
        d->at_bytes = 0;
    }
    for (; d->at < k; d->at++)
        d->at_bytes += record_size(&d->l, d->order[d->at]);
    *bytes = d->at_bytes;
}

int rfi_direct_write(struct rfi_direct *d, uint64_t count, const rf_engine_sink *sink,
                     rf_engine_error *err)
{
    const uint64_t k = count < d->count ? count : d->count;
    const int r = sink->begin(sink->ctx, "", 0, k);
    if (r)
        return rfi_engine_fail(err, RF_EIO, RF_ENGINE_OP_OUTPUT, NULL, r);
    d->e.err = err;
    d->e.sink = sink;
    int status = rfi_engine_emit(&d->e, &d->r, d->order, (size_t)k);
    if (status == 0)
        status = rfi_watch_check(&d->e.inputs, err);
    d->e.err = &d->err;
    d->e.sink = NULL;
    return status;
}

void rfi_direct_close(struct rfi_direct *d)
{
    if (!d)
        return;
    if (d->have_layout)
        rfi_layout_free(&d->l);
    free(d->order);
    rf_records_free(&d->r);
    rfi_watch_free(&d->e.inputs);
    sodium_memzero(&d->e.order, sizeof d->e.order);
    free(d);
}
