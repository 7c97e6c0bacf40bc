/* engine_mem.c -- the in-memory engine (engine.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "engine.h"
#include "output.h"
#include "progress.h"
#include "reader.h"

int engine_fits(const struct engine *e, uint64_t bytes, uint64_t records)
{
    return bytes + 16 * records <= e->budget;
}

/* The first `head` records as complete records (the last input record may
 * lack its delimiter: then a copy with one).  *copy is to be freed. */
static int header_bytes(const rf_records *r, size_t head, unsigned char **copy,
                        const unsigned char **bytes, size_t *len)
{
    *copy = NULL;
    *bytes = r->data;
    *len = head < r->n ? (size_t)r->offs[head] : r->size;
    if (head == 0 || head < r->n || r->data[r->size - 1] == r->delim)
        return 0;
    if (!(*copy = malloc(r->size + 1)))
        return -1;
    memcpy(*copy, r->data, r->size);
    (*copy)[r->size] = r->delim;
    *bytes = *copy;
    *len = r->size + 1;
    return 0;
}

static size_t smaller(uint64_t a, size_t b)
{
    return a < b ? (size_t)a : b;
}

static rf_status stream_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    return rf_keyed_keys(ctx, first, out, n);
}

/* idx[j] = offs[idx[j]] for j < k: one random read each, prefetched. */
static void to_offsets(uint64_t *idx, size_t k, const uint64_t *offs)
{
    enum { AHEAD = 16 };
    for (size_t j = 0; j < k; j++) {
#if defined(__GNUC__)
        if (j + AHEAD < k)
            __builtin_prefetch(&offs[idx[j + AHEAD]], 0, 0);
#endif
        idx[j] = offs[idx[j]];
    }
}

int engine_memory(struct engine *e, rf_records *r)
{
    const size_t head = smaller(e->header, r->n);
    const size_t m = r->n - head;
    const size_t k = e->limited ? smaller(e->count, m) : m;
    unsigned char *copy;
    const unsigned char *hb;
    size_t hl;
    uint64_t *idx = NULL;
    int status = 1;
    if (header_bytes(r, head, &copy, &hb, &hl) != 0 ||
        !(idx = malloc((m ? m : 1) * sizeof *idx))) {
        cli_error("memory exhausted");
        goto done;
    }
    if (output_set_header(e->out, hb, hl) != 0 || output_set_total(e->out, k) != 0)
        goto done;
    if (e->progress)
        progress_phase(e->progress, "shuffle", 0);
    /* The order's keys are the keyed stream itself (items after the header). */
    const rf_status st = rf_keyed_index(&e->order, m, stream_keys, (void *)(uintptr_t)&e->order,
                                        e->threads, idx);
    if (st != RF_OK) {
        cli_error("cannot shuffle: %s", rf_strerror(st));
        goto done;
    }
    to_offsets(idx, k, r->offs + head);
    e->record_bytes = r->n ? r->size / r->n : 0;
    if (e->progress) {
        progress_done(e->progress);
        progress_phase(e->progress, "write", (uint64_t)k * e->record_bytes);
    }
    status = engine_emit(e, r, idx, k);
    if (e->progress)
        progress_done(e->progress);
done:
    free(copy);
    free(idx);
    return status;
}
