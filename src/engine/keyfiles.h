/* keyfiles.h -- key-range bucket files: the buckets on disk of the external
 * engine (external.c) and of the distributed gather's spill (dist_gather.c).
 *
 * A set cuts a range of keys [lo, hi] into buckets of 2^shift keys each
 * (the last one may be shorter), at most 2^bits of them: bucket i holds the
 * keys k with (k - lo) >> shift == i.  Taken in order the buckets are the
 * keys in order, so a tie never crosses two, and the keyed order of a
 * bucket's entries depends on those entries alone (riffle.h, "Keyed order"):
 * ordering the buckets one by one gives the order of the whole range.  On
 * the full range [0, 2^64) a set of 2^bits buckets cuts by the top `bits`
 * bits of the key, and a bucket's child set by the next bits.
 *
 * Each bucket has up to RFI_KEYFILES_PER files, among the run's temporary
 * files (temp.h): unnamed where the file system allows (a kill -9 leaves
 * nothing), else the numbered files of a directory DIR/riffle-XXXXXX
 * announced to the temp callback.  A file lives through its descriptor: it
 * is created when the set's files are made (rfi_keyset_create) or at its
 * first write (rfi_keyfile_open), and closed, and unlinked if named, when
 * its bucket is dropped -- after it was ordered, or split -- or the set is
 * freed.  What is in the files is the user's: the external engine keeps a
 * bucket's records and their keys in two files, the gather one file of
 * (key, record) entries.
 *
 * A bucket too large to order under the budget (rfi_keyset_fits) is split:
 * rfi_keyset_split makes a child set over its keys, fanned out for its
 * size, into which the user scatters the bucket's entries again before
 * dropping the bucket's own files.  A bucket of RFI_KEYFILES_MIN_ORDER bytes
 * or less is ordered in memory whatever the budget.
 *
 * Errors are recorded in the engine's err (engine_internal.h) that
 * rfi_keyfiles_init was given; the gather points it at each call's own. */
#ifndef RF_ENGINE_KEYFILES_H
#define RF_ENGINE_KEYFILES_H

#include <stddef.h>
#include <stdint.h>

#include "temp.h"

struct engine;

/* Files per bucket at most. */
#define RFI_KEYFILES_PER 2
/* Buckets per set at most, as bits: 2^8 buckets of two files each stay well
 * inside the usual limit of 1024 open files. */
#define RFI_KEYFILES_MAX_BITS 8u
/* A bucket this small is ordered in memory whatever the budget: splitting
 * it again makes up to 512 files to save less memory than a scatter's own
 * buffers take, so below it a tiny budget would only make the run create
 * files without end. */
#define RFI_KEYFILES_MIN_ORDER ((uint64_t)64 << 10)

/* One temporary file: its number among the run's files and its descriptor
 * (-1: not created, or dropped).  size: the bytes rfi_keyfile_append wrote
 * (users that write at offsets keep their own count). */
struct rfi_keyfile {
    unsigned long id;
    int fd;
    uint64_t size;
};

struct rfi_keyset;

struct rfi_keybucket {
    struct rfi_keyfile f[RFI_KEYFILES_PER];
    struct rfi_keyset *child; /* split: its keys are in this set now */
    uint64_t records, bytes;  /* the user's counts of what its files hold */
};

struct rfi_keyset {
    uint64_t lo, hi;  /* the keys it covers */
    unsigned shift;   /* bucket of k: (k - lo) >> shift */
    unsigned n;       /* buckets */
    unsigned per;     /* files per bucket */
    struct rfi_keybucket b[];
};

/* A run's bucket files: its temporary files, opened at the first need. */
struct rfi_keyfiles {
    struct temps t;
};

/* Set up, not yet open: nothing is allocated or created. */
void rfi_keyfiles_init(struct rfi_keyfiles *k, struct engine *e);
/* Open the temporary files (temp.h) if not yet, after raising the soft
 * limit of open files to the hard one (a descriptor per bucket file, and
 * hundreds of them at a time, beside the caller's inputs and outputs).
 * Returns 0, or 1 with the error recorded. */
int rfi_keyfiles_open(struct rfi_keyfiles *k);
/* Remove every numbered file and the directory, and tell the temp
 * callback.  Call after the sets are freed.  Returns 0, or the first errno
 * value other than ENOENT. */
int rfi_keyfiles_close(struct rfi_keyfiles *k);

/* The fan-out, as bits, for `bytes` to order under `budget`: buckets of
 * about a third of the budget each (a bucket needs its bytes plus what its
 * order takes, and buckets vary in size), 2 to 2^RFI_KEYFILES_MAX_BITS of
 * them; the most when the size is unknown (0). */
unsigned rfi_keyfiles_fanout(uint64_t bytes, uint64_t budget);
/* The budget buckets are ordered under: `budget`, but at least
 * RFI_KEYFILES_MIN_ORDER. */
uint64_t rfi_keyfiles_order_budget(uint64_t budget);

/* A set over the keys [lo, hi] (lo <= hi) in at most 2^bits buckets
 * (1 <= bits <= RFI_KEYFILES_MAX_BITS), `per` files each, none created.
 * NULL if out of memory. */
struct rfi_keyset *rfi_keyset_new(uint64_t lo, uint64_t hi, unsigned bits, unsigned per);
/* Drop every file of s and of its child sets, and free them.  s may be
 * NULL. */
void rfi_keyset_free(struct rfi_keyfiles *k, struct rfi_keyset *s);

static inline unsigned rfi_keyset_bucket(const struct rfi_keyset *s, uint64_t key)
{
    return (unsigned)((key - s->lo) >> s->shift);
}

/* The first and last key of bucket i. */
uint64_t rfi_keyset_low(const struct rfi_keyset *s, unsigned i);
uint64_t rfi_keyset_high(const struct rfi_keyset *s, unsigned i);

/* Whether bucket i, needing `need` bytes of memory for `records` entries,
 * is ordered in memory under `budget` (else split): it fits the order
 * budget, or cannot be cut (one entry, or one key). */
int rfi_keyset_fits(const struct rfi_keyset *s, unsigned i, uint64_t need, uint64_t records,
                    uint64_t budget);

/* Bucket i, needing `need` bytes to order, split: a child set over its keys
 * with the fan-out for `need` under the order budget, `per` files a bucket
 * as s, none created, attached as s->b[i].child (which must be NULL).
 * Returns 0, or 1 with the error recorded. */
int rfi_keyset_split(struct rfi_keyfiles *k, struct rfi_keyset *s, unsigned i, uint64_t need,
                     uint64_t budget);

/* Create every file of every bucket of s (the files open first).  Returns
 * 0, or 1 with the error recorded (those made stay until dropped). */
int rfi_keyset_create(struct rfi_keyfiles *k, struct rfi_keyset *s);
/* Close bucket b's files, unlinking named ones: its entries are ordered,
 * or in its child set.  Its child set stays. */
void rfi_keybucket_drop(const struct rfi_keyfiles *k, struct rfi_keybucket *b);

/* Create file f if it is not yet (the files open first).  Returns 0, or 1
 * with the error recorded. */
int rfi_keyfile_open(struct rfi_keyfiles *k, struct rfi_keyfile *f);
/* Append p[0..len) to f (created if need be) at f->size.  Returns 0, or 1
 * with the error recorded. */
int rfi_keyfile_append(struct rfi_keyfiles *k, struct rfi_keyfile *f, const void *p, size_t len);
/* Read f's bytes [at, at + len) into p, all of them.  Returns 0, or 1 with
 * the error recorded (EIO for a file shorter than that). */
int rfi_keyfile_read(const struct rfi_keyfiles *k, const struct rfi_keyfile *f, void *p,
                     size_t len, uint64_t at);
/* Record a failure (an errno value) of f; returns 1. */
int rfi_keyfile_error(const struct rfi_keyfiles *k, const struct rfi_keyfile *f, int err);
/* f's name (PATH_MAX bytes), or for an unnamed file its directory: for
 * error details. */
void rfi_keyfile_name(const struct rfi_keyfiles *k, const struct rfi_keyfile *f, char *out);

#endif
