/*
 * scan_ref.c -- the portable references for finding, counting and locating
 * delimiters (records_scan.h): memchr, which libc vectorises, one record at
 * a time.  Always built; the SIMD variants are held to these, and finish
 * their tails with them.
 */
#include <string.h>

#include "records_scan.h"

size_t rf_scan_ref_(const unsigned char *p, size_t len, unsigned char delim, uint64_t base,
                    uint64_t *out)
{
    size_t n = 0;
    const unsigned char *s = p, *end = p + len;
    const unsigned char *q;
    while (s < end && (q = memchr(s, delim, (size_t)(end - s))) != NULL) {
        out[n++] = base + (uint64_t)(q - p) + 1;
        s = q + 1;
    }
    return n;
}

size_t rf_count_ref_(const unsigned char *p, size_t len, unsigned char delim)
{
    size_t n = 0;
    const unsigned char *s = p, *end = p + len, *q;
    while (s < end && (q = memchr(s, delim, (size_t)(end - s))) != NULL) {
        n++;
        s = q + 1;
    }
    return n;
}

size_t rf_nth_ref_(const unsigned char *p, size_t len, unsigned char delim, size_t k)
{
    const unsigned char *s = p, *end = p + len, *q;
    while (s < end && (q = memchr(s, delim, (size_t)(end - s))) != NULL) {
        if (k-- == 0)
            return (size_t)(q - p);
        s = q + 1;
    }
    return len;
}
