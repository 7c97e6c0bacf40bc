/* bounds.h -- where the engine's records end: at each delimiter byte, or,
 * with CSV records (rf_engine_options.csv), at each line feed outside
 * double quotes (riffle_io.h, "CSV records").  Every place in the engine
 * that cuts records asks here, so that both kinds are cut one way.  Unless
 * a function takes `quoted`, p starts a record. */
#ifndef RF_ENGINE_BOUNDS_H
#define RF_ENGINE_BOUNDS_H

#include <stddef.h>
#include <stdint.h>

struct bounds {
    int csv;
    unsigned char delim; /* '\n' with csv */
};

/* Records ending in p[0..len). */
size_t rfi_bounds_count(struct bounds b, const unsigned char *p, size_t len);
/* The index of the byte that ends record k of p[0..len), or len. */
size_t rfi_bounds_nth(struct bounds b, const unsigned char *p, size_t len, size_t k);
/* rfi_bounds_nth where p[0] lies inside quotes when `quoted` (CSV). */
size_t rfi_bounds_nth_from(struct bounds b, const unsigned char *p, size_t len, size_t k,
                           int quoted);
/* base + i + 1 for every record end p[i], in order, into out; how many. */
size_t rfi_bounds_find(struct bounds b, const unsigned char *p, size_t len, uint64_t base,
                       uint64_t *out);
/* The whole records at the front of p[0..len): the index after the last
 * record end, 0 if none. */
size_t rfi_bounds_whole(struct bounds b, const unsigned char *p, size_t len);

#endif
