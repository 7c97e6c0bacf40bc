/* dist_internal.h -- the distributed runs of riffle_engine.h ("Distributed
 * runs"): the inputs as one random-access stream (dist_view.c), the wire
 * format's constants, and what the scatter and the gather share. */
#ifndef RF_DIST_INTERNAL_H
#define RF_DIST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "riffle_engine.h"
#include "engine/watch.h"

/* Wire format, version 2 (riffle_engine.h, "The wire format"). */
#define RFI_DIST_MAGIC "RFPK"
/* A frame of references: the records' places in the inputs, which its
 * owner reads itself (riffle_engine.h, rf_engine_scatter_refer). */
#define RFI_DIST_REF_MAGIC "RFPR"
#define RFI_DIST_VERSION 2u
#define RFI_DIST_FRAME 64 /* frame header bytes */
#define RFI_DIST_VARINT_MAX 10 /* bytes of a 64-bit LEB128 varint */
/* The record number whose key is a frame's check field. */
#define RFI_DIST_CHECK_NUMBER UINT64_MAX

/* An unsigned LEB128 varint (7 bits a byte, low first, high bit: more
 * follow), as DWARF and protocol buffers write them. */
static inline size_t rfi_put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline size_t rfi_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* A varint in p[0..avail): its bytes, or 0 if it does not end there (or
 * takes more than 64 bits). */
static inline size_t rfi_get_varint(const unsigned char *p, size_t avail, uint64_t *v)
{
    uint64_t x = 0;
    *v = 0;
    for (size_t n = 0; n < avail && n < RFI_DIST_VARINT_MAX; n++) {
        const uint64_t bits = (uint64_t)(p[n] & 0x7f);
        if (n == RFI_DIST_VARINT_MAX - 1 && bits > 1)
            return 0;
        x |= bits << (7 * n);
        if (!(p[n] & 0x80)) {
            *v = x;
            return n + 1;
        }
    }
    return 0;
}

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

/* The identity of the inputs a frame of references points into: a hash of
 * each input's inode, size and modification time and of the stream's
 * length and header (not the device: machines sharing a file system number
 * its mount each their own way), so that a gather refuses references made
 * over other files.  0 with *id set, or 1 when an input is not a mapped
 * regular file (a pipe, bytes in memory: another process cannot read it). */
int rfi_dist_view_identity(const struct dist_view *v, uint32_t *id);

/* The mappings advised for access in any order (an owner reading records
 * by reference), not the part's sequential walk. */
void rfi_dist_view_random(struct dist_view *v);

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

/* The check field of the frames of a run with the keyed order o: the key
 * of record number RFI_DIST_CHECK_NUMBER, a function of the seed and the
 * generator that reveals neither (a gather refuses frames whose check is
 * not its own, so packets of another seed fail even with one owner). */
rf_status rfi_dist_check(const rf_keyed_order *o, uint64_t *check);

/* For tests: the gather's keys taken from keys(ctx, number) instead of the
 * keyed order (hand-built frames with ties on purpose; the check field is
 * then not checked).  Before the first add. */
typedef uint64_t (*rfi_dist_key_fn)(void *ctx, uint64_t number);
void rfi_dist_gather_keys(rf_engine_gather *g, rfi_dist_key_fn keys, void *ctx);
/* The same for a scatter (its owners, and the keys its local lane hands
 * over), before the first rf_engine_scatter_next. */
void rfi_dist_scatter_keys(rf_engine_scatter *s, rfi_dist_key_fn keys, void *ctx);

/* The local lane (rf_engine_scatter_local): part `part`'s records for this
 * gather handed over by a scatter of the same process.
 * rfi_dist_gather_lane checks that the scatter's run is the gather's (parts,
 * keyed order, check) and learns the owner; 1 if not.  `hold`: records are
 * held where they lie (the scatter keeps its input mapped), except one
 * without its delimiter in the input (an unterminated last record), which
 * is copied with it; else every record is copied into the gather's
 * buffers.  Each record comes by rfi_dist_gather_local: its bytes
 * rec[0..len), through its delimiter unless `added`, its key and number,
 * numbers increasing.  When held, a run of records (those between two
 * calls of rfi_dist_gather_local_end) must lie one after another in one
 * input's bytes, the other owners' records between them: ties find a
 * record's number by walking its run.  All return 0, or 1 with the error
 * recorded (the gather then failed). */
int rfi_dist_gather_lane(rf_engine_gather *g, unsigned part, unsigned parts, unsigned owner,
                         unsigned owners, unsigned char delim, const rf_keyed_order *order,
                         uint64_t check, int hold);
int rfi_dist_gather_local(rf_engine_gather *g, const unsigned char *rec, size_t len, int added,
                          uint64_t key, uint64_t number, rf_engine_error *err);
int rfi_dist_gather_local_end(rf_engine_gather *g, rf_engine_error *err);

/* err itself, emptied, or *local if err is NULL. */
/* An owner reading its records itself (dist_direct.c; riffle_engine.h,
 * rf_engine_gather_direct), which the gather wraps.  keys: tests' keys
 * (rfi_dist_gather_keys), or NULL for the keyed order's.  Open returns 0,
 * or 1 with the error in *err; write returns 0, or 1 with it in *err. */
struct rfi_direct;
int rfi_direct_open(struct rfi_direct **d, const rf_engine_options *o,
                    const rf_engine_input *in, size_t n, unsigned owner, unsigned owners,
                    rfi_dist_key_fn keys, void *kctx, rf_engine_error *err);
uint64_t rfi_direct_records(const struct rfi_direct *d);
void rfi_direct_bytes(struct rfi_direct *d, uint64_t k, uint64_t *bytes);
int rfi_direct_write(struct rfi_direct *d, uint64_t count, const rf_engine_sink *sink,
                     rf_engine_error *err);
void rfi_direct_close(struct rfi_direct *d);
/* rf_engine_gather_direct with the tests' keys. */
rf_status rfi_dist_gather_direct(rf_engine_gather **g, const rf_engine_options *o,
                                 const rf_engine_input *in, size_t n, unsigned owner,
                                 unsigned owners, rfi_dist_key_fn keys, void *kctx,
                                 rf_engine_error *err);

rf_engine_error *rfi_dist_err(rf_engine_error *err, rf_engine_error *local);

#endif
