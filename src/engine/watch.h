/* watch.h -- the inputs of a run, as they were when it read them, so that a
 * change while it ran is found before its output is committed. */
#ifndef RF_ENGINE_WATCH_H
#define RF_ENGINE_WATCH_H

#include <stddef.h>

#include "riffle_engine.h"
#include "riffle_io.h"

struct watched {
    char *name;
    int fd; /* the caller's descriptor (still open at the end), or -1 */
    rf_file_stamp then;
};

struct watch {
    struct watched *w;
    size_t n, cap;
};

/* Note the input `name` open as fd (the caller's descriptor if own is 0):
 * regular files only, as fstat finds them now.  Returns 0, or 1 with
 * RF_ENOMEM recorded in *err. */
int rfi_watch_add(struct watch *wl, int fd, int own, const char *name, rf_engine_error *err);

/* Whether every noted input still holds the bytes it had: 0, or 1 with
 * RF_EIO and RF_ENGINE_OP_CHANGED recorded for the first that changed
 * (shrank; a new modification or change time at the same size; grew with
 * other bytes in front).  A file that only grew, or a name that now means
 * another file, or none, is no change to what was read. */
int rfi_watch_check(const struct watch *wl, rf_engine_error *err);

void rfi_watch_free(struct watch *wl);

#endif
