/*
 * riffle_engine.h -- the engine of libriffle: a stream of records (lines, or
 * NUL-terminated records) put in the keyed order at any scale, from files
 * larger than memory included, and written to a sink of the caller's.
 *
 * This header is the manual, as riffle.h is.  The `riffle` program's shuffle
 * is a client of it like any other: `riffle --seed=S FILE -o OUT` and a
 * program that calls rf_engine_shuffle with the key rf_seed_text(S) on FILE
 * write the same bytes; with --split=SPEC, the program writes what
 * rf_split_sink writes for the plan rf_split_parse(SPEC).
 *
 * The order.  Record i after the header (counting from 0 across every input)
 * gets the key k_i of the keyed order (riffle.h, "Keyed order"); the records
 * come out by increasing key, ties shuffled.  With a count K, the output is
 * the first K records of that order.  So the output is a function of the key,
 * the generator kind, the inputs' bytes, the delimiter, the header and the
 * count only: never of the memory budget, the thread count, the temporary
 * directory, or which engine ran.
 *
 * Engines, chosen here from the inputs, the budget and the count:
 *  - streamed head: with a count K of at most 2^22 records and at most one per
 *    256 bytes of the budget, one pass keeps the K smallest keys (O(K) memory;
 *    a pipe is never held);
 *  - in memory: the inputs fit in the budget (their bytes plus 8 per record),
 *    a single regular file mapped, anything else read;
 *  - external: otherwise.  Records are scattered by the top bits of their keys
 *    into temporary bucket files (see "Temporary files"), then each bucket is
 *    ordered in memory in turn (a bucket still too large is scattered again
 *    by the next bits; one of 64 KiB or less is ordered in memory whatever
 *    the budget, so any budget finishes).  The scatter's buffers take a few
 *    MiB beside the budget.
 *
 * Memory.  A run's peak memory stays within the budget plus a fixed
 * overhead of 16 MiB (read and write buffers, threads' stacks and tables;
 * beyond 8 threads, about 1.5 MiB more per thread for the ordering's
 * tables), whatever the records -- one record larger than memory included: in the
 * external engine and the streamed head, a record that reaches a sixteenth
 * of the budget (but at least 256 KiB and at most 16 MiB) before its
 * delimiter is never held.  Its bytes are copied, a read at a time, to a
 * spill file among the temporary files, and only a one-byte stand-in is
 * kept (in its bucket, or among the head's records); when its turn comes it
 * is copied from the spill file to the sink 1 MiB at a time.  So an endless
 * record (`/dev/zero`) ends as an out-of-space error of the temporary
 * directory.  Not covered: the `header` records, which go to the sink's
 * begin in one piece and are held whatever their length.
 *
 * Temporary files.  The external engine's bucket files, and the spill file
 * of either engine (made at the first record too long to hold).  Where the
 * temporary directory's file system takes them they are unnamed (open(2)
 * with O_TMPFILE): they have no name in any directory, and the kernel frees
 * them when the run closes them or however the process ends, kill -9
 * included.  Where it refuses them (EOPNOTSUPP, EISDIR, EINVAL: vfat, some
 * network file systems, kernels before 3.11), or the options ask
 * (named_temps), they are the numbered files of a fresh directory
 * DIR/riffle-XXXXXX, announced to the temp callback; those a process killed
 * by SIGKILL leaves behind are for the caller to remove.
 *
 * Records.  A record is the bytes up to and including the delimiter; every
 * input's last record is a record even without its delimiter, and is written
 * with one.  Several inputs are one stream, in order.  The first `header`
 * records of the stream are written first, unshuffled.
 *
 * Errors.  Nothing here prints, aborts, or touches signal dispositions.  A
 * failed call returns its rf_status and fills an rf_engine_error naming the
 * operation, the file and the errno value; rf_engine_error_message makes the
 * sentence.  Whatever happened, every temporary file and directory the call
 * made is removed before it returns.
 *
 * Threads.  One call uses up to `threads` threads of its own, all joined
 * before it returns; they block every asynchronous signal (riffle.h,
 * "Threads"), so a program's handlers run on its own threads.  Callbacks are
 * called on the calling thread.  Calls on different options, inputs and sinks
 * may run concurrently.
 */
#ifndef RIFFLE_ENGINE_H
#define RIFFLE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "riffle.h"
#include "riffle_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */
/* ------------------------------------------------------------------------ */

/* One input: a file to open (fd < 0, data NULL), an open descriptor (fd >= 0:
 * read to its end from its current offset, never closed, and left at its
 * end as read(2) would leave it -- the same descriptor given twice is read
 * once, as `cat - -` reads; a regular file is mapped), or bytes in memory
 * (data non-NULL, which must stay valid and unchanged during the call).  `name` is the file to open, and for the other
 * kinds the name that error details give. */
typedef struct rf_engine_input {
    const char *name;
    int fd;
    const void *data;
    size_t size;
} rf_engine_input;

/* Constructors for the three kinds. */
RF_API rf_engine_input rf_engine_input_path(const char *path);
RF_API rf_engine_input rf_engine_input_fd(int fd, const char *name);
RF_API rf_engine_input rf_engine_input_bytes(const void *data, size_t size, const char *name);

/* ------------------------------------------------------------------------ */
/* The sink                                                                 */
/* ------------------------------------------------------------------------ */

/* Where the records go.  The engine calls, in this order:
 *   begin(ctx, header, len, records) once: the header records' bytes (whole
 *     records, delimiters included; len may be 0) and how many records
 *     follow them;
 *   then, until every record is out: writer(ctx) for the writer that takes
 *     the next records, room(ctx) for how many it takes before the sink
 *     moves on (UINT64_MAX for no limit; 0 only when `records` are out), and
 *     after writing k <= room whole records into the writer, advance(ctx, k).
 * begin and advance return 0, or nonzero to stop the run: an errno value, or
 * -1 for a failure the sink reports itself.  A write error that sticks in the
 * writer's `err` stops the run as well.  The engine never flushes or closes
 * the sink: after a successful run the caller flushes and commits; after a
 * failure, it discards.  A sink that cuts the output into parts
 * (rf_split_sink, "Splits") changes writers at part boundaries; room says
 * where. */
typedef struct rf_engine_sink {
    int (*begin)(void *ctx, const void *header, size_t len, uint64_t records);
    rf_writer *(*writer)(void *ctx);
    uint64_t (*room)(void *ctx);
    int (*advance)(void *ctx, uint64_t records);
    void *ctx;
} rf_engine_sink;

/* The sink of one file descriptor: header and records written to fd through
 * buf[0..cap) (1 MiB is a good size).  Does not allocate.  s->sink is the
 * sink to pass; s must stay in place while it is used. */
typedef struct rf_fd_sink {
    rf_engine_sink sink;
    rf_writer w;
} rf_fd_sink;

RF_API void rf_fd_sink_init(rf_fd_sink *s, int fd, void *buf, size_t cap);
/* Write out what is buffered.  Returns 0 or the first write error's errno. */
RF_API RF_NODISCARD int rf_fd_sink_flush(rf_fd_sink *s);

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

/* Progress: `phase` began or went on; `done` of `total` bytes of it are done
 * (total 0: unknown).  The first call of a phase has done = 0. */
typedef enum rf_engine_phase {
    RF_ENGINE_READ = 1,    /* reading inputs into memory, or the head's pass */
    RF_ENGINE_SCATTER = 2, /* external: records to bucket files */
    RF_ENGINE_SHUFFLE = 3, /* ordering (external: and writing, bucket by bucket) */
    RF_ENGINE_WRITE = 4    /* in memory: writing the ordered records */
} rf_engine_phase;

typedef void rf_engine_progress_fn(void *ctx, rf_engine_phase phase, uint64_t done,
                                   uint64_t total);

/* Named temporary files (riffle_engine.h, "Temporary files"; never called
 * for unnamed ones): the directory `dir` exists and the numbered files
 * dir/0 .. dir/(files - 1) may exist in it.  Called when the directory is
 * made (files 0; with this thread's signals blocked, so that a handler sees
 * the directory only once the program has it) and again before each file is
 * created, so a program that removes them from a signal handler never
 * misses one; called with dir NULL once the directory and its files are
 * gone.  The path is valid during the call only.  Returns 0, or an errno
 * value to refuse (a program that cannot guard the path): the run then
 * removes what it made and fails with RF_EIO. */
typedef int rf_engine_temp_fn(void *ctx, const char *dir, unsigned long files);

/* Fields may be set directly after rf_engine_options_init. */
typedef struct rf_engine_options {
    rf_rng_kind rng;             /* generator of the keyed order: RF_RNG_CHACHA20 */
    uint8_t key[RF_KEY_BYTES];   /* its key (rf_seed_text, rf_seed_u64, rf_seed_os...) */
    unsigned char delim;         /* record delimiter: '\n' */
    uint64_t header;             /* records kept first, in place: 0 */
    uint64_t count;              /* records to output after the header: RF_ENGINE_ALL */
    uint64_t memory;             /* budget in bytes; 0: rf_engine_default_memory() */
    const char *tmpdir;          /* NULL: $TMPDIR when set and not empty, else /tmp */
    unsigned threads;            /* 0: one per online CPU */
    rf_engine_progress_fn *progress; /* may be NULL */
    void *progress_ctx;
    rf_engine_temp_fn *temp;     /* may be NULL */
    void *temp_ctx;
    int named_temps;             /* 1: named temporary files even where unnamed
                                    ones work (to test that path): 0 */
} rf_engine_options;

#define RF_ENGINE_ALL UINT64_MAX

/* The defaults above, with an all-zero key.  Does not allocate. */
RF_API void rf_engine_options_init(rf_engine_options *o);

/* The memory this process may use: the smallest of the physical memory, its
 * cgroup's memory limit (v2 memory.max, v1 memory.limit_in_bytes, parents
 * included) and RLIMIT_AS / RLIMIT_DATA; 0 when none of them says. */
RF_API uint64_t rf_engine_usable_memory(void);

/* The budget when options say 0: half of rf_engine_usable_memory(), or
 * 1 GiB when that is 0. */
RF_API uint64_t rf_engine_default_memory(void);

/* A budget as every front end writes it (the program's --memory=SIZE): an
 * integer of bytes with an optional suffix K, M, G or T (powers of 1024, either
 * case) and then an optional B or b, e.g. "4096", "512M", "2GB", "8kB"; or
 * "N%" (1 <= N <= 100), that percentage of rf_engine_usable_memory(), rounded
 * down.  Nothing else: no sign, space, fraction or "KiB", and zero is not a
 * budget.  Returns RF_OK with *bytes set; RF_EINVAL for anything else
 * (malformed, zero, a size over 2^64-1, a percentage giving 0 bytes);
 * RF_ERANGE for a well-formed "N%" when the usable memory is unknown
 * (rf_engine_usable_memory() is 0). */
RF_API RF_NODISCARD rf_status rf_engine_memory_parse(const char *text, uint64_t *bytes);

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* What failed. */
typedef enum rf_engine_op {
    RF_ENGINE_OP_NONE = 0,        /* see the status: RF_ENOMEM, RF_ECRYPTO, RF_EINVAL */
    RF_ENGINE_OP_INPUT = 1,       /* opening the input `path` */
    RF_ENGINE_OP_OUTPUT = 2,      /* the sink: err is what it returned, or its writer's error */
    RF_ENGINE_OP_TEMP_DIR = 3,    /* creating a temporary directory in `path` */
    RF_ENGINE_OP_TEMP_FILE = 4,   /* creating, writing or reading the temporary file `path` */
    RF_ENGINE_OP_TEMP_REMOVE = 5, /* removing the temporary directory `path` */
    RF_ENGINE_OP_READ = 6,        /* reading the input `path` (a directory: EISDIR) */
    RF_ENGINE_OP_CHANGED = 7      /* the regular file `path` changed while the run used it */
} rf_engine_op;

typedef struct rf_engine_error {
    rf_status status;
    rf_engine_op op;
    int err;                     /* errno value, or 0 */
    char path[4096];             /* the file, or "" */
} rf_engine_error;

/* The error as a sentence without the program name, e.g. "data.txt: No such
 * file or directory", "memory exhausted", "cannot create a temporary
 * directory in /tmp: Permission denied".  Writes at most len bytes, NUL
 * included; returns the length of the whole sentence (as snprintf). */
RF_API size_t rf_engine_error_message(const rf_engine_error *e, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Splits                                                                   */
/* ------------------------------------------------------------------------ */

/* A split cuts the n records after the header into consecutive parts: part i
 * holds records [b(i), b(i+1)) of the output, b(0) = 0 and b(parts) = n, and
 * every part starts with the header.  This is the program's
 * --split=SPEC --output-pattern=PATTERN, and the plan every front end uses,
 * so the same seed gives the same parts everywhere.  A spec is one of:
 *  - "N", N equal parts (1 <= N <= RF_SPLIT_MAX_PARTS): sizes differ by at
 *    most one, the larger first: with q = n / N and r = n % N,
 *    b(i) = i*q + min(i, r);
 *  - percentages, "80%,10%,10%" (each a decimal number with up to 9
 *    decimals, at most 100 before the point, then '%'; summing to exactly
 *    100): b(i) = round(n * c(i) / 100), c(i) the cumulative percentage,
 *    halves rounded up -- so the parts add up to n exactly;
 *  - counts, "1000,500,*" (decimal counts; the last may be '*', the rest):
 *    b(i) the cumulative counts.  Without '*' they must add up to n exactly,
 *    with '*' to at most n.
 * Parts are separated by commas; at most RF_SPLIT_MAX_PARTS of them. */

#define RF_SPLIT_MAX_PARTS 4096
/* Percentages are held exactly, in units of 10^-9 percent. */
#define RF_SPLIT_PERCENT_UNIT UINT64_C(1000000000)

typedef enum rf_split_kind {
    RF_SPLIT_EQUAL = 1,
    RF_SPLIT_PERCENT = 2,
    RF_SPLIT_COUNTS = 3
} rf_split_kind;

/* A parsed spec.  Fields are read-only; rf_split_free releases `value`. */
typedef struct rf_split {
    rf_split_kind kind;
    size_t parts;
    uint64_t *value; /* PERCENT: per part, in RF_SPLIT_PERCENT_UNITs; COUNTS:
                        per part (0 for '*'); EQUAL: NULL */
    int rest;        /* COUNTS: the last part is '*' */
} rf_split;

/* Why a spec, a total or a pattern was refused (with RF_EINVAL). */
typedef enum rf_split_problem {
    RF_SPLIT_OK = 0,
    RF_SPLIT_BAD_SPEC = 1,       /* not a spec (no detail) */
    RF_SPLIT_NO_PARTS = 2,       /* "0" */
    RF_SPLIT_TOO_MANY = 3,       /* more than RF_SPLIT_MAX_PARTS */
    RF_SPLIT_PERCENT_SUM = 4,    /* percentages summing to `sum` units, not 100% */
    RF_SPLIT_COUNTS_OVERFLOW = 5,/* counts summing to more than 2^64-1 */
    RF_SPLIT_COUNTS_DIFFER = 6,  /* no '*': counts sum to `sum`, but `total` records */
    RF_SPLIT_COUNTS_EXCEED = 7,  /* with '*': counts sum to `sum`, more than `total` */
    RF_SPLIT_PATTERN_WIDTH = 8,  /* a width of %d over 20 */
    RF_SPLIT_PATTERN_CONVERSION = 9, /* a conversion other than %d and %% */
    RF_SPLIT_PATTERN_TWO = 10,   /* more than one %d */
    RF_SPLIT_PATTERN_NONE = 11,  /* no %d (and a '%') */
    RF_SPLIT_NAMES_COUNT = 12,   /* a list of `names` names for `parts` parts */
    RF_SPLIT_NAME_EMPTY = 13,    /* an empty name in a list */
    RF_SPLIT_NAME_TWICE = 14     /* a name given twice in a list */
} rf_split_problem;

typedef struct rf_split_error {
    rf_split_problem problem;
    uint64_t sum;   /* PERCENT_SUM (units), COUNTS_DIFFER, COUNTS_EXCEED */
    uint64_t total; /* COUNTS_DIFFER, COUNTS_EXCEED: the records to split */
    size_t names;   /* NAMES_COUNT: the names listed */
    size_t parts;   /* NAMES_COUNT: the parts */
} rf_split_error;

/* Parse spec into *s.  Returns RF_OK, RF_ENOMEM, or RF_EINVAL with err (when
 * not NULL) saying why; on failure *s holds nothing to free. */
RF_API RF_NODISCARD rf_status rf_split_parse(rf_split *s, const char *spec,
                                             rf_split_error *err);
RF_API void rf_split_free(rf_split *s);

/* The plan for n records: b[0..parts] as above.  Returns RF_OK, or RF_EINVAL
 * (counts that do not fit n: RF_SPLIT_COUNTS_DIFFER or _EXCEED in err). */
RF_API RF_NODISCARD rf_status rf_split_bounds(const rf_split *s, uint64_t n, uint64_t *b,
                                              rf_split_error *err);

/* The parts' file names from pattern: a printf-like pattern with exactly one
 * %d (optionally %Wd or %0Wd, W <= 20; "%%" is a literal %), the parts
 * numbered from 0; or, if pattern has no '%', a comma-separated list of
 * exactly `parts` distinct, non-empty names.  On RF_OK *names is an array of
 * `parts` strings, freed by rf_split_names_free; else RF_ENOMEM, or RF_EINVAL
 * with err saying why. */
RF_API RF_NODISCARD rf_status rf_split_names(const char *pattern, size_t parts, char ***names,
                                             rf_split_error *err);
RF_API void rf_split_names_free(char **names, size_t parts);

/* Why, as the program says it after "invalid split 'SPEC': " or "invalid
 * output pattern 'PATTERN': ", e.g. "no parts", "the percentages add up to
 * 99.9%, not 100%", "3 names for 2 parts"; for the counts, "the counts add up
 * to 7, but 10 records are output".  The empty string for RF_SPLIT_BAD_SPEC
 * (and RF_SPLIT_OK).  Writes at most len bytes, NUL included; returns the
 * length of the whole sentence (as snprintf). */
RF_API size_t rf_split_error_message(const rf_split_error *e, char *buf, size_t len);

/* The sink of a split: the header into every part, and the records into the
 * parts' descriptors fds[0..parts), part i taking records [b(i), b(i+1)) of
 * the plan rf_split_bounds(split, records) for the `records` that begin
 * announces, all through buf[0..cap) (one buffer serves every part in turn:
 * parts are written one after another).  room() is what the current part
 * still takes; the sink moves to the next part, header first, when one is
 * full, and through any empty parts.  begin returns EINVAL with s->error
 * filled when the counts do not fit the records (RF_SPLIT_COUNTS_DIFFER or
 * _EXCEED: the run then fails with RF_EIO, RF_ENGINE_OP_OUTPUT), or ENOMEM.
 * A caller that breaks the protocol (records before begin, more than room)
 * gets EINVAL, left in the writer too.  `split` and `fds` are copied; the
 * sink allocates (the plan, a copy of the header): release it with
 * rf_split_sink_free.  s->sink is the sink to pass; s must stay in place
 * while it is used.
 *
 * After a successful run, rf_split_sink_finish starts the parts not reached
 * (an empty part is its header alone) and flushes; the descriptors are the
 * caller's to fsync and close.  So the program's --split writes, into its
 * staging files, exactly what this sink writes.  Fields may be read, never
 * written: `cur` is the part written last (after a write error, the failing
 * one), `done` the records written, `error` why begin refused. */
typedef struct rf_split_sink {
    rf_engine_sink sink;
    rf_writer w;
    rf_split split;          /* a copy; its `value` is owned */
    int *fds;
    unsigned char *buf;
    size_t cap;
    uint64_t *bounds;        /* b(0) .. b(parts), after begin */
    unsigned char *header;   /* a copy, after begin */
    size_t header_len;
    size_t cur;              /* the current part */
    int started;             /* part `cur` has its header */
    uint64_t total, done;    /* records announced and written */
    int planned;             /* begin succeeded */
    rf_split_error error;
} rf_split_sink;

/* Returns RF_OK, RF_ENOMEM, or RF_EINVAL (split NULL or without parts, fds
 * NULL, cap 0). */
RF_API RF_NODISCARD rf_status rf_split_sink_init(rf_split_sink *s, const rf_split *split,
                                                 const int *fds, void *buf, size_t cap);
/* Start every part not yet started, then flush.  Returns 0, EINVAL when
 * fewer records were written than begin announced (or begin never ran), or
 * the first write error's errno value (the part: s->cur). */
RF_API RF_NODISCARD int rf_split_sink_finish(rf_split_sink *s);
RF_API void rf_split_sink_free(rf_split_sink *s);

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

/* Write the records of inputs[0..n) (n may be 0: no records) in the keyed
 * order of o to sink.  Returns RF_OK, or (with *err filled, when err is not
 * NULL):
 *   RF_EIO     an input, the sink or a temporary file failed (err->op says
 *              which and whether opening or reading, err->err the errno
 *              value);
 *   RF_ENOMEM  an allocation failed;
 *   RF_ECRYPTO libsodium could not be initialised;
 *   RF_EINVAL  o, sink or an input is unusable (NULL callbacks, an unknown
 *              generator kind, n > 0 with inputs NULL).
 * A regular input whose size, modification or change time differs at the end
 * of the run from when it was opened fails the run (RF_EIO,
 * RF_ENGINE_OP_CHANGED): a file that shrinks or is rewritten while mapped
 * would otherwise give zeros or a mixture of old and new records.
 * After a failure the sink has received part of the output or none: discard
 * it.  Every temporary file is removed either way.  The key in o is copied
 * and the copy wiped before the return. */
RF_API RF_NODISCARD rf_status rf_engine_shuffle(const rf_engine_options *o,
                                                const rf_engine_input *inputs, size_t n,
                                                const rf_engine_sink *sink,
                                                rf_engine_error *err);

#ifdef __cplusplus
}
#endif

#endif /* RIFFLE_ENGINE_H */
