/* watch.c -- inputs that change while they are read (watch.h).  A mapped
 * file that shrinks inside its last page reads as zeros there, and one
 * rewritten in place mixes old and new records: neither raises a signal,
 * so the run compares each input with what it was when opened, as GNU tar
 * does before it says "file changed as we read it".  A file that only grew
 * is no change: the run read the bytes it stamped (riffle_io.h,
 * rf_file_snapshot_changed), as GNU shuf reads a growing log.  The hash
 * that tells the two apart is taken from the bytes as the run reads them
 * anyway, not in a pass of its own. */
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "engine_internal.h"
#include "watch.h"

int rfi_watch_add(struct watch *wl, int fd, int own, const char *name, long *slot,
                  rf_engine_error *err)
{
    rf_file_stamp then;
    if (slot)
        *slot = -1;
    if (rf_file_stamp_fd(fd, &then) != 0 || !then.regular)
        return 0; /* pipes and devices are streams: nothing to compare */
    if (wl->n == wl->cap) {
        struct watched *w = rfi_grow(wl->w, &wl->cap, sizeof *w, 8);
        if (!w)
            return rfi_engine_nomem(err);
        wl->w = w;
    }
    char *copy = strdup(name ? name : "");
    if (!copy)
        return rfi_engine_nomem(err);
    struct watched *w = &wl->w[wl->n];
    *w = (struct watched){.name = copy, .fd = own ? -1 : fd, .then = then};
    rfi_bytesum_init(&w->read);
    if (slot)
        *slot = (long)wl->n;
    wl->n++;
    return 0;
}

void rfi_watch_feed(struct watch *wl, long slot, const unsigned char *p, size_t n)
{
    if (slot >= 0 && n > 0)
        rfi_bytesum_feed(&wl->w[slot].read, p, n);
}

void rfi_watch_set_sum(struct watch *wl, long slot, uint64_t sum, uint64_t len)
{
    if (slot < 0)
        return;
    struct watched *w = &wl->w[slot];
    w->whole = 1;
    w->whole_sum = sum;
    w->whole_len = len;
}

/* The stamp with the hash of the bytes read, when they are the file's
 * first then.size bytes (anything else: no hash, and growth is a change). */
static rf_file_stamp with_sum(const struct watched *w)
{
    rf_file_stamp s = w->then;
    const uint64_t len = w->whole ? w->whole_len : w->read.len;
    if (len == (uint64_t)s.size) {
        s.sum = w->whole ? rfi_bytesum_finish(w->whole_sum, len) : rfi_bytesum_value(&w->read);
        s.summed = 1;
    }
    return s;
}

int rfi_watch_check(const struct watch *wl, rf_engine_error *err)
{
    for (size_t i = 0; i < wl->n; i++) {
        const struct watched *w = &wl->w[i];
        const rf_file_stamp then = with_sum(w);
        if (rf_file_snapshot_changed(&then, w->fd, w->name))
            return rfi_engine_fail(err, RF_EIO, RF_ENGINE_OP_CHANGED, w->name, 0);
    }
    return 0;
}

void rfi_watch_free(struct watch *wl)
{
    for (size_t i = 0; i < wl->n; i++)
        free(wl->w[i].name);
    free(wl->w);
    *wl = (struct watch){0};
}
