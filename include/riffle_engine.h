/*
 * riffle_engine.h -- the engine of libriffle: a stream of records (lines, or
 * NUL-terminated records) put in the keyed order at any scale, from files
 * larger than memory included, and written to a sink of the caller's.
 *
 * This header is the manual, as riffle.h is.  The `riffle` program's shuffle
 * is a client of it like any other: `riffle --seed=S FILE -o OUT` and a
 * program that calls rf_engine_shuffle with the key of seed S on FILE write
 * the same bytes.
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
 * overhead of 16 MiB (read and write buffers, threads' stacks and tables),
 * whatever the records -- one record larger than memory included: in the
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
 * failure, it discards.  A sink that cuts the output into parts (the
 * program's --split) changes writers at part boundaries; room says where. */
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
    uint8_t key[RF_KEY_BYTES];   /* its key (rf_seed_u64, rf_seed_string, rf_seed_os) */
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
