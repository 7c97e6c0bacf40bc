/* emit.c -- the output of records in keyed order that every engine shares
 * (engine_internal.h). */
#include "engine_internal.h"

/* The write phase's progress within one call of the gather: `base` bytes
 * were reported before it. */
struct emit_progress {
    struct engine *e;
    uint64_t base;
};

static void on_progress(void *ctx, size_t done)
{
    const struct emit_progress *ep = ctx;
    rfi_engine_progress(ep->e, ep->base + (uint64_t)done * ep->e->record_bytes);
}

/* The sink's error, if its writer or its advance failed. */
static int sink_failed(struct engine *e, int advanced)
{
    const int err = advanced ? advanced : e->sink->writer(e->sink->ctx)->err;
    return err ? rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_OUTPUT, NULL, err) : 0;
}

/* Each part's records go to the threaded gather in one call, so its pipeline
 * fills once per part (not per progress step); progress comes from its
 * callback. */
int rfi_engine_emit(struct engine *e, const rf_records *r, const uint64_t *offs, size_t count)
{
    const rf_engine_sink *s = e->sink;
    while (count > 0) {
        const uint64_t room = s->room(s->ctx);
        const size_t k = room < count ? (size_t)room : count;
        if (k == 0)
            return 0; /* every planned record is out */
        struct emit_progress ep = {e, e->done};
        rf_writer *w = s->writer(s->ctx);
        if (rf_records_write_threads(r, offs, k, w, e->threads,
                                     e->progress ? on_progress : NULL, &ep) != 0)
            return sink_failed(e, 0);
        const int advanced = s->advance(s->ctx, k);
        if (sink_failed(e, advanced))
            return 1;
        offs += k;
        count -= k;
    }
    return 0;
}
