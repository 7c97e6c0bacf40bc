/* watch.c -- inputs that change while they are read (watch.h).  A mapped
 * file that shrinks inside its last page reads as zeros there, and one
 * rewritten in place mixes old and new records: neither raises a signal,
 * so the run compares each input with what it was when opened, as GNU tar
 * does before it says "file changed as we read it".  A file that only grew
 * is no change: the run read the bytes it stamped (riffle_io.h,
 * rf_file_snapshot_changed), as GNU shuf reads a growing log. */
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "engine_internal.h"
#include "watch.h"

int rfi_watch_add(struct watch *wl, int fd, int own, const char *name, rf_engine_error *err)
{
    rf_file_stamp then;
    if (rf_file_stamp_sum_fd(fd, &then) != 0 || !then.regular)
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
    wl->w[wl->n++] = (struct watched){copy, own ? -1 : fd, then};
    return 0;
}

int rfi_watch_check(const struct watch *wl, rf_engine_error *err)
{
    for (size_t i = 0; i < wl->n; i++) {
        const struct watched *w = &wl->w[i];
        if (rf_file_snapshot_changed(&w->then, w->fd, w->name))
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
