/* dist_gather.c -- one owner's records from every part, in the keyed order
 * (riffle_engine.h, "Distributed runs").
 *
 * The order inside an owner is rf_keyed_sort's on (key, record number):
 * keys first, a tie's records taken in number order.  Each entry is listed
 * once as a 16-byte rf_keyed (its key, its address), and the list is put
 * in key order by rf_keyed_sort on o->threads threads.  The addresses are
 * not in number order, so a tie (equal keys, about n^2 / 2^65 pairs among n
 * records: almost never) is then ordered again on its own: its entries put
 * in number order and given to rf_keyed_sort with their ranks as values,
 * which shuffles the tie exactly as one sort of the whole list by number
 * would (riffle.h, "Keyed order": a tie's order depends on its key and its
 * items in input order only).
 *
 * Memory.  Each record is copied into blocks as its number and length
 * (LEB128 varints: a few bytes where the wire's entry header takes 24) and
 * its bytes; its key lives only in its item of the list, 16 bytes.  When
 * those pass the budget, every held record is spilled: cut by key into NB
 * buckets (ranges of the owner's keys, so the buckets in order are the keys
 * in order and a tie never crosses two) and each bucket's run appended to
 * its file, a record as its key (8 bytes) then as held.  The files are
 * temp.h's, as the external engine's: unnamed where the file system allows
 * (a kill -9 leaves nothing), else numbered files of a directory announced
 * to the temp callback; each stays open until its bucket is split or the
 * gather ends, since an unnamed file has no name to reopen.  A bucket file is
 * read back whole and ordered as above.  A bucket
 * still too large for the budget is split the same way into NB buckets of
 * its own key range (riffle.h, "Keyed order": the order inside a key range
 * depends on its entries only). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/thread.h"
#include "dist_internal.h"
#include "engine_internal.h"
#include "temp.h"

/* Buckets per spill: one byte of bucket number per entry while cutting. */
#define NB 256u
/* Memory counted per record beside its entry: its rf_keyed in the list. */
#define PER_RECORD 16u
/* Entries are copied into blocks of an eighth of the budget, from 4 KiB to
 * 1 MiB (a larger entry gets a block of its own): large enough that the
 * allocations do not show, small enough that a small budget is not taken
 * by one block. */
#define BLOCK_MIN ((size_t)4 << 10)
#define BLOCK_MAX ((size_t)1 << 20)
/* Spill writes go through a buffer of this size. */
#define WRITE_BUF ((size_t)1 << 20)
/* Entries asked for ahead of the one written. */
#define PREFETCH 16
/* A bucket this small is ordered in memory whatever the budget (as the
 * external engine's MIN_ORDER): splitting it saves less than it costs. */
#define MIN_ORDER ((uint64_t)64 << 10)

struct block {
    struct block *next;
    size_t len, cap;
    unsigned char data[];
};

struct part_list {
    uint64_t records;        /* in all, spilled ones included */
    uint64_t first, last;    /* numbers of the first and last entry */
};

struct bucket {
    unsigned long id;        /* file number, when it has a file */
    int has_file;
    int fd;                  /* its file, written at its end (the descriptor's
                                offset) and read with pread; -1 once split */
    uint64_t records, bytes; /* record bytes */
    uint64_t fbytes;         /* file bytes (entries) */
    struct spill_set *child; /* split again */
};

struct spill_set {
    uint64_t lo, hi;         /* the keys it covers */
    struct bucket b[NB];
};

struct rf_engine_gather {
    rf_keyed_order order;
    unsigned parts;
    int have_owner;
    unsigned owner, owners;
    uint64_t klo, khi;       /* the owner's keys */
    uint64_t budget;
    unsigned threads;
    const char *tmpdir;
    struct part_list *pl;
    struct block *blocks;
    rf_keyed *items;         /* the held entries (key, address); ordered at the end */
    size_t nitems, items_cap;
    uint64_t held, held_records;
    uint64_t records, bytes; /* added in all */
    int finished, failed;
    /* spilling */
    struct engine eng;       /* the temporary files' settings, for temp.h */
    struct temps t;          /* opened at the first spill */
    struct spill_set *root;
    unsigned char *wbuf;
};

/* ------------------------------------------------------------------------ */
/* Entries                                                                  */

static uint64_t entry_key(const unsigned char *e)
{
    return rfi_get_u64(e);
}

static uint64_t entry_number(const unsigned char *e)
{
    return rfi_get_u64(e + 8);
}

static size_t entry_len(const unsigned char *e)
{
    return (size_t)rfi_get_u64(e + 16);
}

/* A held record: its number and length as LEB128 varints (a few bytes
 * where the wire's entry header takes 16), then its bytes; its key is in
 * its item of the list.  A spill file holds records as key (8 bytes,
 * little-endian) then the held record. */
#define HELD_HEAD_MAX 20

static size_t put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* A varint in p[0..avail): its bytes, or 0 if it does not end there. */
static size_t get_varint(const unsigned char *p, size_t avail, uint64_t *v)
{
    uint64_t x = 0;
    *v = 0;
    for (size_t n = 0; n < avail && n < 10; n++) {
        x |= (uint64_t)(p[n] & 0x7f) << (7 * n);
        if (!(p[n] & 0x80)) {
            *v = x;
            return n + 1;
        }
    }
    return 0;
}

/* A held record's number, length, and bytes (returned). */
static const unsigned char *held_decode(const unsigned char *h, uint64_t *number, size_t *len)
{
    uint64_t l = 0;
    *number = 0;
    h += get_varint(h, HELD_HEAD_MAX, number);
    h += get_varint(h, HELD_HEAD_MAX, &l);
    *len = (size_t)l;
    return h;
}

static uint64_t held_number(const unsigned char *h)
{
    uint64_t number;
    size_t len;
    (void)held_decode(h, &number, &len);
    return number;
}

/* The held record an item of the list stands for. */
static const unsigned char *item_held(const rf_keyed *a)
{
    return (const unsigned char *)(uintptr_t)a->val;
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
    const size_t a = get_varint(p + 8, avail - 8, &number);
    const size_t b = a ? get_varint(p + 8 + a, avail - 8 - a, &len) : 0;
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

/* The keys [lo, hi] cut into NB ranges: bucket b's bounds and a key's bucket. */
static unsigned bucket_of(uint64_t lo, uint64_t hi, uint64_t key)
{
    const unsigned __int128 width = (unsigned __int128)(hi - lo) + 1;
    return (unsigned)((unsigned __int128)(key - lo) * NB / width);
}

static uint64_t bucket_low(uint64_t lo, uint64_t hi, unsigned b)
{
    const unsigned __int128 width = (unsigned __int128)(hi - lo) + 1;
    return lo + (uint64_t)(((unsigned __int128)b * width + NB - 1) / NB);
}

static uint64_t bucket_high(uint64_t lo, uint64_t hi, unsigned b)
{
    return b + 1 == NB ? hi : bucket_low(lo, hi, b + 1) - 1;
}

/* ------------------------------------------------------------------------ */
/* Temporary files (temp.h, as the external engine's: unnamed where the file
 * system allows, else numbered files of a directory riffle-XXXXXX)          */

/* The files, their errors recorded in err (each call has its own). */
static struct temps *temps(rf_engine_gather *g, rf_engine_error *err)
{
    g->eng.err = err;
    return &g->t;
}

static int temp_error(rf_engine_gather *g, unsigned long id, int errnum, rf_engine_error *err)
{
    return rfi_temps_error(temps(g, err), id, errnum);
}

/* A bucket's file, created at its first run.  Its descriptor stays open
 * until the bucket is split or the gather ends, as an unnamed file can
 * only be reached through it: one descriptor per bucket file, NB per set
 * (the file limit is raised as the external engine raises it). */
static int open_bucket(rf_engine_gather *g, struct bucket *b, rf_engine_error *err)
{
    if (b->fd >= 0)
        return 0;
    if (b->has_file) /* split: no more runs go to it */
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
    if (rfi_temps_create(temps(g, err), &b->id, &b->fd) != 0)
        return 1;
    b->has_file = 1;
    return 0;
}

/* Every bucket file of s and its children closed (an unnamed one is gone
 * with it) and, if named, unlinked. */
static void close_files(rf_engine_gather *g, struct spill_set *s)
{
    if (!s)
        return;
    for (unsigned b = 0; b < NB; b++) {
        if (s->b[b].fd >= 0) {
            close(s->b[b].fd);
            rfi_temps_unlink(&g->t, s->b[b].id);
        }
        s->b[b].fd = -1;
        close_files(g, s->b[b].child);
    }
}

/* Every temporary file gone, and the caller told (temp.h). */
static void remove_temps(rf_engine_gather *g)
{
    close_files(g, g->root);
    (void)rfi_temps_close(&g->t);
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        const ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Append the records of items a[0..n) (one bucket's) to b's file. */
static int write_run(rf_engine_gather *g, struct bucket *b, const rf_keyed *a, size_t n,
                     rf_engine_error *err)
{
    if (open_bucket(g, b, err) != 0)
        return 1;
    const int fd = b->fd;
    size_t used = 0;
    int werr = 0;
    for (size_t i = 0; i < n && !werr; i++) {
        const unsigned char *h = item_held(&a[i]);
        uint64_t number;
        size_t len;
        const unsigned char *bytes = held_decode(h, &number, &len);
        const size_t head = 8 + (size_t)(bytes - h);
        if (used + head + len > WRITE_BUF && used > 0) {
            werr = write_all(fd, g->wbuf, used);
            used = 0;
        }
        rfi_put_u64(g->wbuf + used, a[i].key);
        memcpy(g->wbuf + used + 8, h, head - 8);
        used += head;
        if (head + len > WRITE_BUF) {
            werr = werr ? werr : write_all(fd, g->wbuf, used);
            werr = werr ? werr : write_all(fd, bytes, len);
            used = 0;
        } else {
            memcpy(g->wbuf + used, bytes, len);
            used += len;
        }
        b->records++;
        b->bytes += len;
        b->fbytes += head + len;
    }
    if (!werr && used > 0)
        werr = write_all(fd, g->wbuf, used);
    return werr ? temp_error(g, b->id, werr, err) : 0;
}

static struct spill_set *new_set(uint64_t lo, uint64_t hi)
{
    struct spill_set *s = calloc(1, sizeof *s);
    if (s) {
        s->lo = lo;
        s->hi = hi;
        for (unsigned b = 0; b < NB; b++)
            s->b[b].fd = -1;
    }
    return s;
}

static void free_set(struct spill_set *s)
{
    if (!s)
        return;
    for (unsigned b = 0; b < NB; b++) {
        if (s->b[b].fd >= 0)
            close(s->b[b].fd);
        free_set(s->b[b].child);
    }
    free(s);
}

/* The entries of items a[0..n) cut by key into s's buckets and appended to
 * their files. */
static int spill_into(rf_engine_gather *g, struct spill_set *s, const rf_keyed *a, size_t n,
                      rf_engine_error *err)
{
    size_t count[NB] = {0}, at[NB];
    unsigned char *which = malloc(n ? n : 1);
    rf_keyed *cut = malloc((n ? n : 1) * sizeof *cut);
    int status = 1;
    if (!which || !cut) {
        rfi_engine_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        count[which[i] = (unsigned char)bucket_of(s->lo, s->hi, a[i].key)]++;
    size_t sum = 0;
    for (unsigned b = 0; b < NB; b++) {
        at[b] = sum;
        sum += count[b];
    }
    for (size_t i = 0; i < n; i++)
        cut[at[which[i]]++] = a[i];
    sum = 0;
    for (unsigned b = 0; b < NB; b++) {
        if (count[b] && write_run(g, &s->b[b], cut + sum, count[b], err) != 0)
            goto done;
        sum += count[b];
    }
    status = 0;
done:
    free(which);
    free(cut);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Holding entries                                                          */

static void free_blocks(rf_engine_gather *g)
{
    while (g->blocks) {
        struct block *next = g->blocks->next;
        free(g->blocks);
        g->blocks = next;
    }
}

/* Room for `size` bytes in the current block. */
static unsigned char *block_room(rf_engine_gather *g, size_t size)
{
    struct block *b = g->blocks;
    if (!b || b->cap - b->len < size) {
        const uint64_t eighth = g->budget / 8;
        const size_t block = eighth < BLOCK_MIN   ? BLOCK_MIN
                             : eighth > BLOCK_MAX ? BLOCK_MAX
                                                  : (size_t)eighth;
        const size_t cap = size > block ? size : block;
        if (!(b = malloc(sizeof *b + cap)))
            return NULL;
        b->next = g->blocks;
        b->len = 0;
        b->cap = cap;
        g->blocks = b;
        g->held += sizeof *b + cap;
    }
    unsigned char *p = b->data + b->len;
    b->len += size;
    return p;
}

/* Room in the list for `more` items. */
static int reserve_items(rf_engine_gather *g, size_t more)
{
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
    free_blocks(g);
    free(g->items);
    g->items = NULL;
    g->nitems = g->items_cap = 0;
    g->held = g->held_records = 0;
}

/* Everything held to bucket files. */
static int spill(rf_engine_gather *g, rf_engine_error *err)
{
    if (!g->t.ready) {
        rfi_raise_file_limit(); /* a descriptor per bucket file */
        if (rfi_temps_open(temps(g, err), &g->eng) != 0)
            return 1;
    }
    if (!g->root && !(g->root = new_set(g->klo, g->khi)))
        return rfi_engine_nomem(err);
    if (!g->wbuf && !(g->wbuf = malloc(WRITE_BUF)))
        return rfi_engine_nomem(err);
    const int status = spill_into(g, g->root, g->items, g->nitems, err);
    drop_held(g);
    return status;
}

static int over_budget(const rf_engine_gather *g)
{
    return g->held + PER_RECORD * g->held_records > g->budget;
}

/* ------------------------------------------------------------------------ */
/* Open, add, close                                                         */

static const char *default_tmpdir(void)
{
    const char *env = getenv("TMPDIR");
    return env && *env ? env : "/tmp";
}

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
    const rf_status st = rf_keyed_order_init(&g->order, o->rng, o->key);
    if (st != RF_OK) {
        rf_engine_gather_close(g);
        return rfi_engine_status(err, st), st;
    }
    g->parts = parts;
    g->budget = o->memory ? o->memory : rf_engine_default_memory();
    g->threads = rfi_threads(o->threads);
    g->tmpdir = o->tmpdir ? o->tmpdir : default_tmpdir();
    g->eng.tmpdir = g->tmpdir;
    g->eng.named_temps = o->named_temps;
    g->eng.temp = o->temp;
    g->eng.temp_ctx = o->temp_ctx;
    *gp = g;
    return RF_OK;
}

void rf_engine_gather_close(rf_engine_gather *g)
{
    if (!g)
        return;
    remove_temps(g);
    drop_held(g);
    free(g->pl);
    free_set(g->root);
    free(g->wbuf);
    memset(&g->order, 0, sizeof g->order);
    free(g);
}

uint64_t rf_engine_gather_temp_files(const rf_engine_gather *g)
{
    return g ? g->t.files : 0;
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

static int bad_packets(rf_engine_error *err)
{
    return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0);
}

/* A frame's header: checked against the gather (which learns its owner from
 * the first).  *records and *payload are its sizes. */
static int frame_header(rf_engine_gather *g, unsigned from, const unsigned char *p, size_t left,
                        uint64_t *records, uint64_t *payload, rf_engine_error *err)
{
    if (left < RFI_DIST_FRAME || memcmp(p, RFI_DIST_MAGIC, 4) != 0 ||
        rfi_get_u32(p + 4) != RFI_DIST_VERSION || rfi_get_u32(p + 8) != from ||
        rfi_get_u32(p + 12) != g->parts)
        return bad_packets(err);
    const unsigned owner = rfi_get_u32(p + 16), owners = rfi_get_u32(p + 20);
    if (owners == 0 || owner >= owners)
        return bad_packets(err);
    if (!g->have_owner) {
        g->have_owner = 1;
        g->owner = owner;
        g->owners = owners;
        g->klo = owner_low(owner, owners);
        g->khi = owner + 1 == owners ? UINT64_MAX : owner_low(owner + 1, owners) - 1;
    } else if (owner != g->owner || owners != g->owners) {
        return bad_packets(err);
    }
    *records = rfi_get_u64(p + 24);
    *payload = rfi_get_u64(p + 32);
    return *payload > left - RFI_DIST_FRAME ? bad_packets(err) : 0;
}

/* One wire entry e of part pl: checked, copied as a held record, listed
 * (the list has room). */
static int add_entry(rf_engine_gather *g, struct part_list *pl, const unsigned char *e,
                     rf_engine_error *err)
{
    const uint64_t key = entry_key(e), number = entry_number(e);
    const size_t len = entry_len(e);
    if (key < g->klo || key > g->khi || (pl->records > 0 && number <= pl->last))
        return bad_packets(err);
    unsigned char head[HELD_HEAD_MAX];
    size_t hl = put_varint(head, number);
    hl += put_varint(head + hl, len);
    unsigned char *h = block_room(g, hl + len);
    if (!h)
        return rfi_engine_nomem(err);
    memcpy(h, head, hl);
    memcpy(h + hl, e + RFI_DIST_ENTRY, len);
    g->items[g->nitems++] = (rf_keyed){key, (uint64_t)(uintptr_t)h};
    if (pl->records == 0)
        pl->first = number;
    pl->last = number;
    pl->records++;
    g->held_records++;
    g->records++;
    g->bytes += len;
    return 0;
}

/* A frame's payload e[0..payload) of `records` entries, each checked
 * against what is left of it, then added. */
static int add_payload(rf_engine_gather *g, struct part_list *pl, const unsigned char *e,
                       uint64_t payload, uint64_t records, rf_engine_error *err)
{
    if (records > payload / RFI_DIST_ENTRY)
        return bad_packets(err);
    if (reserve_items(g, (size_t)records) != 0)
        return rfi_engine_nomem(err);
    uint64_t left = payload;
    for (uint64_t r = 0; r < records; r++) {
        if (left < RFI_DIST_ENTRY || entry_len(e) > left - RFI_DIST_ENTRY)
            return bad_packets(err);
        const size_t size = RFI_DIST_ENTRY + entry_len(e);
        if (add_entry(g, pl, e, err) != 0)
            return 1;
        e += size;
        left -= size;
    }
    return left != 0 ? bad_packets(err) : 0;
}

static int add_frames(rf_engine_gather *g, unsigned from, const unsigned char *p, size_t len,
                      rf_engine_error *err)
{
    struct part_list *pl = &g->pl[from];
    while (len > 0) {
        uint64_t records = 0, payload = 0;
        if (frame_header(g, from, p, len, &records, &payload, err) != 0)
            return 1;
        const unsigned char *e = p + RFI_DIST_FRAME;
        if (add_payload(g, pl, e, payload, records, err) != 0)
            return 1;
        p += RFI_DIST_FRAME + payload;
        len -= RFI_DIST_FRAME + (size_t)payload;
        if (over_budget(g) && spill(g, err) != 0)
            return 1;
    }
    return 0;
}

/* After a failure nothing is kept: the temporary files go at once. */
static rf_status failed(rf_engine_gather *g, rf_engine_error *err)
{
    g->failed = 1;
    remove_temps(g);
    return err->status;
}

rf_status rf_engine_gather_add(rf_engine_gather *g, unsigned from_part, const void *packets,
                               size_t len, rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || g->failed || g->finished || from_part >= g->parts || (len > 0 && !packets))
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
    if (add_frames(g, from_part, packets, len, err) != 0)
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

static int by_number(const void *a, const void *b)
{
    const uint64_t x = held_number(item_held(a)), y = held_number(item_held(b));
    return x < y ? -1 : x > y;
}

/* A tie a[0..m) (equal keys) put in the keyed order: its entries in number
 * order, ranked, and shuffled by rf_keyed_sort with the ranks as values. */
static int order_tie(rf_engine_gather *g, rf_keyed *a, size_t m, rf_engine_error *err)
{
    qsort(a, m, sizeof *a, by_number);
    for (size_t i = 1; i < m; i++)
        if (held_number(item_held(&a[i])) == held_number(item_held(&a[i - 1])))
            return bad_packets(err); /* one record sent twice */
    uint64_t *addr = malloc(m * sizeof *addr);
    if (!addr)
        return rfi_engine_nomem(err);
    for (size_t i = 0; i < m; i++) {
        addr[i] = a[i].val;
        a[i].val = i;
    }
    const rf_status st = rf_keyed_sort(&g->order, a, m, 1);
    for (size_t i = 0; i < m; i++)
        a[i].val = addr[a[i].val];
    free(addr);
    return st == RF_OK ? 0 : rfi_engine_status(err, st);
}

/* Items a[0..n) put in the keyed order (in place): sorted by key with
 * their addresses as values, then every tie ordered again by number. */
static int order_entries(rf_engine_gather *g, rf_keyed *a, size_t n, rf_engine_error *err)
{
    const rf_status st = rf_keyed_sort(&g->order, a, n, g->threads);
    if (st != RF_OK)
        return rfi_engine_status(err, st);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && a[j].key == a[i].key)
            j++;
        if (j - i > 1 && order_tie(g, a + i, j - i, err) != 0)
            return 1;
        i = j;
    }
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
    g->finished = 1;
    if (!parts_in_order(g))
        return bad_packets(err);
    if (g->root)
        return g->held_records > 0 && spill(g, err) != 0;
    return order_entries(g, g->items, g->nitems, err);
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

static int take_batch(struct visit *v, const rf_keyed *a, size_t n, rf_engine_error *err)
{
    if ((uint64_t)n > v->left)
        n = (size_t)v->left;
    if (!v->sink) {
        for (size_t i = 0; i < n; i++) {
            uint64_t number;
            size_t len;
            (void)held_decode(item_held(&a[i]), &number, &len);
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
        for (size_t i = 0; i < k; i++) {
            /* Entries in keyed order are scattered in memory: every one is a
             * cache miss, overlapped by asking for those ahead (as
             * rf_records_write does). */
            if (i + PREFETCH < k)
                __builtin_prefetch(item_held(&a[i + PREFETCH]));
            uint64_t number;
            size_t len;
            const unsigned char *bytes = held_decode(item_held(&a[i]), &number, &len);
            rf_writer_put(w, bytes, len);
        }
        if (w->err)
            return sink_error(w->err, err);
        const int adv = s->advance(s->ctx, k);
        if (adv)
            return sink_error(adv, err);
        a += k;
        n -= k;
        v->left -= k;
    }
    return 0;
}

/* A bucket file read whole; its entries listed in file order. */
static int load_bucket(rf_engine_gather *g, const struct bucket *b, unsigned char **data,
                       rf_keyed **list, rf_engine_error *err)
{
    *data = malloc(b->fbytes ? (size_t)b->fbytes : 1);
    *list = malloc((b->records ? (size_t)b->records : 1) * sizeof **list);
    if (!*data || !*list)
        return rfi_engine_nomem(err);
    const int fd = b->fd;
    uint64_t at = 0;
    while (at < b->fbytes) {
        const ssize_t r = pread(fd, *data + at, (size_t)(b->fbytes - at), (off_t)at);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return temp_error(g, b->id, r < 0 ? errno : EIO, err);
        at += (uint64_t)r;
    }
    const unsigned char *p = *data;
    size_t left = (size_t)b->fbytes;
    for (uint64_t i = 0; i < b->records; i++) {
        size_t size;
        if (!spilled_size(p, left, &size))
            return temp_error(g, b->id, EIO, err); /* not the file written */
        (*list)[i] = (rf_keyed){rfi_get_u64(p), (uint64_t)(uintptr_t)(p + 8)};
        p += size;
        left -= size;
    }
    return 0;
}

/* A bucket too large for the budget, cut by its keys into a set of its own,
 * reading its file a piece of about half the budget at a time. */
static int split_bucket(rf_engine_gather *g, struct spill_set *s, unsigned bi,
                        rf_engine_error *err)
{
    struct bucket *b = &s->b[bi];
    struct spill_set *c = new_set(bucket_low(s->lo, s->hi, bi), bucket_high(s->lo, s->hi, bi));
    size_t cap = g->budget / 2 > MIN_ORDER ? (size_t)(g->budget / 2) : (size_t)MIN_ORDER;
    unsigned char *buf = malloc(cap);
    rf_keyed *list = NULL;
    size_t list_cap = 0, have = 0;
    const int fd = b->fd;
    int status = 1;
    if (!c || !buf) {
        rfi_engine_nomem(err);
        goto done;
    }
    for (uint64_t at = 0; at < b->fbytes || have > 0;) {
        const size_t want = b->fbytes - at < cap - have ? (size_t)(b->fbytes - at) : cap - have;
        const ssize_t r = want ? pread(fd, buf + have, want, (off_t)at) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || (r == 0 && want > 0)) {
            temp_error(g, b->id, r < 0 ? errno : EIO, err);
            goto done;
        }
        at += (uint64_t)r;
        have += (size_t)r;
        /* the whole entries in buf[0..have) */
        size_t n = 0, used = 0, size = 0;
        while (spilled_size(buf + used, have - used, &size)) {
            if (n == list_cap) {
                list_cap = list_cap ? list_cap * 2 : 4096;
                rf_keyed *nl = realloc(list, list_cap * sizeof *nl);
                if (!nl) {
                    rfi_engine_nomem(err);
                    goto done;
                }
                list = nl;
            }
            list[n++] = (rf_keyed){rfi_get_u64(buf + used), (uint64_t)(uintptr_t)(buf + used + 8)};
            used += size;
        }
        if (n > 0 && spill_into(g, c, list, n, err) != 0)
            goto done;
        memmove(buf, buf + used, have - used);
        have -= used;
        if (at >= b->fbytes && n == 0 && have > 0) {
            temp_error(g, b->id, EIO, err); /* a truncated file */
            goto done;
        }
        if (n == 0 && have > 0) { /* an entry larger than the buffer */
            size_t need;
            (void)spilled_size(buf, have, &need); /* 0 while its header is not in */
            unsigned char *nb = realloc(buf, need > cap ? need : cap * 2);
            if (!nb) {
                rfi_engine_nomem(err);
                goto done;
            }
            buf = nb;
            cap = need > cap ? need : cap * 2;
        }
    }
    b->child = c;
    c = NULL;
    close(b->fd); /* its entries are in the child's files now */
    b->fd = -1;
    rfi_temps_unlink(&g->t, b->id);
    status = 0;
done:
    free_set(c);
    free(buf);
    free(list);
    return status;
}

static int visit_set(rf_engine_gather *g, struct spill_set *s, struct visit *v,
                     rf_engine_error *err);

static int visit_bucket(rf_engine_gather *g, struct spill_set *s, unsigned bi, struct visit *v,
                        rf_engine_error *err)
{
    struct bucket *b = &s->b[bi];
    if (b->records == 0 || v->left == 0)
        return 0;
    if (!v->sink && b->records <= v->left && !b->child) {
        v->bytes += b->bytes; /* whole: no need to order it */
        v->left -= b->records;
        return 0;
    }
    const uint64_t lo = bucket_low(s->lo, s->hi, bi), hi = bucket_high(s->lo, s->hi, bi);
    if (!b->child && b->fbytes + PER_RECORD * b->records > g->budget && b->fbytes > MIN_ORDER &&
        b->records > 1 && lo < hi && split_bucket(g, s, bi, err) != 0)
        return 1;
    if (b->child)
        return visit_set(g, b->child, v, err);
    unsigned char *data = NULL;
    rf_keyed *list = NULL;
    int status = load_bucket(g, b, &data, &list, err) ||
                 order_entries(g, list, (size_t)b->records, err) ||
                 take_batch(v, list, (size_t)b->records, err);
    free(data);
    free(list);
    return status;
}

static int visit_set(rf_engine_gather *g, struct spill_set *s, struct visit *v,
                     rf_engine_error *err)
{
    for (unsigned b = 0; b < NB && v->left > 0; b++)
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
    return take_batch(v, g->items, g->nitems, err);
}

rf_status rf_engine_gather_bytes(rf_engine_gather *g, uint64_t k, uint64_t *bytes,
                                 rf_engine_error *err)
{
    rf_engine_error local;
    err = rfi_dist_err(err, &local);
    if (!g || !bytes)
        return rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_NONE, NULL, 0), RF_EINVAL;
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
    if (finish(g, err) != 0)
        return failed(g, err);
    const uint64_t k = count < g->records ? count : g->records;
    const int r = sink->begin(sink->ctx, "", 0, k);
    if (r)
        return sink_error(r, err), err->status;
    struct visit v = {k, 0, sink};
    if (visit_all(g, &v, err) != 0)
        return err->op == RF_ENGINE_OP_OUTPUT ? err->status : failed(g, err);
    return RF_OK;
}
