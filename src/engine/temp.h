/* temp.h -- the engines' temporary files (riffle_engine.h, "Temporary
 * files"), and the spill file of out-of-line records (reader.h).
 *
 * Files are unnamed (O_TMPFILE, in the temporary directory itself) where the
 * file system takes them, else the numbered files 0, 1, ... of a fresh
 * directory DIR/riffle-XXXXXX, each announced to the temp callback before
 * it is created.  Either way a file lives through its descriptor: the
 * engines never reopen one by name. */
#ifndef RF_ENGINE_TEMP_H
#define RF_ENGINE_TEMP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "riffle_io.h"

struct engine;

struct temps {
    struct engine *e;
    char dir[PATH_MAX - 32]; /* room for "/" and a number in PATH_MAX */
    int ready;               /* rfi_temps_open succeeded */
    int made;                /* dir exists */
    int unnamed;             /* files are O_TMPFILE, in e->tmpdir: no dir */
    unsigned long files;     /* numbered files created so far */
};

/* Choose unnamed or named files (making the directory for the latter).
 * Returns 0, or 1 with the error recorded. */
int rfi_temps_open(struct temps *t, struct engine *e);
/* A new file, read-write: its number and descriptor.  Returns 0, or 1 with
 * the error recorded. */
int rfi_temps_create(struct temps *t, unsigned long *id, int *fd);
/* File `id`'s name (PATH_MAX bytes), or for an unnamed one the directory
 * it is in: for error details. */
void rfi_temps_name(const struct temps *t, unsigned long id, char *out);
/* Record a failure of file id (an errno value); returns 1. */
int rfi_temps_error(const struct temps *t, unsigned long id, int err);
/* Remove file id's name (nothing for an unnamed file). */
void rfi_temps_unlink(const struct temps *t, unsigned long id);
/* Remove every numbered file and the directory, then tell the temp
 * callback.  Returns 0, or the first errno value other than ENOENT. */
int rfi_temps_close(struct temps *t);

/* Ask for the hard limit of open files: the engines keep a descriptor
 * per temporary file they still need, hundreds at a time, beside the
 * caller's inputs and outputs. */
void rfi_raise_file_limit(void);

/* Write p[0..len) at offset `at` of fd.  Returns 0 or an errno value. */
int rfi_write_at(int fd, const void *p, size_t len, uint64_t at);

/* The spill file: made at the first out-of-line record (the temporary
 * files opened then if they are not yet), appended to. */
struct spill {
    struct temps *t;
    int fd;            /* or -1 */
    unsigned long id;
    uint64_t size;
};

void rfi_spill_init(struct spill *s, struct temps *t);
/* The reader's rfi_spill_fn; ctx is the struct spill. */
int rfi_spill_write(void *ctx, const unsigned char *p, size_t len);
/* One out-of-line record to the engine's sink, 1 MiB at a time: never more
 * of it in memory.  *stop: the sink takes no more records.  Returns 0, or
 * 1 with the error recorded. */
int rfi_spill_emit(struct spill *s, const struct spilled *sp, int *stop);
void rfi_spill_close(struct spill *s);

/* An out-of-line record among records in memory: its one-byte proxy (the
 * delimiter) at offset `proxy` stands for the bytes at `sp` of the spill. */
struct outline {
    uint64_t proxy;
    struct spilled sp;
};

/* The outline whose proxy is at `at` among outs[0..n) (sorted by proxy), or
 * NULL. */
const struct outline *rfi_outline_find(const struct outline *outs, size_t n, uint64_t at);

/* The records of r at offs[0..k) to the engine's sink, as rfi_engine_emit,
 * but those whose proxies outs[0..n) lists from the spill file.  Returns 0,
 * or 1 with the error recorded. */
int rfi_spill_emit_mixed(struct spill *s, const rf_records *r, const uint64_t *offs, size_t k,
                         const struct outline *outs, size_t n);

#endif
