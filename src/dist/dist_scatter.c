/* dist_scatter.c -- one part's records keyed and packed for their owners
 * (riffle_engine.h, "Distributed runs").
 *
 * The part is a contiguous run of records of the logical stream
 * (dist_view.c); record first + j gets key k_(first + j) of the keyed
 * stream, so a part needs no other part's keys -- only how many records
 * come before it.  Each round walks records in order and appends each to
 * its owner's frame as the gap to the owner's previous number (a varint:
 * one byte while fewer than 128 records of other owners come between) and
 * its bytes, until one no longer fits `room`; each owner thus receives its
 * records in increasing number order, which the gather relies on for ties.
 *
 * A round's frames lie in one buffer, owner d's at d * stride, so that a
 * transport sends them from where they were written (riffle-mpi: an
 * owner's frames as one message, or pieces of 1 GiB); the record's bytes are copied once, from the input
 * into the frame.  Two buffers take turns, so a round's packets stay valid
 * while the next one is packed (a pipelined transport sends one round
 * while it packs the next).  The input pages behind a round are given back
 * (rfi_dist_view_release), so that a part's bytes are not resident beside
 * its gather.
 *
 * An owner that reads the inputs itself (rf_engine_scatter_refer: a
 * process on the same machine) gets frames of references instead: each
 * record as its number's gap, the bytes skipped since the owner's previous
 * record and its length (three varints, about three bytes for a line of
 * any length), so that its bytes are copied by nobody until the owner
 * writes them from its own mapping of the inputs. */
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"
#include "engine/engine_internal.h"

/* Keys drawn at a time. */
#define KEY_BATCH 512
/* Bytes searched for record ends at a time: a cache-resident window, its
 * ends found 64 bytes at a time (rf_delims_find) rather than one memchr
 * call per record. */
#define END_WINDOW ((size_t)4096)
/* What a record sent by reference costs its owner: its entry in the order
 * (riffle_engine.h, rf_engine_gather_inputs). */
#define REF_COST 24u
/* The smallest slot: a frame header and a short record. */
#define SLOT_MIN ((size_t)RFI_DIST_FRAME + 64)

struct slot {
    size_t len;            /* bytes of its frame so far (0: no frame) */
    uint64_t records, first, last;
    uint64_t last_end;     /* a frame of references: its last record's end */
};

struct rf_engine_scatter {
    struct dist_view v;
    rf_engine_error open_err; /* the view's error slot between calls */
    rf_keyed_order order;
    rf_keyed_stream ks;
    unsigned part, parts, owners;
    uint64_t begin, pos, end;  /* the part's start, the next record's logical offset, its end */
    size_t seg;                /* the segment holding pos */
    uint64_t number;           /* the next record's global number */
    uint64_t handed, total;    /* records; total once counted */
    int counted;
    uint64_t check;            /* the frames' check field */
    uint64_t keys[KEY_BATCH];
    size_t kpos, kn;
    uint64_t ends[END_WINDOW]; /* where the next records start, found ahead */
    size_t epos, en;
    unsigned char *buf[2];     /* the rounds' frames, taking turns */
    size_t cap[2];
    int cur;                   /* the buffer of this round */
    size_t stride;             /* owner d's frame at buf + d * stride */
    struct slot *slot;
    int checked;
    rf_engine_gather *lane;    /* rf_engine_scatter_local: lane_owner's records go here */
    unsigned lane_owner;
    int lane_hold;             /* held in the input by the gather: kept mapped */
    size_t lane_seg;           /* the segment of the lane's open run */
    int lane_open;
    uint64_t kept, kept_bytes;  /* records (and their bytes) handed to the lane */
    unsigned char *refer;      /* per owner: 1 if sent references (or NULL: none) */
    uint32_t ident;            /* the inputs' identity, for frames of references */
    rfi_dist_key_fn test_keys;  /* tests only: keys from here */
    void *test_ctx;
};

uint64_t rf_engine_scatter_records(const rf_engine_scatter *s, uint64_t *total)
{
    if (total) {
        /* counted on the first request only (a pass over the part's bytes,
         * which the scatter itself does not need): the cache is the
         * scatter's own, allocated non-const by rf_engine_scatter_open */
        rf_engine_scatter *m = (rf_engine_scatter *)(uintptr_t)s;
        if (!m->counted) {
            m->total = rfi_dist_count(&m->v, m->begin, m->end);
            m->counted = 1;
        }
        *total = s->total;
    }
    return s->handed;
}

uint64_t rf_engine_scatter_kept(const rf_engine_scatter *s, uint64_t *bytes)
{
    if (bytes)
        *bytes = s->kept_bytes;
    return s->kept;
}

void rf_engine_scatter_close(rf_engine_scatter *s)
{
    if (!s)
        return;
    rfi_dist_view_close(&s->v);
    free(s->buf[0]);
    free(s->buf[1]);
    free(s->slot);
    free(s->refer);
    /* the generator's state and the order's keys */
    memset(&s->ks, 0, sizeof s->ks);
    memset(&s->order, 0, sizeof s->order);
    free(s);
}

rf_status rf_engine_scatter_open(rf_engine_scatter **sp, const rf_engine_options *o,
                                 const rf_engine_input *in, size_t n, unsigned part,
                                 unsigned parts, uint64_t first, unsigned owners,
                                 rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!sp || rfi_dist_usable(o, in, n, err) != 0 || parts == 0 || part >= parts ||
        owners == 0)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), err->status;
    *sp = NULL;
    rf_engine_scatter *s = calloc(1, sizeof *s);
    if (!s || !(s->slot = calloc(owners, sizeof *s->slot))) {
        free(s);
        return rfi_engine_nomem(err), err->status;
    }
    s->part = part;
    s->parts = parts;
    s->owners = owners;
    s->number = first;
    rf_status st = rf_keyed_order_init(&s->order, o->rng, o->key);
    if (st == RF_OK)
        st = rf_keyed_stream_init(&s->ks, &s->order, first);
    if (st == RF_OK)
        st = rfi_dist_check(&s->order, &s->check);
    if (st != RF_OK) {
        rfi_engine_status(err, st);
        rf_engine_scatter_close(s);
        return st;
    }
    if (rfi_dist_view_open(&s->v, o, in, n, err) != 0) {
        rf_engine_scatter_close(s);
        return err->status;
    }
    rfi_dist_part_range(&s->v, part, parts, &s->pos, &s->end);
    s->begin = s->pos;
    s->seg = s->pos < s->end ? rfi_dist_seg_of(&s->v, s->pos) : 0;
    s->v.err = &s->open_err;
    *sp = s;
    return RF_OK;
}

rf_status rf_engine_scatter_local(rf_engine_scatter *s, unsigned owner, rf_engine_gather *g,
                                  rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!s || !g || s->lane || s->handed > 0 || owner >= s->owners ||
        rfi_dist_gather_lane(g, s->part, s->parts, owner, s->owners, s->v.delim, &s->order,
                             s->check, s->owners == 1) != 0)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    s->lane = g;
    s->lane_owner = owner;
    s->lane_hold = s->owners == 1;
    return RF_OK;
}

rf_status rf_engine_scatter_refer(rf_engine_scatter *s, unsigned owner, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!s || owner >= s->owners || s->handed > 0 || (s->lane && owner == s->lane_owner) ||
        rfi_dist_view_identity(&s->v, &s->ident) != 0)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    if (!s->refer && !(s->refer = calloc(s->owners, 1)))
        return rfi_engine_nomem(err), RF_ENOMEM;
    s->refer[owner] = 1;
    return RF_OK;
}

/* The record at s->pos handed to the local lane (its run ended first when
 * it lies in another input than the run's).  0, or -1 with the error
 * recorded. */
static int take_local(rf_engine_scatter *s, const unsigned char *rec, size_t len, int added,
                      uint64_t key, rf_engine_error *err)
{
    if (s->lane_open && s->lane_seg != s->seg && rfi_dist_gather_local_end(s->lane, err) != 0)
        return -1;
    if (rfi_dist_gather_local(s->lane, rec, len, added, key, s->number, err) != 0)
        return -1;
    s->lane_open = !added; /* an added delimiter ends its run */
    s->lane_seg = s->seg;
    s->kept++;
    s->kept_bytes += len + (size_t)added;
    return 0;
}

void rfi_dist_scatter_keys(rf_engine_scatter *s, rfi_dist_key_fn keys, void *ctx)
{
    s->test_keys = keys;
    s->test_ctx = ctx;
}

/* The key of the record at s->pos, drawn in batches. */
static rf_status peek_key(rf_engine_scatter *s, uint64_t *key)
{
    if (s->test_keys) {
        *key = s->test_keys(s->test_ctx, s->number);
        return RF_OK;
    }
    if (s->kpos == s->kn) {
        s->kn = KEY_BATCH; /* past the part's end only at its last batch */
        s->kpos = 0;
        rf_keyed batch[KEY_BATCH];
        const rf_status st = rf_keyed_stream_fill(&s->ks, batch, s->kn);
        if (st != RF_OK)
            return st;
        for (size_t i = 0; i < s->kn; i++)
            s->keys[i] = batch[i].key;
    }
    *key = s->keys[s->kpos];
    return RF_OK;
}

/* The record at s->pos: its bytes in the segment (*len of them) and
 * whether its delimiter is the one added after the segment.  Its end is
 * the next of s->ends when one is found ahead (a window of the segment
 * searched at once, ends used in order as s->pos moves: advance), else
 * searched for alone (a record longer than the window, or one ending at
 * the segment's end without a delimiter). */
static const unsigned char *record_at(rf_engine_scatter *s, size_t *len, int *added)
{
    const struct dist_view *v = &s->v;
    const struct dist_seg *g = &v->seg[s->seg];
    while (s->pos >= g->at + g->size + (uint64_t)g->extra)
        g = &v->seg[++s->seg];
    const uint64_t off = s->pos - g->at;
    const unsigned char *p = g->p + off;
    const size_t rest = (size_t)(g->size - off);
    if (s->epos == s->en) {
        s->epos = 0;
        s->en = rf_delims_find(p, rest < END_WINDOW ? rest : END_WINDOW, v->delim, s->pos,
                               s->ends);
    }
    if (s->epos < s->en) {
        *added = 0;
        *len = (size_t)(s->ends[s->epos] - s->pos);
        return p;
    }
    const unsigned char *q = memchr(p, v->delim, rest);
    *added = q == NULL;
    *len = q ? (size_t)(q - p) + 1 : rest;
    return p;
}

/* Past the record at s->pos, of `bytes` bytes (its added delimiter
 * counted), as record_at found it. */
static void advance(rf_engine_scatter *s, size_t bytes)
{
    s->pos += bytes;
    if (s->epos < s->en)
        s->epos++;
    s->number++;
    s->handed++;
    s->kpos++;
}

/* This round's buffer with slots of at least `stride` bytes: a larger
 * stride (a record larger than the room) moves the frames made so far to
 * their new places, last first, as they only move up. */
static int make_room(rf_engine_scatter *s, size_t stride)
{
    if (stride < s->stride)
        stride = s->stride;
    const int c = s->cur;
    if (stride > SIZE_MAX / s->owners)
        return 1;
    const size_t need = stride * s->owners;
    if (need > s->cap[c]) {
        unsigned char *p = realloc(s->buf[c], need);
        if (!p)
            return 1;
        s->buf[c] = p;
        s->cap[c] = need;
    }
    if (stride > s->stride)
        for (unsigned d = s->owners; d-- > 0;)
            if (s->slot[d].len)
                memmove(s->buf[c] + (size_t)d * stride, s->buf[c] + (size_t)d * s->stride,
                        s->slot[d].len);
    s->stride = stride;
    return 0;
}

static void finish_frame(const rf_engine_scatter *s, unsigned d)
{
    const struct slot *b = &s->slot[d];
    if (b->len == 0)
        return;
    unsigned char *p = s->buf[s->cur] + (size_t)d * s->stride;
    const int refs = s->refer && s->refer[d];
    memcpy(p, refs ? RFI_DIST_REF_MAGIC : RFI_DIST_MAGIC, 4);
    rfi_put_u32(p + 4, RFI_DIST_VERSION);
    rfi_put_u32(p + 8, s->part);
    rfi_put_u32(p + 12, s->parts);
    rfi_put_u32(p + 16, d);
    rfi_put_u32(p + 20, s->owners);
    rfi_put_u32(p + 24, s->v.delim);
    rfi_put_u32(p + 28, refs ? s->ident : 0);
    rfi_put_u64(p + 32, b->records);
    rfi_put_u64(p + 40, (uint64_t)(b->len - RFI_DIST_FRAME));
    rfi_put_u64(p + 48, b->first);
    rfi_put_u64(p + 56, s->check);
}

/* The record at s->pos, of `bytes` bytes, as a reference in owner d's
 * frame (slot b), if it fits in room: its number's gap, the bytes skipped
 * since the frame's last record (since the stream's start for the first)
 * and its length.  A reference counts in the room as what it costs its
 * owner (REF_COST bytes of order), not its few bytes, so that a round
 * holds no more for an owner's budget than a round of records would.
 * Returns as take_one. */
static int take_ref(rf_engine_scatter *s, struct slot *b, unsigned d, uint64_t gap,
                    size_t bytes, size_t room, rf_engine_error *err)
{
    const uint64_t skip = s->pos - (b->len ? b->last_end : 0);
    const size_t entry = rfi_varint_len(gap) + rfi_varint_len(skip) + rfi_varint_len(bytes);
    if (b->len > 0 && (b->records + 1) * REF_COST > room)
        return 0;
    if (b->len == 0) {
        if (make_room(s, RFI_DIST_FRAME + entry) != 0)
            return rfi_engine_nomem(err), -1;
        b->len = RFI_DIST_FRAME;
        b->first = s->number;
    }
    unsigned char *e = s->buf[s->cur] + (size_t)d * s->stride + b->len;
    size_t h = rfi_put_varint(e, gap);
    h += rfi_put_varint(e + h, skip);
    h += rfi_put_varint(e + h, bytes);
    b->len += h;
    b->records++;
    b->last = s->number;
    b->last_end = s->pos + bytes;
    advance(s, bytes);
    return 1;
}

/* Append the record at s->pos to its owner's frame, if it fits in room
 * (or the frame is empty).  Returns 1 if appended, 0 if the round is full,
 * -1 with the error recorded. */
static int take_one(rf_engine_scatter *s, size_t room, rf_engine_error *err)
{
    uint64_t key;
    const rf_status st = peek_key(s, &key);
    if (st != RF_OK)
        return rfi_engine_status(err, st), -1;
    size_t len;
    int added;
    const unsigned char *rec = record_at(s, &len, &added);
    const unsigned d = rf_engine_owner(key, s->owners);
    if (s->lane && d == s->lane_owner) {
        if (take_local(s, rec, len, added, key, err) != 0)
            return -1;
        advance(s, len + (size_t)added);
        return 1;
    }
    struct slot *b = &s->slot[d];
    const uint64_t gap = b->len ? s->number - b->last - 1 : 0;
    const size_t bytes = len + (size_t)added;
    if (s->refer && s->refer[d])
        return take_ref(s, b, d, gap, bytes, room, err);
    const size_t entry = rfi_varint_len(gap) + bytes;
    if (entry < bytes)
        return rfi_engine_nomem(err), -1;
    if (b->len > 0 && (b->len + entry > room || b->len + entry < b->len))
        return 0;
    if (b->len == 0) {
        if (entry > SIZE_MAX - RFI_DIST_FRAME || make_room(s, RFI_DIST_FRAME + entry) != 0)
            return rfi_engine_nomem(err), -1;
        b->len = RFI_DIST_FRAME;
        b->first = s->number;
    }
    unsigned char *e = s->buf[s->cur] + (size_t)d * s->stride + b->len;
    const size_t h = rfi_put_varint(e, gap);
    memcpy(e + h, rec, len);
    if (added)
        e[h + len] = s->v.delim;
    b->len += entry;
    b->records++;
    b->last = s->number;
    advance(s, bytes);
    return 1;
}

rf_status rf_engine_scatter_next(rf_engine_scatter *s, size_t room, const void **out,
                                 size_t *len, int *done, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!s || !out || !len || !done)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    s->cur ^= 1;
    for (unsigned d = 0; d < s->owners; d++)
        s->slot[d].len = 0, s->slot[d].records = 0;
    s->stride = 0; /* no frame yet: the slots may shrink back to the room */
    if (s->pos < s->end && make_room(s, room > SLOT_MIN ? room : SLOT_MIN) != 0)
        return rfi_engine_nomem(err), err->status;
    while (s->pos < s->end) {
        const int r = take_one(s, room, err);
        if (r < 0)
            return err->status;
        if (r == 0)
            break;
    }
    if (s->lane && s->lane_open) {
        s->lane_open = 0;
        if (rfi_dist_gather_local_end(s->lane, err) != 0)
            return err->status;
    }
    /* the records handed out are copied (into the frames, or the lane's
     * buffers): their input pages are not needed again -- unless the lane
     * holds its records there */
    if (!s->lane_hold)
        rfi_dist_view_release(&s->v, s->pos);
    for (unsigned d = 0; d < s->owners; d++) {
        finish_frame(s, d);
        out[d] = s->slot[d].len ? s->buf[s->cur] + (size_t)d * s->stride : NULL;
        len[d] = s->slot[d].len;
    }
    *done = s->pos >= s->end;
    if (*done && !s->checked) {
        s->checked = 1;
        s->v.err = err;
        const int changed = rfi_dist_view_check(&s->v);
        s->v.err = &s->open_err;
        if (changed)
            return err->status;
    }
    return RF_OK;
}
