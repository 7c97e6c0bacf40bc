/* engine_emit.c -- the output of records in keyed order that every engine
 * shares (engine.h). */
#include "engine.h"
#include "output.h"
#include "progress.h"

/* The write phase's progress within one call of the gather: `base` bytes
 * were reported before it. */
struct emit_progress {
    struct progress *p;
    uint64_t base, record_bytes;
};

static void on_progress(void *ctx, size_t done)
{
    const struct emit_progress *ep = ctx;
    progress_update(ep->p, ep->base + (uint64_t)done * ep->record_bytes);
}

/* Each part's records go to the threaded gather in one call, so its pipeline
 * fills once per part (not per progress step); progress comes from its
 * callback. */
int engine_emit(struct engine *e, const rf_records *r, const uint64_t *offs, size_t count)
{
    while (count > 0) {
        const uint64_t room = output_room(e->out);
        const size_t k = room < count ? (size_t)room : count;
        if (k == 0)
            return 0; /* every planned record is out */
        struct emit_progress ep = {e->progress, e->progress ? e->progress->done : 0,
                                   e->record_bytes};
        rf_records_write_threads(r, offs, k, output_writer(e->out), e->threads,
                                 e->progress ? on_progress : NULL, &ep);
        if (output_advance(e->out, k) != 0 || output_writer(e->out)->err)
            return 0; /* the error sticks; output_close reports it */
        offs += k;
        count -= k;
    }
    return 0;
}
