/* engine_emit.c -- the output of records in keyed order that every engine
 * shares (engine.h). */
#include "engine.h"
#include "output.h"
#include "progress.h"

/* Items written between progress updates. */
#define EMIT_STEP ((size_t)1 << 16)

int engine_emit(struct engine *e, const rf_records *r, const uint64_t *offs, size_t count)
{
    while (count > 0) {
        const uint64_t room = output_room(e->out);
        size_t k = room < count ? (size_t)room : count;
        if (k > EMIT_STEP)
            k = EMIT_STEP;
        if (k == 0)
            return 0; /* every planned record is out */
        rf_records_write(r, offs, k, output_writer(e->out));
        if (output_advance(e->out, k) != 0 || output_writer(e->out)->err)
            return 0; /* the error sticks; output_close reports it */
        offs += k;
        count -= k;
        if (e->progress)
            progress_update(e->progress, e->progress->done + k * e->record_bytes);
    }
    return 0;
}
