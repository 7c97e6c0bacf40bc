/* dist_gather.c -- one owner's records from every part, in the keyed order
 * (riffle_engine.h, "Distributed runs").
 *
 * Packets are parsed where they lie: in buffers of the gather's own that a
 * transport received them into (rf_engine_gather_buffer, _recv), or into
 * which rf_engine_gather_add copied them.  Each record is listed once as a
 * 16-byte rf_keyed (its key, its address in the packets); its bytes are not
 * copied again until the write, which puts them into the sink's writer
 * straight from the packets.  The wire carries no key: a record's key is
 * k_i of the keyed order for its number i, drawn again here from the keyed
 * stream of its part (one cursor per part, since a part's numbers only
 * increase; a gap of a few records is walked, a longer one seeks: riffle.h,
 * "Keyed order", blocks of 2^16 items with substreams of their own).  A key
 * outside this owner's range means packets of another run, refused.
 *
 * The order inside an owner is rf_keyed_sort's on (key, record number):
 * keys first, a tie's records taken in number order.  An in-memory list is
 * put in key order at 8 bytes per record by rf_keyed_index on o->threads
 * threads (the list's positions as its items), then its positions become
 * the records' addresses and the list is freed; a bucket read back from a
 * spill is sorted by rf_keyed_sort.  Neither puts the list in number order,
 * so a tie (equal keys, about n^2 / 2^65 pairs among n
 * records: almost never) is then ordered again on its own: its records'
 * numbers found again from their frames, put in number order and given to
 * rf_keyed_sort with their ranks as values, which shuffles the tie exactly
 * as one sort of the whole list by number would (riffle.h, "Keyed order": a
 * tie's order depends on its key and its items in input order only).
 *
 * Memory.  The packets' buffers, and 16 bytes per record for the list
 * (24 while it is ordered, then 8: the budget counts 24).
 * When those pass the budget, every held record is spilled into the
 * key-range bucket files the external engine uses too (keyfiles.h): cut by
 * key into up to 2^RFI_KEYFILES_MAX_BITS buckets (ranges of the owner's
 * keys, so the buckets in order are the keys in order and a tie never
 * crosses two) and each bucket's run appended to its one file, a record as
 * its key (8 bytes), its number and length (LEB128 varints) and its bytes --
 * the numbers found again by walking the frames in the order they were
 * parsed, the list's order.  A bucket file is read back whole and ordered as
 * above.  A bucket still too large for the budget is split into a child set
 * over its key range (riffle.h, "Keyed order": the order inside a key range
 * depends on its entries only). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/huge.h"
#include "common/thread.h"
#include "dist_internal.h"
#include "engine/engine_internal.h"
#include "engine/keyfiles.h"
#include "keyed/keyed_internal.h"
#include "records/gather_internal.h"

/* Memory counted per record beside its bytes: its rf_keyed in a list, and
 * while the packets are held, the 8 bytes of its place in the order too
 * (order_held needs both at once). */
#define PER_RECORD 16u
#define PER_HELD_RECORD 24u
/* rf_engine_gather_add copies frames into buffers of an eighth of the
 * budget, from 4 KiB to 1 MiB (a larger frame gets a buffer of its own):
 * large enough that the allocations do not show, small enough that a small
 * budget is not taken by one buffer. */
#define BLOCK_MIN ((size_t)4 << 10)
#define BLOCK_MAX ((size_t)1 << 20)
/* Spill writes go through a buffer of this size. */
#define WRITE_BUF ((size_t)1 << 20)
/* Buffers of these sizes are huge pages (new_pbuf): from two of them, so
 * that rounding to whole huge pages wastes little, to a round of 64 MiB.
 * Larger buffers hold larger rounds than the transports make, or records
 * of megabytes, which are copied whole rather than found at random: there
 * zeroing huge pages costs more than their TLB reach saves
 * (docs/BENCHMARKS_MPI.md, "The byte path's rounds as messages"). */
#define HUGE_MIN (2 * RFI_HUGE_PAGE)
#define HUGE_MAX ((size_t)64 << 20)
/* Entries asked for ahead of the one written. */
#define PREFETCH 16
/* Keys drawn at a time by a part's cursor, and the gap beyond which a
 * ChaCha20 cursor seeks rather than walks: a seek costs about as much as
 * drawing a few dozen words. */
#define KEY_RUN 256
#define KEY_SEEK 48

/* A buffer of packets.  `given`: handed out by rf_engine_gather_buffer and
 * not yet received (a transport may be writing into it). */
struct pbuf {
    struct pbuf *next;
    size_t cap, len;
    int given;
    unsigned char *data;  /* after the struct */
    struct rfi_huge map;  /* the mapping it lies in (large ones), or empty */
};

/* A parsed frame: where its payload is, its first number, its records.
 * A run of the local lane (rf_engine_scatter_local) is a frame too: its
 * payload the gaps alone (varints, as on the wire), its records from
 * `recs` on, all before `recs_end` -- copied one after another into a
 * buffer of the gather's (`dense`), or held where they lie in the
 * scatter's input, where a gap of g is g other owners' records before the
 * next of the run. */
struct frame {
    const unsigned char *pay;
    uint64_t paylen, first, records;
    const unsigned char *recs, *recs_end; /* a local run's; NULL for packets */
    int dense;
};

/* The local run being added: its gaps grow in `gaps` until it ends. */
struct local_run {
    int open, dense;
    const unsigned char *recs, *recs_end;
    uint64_t first, records;
    unsigned char *gaps;
    size_t glen, gcap;
};

/* The keys of one part's records, in increasing number order. */
struct key_cursor {
    rf_keyed_stream s;  /* positioned at number base + n once live */
    int live;
    uint64_t base;      /* keys[j] is k_(base + j), j < n */
    size_t n;
    uint64_t keys[KEY_RUN];
};

struct part_list {
    uint64_t records;        /* in all, spilled ones included */
    uint64_t first, last;    /* numbers of the first and last entry */
    struct key_cursor kc;
};

struct rf_engine_gather {
    rf_keyed_order order;
    unsigned parts;
    unsigned char delim;
    int have_owner;          /* owner, owners and delim learnt from a frame */
    unsigned owner, owners;
    uint64_t klo, khi;       /* the owner's keys */
    uint64_t check;          /* the frames' check field */
    int lane;                /* a scatter hands its part `lane_part`'s records over */
    int lane_hold;           /* held in the scatter's input, else copied */
    unsigned lane_part;
    struct pbuf *lane_buf;   /* the copies' buffer being filled */
    struct local_run run;
    rfi_dist_key_fn test_keys; /* tests only: keys from here */
    void *test_ctx;
    uint64_t budget;
    unsigned threads;
    const char *tmpdir;
    struct part_list *pl;
    struct pbuf *bufs;       /* held and given buffers */
    struct frame *frames;    /* the held frames, in the order parsed */
    size_t nframes, frames_cap;
    struct frame *by_addr;   /* the packet frames by address: for ties (made on demand) */
    size_t naddr;
    rf_keyed *items;         /* the held entries (key, address), while adding */
    uint64_t *order_addr;    /* an in-memory gather's addresses in the keyed order */
    size_t nitems, items_cap;
    uint64_t held, held_records;
    uint64_t records, bytes; /* added in all */
    int finished, failed;
    /* rf_engine_gather_inputs: the inputs references point into */
    int have_view;
    struct dist_view view;
    rf_engine_error view_err; /* the view's error slot between calls */
    uint32_t ident;
    uint64_t *tail;           /* per input: where its unterminated tail starts
                                 (its size when it ends with a delimiter) */
    /* spilling */
    struct engine eng;       /* the temporary files' settings, for keyfiles.h */
    struct rfi_keyfiles kf;  /* opened at the first spill */
    struct rfi_keyset *root; /* one file a bucket: its records, counted in
                                records and bytes (record bytes) */
    unsigned char *wbuf;
    struct rfi_direct *direct; /* rf_engine_gather_direct: the owner reads
                                  its records itself; nothing is added */
};

/* ------------------------------------------------------------------------ */
/* Records                                                                  */

/* Records are held in one of two forms: as they came (an address in the
 * packets; the bytes run to the delimiter, the number is in the frame) or
 * as read back from a bucket file (an address after the key: number and
 * length as varints, then the bytes). */
enum form { HELD_PACKET, HELD_SPILLED };

#define SPILL_HEAD_MAX (2 * RFI_DIST_VARINT_MAX)

static const unsigned char *item_addr(const rf_keyed *a)
{
    return (const unsigned char *)(uintptr_t)a->val;
}

/* Records in the keyed order: a list of (key, address) entries, or the
 * addresses alone (an in-memory gather's, once ordered). */
struct ordered {
    const rf_keyed *a;    /* or NULL: */
    const uint64_t *addr;
};

static const unsigned char *ordered_addr(const struct ordered *o, size_t i)
{
    return (const unsigned char *)(uintptr_t)(o->a ? o->a[i].val : o->addr[i]);
}

/* A spilled record's number, length, and bytes (returned). */
static const unsigned char *spilled_decode(const unsigned char *h, uint64_t *number, size_t *len)
{
    uint64_t l = 0;
    *number = 0;
    h += rfi_get_varint(h, RFI_DIST_VARINT_MAX, number);
    h += rfi_get_varint(h, RFI_DIST_VARINT_MAX, &l);
    *len = (size_t)l;
    return h;
}

/* A held record's bytes and length; a packet record ends at its delimiter,
 * which parsing has seen. */
static const unsigned char *record_bytes(const rf_engine_gather *g, enum form f,
                                         const unsigned char *p, size_t *len)
{
    if (f == HELD_SPILLED) {
        uint64_t number;
        return spilled_decode(p, &number, len);
    }
    *len = (size_t)((const unsigned char *)rawmemchr(p, g->delim) - p) + 1;
    return p;
}

/* The size of the spill-file record at p, whole in p[0..avail): 1 with
 * *size set; 0 if it goes on past avail (*size its size once its header is
 * in, else 0). */
static int spilled_size(const unsigned char *p, size_t avail, size_t *size)
{
    uint64_t number = 0, len = 0;
    *size = 0;
    if (avail < 8)
        return 0;
    const size_t a = rfi_get_varint(p + 8, avail - 8, &number);
    const size_t b = a ? rfi_get_varint(p + 8 + a, avail - 8 - a, &len) : 0;
    if (!b)
        return 0;
    *size = 8 + a + b + (size_t)len;
    return *size <= avail;
}

/* The keys of owner d of q: those with floor(k * q / 2^64) = d. */
static uint64_t owner_low(unsigned d, unsigned q)
{
    return (uint64_t)((((unsigned __int128)d << 64) + q - 1) / q);
}

/* ------------------------------------------------------------------------ */
/* Frames and keys                                                          */

/* The numbers of frame f's records, in order, into out[0..f->records)
 * (the frame was parsed: it is whole). */
static void frame_numbers(const rf_engine_gather *g, const struct frame *f, uint64_t *out)
{
    const unsigned char *p = f->pay, *end = f->pay + f->paylen;
    uint64_t number = f->first;
    for (uint64_t r = 0; r < f->records; r++) {
        uint64_t gap;
        p += rfi_get_varint(p, (size_t)(end - p), &gap);
        number = (r == 0 ? number : number + 1) + gap;
        out[r] = number;
        if (!f->recs)
            p = (const unsigned char *)rawmemchr(p, g->delim) + 1;
    }
}

/* The number of the local-run record at p, if one of the local runs holds
 * it: the run walked record by record through the input (a gap of g is g
 * other owners' records before the next of the run).  For ties only. */
static int local_number(const rf_engine_gather *g, const unsigned char *p, uint64_t *number)
{
    for (size_t i = 0; i < g->nframes; i++) {
        const struct frame *f = &g->frames[i];
        if (!f->recs || (uintptr_t)p < (uintptr_t)f->recs ||
            (uintptr_t)p >= (uintptr_t)f->recs_end)
            continue;
        const unsigned char *q = f->pay, *end = f->pay + f->paylen, *rec = f->recs;
        uint64_t n = f->first;
        for (uint64_t r = 0; r < f->records; r++) {
            uint64_t gap;
            q += rfi_get_varint(q, (size_t)(end - q), &gap);
            if (r > 0) {
                n += 1 + gap;
                for (uint64_t k = 0; k <= (f->dense ? 0 : gap); k++)
                    rec = (const unsigned char *)rawmemchr(rec, g->delim) + 1;
            }
            if (rec == p)
                break;
        }
        *number = n;
        return 1;
    }
    return 0;
}

static int by_address(const void *a, const void *b)
{
    const uintptr_t x = (uintptr_t)((const struct frame *)a)->pay;
    const uintptr_t y = (uintptr_t)((const struct frame *)b)->pay;
    return x < y ? -1 : x > y;
}

/* The number of the packet record at p: its frame found by address, then
 * walked to it.  For ties only.  Returns 1 with *number set, 0 on no memory. */
static int packet_number(rf_engine_gather *g, const unsigned char *p, uint64_t *number)
{
    if (local_number(g, p, number))
        return 1;
    if (!g->by_addr) {
        if (!(g->by_addr = malloc((g->nframes ? g->nframes : 1) * sizeof *g->by_addr)))
            return 0;
        g->naddr = 0;
        for (size_t i = 0; i < g->nframes; i++)
            if (!g->frames[i].recs)
                g->by_addr[g->naddr++] = g->frames[i];
        qsort(g->by_addr, g->naddr, sizeof *g->by_addr, by_address);
    }
    size_t lo = 0, hi = g->naddr; /* the last frame starting at or before p */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)g->by_addr[mid].pay <= (uintptr_t)p)
            lo = mid;
        else
            hi = mid;
    }
    const struct frame *f = &g->by_addr[lo];
    const unsigned char *q = f->pay, *end = f->pay + f->paylen;
    uint64_t n = f->first;
    for (uint64_t r = 0; r < f->records; r++) {
        uint64_t gap;
        q += rfi_get_varint(q, (size_t)(end - q), &gap);
        n = (r == 0 ? n : n + 1) + gap;
        if (q == p)
            break;
        q = (const unsigned char *)rawmemchr(q, g->delim) + 1;
    }
    *number = n;
    return 1;
}

/* The key of record number i of a part whose cursor is c; i is larger than
 * every number asked of c before. */
static rf_status key_of(rf_engine_gather *g, struct key_cursor *c, uint64_t i, uint64_t *key)
{
    if (g->test_keys) {
        *key = g->test_keys(g->test_ctx, i);
        return RF_OK;
    }
    if (c->live && i >= c->base && i - c->base < c->n) {
        *key = c->keys[i - c->base];
        return RF_OK;
    }
    uint64_t at = c->base + c->n; /* where the stream stands */
    const int seek = !c->live || i < at ||
                     (i >> RFI_KEYED_BLOCK_BITS) != (at >> RFI_KEYED_BLOCK_BITS) ||
                     (g->order.kind == RF_RNG_CHACHA20 && i - at > KEY_SEEK);
    rf_keyed run[KEY_RUN];
    rf_status st = RF_OK;
    if (seek) {
        st = rf_keyed_stream_init(&c->s, &g->order, i);
        c->live = st == RF_OK;
    }
    while (st == RF_OK && !seek && at < i) { /* walk the gap */
        const size_t k = i - at < KEY_RUN ? (size_t)(i - at) : KEY_RUN;
        st = rf_keyed_stream_fill(&c->s, run, k);
        at += k;
    }
    /* a run after a seek is short: the next record is likely far again */
    size_t count = seek && g->order.kind == RF_RNG_CHACHA20 && c->n < KEY_RUN ? 8 : KEY_RUN;
    if (i > UINT64_MAX - count)
        count = (size_t)(UINT64_MAX - i) + 1;
    if (st == RF_OK)
        st = rf_keyed_stream_fill(&c->s, run, count);
    if (st != RF_OK)
        return st;
    for (size_t j = 0; j < count; j++)
        c->keys[j] = run[j].key;
    c->base = i;
    c->n = count;
    *key = c->keys[0];
    return RF_OK;
}

/* ------------------------------------------------------------------------ */
/* Bucket files (keyfiles.h, as the external engine's)                      */

/* The files, their errors recorded in err (each call has its own). */
static struct rfi_keyfiles *kfiles(rf_engine_gather *g, rf_engine_error *err)
{
    g->eng.err = err;
    return &g->kf;
}

/* Every temporary file gone, and the caller told (temp.h); a failure to
 * remove one is recorded in err. */
static void remove_temps(rf_engine_gather *g, rf_engine_error *err)
{
    rfi_keyset_free(kfiles(g, err), g->root);
    g->root = NULL;
    (void)rfi_keyfiles_close(&g->kf);
}

/* Append the records of items a[0..n) (one bucket's) to kb's file: packet
 * records with their numbers nums[0..n), or spilled ones (nums NULL). */
static int write_run(rf_engine_gather *g, struct rfi_keybucket *kb, const rf_keyed *a,
                     const uint64_t *nums, size_t n, rf_engine_error *err)
{
    if (kb->child) /* split: no more runs go to it */
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
    struct rfi_keyfiles *k = kfiles(g, err);
    struct rfi_keyfile *f = &kb->f[0];
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t number;
        size_t len;
        const unsigned char *bytes;
        if (nums) {
            number = nums[i];
            bytes = record_bytes(g, HELD_PACKET, item_addr(&a[i]), &len);
        } else {
            bytes = spilled_decode(item_addr(&a[i]), &number, &len);
        }
        unsigned char head[8 + SPILL_HEAD_MAX];
        rfi_put_u64(head, a[i].key);
        size_t hl = 8 + rfi_put_varint(head + 8, number);
        hl += rfi_put_varint(head + hl, len);
        if (used + hl + len > WRITE_BUF && used > 0) {
            if (rfi_keyfile_append(k, f, g->wbuf, used) != 0)
                return 1;
            used = 0;
        }
        memcpy(g->wbuf + used, head, hl);
        used += hl;
        if (hl + len > WRITE_BUF) {
            if (rfi_keyfile_append(k, f, g->wbuf, used) != 0 ||
                rfi_keyfile_append(k, f, bytes, len) != 0)
                return 1;
            used = 0;
        } else {
            memcpy(g->wbuf + used, bytes, len);
            used += len;
        }
        kb->records++;
        kb->bytes += len;
    }
    return used > 0 ? rfi_keyfile_append(k, f, g->wbuf, used) : 0;
}

/* The entries of items a[0..n) (with their numbers nums[0..n), or NULL:
 * write_run) cut by key into s's buckets and appended to their files. */
static int spill_into(rf_engine_gather *g, struct rfi_keyset *s, const rf_keyed *a,
                      const uint64_t *nums, size_t n, rf_engine_error *err)
{
    size_t count[1u << RFI_KEYFILES_MAX_BITS] = {0}, at[1u << RFI_KEYFILES_MAX_BITS];
    unsigned char *which = malloc(n ? n : 1);
    rf_keyed *cut = malloc((n ? n : 1) * sizeof *cut);
    uint64_t *cut_nums = nums ? malloc((n ? n : 1) * sizeof *cut_nums) : NULL;
    int status = 1;
    if (!which || !cut || (nums && !cut_nums)) {
        rfi_engine_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        count[which[i] = (unsigned char)rfi_keyset_bucket(s, a[i].key)]++;
    size_t sum = 0;
    for (unsigned b = 0; b < s->n; b++) {
        at[b] = sum;
        sum += count[b];
    }
    for (size_t i = 0; i < n; i++) {
        const size_t to = at[which[i]]++;
        cut[to] = a[i];
        if (nums)
            cut_nums[to] = nums[i];
    }
    sum = 0;
    for (unsigned b = 0; b < s->n; b++) {
        if (count[b] && write_run(g, &s->b[b], cut + sum, nums ? cut_nums + sum : NULL,
                                  count[b], err) != 0)
            goto done;
        sum += count[b];
    }
    status = 0;
done:
    free(which);
    free(cut);
    free(cut_nums);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Holding packets                                                          */

static void free_pbuf(struct pbuf *b)
{
    struct rfi_huge m = b->map; /* b lies inside it */
    if (m.addr)
        rfi_huge_unmap(&m);
    else
        free(b);
}

/* A new buffer of cap bytes, first in the list.  A transport's round (4
 * to 64 MiB) is huge pages: its records are read back in keyed order, a
 * cache miss each, which then rarely misses the TLB too, and it is
 * faulted in 2 MiB at a time. */
static struct pbuf *new_pbuf(rf_engine_gather *g, size_t cap, int given)
{
    if (cap > SIZE_MAX - sizeof(struct pbuf))
        return NULL;
    struct rfi_huge m = {NULL, 0};
    struct pbuf *b =
        cap >= HUGE_MIN && cap <= HUGE_MAX ? rfi_huge_map(&m, sizeof *b + cap) : NULL;
    if (!b)
        b = malloc(sizeof *b + cap);
    if (!b)
        return NULL;
    b->map = m;
    b->data = (unsigned char *)(b + 1);
    b->next = g->bufs;
    b->cap = cap;
    b->len = 0;
    b->given = given;
    g->bufs = b;
    if (!given)
        g->held += sizeof *b + cap;
    return b;
}

/* The held buffers freed (given ones stay: a transport may be writing
 * into them). */
static void free_held_bufs(rf_engine_gather *g)
{
    struct pbuf **at = &g->bufs;
    while (*at) {
        struct pbuf *b = *at;
        if (b->given) {
            at = &b->next;
        } else {
            *at = b->next;
            free_pbuf(b);
        }
    }
}

/* Room in the list for `more` items, and in the frames for one more (both
 * doubling). */
static int reserve_items(rf_engine_gather *g, size_t more)
{
    if (g->nframes == g->frames_cap) {
        const size_t cap = g->frames_cap ? g->frames_cap * 2 : 64;
        struct frame *f = realloc(g->frames, cap * sizeof *f);
        if (!f)
            return 1;
        g->frames = f;
        g->frames_cap = cap;
    }
    if (g->items_cap - g->nitems >= more)
        return 0;
    size_t cap = g->items_cap ? g->items_cap : 1024;
    while (cap - g->nitems < more)
        cap *= 2;
    rf_keyed *a = realloc(g->items, cap * sizeof *a);
    if (!a)
        return 1;
    g->items = a;
    g->items_cap = cap;
    return 0;
}

static void drop_held(rf_engine_gather *g)
{
    free_held_bufs(g);
    g->lane_buf = NULL;
    free(g->order_addr);
    g->order_addr = NULL;
    free(g->items);
    free(g->frames);
    free(g->by_addr);
    g->items = NULL;
    g->frames = g->by_addr = NULL;
    g->nitems = g->items_cap = g->nframes = g->frames_cap = 0;
    g->held = g->held_records = 0;
}

/* The numbers of the held records, in the list's order (the frames'). */
static uint64_t *held_numbers(const rf_engine_gather *g)
{
    uint64_t *nums = malloc((g->nitems ? g->nitems : 1) * sizeof *nums);
    if (!nums)
        return NULL;
    size_t at = 0;
    for (size_t f = 0; f < g->nframes; f++) {
        frame_numbers(g, &g->frames[f], nums + at);
        at += (size_t)g->frames[f].records;
    }
    return nums;
}

/* Everything held to bucket files. */
static int spill(rf_engine_gather *g, rf_engine_error *err)
{
    if (rfi_keyfiles_open(kfiles(g, err)) != 0)
        return 1;
    if (!g->root &&
        !(g->root = rfi_keyset_new(g->klo, g->khi, RFI_KEYFILES_MAX_BITS, 1)))
        return rfi_engine_nomem(err);
    if (!g->wbuf && !(g->wbuf = malloc(WRITE_BUF)))
        return rfi_engine_nomem(err);
    uint64_t *nums = held_numbers(g);
    if (!nums)
        return rfi_engine_nomem(err);
    const int status = spill_into(g, g->root, g->items, nums, g->nitems, err);
    free(nums);
    drop_held(g);
    return status;
}

static int over_budget(const rf_engine_gather *g)
{
    return g->held + PER_HELD_RECORD * g->held_records > g->budget;
}

/* ------------------------------------------------------------------------ */
/* Open, add, close                                                         */

rf_status rf_engine_gather_open(rf_engine_gather **gp, const rf_engine_options *o,
                                unsigned parts, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!gp || !o || parts == 0)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    *gp = NULL;
    rf_engine_gather *g = calloc(1, sizeof *g);
    if (!g || !(g->pl = calloc(parts, sizeof *g->pl))) {
        free(g);
        return rfi_engine_nomem(err), RF_ENOMEM;
    }
    rf_status st = rf_keyed_order_init(&g->order, o->rng, o->key);
    if (st == RF_OK)
        st = rfi_dist_check(&g->order, &g->check);
    if (st != RF_OK) {
        rf_engine_gather_close(g);
        return rfi_engine_status(err, st), st;
    }
    g->parts = parts;
    g->budget = o->memory ? o->memory : rf_engine_default_memory();
    g->threads = rfi_threads(o->threads);
    g->tmpdir = rf_temp_dir(o->tmpdir);
    g->eng.tmpdir = g->tmpdir;
    g->eng.named_temps = o->named_temps;
    g->eng.temp = o->temp;
    g->eng.temp_ctx = o->temp_ctx;
    rfi_keyfiles_init(&g->kf, &g->eng);
    *gp = g;
    return RF_OK;
}

void rf_engine_gather_close(rf_engine_gather *g)
{
    if (!g)
        return;
    rf_engine_error ignored = {0}; /* nothing to report it to */
    remove_temps(g, &ignored);
    drop_held(g);
    while (g->bufs) { /* given ones */
        struct pbuf *next = g->bufs->next;
        free_pbuf(g->bufs);
        g->bufs = next;
    }
    if (g->pl)
        for (unsigned p = 0; p < g->parts; p++)
            memset(&g->pl[p].kc.s, 0, sizeof g->pl[p].kc.s);
    free(g->pl);
    free(g->wbuf);
    free(g->run.gaps);
    if (g->have_view)
        rfi_dist_view_close(&g->view);
    free(g->tail);
    rfi_direct_close(g->direct);
    memset(&g->order, 0, sizeof g->order);
    free(g);
}

rf_status rfi_dist_gather_direct(rf_engine_gather **gp, const rf_engine_options *o,
                                 const rf_engine_input *in, size_t n, unsigned owner,
                                 unsigned owners, rfi_dist_key_fn keys, void *kctx,
                                 rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!gp)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    rf_status st = rf_engine_gather_open(gp, o, 1, err);
    if (st != RF_OK)
        return st;
    rf_engine_gather *g = *gp;
    if (rfi_direct_open(&g->direct, o, in, n, owner, owners, keys, kctx, err) != 0) {
        rf_engine_gather_close(g);
        *gp = NULL;
        return err->status;
    }
    g->have_owner = 1;
    g->owner = owner;
    g->owners = owners;
    g->delim = o->delim;
    g->records = rfi_direct_records(g->direct);
    g->finished = 1; /* nothing is added to it */
    return RF_OK;
}

rf_status rf_engine_gather_direct(rf_engine_gather **g, const rf_engine_options *o,
                                  const rf_engine_input *in, size_t n, unsigned owner,
                                  unsigned owners, rf_engine_error *err)
{
    return rfi_dist_gather_direct(g, o, in, n, owner, owners, NULL, NULL, err);
}

void rfi_dist_gather_keys(rf_engine_gather *g, rfi_dist_key_fn keys, void *ctx)
{
    g->test_keys = keys;
    g->test_ctx = ctx;
}

uint64_t rf_engine_gather_temp_files(const rf_engine_gather *g)
{
    return g ? g->kf.t.files : 0;
}

int rf_engine_gather_owner(const rf_engine_gather *g, unsigned *owner, unsigned *owners)
{
    if (!g || !g->have_owner)
        return 0;
    *owner = g->owner;
    *owners = g->owners;
    return 1;
}

uint64_t rf_engine_gather_records(const rf_engine_gather *g)
{
    return g ? g->records : 0;
}

/* The owner, its number of owners and the delimiter: learnt from the first
 * frame (or the local lane), then checked.  0, or 1 when they differ. */
static int learn_owner(rf_engine_gather *g, unsigned owner, unsigned owners, unsigned char delim)
{
    if (g->have_owner)
        return owner != g->owner || owners != g->owners || delim != g->delim;
    g->have_owner = 1;
    g->delim = delim;
    g->owner = owner;
    g->owners = owners;
    g->klo = owner_low(owner, owners);
    g->khi = owner + 1 == owners ? UINT64_MAX : owner_low(owner + 1, owners) - 1;
    return 0;
}

static int bad_packets(rf_engine_error *err)
{
    return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
}

/* A frame's header: checked against the gather (which learns its owner from
 * the first).  *records, *payload and *first are its fields. */
static int frame_header(rf_engine_gather *g, unsigned from, const unsigned char *p, size_t left,
                        uint64_t *records, uint64_t *payload, uint64_t *first, int *refs,
                        rf_engine_error *err)
{
    if (left < RFI_DIST_FRAME)
        return bad_packets(err);
    /* a frame of references carries the identity of the inputs it points
     * into where a frame of records has 0 */
    *refs = memcmp(p, RFI_DIST_REF_MAGIC, 4) == 0;
    if ((!*refs && memcmp(p, RFI_DIST_MAGIC, 4) != 0) ||
        rfi_get_u32(p + 4) != RFI_DIST_VERSION || rfi_get_u32(p + 8) != from ||
        rfi_get_u32(p + 12) != g->parts || rfi_get_u32(p + 24) > 255 ||
        rfi_get_u32(p + 28) != (*refs ? g->ident : 0) || (*refs && !g->have_view) ||
        (!g->test_keys && rfi_get_u64(p + 56) != g->check))
        return bad_packets(err);
    const unsigned owner = rfi_get_u32(p + 16), owners = rfi_get_u32(p + 20);
    if (owners == 0 || owner >= owners)
        return bad_packets(err);
    const unsigned char delim = (unsigned char)rfi_get_u32(p + 24);
    if (learn_owner(g, owner, owners, delim) != 0)
        return bad_packets(err);
    *records = rfi_get_u64(p + 32);
    *payload = rfi_get_u64(p + 40);
    *first = rfi_get_u64(p + 48);
    /* every entry takes a varint and a delimiter at least (a reference:
     * three varints) */
    return *payload > left - RFI_DIST_FRAME || *records > *payload / (*refs ? 3 : 2)
               ? bad_packets(err)
               : 0;
}

/* The record ends of a payload, found a window at a time (rf_delims_find)
 * rather than by one memchr per record: `at` holds one past each delimiter
 * of pay[scanned - window, scanned), used in order. */
#define END_WINDOW ((size_t)1024)

struct payload_ends {
    const unsigned char *pay;
    size_t len, scanned, pos, n;
    unsigned char delim;
    uint64_t at[END_WINDOW];
};

/* One past the first delimiter at or after pay[from], or 0 when the payload
 * has none.  A varint's bytes may equal the delimiter: they lie before
 * `from` and are passed over. */
static size_t next_end(struct payload_ends *w, size_t from)
{
    for (;;) {
        while (w->pos < w->n && w->at[w->pos] <= from)
            w->pos++;
        if (w->pos < w->n)
            return (size_t)w->at[w->pos];
        const size_t start = w->scanned > from ? w->scanned : from;
        if (start >= w->len)
            return 0;
        const size_t win = w->len - start < END_WINDOW ? w->len - start : END_WINDOW;
        w->n = rf_delims_find(w->pay + start, win, w->delim, start, w->at);
        w->pos = 0;
        w->scanned = start + win;
    }
}

/* One entry at e[0..left) of part pl, its number after `prev` (the frame's
 * first number, for the first entry): checked, keyed, listed (the list has
 * room).  Returns the entry's size, or 0 with the error recorded. */
static size_t add_entry(rf_engine_gather *g, struct part_list *pl, struct payload_ends *w,
                        const unsigned char *e, size_t left, uint64_t *number, int first_entry,
                        rf_engine_error *err)
{
    uint64_t gap, key;
    const size_t h = rfi_get_varint(e, left, &gap);
    const uint64_t base = first_entry ? *number : *number + 1;
    if (h == 0 || (!first_entry && *number == UINT64_MAX) || gap > UINT64_MAX - base)
        return bad_packets(err), 0;
    const uint64_t n = base + gap;
    if (pl->records > 0 && n <= pl->last)
        return bad_packets(err), 0;
    const rf_status st = key_of(g, &pl->kc, n, &key);
    if (st != RF_OK)
        return rfi_engine_status(err, st), 0;
    const size_t from = (size_t)(e + h - w->pay), end = next_end(w, from);
    if (key < g->klo || key > g->khi || end == 0)
        return bad_packets(err), 0;
    const size_t len = end - from;
    g->items[g->nitems++] = (rf_keyed){key, (uint64_t)(uintptr_t)(e + h)};
    if (pl->records == 0)
        pl->first = n;
    pl->last = n;
    pl->records++;
    g->held_records++;
    g->records++;
    g->bytes += len;
    *number = n;
    return h + len;
}

/* A frame's payload p[0..payload) of `records` entries, in place. */
static int add_payload(rf_engine_gather *g, struct part_list *pl, const unsigned char *p,
                       uint64_t payload, uint64_t records, uint64_t first, rf_engine_error *err)
{
    /* room for the records a frame claims, up to one per 64 of its bytes
     * before they are seen (then growing as they are), so that a hostile
     * count cannot make the list far larger than the packets */
    const uint64_t likely = payload / 64 + 1;
    if (reserve_items(g, (size_t)(records < likely ? records : likely)) != 0)
        return rfi_engine_nomem(err);
    g->frames[g->nframes++] = (struct frame){p, payload, first, records, NULL, NULL, 0};
    size_t left = (size_t)payload;
    uint64_t number = first;
    struct payload_ends w;
    w.pay = p;
    w.len = (size_t)payload;
    w.scanned = w.pos = w.n = 0;
    w.delim = g->delim;
    for (uint64_t r = 0; r < records; r++) {
        if (g->nitems == g->items_cap && reserve_items(g, 1) != 0)
            return rfi_engine_nomem(err);
        const size_t size = add_entry(g, pl, &w, p, left, &number, r == 0, err);
        if (size == 0)
            return 1;
        p += size;
        left -= size;
    }
    return left != 0 ? bad_packets(err) : 0;
}

static int add_refs(rf_engine_gather *g, unsigned from, const unsigned char *p,
                    uint64_t payload, uint64_t records, uint64_t first, rf_engine_error *err);

/* Frames p[0..len) of part `from`, parsed in place (they stay where they
 * are until spilled or closed). */
static int add_in_place(rf_engine_gather *g, unsigned from, const unsigned char *p, size_t len,
                        rf_engine_error *err)
{
    while (len > 0) {
        uint64_t records, payload, first;
        int refs;
        if (frame_header(g, from, p, len, &records, &payload, &first, &refs, err) != 0 ||
            (refs ? add_refs(g, from, p + RFI_DIST_FRAME, payload, records, first, err)
                  : add_payload(g, &g->pl[from], p + RFI_DIST_FRAME, payload, records, first,
                                err)) != 0)
            return 1;
        p += RFI_DIST_FRAME + payload;
        len -= RFI_DIST_FRAME + (size_t)payload;
    }
    return 0;
}

/* The size of a buffer that copies go into: an eighth of the budget, from
 * BLOCK_MIN to BLOCK_MAX. */
static size_t copy_block(const rf_engine_gather *g)
{
    const uint64_t eighth = g->budget / 8;
    return eighth < BLOCK_MIN ? BLOCK_MIN : eighth > BLOCK_MAX ? BLOCK_MAX : (size_t)eighth;
}

/* Room for a frame of `size` bytes to be copied: the current copy buffer
 * (the first of the list) or a new one. */
static unsigned char *copy_room(rf_engine_gather *g, size_t size)
{
    struct pbuf *b = g->bufs;
    if (!b || b->given || b == g->lane_buf || b->cap - b->len < size) {
        const size_t block = copy_block(g);
        if (!(b = new_pbuf(g, size > block ? size : block, 0)))
            return NULL;
    }
    unsigned char *p = b->data + b->len;
    b->len += size;
    return p;
}

/* Frames p[0..len) of part `from`, each copied then parsed in place. */
static int add_copies(rf_engine_gather *g, unsigned from, const unsigned char *p, size_t len,
                      rf_engine_error *err)
{
    while (len > 0) {
        uint64_t records, payload, first;
        int refs;
        if (frame_header(g, from, p, len, &records, &payload, &first, &refs, err) != 0)
            return 1;
        const size_t size = RFI_DIST_FRAME + (size_t)payload;
        if (refs) { /* nothing to copy: the records are the inputs' */
            if (add_refs(g, from, p + RFI_DIST_FRAME, payload, records, first, err) != 0)
                return 1;
            p += size;
            len -= size;
            if (over_budget(g) && spill(g, err) != 0)
                return 1;
            continue;
        }
        unsigned char *c = copy_room(g, size);
        if (!c)
            return rfi_engine_nomem(err);
        memcpy(c, p, size);
        if (add_payload(g, &g->pl[from], c + RFI_DIST_FRAME, payload, records, first, err) != 0)
            return 1;
        p += size;
        len -= size;
        if (over_budget(g) && spill(g, err) != 0)
            return 1;
    }
    return 0;
}

/* After a failure nothing is kept: the temporary files go at once. */
static rf_status failed(rf_engine_gather *g, rf_engine_error *err)
{
    g->failed = 1;
    remove_temps(g, err);
    return err->status;
}

/* ------------------------------------------------------------------------ */
/* The local lane                                                           */

int rfi_dist_gather_lane(rf_engine_gather *g, unsigned part, unsigned parts, unsigned owner,
                         unsigned owners, unsigned char delim, const rf_keyed_order *order,
                         uint64_t check, int hold)
{
    if (g->failed || g->finished || g->lane || g->records > 0 || parts != g->parts ||
        part >= g->parts ||
        owner >= owners || order->kind != g->order.kind ||
        memcmp(order->item_key, g->order.item_key, sizeof order->item_key) != 0 ||
        memcmp(order->tie_key, g->order.tie_key, sizeof order->tie_key) != 0 ||
        (!g->test_keys && check != g->check))
        return 1;
    if (learn_owner(g, owner, owners, delim) != 0)
        return 1;
    g->lane = 1;
    g->lane_hold = hold;
    g->lane_part = part;
    return 0;
}

/* The open local run ended: its gaps copied into a held buffer of their
 * own, and listed as a frame after the records it holds (the list and the
 * frames stay in the same order: nothing else is added while a run is
 * open). */
static int local_close(rf_engine_gather *g, rf_engine_error *err)
{
    struct local_run *r = &g->run;
    if (!r->open)
        return 0;
    r->open = 0;
    struct pbuf *b = new_pbuf(g, r->glen, 0);
    if (!b || reserve_items(g, 0) != 0)
        return rfi_engine_nomem(err);
    memcpy(b->data, r->gaps, r->glen);
    b->len = r->glen;
    g->frames[g->nframes++] = (struct frame){b->data,  r->glen,       r->first, r->records,
                                             r->recs,  r->recs_end,  r->dense};
    return 0;
}

int rfi_dist_gather_local_end(rf_engine_gather *g, rf_engine_error *err)
{
    if (local_close(g, err) != 0)
        return failed(g, err), 1;
    if (over_budget(g) && spill(g, err) != 0)
        return failed(g, err), 1;
    return 0;
}

/* A record rec[0..len) copied into the lane's buffer after the run's last,
 * with its delimiter added when `added` (a full buffer ends the run; a new
 * one is as large as rf_engine_gather_add's blocks, or the record). */
static const unsigned char *local_copy(rf_engine_gather *g, const unsigned char *rec,
                                       size_t len, int added, rf_engine_error *err)
{
    struct pbuf *b = g->lane_buf;
    if (len == SIZE_MAX)
        return rfi_engine_nomem(err), NULL;
    const size_t size = len + (size_t)added;
    if (!b || b->cap - b->len < size) {
        if (local_close(g, err) != 0)
            return NULL;
        const size_t block = copy_block(g);
        if (!(b = g->lane_buf = new_pbuf(g, size > block ? size : block, 0)))
            return rfi_engine_nomem(err), NULL;
    }
    unsigned char *p = b->data + b->len;
    memcpy(p, rec, len);
    if (added)
        p[len] = g->delim;
    b->len += size;
    return p;
}

/* A record of part `part` held where it lies (`hold`) or copied: as
 * rfi_dist_gather_local describes, for the local lane and for references.
 * A held record with its delimiter added ends its run; the lane then
 * spills if over the budget, references never here: their frames may lie
 * in a buffer a spill frees (the caller spills after the frames). */
static int hold_one(rf_engine_gather *g, unsigned part, int hold, int lane,
                    const unsigned char *rec, size_t len, int added, uint64_t key,
                    uint64_t number, rf_engine_error *err)
{
    struct part_list *pl = &g->pl[part];
    struct local_run *r = &g->run;
    if (g->failed || g->finished || key < g->klo || key > g->khi ||
        (pl->records > 0 && number <= pl->last)) {
        rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
        return failed(g, err), 1;
    }
    /* held: a record without its delimiter in the input is copied, as a
     * run of its own; copied: every record, runs dense in the buffer */
    const int copy = !hold || added;
    if (hold && added && local_close(g, err) != 0)
        return failed(g, err), 1;
    if (copy && !(rec = local_copy(g, rec, len, added, err)))
        return failed(g, err), 1;
    const size_t size = len + (size_t)added;
    if (r->gcap - r->glen < RFI_DIST_VARINT_MAX) {
        const size_t cap = r->gcap ? r->gcap * 2 : 4096;
        unsigned char *p = realloc(r->gaps, cap);
        if (!p) {
            rfi_engine_nomem(err);
            return failed(g, err), 1;
        }
        r->gaps = p;
        r->gcap = cap;
    }
    if (g->nitems == g->items_cap && reserve_items(g, 1) != 0) {
        rfi_engine_nomem(err);
        return failed(g, err), 1;
    }
    if (!r->open) {
        r->open = 1;
        r->dense = copy;
        r->recs = rec;
        r->first = number;
        r->records = 0;
        r->glen = 0;
    }
    r->glen += rfi_put_varint(r->gaps + r->glen, r->records ? number - pl->last - 1 : 0);
    r->records++;
    r->recs_end = rec + size;
    g->items[g->nitems++] = (rf_keyed){key, (uint64_t)(uintptr_t)rec};
    if (pl->records == 0)
        pl->first = number;
    pl->last = number;
    pl->records++;
    g->held_records++;
    g->records++;
    g->bytes += size;
    if (added && hold && !lane)
        return local_close(g, err) != 0 ? (failed(g, err), 1) : 0;
    if (added && hold)
        return rfi_dist_gather_local_end(g, err);
    return 0;
}

int rfi_dist_gather_local(rf_engine_gather *g, const unsigned char *rec, size_t len, int added,
                          uint64_t key, uint64_t number, rf_engine_error *err)
{
    if (!g->lane) {
        rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
        return failed(g, err), 1;
    }
    return hold_one(g, g->lane_part, g->lane_hold, 1, rec, len, added, key, number, err);
}

/* ------------------------------------------------------------------------ */
/* References                                                               */

rf_status rf_engine_gather_inputs(rf_engine_gather *g, const rf_engine_options *o,
                                  const rf_engine_input *in, size_t n, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || g->failed || g->finished || g->have_view || rfi_dist_usable(o, in, n, err) != 0)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    if (rfi_dist_view_open(&g->view, o, in, n, err) != 0)
        return err->status;
    if (rfi_dist_view_identity(&g->view, &g->ident) != 0) {
        rfi_dist_view_close(&g->view);
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    }
    rfi_dist_view_random(&g->view);
    g->view.err = &g->view_err;
    g->tail = calloc(g->view.nseg ? g->view.nseg : 1, sizeof *g->tail);
    if (!g->tail) {
        rfi_dist_view_close(&g->view);
        return rfi_engine_nomem(err), RF_ENOMEM;
    }
    for (size_t i = 0; i < g->view.nseg; i++) {
        const struct dist_seg *sg = &g->view.seg[i];
        const unsigned char *d = sg->extra ? memrchr(sg->p, g->view.delim, sg->size) : NULL;
        g->tail[i] = !sg->extra ? sg->size : d ? (uint64_t)(d - sg->p) + 1 : 0;
    }
    g->have_view = 1;
    return RF_OK;
}

/* The record of a reference: at logical offset pos, len bytes (an added
 * delimiter counted), checked to lie in one input after the header; the
 * first of a frame or of an input checked to start at a record boundary,
 * and the last of a frame to end at one (`last`).  Not every record's
 * bytes are read here: they are read once, by the write, and a wrong skip
 * or length shifts every later reference of the frame, so the frame's
 * last one finds it unless the shift is by whole records.  Its segment is
 * found from *si on (the previous reference's, or SIZE_MAX): a new one
 * ends the open run, since a run walks one input's bytes.  NULL when it
 * does not. */
static const unsigned char *ref_record(rf_engine_gather *g, uint64_t pos, uint64_t len,
                                       size_t *si, int last, int *added, rf_engine_error *err)
{
    int first = 0;
    const struct dist_view *v = &g->view;
    if (pos < v->hend || len == 0 || pos >= v->total || len > v->total - pos)
        return NULL;
    const struct dist_seg *sg = *si < v->nseg ? &v->seg[*si] : NULL;
    if (!sg || pos < sg->at || pos >= sg->at + sg->size + (uint64_t)sg->extra) {
        if (local_close(g, err) != 0)
            return NULL;
        *si = rfi_dist_seg_of(v, pos);
        sg = &v->seg[*si];
        first = 1;
    }
    const uint64_t off = pos - sg->at;
    if (len > sg->size + (uint64_t)sg->extra - off)
        return NULL;
    *added = sg->extra && off + len == sg->size + 1;
    /* a record held where it lies must end at a delimiter of its input, or
     * the write's search for it would run past the input: so before the
     * unterminated tail (g->tail), which only an added one may be, whole */
    if (*added ? off != g->tail[*si] : off + len > g->tail[*si])
        return NULL;
    const unsigned char *rec = sg->p + off;
    if ((first && off > 0 && rec[-1] != v->delim) ||
        ((last || first) && !*added && rec[len - 1] != v->delim))
        return NULL;
    return rec;
}

/* A frame of references' payload p[0..payload) of `records` entries from
 * part `from`: each record held where it lies in the gather's inputs. */
static int add_refs(rf_engine_gather *g, unsigned from, const unsigned char *p,
                    uint64_t payload, uint64_t records, uint64_t first, rf_engine_error *err)
{
    struct part_list *pl = &g->pl[from];
    const unsigned char *e = p, *end = p + payload;
    uint64_t number = first, at = 0;
    size_t si = SIZE_MAX;
    if (!g->have_view || g->delim != g->view.delim)
        return bad_packets(err);
    for (uint64_t r = 0; r < records; r++) {
        uint64_t gap, skip, len, key;
        const size_t a = rfi_get_varint(e, (size_t)(end - e), &gap);
        const size_t b = a ? rfi_get_varint(e + a, (size_t)(end - e) - a, &skip) : 0;
        const size_t c = b ? rfi_get_varint(e + a + b, (size_t)(end - e) - a - b, &len) : 0;
        const uint64_t base = r == 0 ? first : number + 1;
        if (c == 0 || (r > 0 && number == UINT64_MAX) || gap > UINT64_MAX - base ||
            skip > UINT64_MAX - at)
            return bad_packets(err);
        e += a + b + c;
        number = base + gap;
        int added;
        const unsigned char *rec =
            ref_record(g, at + skip, len, &si, r + 1 == records, &added, err);
        if (!rec)
            return err->status ? 1 : bad_packets(err);
        const rf_status st = key_of(g, &pl->kc, number, &key);
        if (st != RF_OK)
            return rfi_engine_status(err, st);
        if (g->nitems == g->items_cap && reserve_items(g, 1) != 0)
            return rfi_engine_nomem(err);
        if (hold_one(g, from, 1, 0, rec, (size_t)len - (size_t)added, added, key, number, err) !=
            0)
            return 1;
        at += skip + len;
    }
    if (e != end || local_close(g, err) != 0)
        return e != end ? bad_packets(err) : 1;
    return 0;
}

rf_status rf_engine_gather_add(rf_engine_gather *g, unsigned from_part, const void *packets,
                               size_t len, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || g->failed || g->finished || from_part >= g->parts || (len > 0 && !packets))
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    if (local_close(g, err) != 0 || add_copies(g, from_part, packets, len, err) != 0)
        return failed(g, err);
    return RF_OK;
}

rf_status rf_engine_gather_hold(rf_engine_gather *g, unsigned from_part, const void *packets,
                                size_t len, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || g->failed || g->finished || from_part >= g->parts || (len > 0 && !packets))
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    g->held += len; /* the caller's memory, counted as copies would be */
    if (local_close(g, err) != 0 || add_in_place(g, from_part, packets, len, err) != 0)
        return failed(g, err);
    if (over_budget(g) && spill(g, err) != 0)
        return failed(g, err);
    return RF_OK;
}

rf_status rf_engine_gather_buffer(rf_engine_gather *g, size_t len, void **buf,
                                  rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || !buf || g->failed || g->finished)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    struct pbuf *b = new_pbuf(g, len ? len : 1, 1);
    if (!b)
        return rfi_engine_nomem(err), RF_ENOMEM;
    *buf = b->data;
    return RF_OK;
}

/* The given buffer whose memory starts at p, or NULL. */
static struct pbuf *given_buffer(rf_engine_gather *g, const void *p)
{
    for (struct pbuf *b = g->bufs; b; b = b->next)
        if (b->given && b->data == p)
            return b;
    return NULL;
}

rf_status rf_engine_gather_recv(rf_engine_gather *g, void *buf, const size_t *len,
                                rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    struct pbuf *b = g && buf ? given_buffer(g, buf) : NULL;
    if (!b || !len || g->failed || g->finished)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    b->given = 0; /* the gather's from now on, whatever happens */
    if (local_close(g, err) != 0)
        return failed(g, err);
    g->held += sizeof *b + b->cap;
    size_t at = 0;
    for (unsigned q = 0; q < g->parts; q++) {
        if (len[q] > b->cap - at) {
            rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
            return failed(g, err);
        }
        if (add_in_place(g, q, b->data + at, len[q], err) != 0)
            return failed(g, err);
        at += len[q];
    }
    b->len = at;
    if (over_budget(g) && spill(g, err) != 0)
        return failed(g, err);
    return RF_OK;
}

/* ------------------------------------------------------------------------ */
/* Ordering                                                                 */

/* Parts hold increasing, disjoint runs of numbers, in part order. */
static int parts_in_order(const rf_engine_gather *g)
{
    int any = 0;
    uint64_t last = 0;
    for (unsigned p = 0; p < g->parts; p++) {
        const struct part_list *pl = &g->pl[p];
        if (pl->records == 0)
            continue;
        if (any && pl->first <= last)
            return 0;
        any = 1;
        last = pl->last;
    }
    return 1;
}

struct numbered {
    uint64_t number, val;
};

static int by_number(const void *a, const void *b)
{
    const uint64_t x = ((const struct numbered *)a)->number;
    const uint64_t y = ((const struct numbered *)b)->number;
    return x < y ? -1 : x > y;
}

/* A tie a[0..m) (equal keys) put in the keyed order: its entries in number
 * order, ranked, and shuffled by rf_keyed_sort with the ranks as values. */
static int order_tie(rf_engine_gather *g, rf_keyed *a, size_t m, enum form f,
                     rf_engine_error *err)
{
    struct numbered *t = malloc(m * sizeof *t);
    if (!t)
        return rfi_engine_nomem(err);
    for (size_t i = 0; i < m; i++) {
        size_t len;
        t[i].val = a[i].val;
        if (f == HELD_SPILLED)
            (void)spilled_decode(item_addr(&a[i]), &t[i].number, &len);
        else if (!packet_number(g, item_addr(&a[i]), &t[i].number))
            return free(t), rfi_engine_nomem(err);
    }
    qsort(t, m, sizeof *t, by_number);
    for (size_t i = 1; i < m; i++)
        if (t[i].number == t[i - 1].number)
            return free(t), bad_packets(err); /* one record sent twice */
    for (size_t i = 0; i < m; i++)
        a[i].val = i;
    const rf_status st = rf_keyed_sort(&g->order, a, m, 1);
    for (size_t i = 0; i < m; i++)
        a[i].val = t[a[i].val].val;
    free(t);
    return st == RF_OK ? 0 : rfi_engine_status(err, st);
}

/* A tie of the list, at idx[0..m) (list positions), put in the keyed
 * order as order_tie does; idx[] then holds the records' addresses. */
static int order_index_tie(rf_engine_gather *g, const rf_keyed *list, uint64_t *idx, size_t m,
                           rf_engine_error *err)
{
    rf_keyed *t = malloc(m * sizeof *t);
    if (!t)
        return rfi_engine_nomem(err);
    for (size_t i = 0; i < m; i++)
        t[i] = list[idx[i]];
    const int r = order_tie(g, t, m, HELD_PACKET, err);
    for (size_t i = 0; r == 0 && i < m; i++)
        idx[i] = t[i].val;
    free(t);
    return r;
}

/* Items a[0..n) put in the keyed order (in place): sorted by key with
 * their addresses as values, then every tie ordered again by number. */
static int order_entries(rf_engine_gather *g, rf_keyed *a, size_t n, enum form f,
                         rf_engine_error *err)
{
    const rf_status st = rf_keyed_sort(&g->order, a, n, g->threads);
    if (st != RF_OK)
        return rfi_engine_status(err, st);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && a[j].key == a[i].key)
            j++;
        if (j - i > 1 && order_tie(g, a + i, j - i, f, err) != 0)
            return 1;
        i = j;
    }
    return 0;
}

/* The keys rf_keyed_index sorts: the list's, moved to the bottom of the
 * owner's range and shifted up over its common top bits, so that the
 * index's buckets (by the top bits) divide the owner's keys and not only
 * a 1/owners of them.  Order and equality are kept; the tie shuffles use
 * the true keys (order_held). */
static rf_status index_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    const rf_engine_gather *g = ctx;
    const unsigned shift = g->khi - g->klo ? (unsigned)__builtin_clzll(g->khi - g->klo) : 0;
    const rf_keyed *a = g->items + first;
    for (size_t i = 0; i < n; i++)
        out[i] = (a[i].key - g->klo) << shift;
    return RF_OK;
}

/* An in-memory gather put in the keyed order, at 8 bytes per record:
 * rf_keyed_index over the list (its positions as the items) gives the
 * positions in key order, then one pass turns them into the records'
 * addresses, and orders every tie (equal keys, almost never) again as
 * order_tie does -- the index put it in list order, not number order.
 * The list is freed. */
static int order_held(rf_engine_gather *g, rf_engine_error *err)
{
    const size_t n = g->nitems;
    uint64_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return rfi_engine_nomem(err);
    const rf_status st = rf_keyed_index(&g->order, n, index_keys, g, g->threads, idx);
    if (st != RF_OK) {
        free(idx);
        return st == RF_ENOMEM ? rfi_engine_nomem(err) : rfi_engine_status(err, st);
    }
    const rf_keyed *a = g->items;
    for (size_t j = 0; j < n;) {
        if (j + PREFETCH < n)
            __builtin_prefetch(&a[idx[j + PREFETCH]]);
        const uint64_t key = a[idx[j]].key;
        size_t t = j + 1;
        while (t < n && a[idx[t]].key == key)
            t++;
        if (t - j == 1) {
            idx[j] = a[idx[j]].val;
        } else if (order_index_tie(g, a, idx + j, t - j, err) != 0) {
            free(idx);
            return 1;
        }
        j = t;
    }
    free(g->items);
    g->items = NULL;
    g->items_cap = 0;
    g->order_addr = idx;
    return 0;
}

/* End of adding: spilled gathers spill what is left; in-memory ones are
 * ordered once. */
static int finish(rf_engine_gather *g, rf_engine_error *err)
{
    if (g->failed)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
    if (g->finished)
        return 0;
    if (local_close(g, err) != 0)
        return 1;
    g->finished = 1;
    if (!parts_in_order(g))
        return bad_packets(err);
    if (g->root)
        return g->held_records > 0 && spill(g, err) != 0;
    return order_held(g, err);
}

/* What is done with each ordered batch: summed (bytes) or written. */
struct visit {
    uint64_t left;          /* records still wanted */
    uint64_t bytes;         /* summed so far */
    const rf_engine_sink *sink; /* NULL: sum only */
};

static int sink_error(int errnum, rf_engine_error *err)
{
    return rfi_engine_fail(err, RF_EIO, RF_ENGINE_OP_OUTPUT, NULL, errnum);
}

/* Ordered records a[0..) of one form as a source for the records layer's
 * threaded gather (records/gather_internal.h). */
struct held_src {
    const rf_engine_gather *g;
    struct ordered o;   /* from the batch's first record */
    enum form f;
};

static size_t held_fill(const void *ctx, size_t first, size_t n, unsigned char *buf, size_t cap,
                        size_t *len)
{
    const struct held_src *h = ctx;
    size_t used = 0, i;
    for (i = 0; i < n; i++) {
        /* Entries in keyed order are scattered in memory: every one is a
         * cache miss, overlapped by asking for those ahead (as
         * rf_records_write does). */
        if (i + PREFETCH < n)
            __builtin_prefetch(ordered_addr(&h->o, first + i + PREFETCH));
        size_t l;
        const unsigned char *p = record_bytes(h->g, h->f, ordered_addr(&h->o, first + i), &l);
        if (l > cap - used)
            break;
        memcpy(buf + used, p, l);
        used += l;
    }
    *len = used;
    return i;
}

static int held_write(const void *ctx, size_t first, size_t n, rf_writer *w)
{
    const struct held_src *h = ctx;
    for (size_t i = 0; i < n; i++) {
        if (i + PREFETCH < n)
            __builtin_prefetch(ordered_addr(&h->o, first + i + PREFETCH));
        size_t len;
        const unsigned char *bytes =
            record_bytes(h->g, h->f, ordered_addr(&h->o, first + i), &len);
        rf_writer_put(w, bytes, len);
    }
    return w->err;
}

static size_t held_size(const void *ctx, size_t i, size_t cap)
{
    const struct held_src *h = ctx;
    size_t len;
    (void)record_bytes(h->g, h->f, ordered_addr(&h->o, i), &len);
    (void)cap;
    return len;
}

static int take_batch(const rf_engine_gather *g, struct visit *v, struct ordered o, size_t n,
                      enum form f, rf_engine_error *err)
{
    if ((uint64_t)n > v->left)
        n = (size_t)v->left;
    if (!v->sink) {
        for (size_t i = 0; i < n; i++) {
            size_t len;
            (void)record_bytes(g, f, ordered_addr(&o, i), &len);
            v->bytes += len;
        }
        v->left -= n;
        return 0;
    }
    const rf_engine_sink *s = v->sink;
    while (n > 0) {
        const uint64_t room = s->room(s->ctx);
        if (room == 0) {
            v->left = 0; /* the sink has every record it planned */
            return 0;
        }
        const size_t k = room < n ? (size_t)room : n;
        rf_writer *w = s->writer(s->ctx);
        /* the records layer's gather, on the options' threads */
        const struct held_src h = {g, o, f};
        const struct rfi_gather_src src = {held_fill, held_write, held_size, &h};
        struct rfi_gather_sizes sz;
        rfi_gather_default_sizes(&sz);
        (void)rfi_gather_write(&src, k, w, g->threads, NULL, NULL, &sz);
        if (w->err)
            return sink_error(w->err, err);
        const int adv = s->advance(s->ctx, k);
        if (adv)
            return sink_error(adv, err);
        if (o.a)
            o.a += k;
        else
            o.addr += k;
        n -= k;
        v->left -= k;
    }
    return 0;
}

/* A bucket file read whole; its entries listed in file order. */
static int load_bucket(rf_engine_gather *g, const struct rfi_keybucket *kb, unsigned char **data,
                       rf_keyed **list, rf_engine_error *err)
{
    const struct rfi_keyfile *f = &kb->f[0];
    *data = malloc(f->size ? (size_t)f->size : 1);
    *list = malloc((kb->records ? (size_t)kb->records : 1) * sizeof **list);
    if (!*data || !*list)
        return rfi_engine_nomem(err);
    const struct rfi_keyfiles *k = kfiles(g, err);
    if (rfi_keyfile_read(k, f, *data, (size_t)f->size, 0) != 0)
        return 1;
    const unsigned char *p = *data;
    size_t left = (size_t)f->size;
    for (uint64_t i = 0; i < kb->records; i++) {
        size_t size;
        if (!spilled_size(p, left, &size))
            return rfi_keyfile_error(k, f, EIO); /* not the file written */
        (*list)[i] = (rf_keyed){rfi_get_u64(p), (uint64_t)(uintptr_t)(p + 8)};
        p += size;
        left -= size;
    }
    return 0;
}

/* The whole entries in buf[0..have) listed into *list (grown as needed):
 * returns their count and sets *used to their bytes, or returns -1 when out
 * of memory. */
static ptrdiff_t list_entries(unsigned char *buf, size_t have, rf_keyed **list, size_t *list_cap,
                              size_t *used)
{
    size_t n = 0, size = 0;
    *used = 0;
    while (spilled_size(buf + *used, have - *used, &size)) {
        if (n == *list_cap) {
            const size_t cap = *list_cap ? *list_cap * 2 : 4096;
            rf_keyed *nl = realloc(*list, cap * sizeof *nl);
            if (!nl)
                return -1;
            *list = nl;
            *list_cap = cap;
        }
        (*list)[n++] = (rf_keyed){rfi_get_u64(buf + *used), (uint64_t)(uintptr_t)(buf + *used + 8)};
        *used += size;
    }
    return (ptrdiff_t)n;
}

/* Bucket kb's entries cut into its child set, reading its file a piece of
 * about half the budget at a time. */
static int scatter_bucket(rf_engine_gather *g, struct rfi_keybucket *kb, rf_engine_error *err)
{
    const struct rfi_keyfile *f = &kb->f[0];
    size_t cap = g->budget / 2 > RFI_KEYFILES_MIN_ORDER ? (size_t)(g->budget / 2)
                                                          : (size_t)RFI_KEYFILES_MIN_ORDER;
    unsigned char *buf = malloc(cap);
    rf_keyed *list = NULL;
    size_t list_cap = 0, have = 0;
    int status = 1;
    if (!buf) {
        rfi_engine_nomem(err);
        goto done;
    }
    for (uint64_t at = 0; at < f->size || have > 0;) {
        const size_t want = f->size - at < cap - have ? (size_t)(f->size - at) : cap - have;
        if (want > 0 && rfi_keyfile_read(kfiles(g, err), f, buf + have, want, at) != 0)
            goto done;
        at += want;
        have += want;
        size_t used;
        const ptrdiff_t n = list_entries(buf, have, &list, &list_cap, &used);
        if (n < 0) {
            rfi_engine_nomem(err);
            goto done;
        }
        if (n > 0 && spill_into(g, kb->child, list, NULL, (size_t)n, err) != 0)
            goto done;
        memmove(buf, buf + used, have - used);
        have -= used;
        if (at >= f->size && n == 0 && have > 0) {
            rfi_keyfile_error(kfiles(g, err), f, EIO); /* a truncated file */
            goto done;
        }
        if (n == 0 && have > 0) { /* an entry larger than the buffer */
            size_t need;
            (void)spilled_size(buf, have, &need); /* 0 while its header is not in */
            const size_t grown = need > cap ? need : cap * 2;
            unsigned char *nb = realloc(buf, grown);
            if (!nb) {
                rfi_engine_nomem(err);
                goto done;
            }
            buf = nb;
            cap = grown;
        }
    }
    status = 0;
done:
    free(buf);
    free(list);
    return status;
}

/* A bucket too large for the budget, cut by its keys into a set of its own
 * (keyfiles.h), its own file dropped once its entries are in the child's. */
static int split_bucket(rf_engine_gather *g, struct rfi_keyset *s, unsigned bi,
                        rf_engine_error *err)
{
    struct rfi_keybucket *kb = &s->b[bi];
    struct rfi_keyfiles *k = kfiles(g, err);
    if (rfi_keyset_split(k, s, bi, kb->f[0].size + PER_RECORD * kb->records, g->budget) != 0)
        return 1;
    if (scatter_bucket(g, kb, err) != 0) {
        rfi_keyset_free(kfiles(g, err), kb->child);
        kb->child = NULL;
        return 1;
    }
    rfi_keybucket_drop(k, kb);
    return 0;
}

static int visit_set(rf_engine_gather *g, struct rfi_keyset *s, struct visit *v,
                     rf_engine_error *err);

static int visit_bucket(rf_engine_gather *g, struct rfi_keyset *s, unsigned bi, struct visit *v,
                        rf_engine_error *err)
{
    struct rfi_keybucket *kb = &s->b[bi];
    if (kb->records == 0 || v->left == 0)
        return 0;
    if (!v->sink && kb->records <= v->left && !kb->child) {
        v->bytes += kb->bytes; /* whole: no need to order it */
        v->left -= kb->records;
        return 0;
    }
    const uint64_t need = kb->f[0].size + PER_RECORD * kb->records;
    if (!kb->child && !rfi_keyset_fits(s, bi, need, kb->records, g->budget) &&
        split_bucket(g, s, bi, err) != 0)
        return 1;
    if (kb->child)
        return visit_set(g, kb->child, v, err);
    unsigned char *data = NULL;
    rf_keyed *list = NULL;
    int status = load_bucket(g, kb, &data, &list, err) ||
                 order_entries(g, list, (size_t)kb->records, HELD_SPILLED, err) ||
                 take_batch(g, v, (struct ordered){list, NULL}, (size_t)kb->records,
                            HELD_SPILLED, err);
    free(data);
    free(list);
    return status;
}

static int visit_set(rf_engine_gather *g, struct rfi_keyset *s, struct visit *v,
                     rf_engine_error *err)
{
    for (unsigned b = 0; b < s->n && v->left > 0; b++)
        if (visit_bucket(g, s, b, v, err) != 0)
            return 1;
    return 0;
}

static int visit_all(rf_engine_gather *g, struct visit *v, rf_engine_error *err)
{
    if (finish(g, err) != 0)
        return 1;
    if (!v->sink && v->left >= g->records) { /* all: counted as they came */
        v->bytes = g->bytes;
        v->left -= g->records;
        return 0;
    }
    if (g->root)
        return visit_set(g, g->root, v, err);
    return take_batch(g, v, (struct ordered){NULL, g->order_addr}, g->nitems, HELD_PACKET, err);
}

rf_status rf_engine_gather_bytes(rf_engine_gather *g, uint64_t k, uint64_t *bytes,
                                 rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || !bytes)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    if (g->direct) {
        rfi_direct_bytes(g->direct, k, bytes);
        return RF_OK;
    }
    struct visit v = {k, 0, NULL};
    if (visit_all(g, &v, err) != 0)
        return failed(g, err);
    *bytes = v.bytes;
    return RF_OK;
}

rf_status rf_engine_gather_write(rf_engine_gather *g, uint64_t count, const rf_engine_sink *sink,
                                 rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || !sink || !sink->begin || !sink->writer || !sink->room || !sink->advance)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    if (g->direct)
        return rfi_direct_write(g->direct, count, sink, err) == 0 ? RF_OK : err->status;
    if (finish(g, err) != 0)
        return failed(g, err);
    const uint64_t k = count < g->records ? count : g->records;
    const int r = sink->begin(sink->ctx, "", 0, k);
    if (r)
        return sink_error(r, err), err->status;
    struct visit v = {k, 0, sink};
    if (visit_all(g, &v, err) != 0)
        return err->op == RF_ENGINE_OP_OUTPUT ? err->status : failed(g, err);
    if (g->have_view) { /* records were read from the inputs: still as they were? */
        g->view.err = err;
        const int changed = rfi_dist_view_check(&g->view);
        g->view.err = &g->view_err;
        if (changed)
            return failed(g, err);
    }
    return RF_OK;
}
