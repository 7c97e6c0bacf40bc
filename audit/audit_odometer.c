/*
 * audit_odometer.c -- the draw-tree odometer: run an algorithm once per
 * sequence of bounded draws.
 *
 * The generator is an rf_source whose `below` replays a path vector: the first
 * run answers 0 to every draw; after each run the deepest draw that can still
 * grow is incremented and every draw after it forgotten, so that the runs
 * visit each sequence (d_1, d_2, ...) with d_i in [0, b_i) exactly once, in
 * lexicographic order.  A sequence has probability 1/(b_1 b_2 ...).  This is
 * exact for any algorithm that is a function of its draws and makes finitely
 * many of them, including the library's own shuffles (riffle.h: every bounded
 * draw calls below(ctx, n) once, in order).  The audit's exact mode and the
 * library's exact fairness tests (tests/lib/scripted.c) both walk with it.
 */
#include <string.h>

#include "audit.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static uint64_t odometer_below(void *ctx, uint64_t n)
{
    audit_odometer *o = ctx;
    if (o->depth >= AUDIT_ODOMETER_MAX_DRAWS) {
        o->fault = AUDIT_ODOMETER_TOO_DEEP;
        return 0;
    }
    const size_t d = o->depth++;
    if (d < o->len) {
        /* Replaying the fixed prefix: an algorithm that is a function of its
         * draws asks again for the same bound. */
        if (o->bound[d] != n)
            o->fault = AUDIT_ODOMETER_NOT_FUNCTION;
        return o->path[d] < n ? o->path[d] : 0;
    }
    o->path[d] = 0;
    o->bound[d] = n;
    o->len = d + 1;
    return 0;
}

/* Raw words cannot be enumerated: an algorithm asking for one is refused. */
static uint64_t odometer_next64(void *ctx)
{
    ((audit_odometer *)ctx)->fault = AUDIT_ODOMETER_RAW_WORD;
    return 0;
}

void audit_odometer_init(audit_odometer *o)
{
    memset(o, 0, sizeof *o);
}

int audit_odometer_rng(audit_odometer *o, rf_rng *g)
{
    const rf_source src = {odometer_next64, odometer_below, o};
    o->depth = 0;
    return rf_rng_from_source(g, &src) == RF_OK ? 0 : -1;
}

int audit_odometer_check(audit_odometer *o)
{
    /* A run that stopped short of a path fixed by an earlier, deeper run. */
    if (o->fault == AUDIT_ODOMETER_OK && o->depth != o->len)
        o->fault = AUDIT_ODOMETER_NOT_FUNCTION;
    return o->fault;
}

int audit_odometer_den(const audit_odometer *o, audit_u128 *den)
{
    audit_u128 p = 1;
    for (size_t d = 0; d < o->depth; d++)
        if (__builtin_mul_overflow(p, (audit_u128)o->bound[d], &p))
            return -1;
    *den = p;
    return 0;
}

int audit_odometer_next(audit_odometer *o)
{
    if (audit_odometer_check(o) != AUDIT_ODOMETER_OK)
        return 0;
    size_t d = o->len;
    while (d > 0 && o->path[d - 1] + 1 >= o->bound[d - 1])
        d--;
    if (d == 0)
        return 0;
    o->path[d - 1]++;
    o->len = d;
    o->depth = 0;
    return 1;
}

const char *audit_odometer_problem(int fault)
{
    switch (fault) {
    case AUDIT_ODOMETER_OK: return "no problem";
    case AUDIT_ODOMETER_TOO_DEEP:
        return "a path has more than " STRINGIFY(AUDIT_ODOMETER_MAX_DRAWS) " draws";
    case AUDIT_ODOMETER_NOT_FUNCTION: return "the algorithm is not a function of its draws";
    default: return "the algorithm asks for raw words, not bounded draws";
    }
}
