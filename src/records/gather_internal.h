/* gather_internal.h -- internals shared by writer.c (the serial
 * gather) and gather.c (the threaded one), and the sizes tests shrink. */
#ifndef RIFFLE_IO_GATHER_INTERNAL_H
#define RIFFLE_IO_GATHER_INTERNAL_H

#include "riffle_io.h"

/* Copy records offs[0..count) of r, each followed by r->delim, into
 * buf[0..cap), prefetching as rf_records_write does.  Stops before the first
 * record that does not fit whole (a record is searched for its delimiter
 * only as far as the room left, so a huge record costs at most cap bytes of
 * reading).  Returns how many records were copied; *len = bytes used. */
size_t rfi_records_fill(const rf_records *r, const uint64_t *offs, size_t count,
                        unsigned char *buf, size_t cap, size_t *len);

/* Flush w, then write bytes[0..len) to w->fd straight from `bytes` (no copy
 * into w's buffer).  Returns w->err. */
int rfi_writer_direct(rf_writer *w, const void *bytes, size_t len);

/* The sizes of the threaded gather (gather.c). */
struct rfi_gather_sizes {
    size_t buf;      /* bytes per slice buffer; two buffers per worker */
    size_t target;   /* bytes a slice aims at (< buf: room for variation) */
    size_t parallel; /* estimated output below this: the serial path */
};

/* The defaults: 1 MiB buffers, slices of 512 KiB, threads from 1 MiB. */
void rfi_gather_default_sizes(struct rfi_gather_sizes *s);

/* Records to gather from anywhere (the distributed gather's are in several
 * buffers): `count` records numbered 0 .. count-1, in output order.
 *   fill(ctx, first, n, buf, cap, &len): copy records first .. first+n-1
 *     into buf[0..cap) as rfi_records_fill does (stop before the first that
 *     does not fit whole); return how many were copied, *len their bytes;
 *   write(ctx, first, n, w): send records first .. first+n-1 through w
 *     whatever their lengths; return w->err;
 *   size(ctx, i, cap): record i's bytes (for one longer than cap, any
 *     value above cap will do: a source may stop searching there), for
 *     the first estimate.
 * fill and size are called from several threads at once, on different
 * records; write on the calling thread only. */
struct rfi_gather_src {
    size_t (*fill)(const void *ctx, size_t first, size_t n, unsigned char *buf, size_t cap,
                   size_t *len);
    int (*write)(const void *ctx, size_t first, size_t n, rf_writer *w);
    size_t (*size)(const void *ctx, size_t i, size_t cap);
    const void *ctx;
};

/* rf_records_write_threads over a source: the same slices, threads,
 * buffers and progress; the bytes of src->write(ctx, 0, count, w). */
int rfi_gather_write(const struct rfi_gather_src *src, size_t count, rf_writer *w,
                     unsigned threads, rf_records_progress_fn *progress, void *ctx,
                     const struct rfi_gather_sizes *sz);

/* rf_records_write_threads with the given sizes (buf >= 1, target >= 1). */
int rfi_records_write_sized(const rf_records *r, const uint64_t *offs, size_t count,
                            rf_writer *w, unsigned threads, rf_records_progress_fn *progress,
                            void *ctx, const struct rfi_gather_sizes *s);

#endif
