/* report.c -- what a run tells its caller: errors, progress, and the sink's
 * start (engine_internal.h, riffle_engine.h). */
#include <stdio.h>
#include <string.h>

#include "engine_internal.h"

int rfi_engine_fail(rf_engine_error *err, rf_status st, rf_engine_op op, const char *path, int errnum)
{
    if (err->status != RF_OK)
        return 1; /* the first failure is the cause; later ones follow from it */
    err->status = st;
    err->op = op;
    err->err = errnum;
    err->line = 0;
    snprintf(err->path, sizeof err->path, "%s", path ? path : "");
    return 1;
}

int rfi_engine_nomem(rf_engine_error *err)
{
    return rfi_engine_fail(err, RF_ENOMEM, RF_ENGINE_OP_NONE, NULL, 0);
}

int rfi_engine_status(rf_engine_error *err, rf_status st)
{
    return rfi_engine_fail(err, st, RF_ENGINE_OP_NONE, NULL, 0);
}

void rfi_engine_phase(struct engine *e, rf_engine_phase ph, uint64_t total)
{
    e->phase = ph;
    e->phase_total = total;
    e->done = 0;
    if (e->progress)
        e->progress(e->progress_ctx, ph, 0, total);
}

/* done never passes a known total: the bytes read count the delimiters
 * given to unterminated inputs, which the total (the inputs' sizes) does
 * not. */
void rfi_engine_progress(struct engine *e, uint64_t done)
{
    if (e->phase_total && done > e->phase_total)
        done = e->phase_total;
    e->done = done;
    if (e->progress)
        e->progress(e->progress_ctx, e->phase, done, e->phase_total);
}

int rfi_engine_begin(struct engine *e, const void *header, size_t len, uint64_t records)
{
    const rf_engine_sink *s = e->sink;
    const int r = s->begin(s->ctx, header, len, records);
    return r ? rfi_engine_fail(e->err, RF_EIO, RF_ENGINE_OP_OUTPUT, NULL, r) : 0;
}

size_t rf_engine_error_message(const rf_engine_error *e, char *buf, size_t len)
{
    const char *reason = e->err > 0 ? strerror(e->err) : "failed";
    int n;
    switch (e->op) {
    case RF_ENGINE_OP_INPUT:
    case RF_ENGINE_OP_READ:
    case RF_ENGINE_OP_TEMP_FILE:
        n = snprintf(buf, len, "%s: %s", e->path, reason);
        break;
    case RF_ENGINE_OP_OUTPUT:
        n = snprintf(buf, len, "write error: %s", reason);
        break;
    case RF_ENGINE_OP_TEMP_DIR:
        n = snprintf(buf, len, "cannot create a temporary directory in %s: %s", e->path, reason);
        break;
    case RF_ENGINE_OP_CHANGED:
        n = snprintf(buf, len, "%s: file changed as we read it", e->path);
        break;
    case RF_ENGINE_OP_CSV:
        n = snprintf(buf, len, "%s: unterminated quote in the CSV record starting at line %llu",
                     e->path, (unsigned long long)e->line);
        break;
    case RF_ENGINE_OP_TEMP_REMOVE:
        n = snprintf(buf, len, "cannot remove the temporary directory %s", e->path);
        break;
    case RF_ENGINE_OP_NONE:
    default:
        n = e->status == RF_ENOMEM
                ? snprintf(buf, len, "memory exhausted")
                : snprintf(buf, len, "cannot shuffle: %s", rf_strerror(e->status));
        break;
    }
    return n < 0 ? 0 : (size_t)n;
}

int rfi_engine_csv_open(rf_engine_error *err, const char *path, uint64_t line)
{
    if (err->status != RF_OK)
        return 1;
    rfi_engine_fail(err, RF_EINVAL, RF_ENGINE_OP_CSV, path, 0);
    err->line = line;
    return 1;
}
