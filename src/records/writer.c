/*
 * writer.c -- buffered output to a file descriptor, and the gather that
 * writes records in shuffled order (the records layer, include/riffle_io.h).
 * The threaded gather (gather.c) fills its buffers with rfi_records_fill,
 * the same loop as rf_records_write's.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/cpu.h"
#include "gather_internal.h"
#include "records_scan.h"
#include "riffle_io.h"

/* How many records ahead the gather prefetches.  Each shuffled record is a
 * cache (and TLB) miss; keeping a couple of dozen in flight hides the memory
 * latency.  Tuned on the gather alone over a 1 GB file of ~50-byte lines,
 * trying no prefetch and distances from 16 to 128 (docs/BENCHMARKS_CLI.md). */
#define PREFETCH_AHEAD 24

RF_API void rf_writer_init(rf_writer *w, int fd, void *buf, size_t cap)
{
    w->fd = fd;
    w->buf = buf;
    w->len = 0;
    w->cap = cap;
    w->err = 0;
}

static int write_all(rf_writer *w, const unsigned char *p, size_t len)
{
    while (len > 0 && !w->err) {
        const ssize_t k = write(w->fd, p, len);
        if (k < 0) {
            if (errno != EINTR)
                w->err = errno;
            continue;
        }
        if (k == 0) {
            w->err = EIO;
            break;
        }
        p += k;
        len -= (size_t)k;
    }
    return w->err;
}

RF_API int rf_writer_flush(rf_writer *w)
{
    if (w->len && !w->err)
        write_all(w, w->buf, w->len);
    w->len = 0;
    return w->err;
}

int rfi_writer_direct(rf_writer *w, const void *bytes, size_t len)
{
    if (rf_writer_flush(w))
        return w->err;
    return write_all(w, bytes, len);
}

RF_API int rf_writer_put(rf_writer *w, const void *bytes, size_t len)
{
    if (w->err || len == 0)
        return w->err;
    if (len <= w->cap - w->len) {
        memcpy(w->buf + w->len, bytes, len);
        w->len += len;
        return 0;
    }
    if (rf_writer_flush(w))
        return w->err;
    if (len >= w->cap)
        return write_all(w, bytes, len);
    memcpy(w->buf, bytes, len);
    w->len = len;
    return 0;
}

RF_API int rf_writer_putc(rf_writer *w, unsigned char c)
{
    if (w->len == w->cap && rf_writer_flush(w))
        return w->err;
    if (w->err)
        return w->err;
    w->buf[w->len++] = c;
    return 0;
}

RF_API int rf_writer_put_u64(rf_writer *w, uint64_t v)
{
    unsigned char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (unsigned char)('0' + v % 10);
        v /= 10;
    } while (v);
    return rf_writer_put(w, tmp + i, sizeof tmp - i);
}

/* A ~50-byte record straddles two cache lines about as often as not, and
 * memchr reads whole vectors: fetch the line after the start too. */
static void prefetch(const rf_records *r, uint64_t off)
{
#if defined(__GNUC__)
    __builtin_prefetch(r->data + off, 0, 3);
    if (r->size - off > 64)
        __builtin_prefetch(r->data + off + 64, 0, 3);
#else
    (void)r;
    (void)off;
#endif
}

/* A record that does not fit in w's empty buffer: written straight from
 * the input (rf_writer_put), then its delimiter. */
static void put_long(const rf_records *r, uint64_t off, rf_writer *w)
{
    rf_writer_put(w, r->data + off, rf_records_length(r, off));
    rf_writer_putc(w, r->delim);
}

/* The serial gather is the threaded one's fill loop run in w's own buffer:
 * fill what fits, flush, go on; a record longer than the whole buffer goes
 * out by itself. */
RF_API int rf_records_write(const rf_records *r, const uint64_t *offs, size_t count,
                            rf_writer *w)
{
    while (count > 0 && !w->err) {
        size_t used = 0, k = 0;
        if (w->len < w->cap)
            k = rfi_records_fill(r, offs, count, w->buf + w->len, w->cap - w->len, &used);
        w->len += used;
        offs += k;
        count -= k;
        if (count == 0)
            break;
        if (w->len > 0) { /* the next record may fit in an empty buffer */
            if (rf_writer_flush(w) != 0)
                break;
            continue;
        }
        put_long(r, offs[0], w);
        offs++;
        count--;
    }
    return w->err;
}

/* One record of the fill: copied with its delimiter if it fits in room
 * bytes (searched only that far).  Returns the bytes used, or 0 when it does
 * not fit. */
static size_t fill_one(const rf_records *r, uint64_t off, unsigned char *dst, size_t room)
{
    const unsigned char *p = r->data + off;
    const size_t avail = r->size - (size_t)off;
    /* The record fits when its length is below the room (one byte for the
     * delimiter), so searching `room` bytes decides it. */
    const unsigned char *q = memchr(p, r->delim, avail < room ? avail : room);
    const size_t n = q ? (size_t)(q - p) : avail;
    if (n >= room)
        return 0;
    memcpy(dst, p, n);
    dst[n] = r->delim;
    return n + 1;
}

/* fill_one for CSV records (rf_records_csv). */
static size_t fill_one_csv(const rf_records *r, uint64_t off, unsigned char *dst, size_t room)
{
    const unsigned char *p = r->data + off;
    const size_t avail = r->size - (size_t)off, lim = avail < room ? avail : room;
    const size_t n = rf_csv_nth(p, lim, 0);
    if (n >= room)
        return 0;
    memcpy(dst, p, n);
    dst[n] = r->delim;
    return n + 1;
}

/* Copies one record as fill_one does; the fill loop takes one, inlined. */
typedef size_t copy_fn(const rf_records *r, uint64_t off, unsigned char *dst, size_t room);

/* The loop of every fill: prefetch ahead, copy records until one does not
 * fit.  Always inlined with a constant `copy`, so each fill below is one
 * loop with its copier inlined, not a call per record. */
static inline __attribute__((always_inline)) size_t
fill_loop(const rf_records *r, const uint64_t *offs, size_t count, unsigned char *buf,
          size_t cap, size_t *len, copy_fn *copy)
{
    const size_t warm = count < PREFETCH_AHEAD ? count : PREFETCH_AHEAD;
    for (size_t i = 0; i < warm; i++)
        prefetch(r, offs[i]);
    size_t used = 0, i;
    for (i = 0; i < count; i++) {
        if (i + PREFETCH_AHEAD < count)
            prefetch(r, offs[i + PREFETCH_AHEAD]);
        const size_t k = copy(r, offs[i], buf + used, cap - used);
        if (k == 0)
            break;
        used += k;
    }
    *len = used;
    return i;
}

static size_t fill_portable(const rf_records *r, const uint64_t *offs, size_t count,
                            unsigned char *buf, size_t cap, size_t *len)
{
    return fill_loop(r, offs, count, buf, cap, len, fill_one);
}

static size_t fill_csv(const rf_records *r, const uint64_t *offs, size_t count,
                       unsigned char *buf, size_t cap, size_t *len)
{
    return fill_loop(r, offs, count, buf, cap, len, fill_one_csv);
}

#if defined(RF_HAVE_DELIMS_AVX2)
#include <immintrin.h>

/* A record without a call: 64 bytes at a time are loaded and stored whole
 * (two AVX2 vectors) until a block holds the delimiter, where the record
 * ends -- the delimiter is among the bytes stored, and the bytes after it
 * are overwritten by the next record.  What is within 64 bytes of the end
 * of the data or of the room takes fill_one (from the record's start).
 * At least as fast as memchr and memcpy per record on the gather alone
 * (docs/BENCHMARKS_CLI.md). */
__attribute__((target("avx2"), always_inline)) static inline size_t
copy_avx2(const rf_records *r, uint64_t off, unsigned char *dst, size_t room)
{
    const __m256i d = _mm256_set1_epi8((char)r->delim);
    const unsigned char *p = r->data + off;
    unsigned char *q = dst;
    for (size_t left = r->size - off < room ? r->size - off : room; left >= 64;
         left -= 64, p += 64, q += 64) {
        const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
        const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
        const uint64_t m = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, d)) |
                           (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, d))
                               << 32;
        _mm256_storeu_si256((__m256i *)(void *)q, a);
        _mm256_storeu_si256((__m256i *)(void *)(q + 32), b);
        if (m)
            return (size_t)(q - dst) + (size_t)__builtin_ctzll(m) + 1;
    }
    return fill_one(r, off, dst, room);
}

__attribute__((target("avx2"))) static size_t
fill_avx2(const rf_records *r, const uint64_t *offs, size_t count, unsigned char *buf,
          size_t cap, size_t *len)
{
    return fill_loop(r, offs, count, buf, cap, len, copy_avx2);
}
#endif

size_t rfi_records_fill(const rf_records *r, const uint64_t *offs, size_t count,
                        unsigned char *buf, size_t cap, size_t *len)
{
    if (r->csv_)
        return fill_csv(r, offs, count, buf, cap, len);
#if defined(RF_HAVE_DELIMS_AVX2)
    if (rfi_cpu_avx2())
        return fill_avx2(r, offs, count, buf, cap, len);
#endif
    return fill_portable(r, offs, count, buf, cap, len);
}
