/* dist_direct.c -- an owner that reads its records itself
 * (riffle_engine.h, rf_engine_gather_direct).
 *
 * Where every owner can map the whole input -- the processes of one
 * machine, which share its page cache -- nothing needs to travel: each
 * owner counts the input's records as the in-memory engine does (a SIMD
 * count of the delimiters, the start of every keyed block noted), draws
 * every record's key, and keeps the records whose keys are its range,
 * ordered as their byte offsets (rfi_keyed_index_part: 8 bytes per kept
 * record, 18 while they are ordered; their sizes summed on the way).  The
 * write is the engine's (rfi_engine_emit), from the mapping.  Against a
 * scatter and a gather, the input's delimiters are found and its keys
 * drawn by every owner, not by one part each; in exchange no record is
 * framed, sent, parsed or keyed a second time, and nothing but the order
 * is held.  The order of an owner's records is the keyed order's inside
 * its key range, so the owners' outputs one after another are
 * rf_engine_shuffle's. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/thread.h"
#include "dist_internal.h"
#include "engine/engine_internal.h"
#include "keyed/keyed_internal.h"

/* Bytes per kept record while the order is made: its entry (8), its place
 * in the key range (8) and its index in its block (2). */
#define ORDERING_BYTES 18

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

struct direct_ctx {
    const struct rfi_direct *d;
};

static rf_status direct_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    const struct rfi_direct *d = ((const struct direct_ctx *)ctx)->d;
    if (!d->test_keys)
        return rf_keyed_keys(&d->e.order, first, out, n);
    for (size_t j = 0; j < n; j++)
        out[j] = d->test_keys(d->test_ctx, first + j);
    return RF_OK;
}

/* A block's offsets, then where its last record ends: the kept records'
 * sizes are the differences (rfi_keyed_index_part). */
static rf_status direct_vals(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    const struct layout *l = &((const struct direct_ctx *)ctx)->d->l;
    const rf_status st = rfi_layout_offsets(l, first, out, n);
    out[n] = rfi_layout_block_end(l, first >> RFI_KEYED_BLOCK_BITS);
    return st;
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

/* Count the records, then order this owner's. */
static int order_owned(struct rfi_direct *d, unsigned owner, unsigned owners)
{
    struct engine *e = &d->e;
    if (rfi_layout_init(&d->l, e, &d->r) != 0)
        return 1;
    d->have_layout = 1;
    /* the order, and the kept lists while it is made (keyed_internal.h) */
    if (d->l.m / owners > e->budget / ORDERING_BYTES)
        return rfi_engine_nomem(e->err);
    struct direct_ctx ctx = {d};
    const rf_status st = rfi_keyed_index_part(&e->order, d->l.m, direct_keys, direct_vals, &ctx,
                                              d->l.size + 1, owner, owners, e->threads,
                                              &d->order, &d->count, &d->bytes);
    return st == RF_OK ? 0 : rfi_engine_status(e->err, st);
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
