/* dist_internal.h -- the distributed runs of riffle_engine.h ("Distributed
 * runs"): the inputs as one random-access stream (dist_view.c), the wire
 * format's constants, and what the scatter and the gather share. */
#ifndef RF_ENGINE_DIST_INTERNAL_H
#define RF_ENGINE_DIST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "riffle_engine.h"
#include "watch.h"

/* Wire format, version 1 (riffle_engine.h). */
#define RFI_DIST_MAGIC "RFPK"
#define RFI_DIST_VERSION 1u
#define RFI_DIST_FRAME 40 /* frame header bytes */
#define RFI_DIST_ENTRY 24 /* entry header bytes: key, number, length */

static inline void rfi_put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void rfi_put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t rfi_get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t rfi_get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* One input in the logical stream: its bytes, where they start in the
 * stream, and whether a delimiter is added after them (an unterminated
 * last record). */
struct dist_seg {
    const unsigned char *p;
    uint64_t size;
    uint64_t at;
    int extra;
    int mapped;           /* p lies in a private read-only file mapping */
    uintptr_t released;   /* its pages below this address were given back */
};

/* The inputs as one stream of bytes: each input's bytes, followed by the
 * delimiter it lacks.  Regular files are mapped, other descriptors read
 * into memory, bytes used in place. */
struct dist_view {
    unsigned char delim;
    struct dist_seg *seg;
    size_t nseg;
    uint64_t total;    /* logical bytes */
    uint64_t hend;     /* the header records end here */
    void **maps;       /* mappings (size in map_len) or malloc'ed copies (map_len 0) */
    size_t *map_len;
    size_t nmaps;
    struct watch watch;
    rf_engine_error *err;
};

/* Open the inputs and find the header's end (o->header records).  Returns 0,
 * or 1 with the error recorded in *err (the view then closed). */
int rfi_dist_view_open(struct dist_view *v, const rf_engine_options *o,
                       const rf_engine_input *in, size_t n, rf_engine_error *err);
void rfi_dist_view_close(struct dist_view *v);
/* The mapped pages wholly before logical offset `upto` given back
 * (madvise MADV_DONTNEED), so that a part's pages do not stay resident once
 * read.  Safe on a private read-only file mapping: a page touched again is
 * read again from the file.  Copies in memory (pipes, the caller's bytes)
 * are kept. */
void rfi_dist_view_release(struct dist_view *v, uint64_t upto);
/* 0, or 1 with RF_ENGINE_OP_CHANGED recorded if a regular input changed. */
int rfi_dist_view_check(struct dist_view *v);

/* The logical byte range [*lo, *hi) of part `part` of `parts`. */
void rfi_dist_part_range(const struct dist_view *v, unsigned part, unsigned parts, uint64_t *lo,
                         uint64_t *hi);

/* Delimiters (= records) in the logical range [lo, hi). */
uint64_t rfi_dist_count(const struct dist_view *v, uint64_t lo, uint64_t hi);

/* The index of the segment holding logical byte `at` (at < total). */
size_t rfi_dist_seg_of(const struct dist_view *v, uint64_t at);

/* Check the options and inputs as rf_engine_shuffle does; 1 with RF_EINVAL
 * recorded if unusable. */
int rfi_dist_usable(const rf_engine_options *o, const rf_engine_input *in, size_t n,
                    rf_engine_error *err);

/* err itself, emptied, or *local if err is NULL. */
rf_engine_error *rfi_dist_err(rf_engine_error *err, rf_engine_error *local);

#endif
