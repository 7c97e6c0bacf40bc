/* watch.h -- the inputs of a run, as they were when it read them, so that a
 * change while it ran is found before its output is committed.  The run
 * feeds each input's bytes to its entry as it reads them (a hash,
 * records/bytesum.h), so that a file that only grew -- a log appended to
 * -- can be told at the end from one whose bytes read changed. */
#ifndef RF_ENGINE_WATCH_H
#define RF_ENGINE_WATCH_H

#include <stddef.h>

#include "records/bytesum.h"
#include "riffle_engine.h"
#include "riffle_io.h"

struct watched {
    char *name;
    int fd; /* the caller's descriptor (still open at the end), or -1 */
    rf_file_stamp then;
    struct rfi_bytesum read; /* the bytes read, fed in order */
    int whole;               /* or, for a mapped file, their sum taken whole: */
    uint64_t whole_sum, whole_len;
};

struct watch {
    struct watched *w;
    size_t n, cap;
};

/* Note the input `name` open as fd (the caller's descriptor if own is 0):
 * regular files only, as fstat finds them now.  *slot (when slot is not
 * NULL) is where to feed its bytes, or -1 for an input not noted.  Returns
 * 0, or 1 with RF_ENOMEM recorded in *err. */
int rfi_watch_add(struct watch *wl, int fd, int own, const char *name, long *slot,
                  rf_engine_error *err);

/* The next n bytes read from the input of `slot` (nothing for -1). */
void rfi_watch_feed(struct watch *wl, long slot, const unsigned char *p, size_t n);

/* All the bytes read from the input of `slot`, the first len of its file,
 * whose blocks sum to `sum` (rfi_bytesum_range over [0, len), in pieces). */
void rfi_watch_set_sum(struct watch *wl, long slot, uint64_t sum, uint64_t len);

/* Whether every noted input still holds the bytes it had: 0, or 1 with
 * RF_EIO and RF_ENGINE_OP_CHANGED recorded for the first that changed
 * (riffle_io.h, rf_file_snapshot_changed: shrank; a new modification or
 * change time at the same size; grew with other bytes in front than the
 * ones read -- or grew at all when they were not all fed).  A file that
 * only grew, or a name that now means another file, or none, is no change
 * to what was read. */
int rfi_watch_check(const struct watch *wl, rf_engine_error *err);

void rfi_watch_free(struct watch *wl);

#endif
