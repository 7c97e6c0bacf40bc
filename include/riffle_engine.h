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
 * Temporary files.  The external engine's bucket files, the spill file
 * of either engine (made at the first record too long to hold), and the
 * distributed gather's bucket files.  Where the temporary directory's file
 * system takes them they are unnamed (open(2) with O_TMPFILE): they have no
 * name in any directory, and the kernel frees them when the run closes them
 * or however the process ends, kill -9 included.  Where it refuses them (EOPNOTSUPP, EISDIR, EINVAL: vfat, some
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
 * CSV.  With o->csv, a record is a CSV record (riffle_io.h, "CSV
 * records"): it ends at a line feed outside double quotes, so a quoted
 * field may hold line feeds, and the record is shuffled, counted, split
 * and written whole, its bytes unchanged (a record ending in CR LF keeps
 * both).  Every engine and every count, split and header works on these
 * records as on lines; the order is the same function of the key and the
 * record number.  The delimiter must be '\n'.  Each input must end outside
 * quotes: an input whose last record leaves a quote open fails the run
 * (RF_EINVAL, RF_ENGINE_OP_CSV) with the line where that record starts,
 * before the sink has received anything but (perhaps) the header.  A CSV
 * record is held whole in memory while it is read (records too long to
 * hold are not put out of line as under "Memory").
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
    int csv;                     /* 1: the records are CSV records (riffle_io.h,
                                    "CSV records"), delim '\n': 0.  See "CSV". */
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
    RF_ENGINE_OP_CHANGED = 7,     /* the regular file `path` changed while the run used it */
    RF_ENGINE_OP_CSV = 8          /* the input `path` ends inside quotes: its last
                                     record, starting at line `line`, has an
                                     unterminated quote (RF_EINVAL) */
} rf_engine_op;

typedef struct rf_engine_error {
    rf_status status;
    rf_engine_op op;
    int err;                     /* errno value, or 0 */
    char path[4096];             /* the file, or "" */
    uint64_t line;               /* RF_ENGINE_OP_CSV: the line (from 1), else 0 */
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

/* The part of a record whose key has unit value u (riffle_sample.h
 * rf_keyhash_unit, read as u / 2^64): for N equal parts floor(u N / 2^64);
 * for percentages the part i with u / 2^64 in [c(i-1), c(i)), c(i) the
 * cumulative fraction (c(i) 2^64 rounded down; the last part takes the
 * rest).  So the part depends on the key's value and the spec only, and a
 * part holds its fraction of the keys in expectation (not of the records).
 * RF_EINVAL for counts (which keys fill a count depends on the others) or
 * an empty spec. */
RF_API RF_NODISCARD rf_status rf_split_part_of_unit(const rf_split *s, uint64_t u,
                                                    size_t *part);

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

/* ------------------------------------------------------------------------ */
/* Distributed runs                                                         */
/* ------------------------------------------------------------------------ */

/* One run cut into P parts (processes, machines, scheduler tasks) whose
 * outputs, concatenated in owner order, are byte for byte the output of
 * rf_engine_shuffle with the same options -- on any P.  docs/distributed.md
 * gives the reasoning; in short, the keyed order needs no communication to
 * key a record (k_i depends on its global number i alone) and owners take
 * ranges of the key space, so owner order is key order and equal keys never
 * meet in two owners.
 *
 * The steps, for parts r = 0 .. P-1 and owners d = 0 .. Q-1:
 *   1. every part counts its records (rf_engine_part_count); the exclusive
 *      scan of the counts gives each part its first record number;
 *   2. every part scatters its records as packets to their owners
 *      (rf_engine_scatter_*), in rounds of bounded size;
 *   3. every owner gathers the packets of every part (rf_engine_gather_*)
 *      and writes its records in order; one front end writes the header
 *      (rf_engine_header) before owner 0's records.
 *
 * The part cut.  The records after the header form a stream of B bytes
 * (every input's unterminated last record counted with the delimiter it is
 * given).  Part r of P is cut at c_r = floor(B * r / P): it holds the records
 * whose first byte lies in [c_r, c_(r+1)), a contiguous run of records.  A
 * record longer than B / P leaves the parts after its own empty; a part may
 * hold no record.  Every part reads the header records to know where B
 * starts, and the bytes of its own run (and the record it starts inside of,
 * to find its first boundary).
 *
 * Inputs.  As for rf_engine_shuffle, but each part reads only what it needs:
 * regular files (paths or descriptors, from the descriptor's current offset,
 * which is not moved) are mapped and read in place; any other descriptor (a
 * pipe) is read whole into memory by every call that opens the inputs.  The
 * same descriptor given twice is read once.  A regular input that changes
 * while it is used fails the call (RF_EIO, RF_ENGINE_OP_CHANGED) when that is
 * seen: at the end of rf_engine_part_count and of the scatter.
 *
 * The wire format (version 2).  What rf_engine_scatter_next gives an owner
 * is zero or more frames; all integers little-endian, varints unsigned
 * LEB128 (7 bits a byte, low group first, high bit set while more follow):
 *   frame:  "RFPK" | u32 version = 2 | u32 part | u32 parts | u32 owner |
 *           u32 owners | u32 delimiter | u32 0 | u64 records |
 *           u64 payload bytes | u64 first | u64 check | payload
 *   payload: records entries, each
 *           varint gap | the record's bytes, through its delimiter (an
 *           unterminated last record has its delimiter added)
 * Record numbers are global, from 0 after the header: an entry's number is
 * first + gap for the frame's first entry, and the previous entry's number
 * + 1 + gap after it (a scatter writes gap 0 for the first entry).  No key
 * is sent: the gather draws k_i again from the keyed order, and refuses a
 * record whose key is not its owner's.  The check is the key of record
 * number 2^64 - 1 of the run's keyed order: a function of the seed and the
 * generator that reveals neither, so packets of another seed or generator
 * are refused even with one owner.  On 50-byte lines this is about 1.02
 * bytes on the wire per input byte (one byte of gap per record while fewer
 * than 128 records for other owners lie between two of an owner's).  So
 * packets can travel through files or messages between machines of any
 * byte order.  A reader refuses another magic, version, delimiter or check
 * (RF_EINVAL); version 1 packets (a key, number and length of 8 bytes each
 * per record) are no longer read.
 *
 * Frames of references (rf_engine_scatter_refer), for an owner that reads
 * the inputs itself -- a process on the same machine, where sending the
 * bytes would only copy what both can map:
 *   frame:  as above, but magic "RFPR" and, in place of the u32 0, the
 *           inputs' identity (a 32-bit hash of each input's inode, size
 *           and modification time and of the stream's length and header;
 *           not the device, which machines sharing a file system number
 *           each their own way)
 *   payload: records entries, each
 *           varint gap | varint skip | varint length
 * A round takes references until the owner's frame holds room / 24 of
 * them (24 bytes of order: what each costs its owner), whatever their
 * bytes.  The gap numbers records as above.  A record starts `skip` bytes after
 * the previous entry's end in the logical stream (after the stream's start
 * for a frame's first entry: its offset), and has `length` bytes, its
 * delimiter included (an added one counted).  About 3 bytes a record
 * whatever its length.  A gather reads them only with the inputs given
 * (rf_engine_gather_inputs) and refuses another identity, a record outside
 * the inputs, in the header, across two inputs or past an input's last
 * delimiter (but an unterminated last record, whole), and a frame whose
 * first record (and each input's first in it) does not start after a
 * delimiter, or whose first or last does not end with one.  The bytes of
 * the records between are not read until the write: the references are
 * the scatter's, and a wrong skip or length moves every later record of
 * the frame, which its last one then shows (unless by whole records).
 *
 * The options of the three steps must be equal in rng, key, delim and header
 * (the gather uses rng and key for the keys and ties, and memory, tmpdir,
 * threads and the temp callback for itself; it learns the delimiter, as the
 * owner, from the first frame, and refuses frames that differ).  o->count is ignored by all of them: the front
 * end gives a count to rf_engine_gather_write, and for the whole run's first
 * K records sums rf_engine_gather_records over owners in order.  No progress
 * is reported (o->progress is not called): a front end counts rounds,
 * packets and records itself.  Every call is on the calling thread but the
 * gather's sort, which uses o->threads. */

/* Part `part` of `parts` (1 <= parts, part < parts): its record count and
 * its bytes (each record with its delimiter, an unterminated last record
 * counting the delimiter it is given; bytes may be NULL).  The first record
 * number of part r is the sum of the counts of parts 0 .. r-1.  Reads the
 * header records and the part's bytes.  Returns RF_OK, or (with *err filled
 * when err is not NULL) RF_EIO (an input failed, or changed), RF_ENOMEM,
 * RF_EINVAL (bad arguments, as rf_engine_shuffle's, or part >= parts). */
RF_API RF_NODISCARD rf_status rf_engine_part_count(const rf_engine_options *o,
                                                   const rf_engine_input *in, size_t n,
                                                   unsigned part, unsigned parts,
                                                   uint64_t *records, uint64_t *bytes,
                                                   rf_engine_error *err);

/* The o->header records' bytes, delimiters included (fewer records if the
 * inputs have fewer; *len 0 and *bytes NULL when there are none), in a
 * malloc'ed buffer to free().  Returns as rf_engine_part_count. */
RF_API RF_NODISCARD rf_status rf_engine_header(const rf_engine_options *o,
                                               const rf_engine_input *in, size_t n,
                                               void **bytes, size_t *len, rf_engine_error *err);

/* The owner of a key among `owners` (>= 1): floor(key * owners / 2^64).  A
 * range partition of the keys: a smaller key never has a larger owner. */
RF_API unsigned rf_engine_owner(uint64_t key, unsigned owners);

/* Scatter: the records of one part, keyed as record numbers first, first+1,
 * ... (first = the records of the parts before it), packed as frames for
 * their owners.  Files are opened and mapped by rf_engine_scatter_open;
 * inputs given as bytes must stay valid and unchanged until
 * rf_engine_scatter_close.  The options are not kept. */
typedef struct rf_engine_scatter rf_engine_scatter;

/* Open part `part` of `parts` for `owners` owners (1 <= owners; parts and
 * part as in rf_engine_part_count).  Returns RF_OK with *s set, or as
 * rf_engine_part_count (RF_ECRYPTO if libsodium cannot start). */
RF_API RF_NODISCARD rf_status rf_engine_scatter_open(rf_engine_scatter **s,
                                                     const rf_engine_options *o,
                                                     const rf_engine_input *in, size_t n,
                                                     unsigned part, unsigned parts,
                                                     uint64_t first, unsigned owners,
                                                     rf_engine_error *err);

/* The next round: for each owner d, out[d] and len[d] (arrays of `owners`
 * entries of the caller's) are its packets -- one frame, or nothing (len 0)
 * when no record of the round is its.  A round takes records in order until
 * the next one's entry would take its owner's frame past `room` bytes; a
 * record too large for room goes whole (records are never cut), as the only
 * entry of its owner's frame in that round, which is then larger than room.
 * The packets of a round are one buffer, owner d's at a fixed stride
 * (out[d] - out[0] = d * stride when both are non-empty), so a transport
 * can send them in place; they stay valid until the second call after it
 * (two buffers take turns, so one round can travel while the next is
 * packed) or rf_engine_scatter_close.
 * *done is set to 1 when the part has no record left after this round (an
 * empty part: at the first call); later calls give empty rounds.  Each owner
 * must receive its rounds in order; different owners' rounds are independent.
 * Returns RF_OK, or as rf_engine_part_count (RF_ECRYPTO; RF_EIO at the end if
 * an input changed). */
RF_API RF_NODISCARD rf_status rf_engine_scatter_next(rf_engine_scatter *s, size_t room,
                                                     const void **out, size_t *len, int *done,
                                                     rf_engine_error *err);

/* Owner `owner` reads the inputs itself (the same files, as
 * rf_engine_gather_inputs opens them): its frames carry references to its
 * records ("Frames of references") instead of their bytes.  Call before
 * the first rf_engine_scatter_next, once per such owner.  Returns RF_OK;
 * RF_EINVAL (owner out of range or the local lane's, records already
 * handed out, or an input that is not a regular file: a pipe or bytes in
 * memory, which another process cannot read); RF_ENOMEM. */
RF_API RF_NODISCARD rf_status rf_engine_scatter_refer(rf_engine_scatter *s, unsigned owner,
                                                      rf_engine_error *err);

/* Records of the part handed out so far, and in all (known from the open). */
RF_API uint64_t rf_engine_scatter_records(const rf_engine_scatter *s, uint64_t *total);

/* Records of the part handed to the local lane so far (rf_engine_scatter_local),
 * and their bytes (delimiters included): what did not travel. */
RF_API uint64_t rf_engine_scatter_kept(const rf_engine_scatter *s, uint64_t *bytes);

/* Unmap and free everything; s may be NULL. */
RF_API void rf_engine_scatter_close(rf_engine_scatter *s);

/* Gather: one owner's packets from every part, put in the keyed order and
 * written.  Records are held in memory up to about o->memory (the packets
 * as they came, parsed in place, and 24 bytes per record for the order);
 * beyond it, everything held is spilled to bucket files
 * (ranges of this owner's keys) in o->tmpdir ($TMPDIR, /tmp): temporary
 * files as rf_engine_shuffle makes them ("Temporary files": unnamed where
 * the file system allows, else or with o->named_temps in a fresh directory
 * riffle-XXXXXX announced through o->temp).  Each bucket file keeps a
 * descriptor open until the bucket is split or the gather is closed (the
 * soft limit of open files is raised to the hard one).  At the first rf_engine_gather_bytes
 * or _write the buckets are ordered one at a time (one still larger than the
 * budget is split again by its keys).  Every temporary file is removed by
 * rf_engine_gather_close, and on a failure as soon as it happens.  The order
 * inside an owner: by key, ties by rf_keyed_sort's rule with the record
 * numbers as input order -- the packets' order, since parts hold increasing
 * runs of record numbers. */
typedef struct rf_engine_gather rf_engine_gather;

/* Open an owner's gather for packets from `parts` parts (>= 1).  The owner
 * is learnt from the packets.  o->tmpdir and o->temp_ctx are kept: they must
 * stay valid until rf_engine_gather_close.  Returns RF_OK with *g set,
 * RF_EINVAL, RF_ENOMEM, RF_ECRYPTO. */
RF_API RF_NODISCARD rf_status rf_engine_gather_open(rf_engine_gather **g,
                                                    const rf_engine_options *o, unsigned parts,
                                                    rf_engine_error *err);

/* Add packets[0..len) from part from_part: whole frames (any number, len 0
 * included), each part's in the order its scatter made them; parts may come
 * in any interleaving.  The bytes are copied (once, into the gather's
 * buffers, where they are then held).  Returns RF_OK; RF_EINVAL for
 * packets that are not whole version-2 frames from that part for this
 * gather's parts, owner, delimiter and keyed order (another owner's,
 * another seed's, a key outside the owner's range, record numbers not
 * increasing), or after the first _bytes or _write; RF_ENOMEM; RF_EIO when
 * a spill fails (temporary directory or file).  After a failure the gather
 * can only be closed. */
RF_API RF_NODISCARD rf_status rf_engine_gather_add(rf_engine_gather *g, unsigned from_part,
                                                   const void *packets, size_t len,
                                                   rf_engine_error *err);

/* As rf_engine_gather_add, but the packets are not copied: they are parsed
 * where they lie and the records ordered and written from there, so the
 * caller keeps packets[0..len) valid and unchanged until
 * rf_engine_gather_close (a mapped packet file: `riffle gather`).  They
 * count in the budget as copies would, and a spill copies their records to
 * the bucket files (after which the gather reads them no more).  Returns
 * as rf_engine_gather_add. */
RF_API RF_NODISCARD rf_status rf_engine_gather_hold(rf_engine_gather *g, unsigned from_part,
                                                    const void *packets, size_t len,
                                                    rf_engine_error *err);

/* The run's inputs, for frames of references: in[0..n) opened and mapped
 * as rf_engine_scatter_open does (the same files; o as the scatter's), so
 * that a record sent by reference is held where it lies in them and
 * written from there -- copied by nobody before the write.  Those records
 * count in the budget at their 24 bytes of order alone (their bytes are
 * the page cache's, shared with every process that maps the files); a
 * spill copies them to the bucket files as any other.  At the end of
 * rf_engine_gather_write the inputs are checked again: one changed since
 * this call fails it (RF_EIO, RF_ENGINE_OP_CHANGED).  Call before adding
 * frames of references (they are refused without it).  Returns RF_OK;
 * RF_EINVAL (called twice or after the adding, or an input that is not a
 * regular file); RF_EIO, RF_ENOMEM as rf_engine_scatter_open. */
RF_API RF_NODISCARD rf_status rf_engine_gather_inputs(rf_engine_gather *g,
                                                      const rf_engine_options *o,
                                                      const rf_engine_input *in, size_t n,
                                                      rf_engine_error *err);

/* An owner that reads every record itself, with no scatter: for owners
 * that can all map the whole input -- the processes of one machine, whose
 * page cache holds it once.  Owner `owner` of `owners` (owner < owners)
 * walks the input once, finding its records and drawing every record's
 * key, and keeps the records whose keys are its range, ordered as their
 * offsets in the mapping (on o->threads threads): 8 bytes per kept record
 * beside the mapping, 24 while they are ordered, which must fit o->memory
 * (RF_ENOMEM otherwise; there is no spill).  The inputs must be one
 * regular file (a path or a descriptor).  The gather returned is filled:
 * rf_engine_gather_records, _bytes (k below the records reads the first k
 * records' ends; the total is known), _write (from the mapping; the
 * input's stamp -- size, times, inode -- is checked again at its end:
 * RF_EIO, RF_ENGINE_OP_CHANGED), _owner and _close work as for any gather;
 * adding to it is refused (RF_EINVAL).  Each owner finds every delimiter
 * and draws every key of the input, where a scatter and a gather split
 * that work P ways; nothing is framed, sent, parsed or held but the order.
 * The output is the same as through packets.  o as for the other steps
 * (rng, key, delim, header; memory, threads).  Returns RF_OK with *g set,
 * RF_EINVAL (bad arguments, other inputs than one regular file, CSV),
 * RF_EIO (the input), RF_ENOMEM, RF_ECRYPTO. */
RF_API RF_NODISCARD rf_status rf_engine_gather_direct(rf_engine_gather **g,
                                                      const rf_engine_options *o,
                                                      const rf_engine_input *in, size_t n,
                                                      unsigned owner, unsigned owners,
                                                      rf_engine_error *err);

/* Receiving without a copy: memory of the gather's own, `len` bytes at
 * *buf, for a transport to receive packets into (MPI_Recv, read(2)...) and
 * then hand over with rf_engine_gather_recv, which parses them where they
 * lie and keeps them: the records are ordered and written from there.
 * Several buffers may be out at once (a pipelined transport receives one
 * round while the gather parses the last); a spill never frees one that
 * is out.  Buffers never handed over are freed by rf_engine_gather_close.
 * Returns RF_OK, RF_ENOMEM, RF_EINVAL (after a failure or the end of the
 * adding). */
RF_API RF_NODISCARD rf_status rf_engine_gather_buffer(rf_engine_gather *g, size_t len,
                                                      void **buf, rf_engine_error *err);

/* Hand over a buffer of rf_engine_gather_buffer (buf as it was given): it
 * holds the packets of part 0 (len[0] bytes), then of part 1 (len[1]), ...
 * of every part (len has `parts` entries, their sum at most the buffer's
 * size; 0 for a part with none).  As rf_engine_gather_add for each part in
 * turn, but in place; the buffer is the gather's from then on, whatever the
 * result (RF_EINVAL also for a buf that is not one given out). */
RF_API RF_NODISCARD rf_status rf_engine_gather_recv(rf_engine_gather *g, void *buf,
                                                    const size_t *len, rf_engine_error *err);

/* The local lane: a part and an owner in one process (riffle-mpi's rank r
 * is part r and owner r).  After this call, the scatter's records whose
 * owner is `owner` skip the packets: each goes straight into g, held where
 * it lies in the scatter's inputs -- not copied, not sent, its key not
 * drawn again -- and the scatter's frames for that owner stay empty.  The
 * output is the same as when the records travel.  Call it before the first
 * rf_engine_scatter_next, with g opened with the same options (rng, key,
 * delim, header) for the scatter's number of parts and not yet added to.
 * g's records then point into s's inputs: s must stay open until g is
 * closed, and it keeps its input pages mapped rather than giving them back
 * round by round.  Those records count in g's budget at their 16 bytes of
 * order alone (their bytes are the inputs'); a spill copies them to the
 * bucket files as any other.  Returns RF_OK, or RF_EINVAL (a NULL
 * argument, owner >= the scatter's owners, a scatter that already handed
 * out records or has a lane, a gather of another run, parts or owner, or
 * one already added to). */
RF_API RF_NODISCARD rf_status rf_engine_scatter_local(rf_engine_scatter *s, unsigned owner,
                                                      rf_engine_gather *g,
                                                      rf_engine_error *err);

/* The owner the packets were for, and of how many: 1 with *owner and
 * *owners set once a frame was added, else 0.  (A front end that knows
 * which owner it is checks it.) */
RF_API int rf_engine_gather_owner(const rf_engine_gather *g, unsigned *owner, unsigned *owners);

/* Records added so far (after the last add: the owner's records). */
RF_API uint64_t rf_engine_gather_records(const rf_engine_gather *g);

/* The temporary files the gather has made so far, named or unnamed (the
 * temp callback sees named ones only): for statistics. */
RF_API uint64_t rf_engine_gather_temp_files(const rf_engine_gather *g);

/* *bytes = the bytes of the first k records of this owner's order (k larger
 * than the records: all of them), what rf_engine_gather_write(g, k, ...)
 * writes -- for the offsets of a count or of split parts before anything is
 * written.  Ends the adding.  An in-memory gather orders its records once,
 * at its first _bytes or _write, and keeps the order for later calls; all
 * the records' bytes are counted as they come, so k >= the records costs no
 * pass over them.  Returns RF_OK, or as rf_engine_gather_write. */
RF_API RF_NODISCARD rf_status rf_engine_gather_bytes(rf_engine_gather *g, uint64_t k,
                                                     uint64_t *bytes, rf_engine_error *err);

/* Write the first `count` records (RF_ENGINE_ALL: all) of this owner's order
 * to sink: begin(ctx, "", 0, records) -- an empty header: the front end
 * writes it, once, before owner 0's records -- then the records as
 * rf_engine_shuffle gives them.  Ends the adding; may be called again (the
 * same records again).  Returns RF_OK, or RF_EIO (the sink, a temporary
 * file), RF_ENOMEM, RF_ECRYPTO, RF_EINVAL (a sink with NULL callbacks, a
 * gather that failed, parts whose record numbers overlap); the sink then
 * has part of the output, to discard. */
RF_API RF_NODISCARD rf_status rf_engine_gather_write(rf_engine_gather *g, uint64_t count,
                                                     const rf_engine_sink *sink,
                                                     rf_engine_error *err);

/* Remove every temporary file and free everything; g may be NULL. */
RF_API void rf_engine_gather_close(rf_engine_gather *g);

#ifdef __cplusplus
}
#endif

#endif /* RIFFLE_ENGINE_H */
