#include "scripted.h"

#include <string.h>

static uint64_t script_below(void *ctx, uint64_t n)
{
    rf_script *s = ctx;
    if (s->depth >= RF_SCRIPT_MAX_DRAWS) {
        s->error = 1;
        return 0;
    }
    if (s->depth < s->len) {
        /* Replaying the fixed prefix: a deterministic algorithm asks again for
         * the same bound. */
        if (s->bound[s->depth] != n)
            s->error = 1;
    } else {
        s->path[s->depth] = 0;
        s->bound[s->depth] = n;
        s->len = s->depth + 1;
    }
    return s->path[s->depth++];
}

void rf_script_init(rf_script *s)
{
    memset(s, 0, sizeof *s);
}

void rf_script_rng(rf_script *s, rf_rng *g)
{
    rf_source src = {NULL, script_below, s};
    s->depth = 0;
    if (rf_rng_from_source(g, &src) != RF_OK)
        s->error = 1;
}

int rf_script_next(rf_script *s)
{
    if (s->depth != s->len)
        s->error = 1; /* the run stopped early on a path that went deeper before */
    size_t len = s->depth;
    while (len > 0 && s->path[len - 1] + 1 >= s->bound[len - 1])
        len--;
    if (len == 0)
        return 0;
    s->path[len - 1]++;
    s->len = len;
    s->depth = 0;
    return 1;
}

uint64_t rf_script_den(const rf_script *s)
{
    uint64_t den = 1;
    for (size_t i = 0; i < s->depth; i++)
        den *= s->bound[i];
    return den;
}

size_t rf_test_perm_rank(const size_t *p, size_t n)
{
    size_t rank = 0;
    for (size_t i = 0; i < n; i++) {
        size_t smaller = 0;
        for (size_t j = i + 1; j < n; j++)
            smaller += p[j] < p[i];
        rank = rank * (n - i) + smaller;
    }
    return rank;
}

uint64_t rf_test_factorial(unsigned n)
{
    uint64_t f = 1;
    for (unsigned i = 2; i <= n; i++)
        f *= i;
    return f;
}
