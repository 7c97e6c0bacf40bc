/* rf_split_part_of_unit: the part of a key by its unit value (riffle_engine.h).
 *
 * A split by key cuts [0, 1) rather than the output: part i takes the unit
 * values in [c(i-1), c(i)), c(i) the cumulative fraction of the spec, so a
 * key's part depends on its value and the spec only -- never on how many
 * records or keys the input holds.  (A count of keys has no such cut: which
 * keys make the first 1000 depends on the others, so counts are refused.)
 * Fractions of [0, 1) are fractions of keys in expectation, as with
 * scikit-learn's GroupShuffleSplit, which draws the parts' groups, not rows. */
#include "riffle_engine.h"

/* floor(c * 2^64 / d) for c <= d: where cumulative fraction c/d cuts. */
static uint64_t cut(uint64_t c, uint64_t d)
{
    const unsigned __int128 x = ((unsigned __int128)c << 64) / d;
    return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

static size_t percent_part(const rf_split *s, uint64_t u)
{
    const uint64_t whole = 100 * RF_SPLIT_PERCENT_UNIT;
    uint64_t c = 0;
    for (size_t i = 0; i + 1 < s->parts; i++) {
        c += s->value[i];
        if (c >= whole || u < cut(c, whole))
            return i;
    }
    return s->parts - 1;
}

rf_status rf_split_part_of_unit(const rf_split *s, uint64_t u, size_t *part)
{
    if (!s || s->parts == 0)
        return RF_EINVAL;
    switch (s->kind) {
    case RF_SPLIT_EQUAL: /* floor(u * N / 2^64) */
        *part = (size_t)(((unsigned __int128)u * s->parts) >> 64);
        return RF_OK;
    case RF_SPLIT_PERCENT:
        if (!s->value)
            return RF_EINVAL;
        *part = percent_part(s, u);
        return RF_OK;
    case RF_SPLIT_COUNTS:
        return RF_EINVAL;
    }
    return RF_EINVAL;
}
