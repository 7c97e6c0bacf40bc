/* dist_run.h -- the identity of a run of the file transport (dist.h): what
 * each step records at the head of every file it writes in D, so that a
 * later step refuses files of another run, of other options or of inputs
 * that changed (docs/distributed.md, "What a run is").
 *
 * A run is: the inputs as they were counted (for each regular file its
 * size, modification time in nanoseconds and inode number), the number of
 * tasks, --header and the delimiter; packets and D/header add the generator
 * and a hash of the key.  The text is a function of these alone, so a task
 * run again on any machine writes the same bytes.  Layout (version 1), one
 * "name value" line each, in this order:
 *
 *   riffle run 1
 *   step count | packets | header
 *   tasks P
 *   header K
 *   delimiter newline | nul
 *   inputs N
 *   input file SIZE SECONDS.NANOSECONDS INODE   (or "input stream"), N times
 *   rng NAME, key HEX                          (packets and header)
 *   task I                                     (the scatter task that wrote it)
 *   owner J, first F                           (packets)
 *   references                                 (packets by reference only)
 *   direct                                     (no packets: see below)
 *   records R                                  (count and packets)
 *   end
 *
 * then, in packets, the library's frames as opaque bytes, and in D/header
 * the header records.  The bare line "references" marks packets whose
 * frames point into the inputs (`riffle scatter --by-reference`,
 * riffle_engine.h's "Frames of references") instead of holding the records:
 * their gather must be given the same FILEs.  It is optional, so the
 * layout's version stays 1: packets of the records' bytes are written as
 * before, and a riffle that predates the line refuses packets by reference
 * as not its own rather than reading them wrongly.  The bare line "direct"
 * marks a packet file that holds no frames at all (`riffle scatter
 * --direct`): its gather reads every record of the one input itself and
 * keeps its own (riffle_engine.h, rf_engine_gather_direct), so it too must
 * be given the FILE. */
#ifndef RIFFLE_DIST_RUN_H
#define RIFFLE_DIST_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "riffle.h"
#include "riffle_engine.h"

/* Bytes of the key's hash that a run records (BLAKE2b, never the key). */
#define DIST_KEY_HASH 16

enum dist_step { DIST_STEP_COUNT, DIST_STEP_PACKETS, DIST_STEP_HEADER };

/* One input as counted.  The device number is left out: on a shared file
 * system each machine numbers its mounts itself, while the inode number,
 * size and times come from the file system. */
struct dist_input_id {
    int regular; /* 0: a pipe or device, nothing to compare */
    uint64_t size, ino;
    int64_t mtime_sec;
    long mtime_nsec;
};

struct dist_run {
    enum dist_step step;
    uint64_t tasks, header;
    int zero; /* -z */
    size_t n_inputs;
    struct dist_input_id *inputs;
    rf_rng_kind rng;                      /* packets, header */
    unsigned char key[DIST_KEY_HASH];     /* packets, header: the key's hash */
    uint64_t task, owner, first, records; /* as the layout says */
    int refs;                             /* packets: by reference */
    int direct;                           /* packets: none, the gather reads the input */
};

/* The inputs' identities now (stat of each path, fstat of a descriptor),
 * into r->inputs (malloc'ed; dist_run_free).  Returns 0, or -1 after
 * "FILE: reason". */
int dist_run_stamp(struct dist_run *r, const rf_engine_input *in, size_t n);
/* The key's hash (BLAKE2b-128, personalised for this use).  0, or -1 after a
 * message. */
int dist_run_key(struct dist_run *r, const uint8_t key[RF_KEY_BYTES]);
void dist_run_free(struct dist_run *r);

/* The text of r (its step's lines), malloc'ed, in *text and *len.  0, or -1
 * after a message. */
int dist_run_text(const struct dist_run *r, char **text, size_t *len);
/* Parse the text at the head of bytes[0..len) into r (r->inputs malloc'ed
 * on success); *used = its length.  0; 1 when it is not a run's text of the
 * expected step (another step, version or garbage); -1 after "memory
 * exhausted". */
int dist_run_parse(const void *bytes, size_t len, enum dist_step step, struct dist_run *r,
                   size_t *used);

/* The first difference between the runs of two files, or of a file and this
 * step: with DIST_CMP_RUN in `what`, in what makes a run (tasks, header,
 * delimiter, inputs), with DIST_CMP_KEY in the generator and key.  For an
 * option, `what` is its name and the values read "--tasks=3" and
 * "--tasks=2"; for an input, `input` is its index, `what` says "input 2"
 * and the values "size 300" and "size 292". */
#define DIST_CMP_RUN 1
#define DIST_CMP_KEY 2
enum dist_diff_kind {
    DIST_SAME,
    DIST_DIFF_OPTION, /* --tasks, --header, -z, --rng */
    DIST_DIFF_KEY,    /* --seed or --random-source */
    DIST_DIFF_INPUTS  /* how many, or one's identity */
};
struct dist_diff {
    enum dist_diff_kind kind;
    size_t input; /* DIST_DIFF_INPUTS: the input, or SIZE_MAX for their number */
    char what[48], a[96], b[96];
};
enum dist_diff_kind dist_run_diff(const struct dist_run *a, const struct dist_run *b, int cmp,
                                  struct dist_diff *d);

/* The difference as an error: "PATH: VERB with A, but WHO has B: HINT"
 * ("D/count.1: counted with --tasks=2, but this scatter has --tasks=3:
 * ..."). */
void dist_run_refuse(const char *path, const char *verb, const char *who,
                     const struct dist_diff *d, const char *hint);

#endif
