/*
 * records.c -- a block of input bytes split into delimiter-terminated records
 * (the records layer, include/riffle_io.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "csv_scan.h"
#include "records_priv.h"
#include "records_scan.h"

RF_API void rf_records_init(rf_records *r, unsigned char delim)
{
    memset(r, 0, sizeof *r);
    r->delim = delim;
}

/* Large blocks (the input copy, the offsets) grow with realloc: glibc moves
 * big blocks with mremap(2), which moves page tables, not bytes, and capacity
 * never written is never resident.  (Transparent huge pages were tried, to
 * spare TLB misses in the shuffle and the gather: the kernel's compaction
 * cost far more time than they saved, so they are not used;
 * docs/BENCHMARKS_CLI.md.) */
static void *block_resize(void *old, size_t old_cap, size_t *cap)
{
    (void)old_cap;
    return realloc(old, *cap);
}

static void block_free(void *p, size_t cap)
{
    (void)cap;
    free(p);
}

RF_API void rf_records_free(rf_records *r)
{
    const unsigned char delim = r->delim;
    const int lazy = r->lazy_, csv = r->csv_;
    if (r->map_)
        munmap(r->map_, r->map_len_);
    block_free(r->buf_, r->cap_);
    block_free(r->offs, r->offs_cap_);
    rf_records_init(r, delim);
    r->lazy_ = lazy;
    r->csv_ = csv;
}

RF_API void rf_records_csv(rf_records *r)
{
    r->csv_ = 1;
}

RF_API void rf_records_defer_index(rf_records *r)
{
    r->lazy_ = 1;
}

/* Grow geometrically (x1.5) so that appending N bytes costs O(N) in all;
 * untouched capacity is never resident. */
static size_t grow_to(size_t cap, size_t need)
{
    size_t c = cap < 65536 ? 65536 : cap;
    while (c < need) {
        if (c > SIZE_MAX / 3)
            return need;
        c += c / 2;
    }
    return c;
}

/* The mapped bytes to the heap block (a block reserved by an earlier empty
 * read is reused, not lost). */
static int unmap_to_heap(rf_records *r, size_t cap)
{
    unsigned char *b = block_resize(r->buf_, r->cap_, &cap);
    if (!b)
        return ENOMEM;
    memcpy(b, r->data, r->size);
    munmap(r->map_, r->map_len_);
    r->map_ = NULL;
    r->map_len_ = 0;
    r->buf_ = b;
    r->cap_ = cap;
    r->data = b;
    return 0;
}

int rf_records_reserve_(rf_records *r, size_t extra)
{
    if (extra > SIZE_MAX - r->size)
        return ENOMEM;
    const size_t need = r->size + extra;
    if (r->map_)
        return unmap_to_heap(r, grow_to(r->size, need));
    if (need <= r->cap_)
        return 0;
    size_t cap = grow_to(r->cap_, need);
    unsigned char *b = block_resize(r->buf_, r->cap_, &cap);
    if (!b)
        return ENOMEM;
    r->buf_ = b;
    r->cap_ = cap;
    r->data = b;
    return 0;
}

int rf_records_seal_(rf_records *r)
{
    if (r->size == 0 || r->data[r->size - 1] == r->delim)
        return 0;
    const int e = rf_records_reserve_(r, 1);
    if (e)
        return e;
    r->buf_[r->size++] = r->delim;
    return 0;
}

RF_API int rf_records_add_record(rf_records *r, const void *bytes, size_t len)
{
    int e = rf_records_seal_(r);
    if (!e && len == SIZE_MAX)
        e = ENOMEM;
    if (!e)
        e = rf_records_reserve_(r, len + 1);
    if (e)
        return e;
    if (len)
        memcpy(r->buf_ + r->size, bytes, len);
    r->buf_[r->size + len] = r->delim;
    r->size += len + 1;
    return 0;
}

/* Make room for `more` offsets after the found_ found so far.  Capacity beyond what
 * is written is never touched, so memory stays 8 bytes per record. */
static int reserve_offsets(rf_records *r, size_t more)
{
    if (more > SIZE_MAX / sizeof *r->offs - r->found_ - 1)
        return ENOMEM;
    const size_t need = (r->found_ + more) * sizeof *r->offs;
    if (need <= r->offs_cap_)
        return 0;
    size_t c = grow_to(r->offs_cap_, need);
    uint64_t *o = block_resize(r->offs, r->offs_cap_, &c);
    if (!o)
        return ENOMEM;
    r->offs = o;
    r->offs_cap_ = c;
    return 0;
}

/* Scanned in slices so that the worst case (every byte a delimiter) needs
 * only a slice's worth of spare offsets. */
#define SCAN_SLICE ((size_t)1 << 20)

/* offs[0..found_) holds 0 and, for every delimiter at p < scanned_, p + 1:
 * the starts of records, plus possibly `size` itself (a delimiter at the very
 * end starts no record; rf_records_index leaves it out of n). */
int rf_records_scan_(rf_records *r)
{
    const rf_scan_fn_ scan = rf_scan_best_();
    if (r->found_ == 0 && r->size > 0) {
        if (reserve_offsets(r, 1))
            return ENOMEM;
        r->offs[r->found_++] = 0;
    }
    while (r->scanned_ < r->size) {
        const size_t at = r->scanned_;
        const size_t len = r->size - at < SCAN_SLICE ? r->size - at : SCAN_SLICE;
        if (reserve_offsets(r, len))
            return ENOMEM;
        if (r->csv_) {
            struct rf_csv_state_ st = {r->quoted_, 0, 0};
            r->found_ += rf_csv_best_()(r->data + at, len, at, r->offs + r->found_, SIZE_MAX, &st);
            r->quoted_ = st.quoted;
        } else {
            r->found_ += scan(r->data + at, len, r->delim, at, r->offs + r->found_);
        }
        r->scanned_ = at + len;
    }
    return 0;
}

RF_API int rf_records_index(rf_records *r)
{
    if (rf_records_scan_(r))
        return ENOMEM;
    r->n = r->found_;
    if (r->n && r->offs[r->n - 1] == r->size)
        r->n--;
    return 0;
}

RF_API size_t rf_records_length(const rf_records *r, uint64_t off)
{
    const unsigned char *p = r->data + off;
    if (r->csv_)
        return rf_csv_nth(p, r->size - (size_t)off, 0);
    const unsigned char *q = memchr(p, r->delim, r->size - (size_t)off);
    return q ? (size_t)(q - p) : r->size - (size_t)off;
}
