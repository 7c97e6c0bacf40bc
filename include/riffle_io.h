/*
 * riffle_io.h -- the records layer of libriffle: input bytes split into records,
 * buffered output, atomic replacement of an output file, and the temporary
 * files' directory and removal at a signal.
 *
 * This header is the manual, as riffle.h is.  It is what the `riffle` program
 * uses to read files, standard input and arguments, to write records in shuffled
 * order, and to make `-o FILE` safe even when FILE is also the input.
 *
 * Errors: the functions here that touch the operating system return 0 on
 * success or a positive errno value (ENOENT, EISDIR, ENOSPC, ENOMEM, ...), the
 * convention of the pthread functions, so the caller can print strerror(result).
 * The global errno is not part of the contract.  Nothing here prints or aborts.
 * Every function that returns such a value is declared RF_NODISCARD, so a
 * compiler that knows the attribute warns when a caller drops the result.
 * The one deliberate exception is the writer's append functions
 * (rf_writer_put and its kin): their first error sticks in the writer and is
 * returned again by rf_writer_flush, which is checked once at the end.
 *
 * Threads: every object is caller-owned; one object, one thread at a time
 * (but rf_removal_run, which a signal handler may call at any time).
 * Nothing here installs signal handlers or keeps process-wide state.
 * rf_records_write_threads() runs threads of its own, only during the call.
 */
#ifndef RIFFLE_IO_H
#define RIFFLE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "riffle.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Records                                                                  */
/* ------------------------------------------------------------------------ */

/* A set of records: all input bytes in one contiguous block, and after
 * rf_records_index() the start offset of every record.  A record is the bytes
 * up to (not including) the next delimiter byte; the last record of the block
 * may lack its delimiter (an unterminated last line) and is still a record.
 * Records may contain any byte except the delimiter (NUL bytes in lines, for
 * example); nothing limits their length.
 *
 * Storage: a single regular file added first is mapped with mmap(2) (read-only,
 * private) instead of being copied; anything else (pipes, terminals, a second
 * input, bytes) is read into one growing heap block.  After indexing, memory is
 * the input size plus 8 bytes per record (the offsets).
 *
 * Several inputs are concatenated; if an input does not end with the delimiter,
 * one is inserted before the next input is appended, so every input's last
 * record stays a record of its own.
 *
 * Fields `data`, `size`, `offs`, `n` and `delim` may be read; the others are
 * private. */
typedef struct rf_records {
    const unsigned char *data; /* input bytes [0, size) */
    size_t size;
    uint64_t *offs;            /* offs[i]: start of record i, i < n */
    size_t n;
    unsigned char delim;       /* '\n' for lines, '\0' for -z */
    unsigned char *buf_;       /* heap block (when not mapped) */
    size_t cap_;
    void *map_;                /* mmap(2) region (when mapped) */
    size_t map_len_;
    size_t offs_cap_;          /* bytes reserved for offs */
    size_t found_;             /* record starts found so far (in offs) */
    size_t scanned_;           /* bytes of data searched for delimiters */
    int lazy_;                 /* rf_records_defer_index: no search while reading */
    int csv_;                  /* rf_records_csv: CSV records */
    int quoted_;               /* CSV: scanned_ lies inside quotes */
} rf_records;

/* An empty set with delimiter `delim`.  Does not allocate. */
RF_API void rf_records_init(rf_records *r, unsigned char delim);

/* Reading into r will not search the bytes for delimiters as they arrive.
 * By default a read input is searched slice by slice while it is in cache,
 * so that rf_records_index costs nothing more; a program that finds records
 * its own way (the Delimiters functions below) and never asks for offs saves
 * that scan and the 8 bytes per record it writes.  rf_records_index still
 * works afterwards (one pass over everything).  Stays set across
 * rf_records_free. */
RF_API void rf_records_defer_index(rf_records *r);

/* The records are CSV records ("CSV records" below): a record ends at a
 * line feed outside double quotes, so one may span several lines.  The
 * delimiter must be '\n'.  Call it on an empty set; rf_records_index,
 * rf_records_length and the writers then cut records this way.  Stays set
 * across rf_records_free.  Reading checks nothing: whether an input leaves
 * a quote open is for the caller to ask (rf_csv_open_quote_line). */
RF_API void rf_records_csv(rf_records *r);

/* Append everything readable from fd (read until end of file; fd is not
 * closed).  A regular, non-empty file added to an empty set is mapped.
 * Returns 0, or an errno value: EISDIR for a directory, the read(2) error,
 * ENOMEM.  On error the set keeps what it held before the call.  Invalidates
 * offs (call rf_records_index again). */
RF_API RF_NODISCARD int rf_records_add_fd(rf_records *r, int fd);

/* rf_records_add_fd, but stop reading once the set holds `max` bytes or
 * more: then *more = 1 and fd is left positioned after the bytes read (the
 * caller may go on reading it; the set may end inside a record).  A regular
 * file is mapped only if it fits in `max`.  *more = 0 when fd reached its
 * end.  Errors as rf_records_add_fd. */
RF_API RF_NODISCARD int rf_records_add_fd_max(rf_records *r, int fd, size_t max, int *more);

/* Map fd, without reading it, if rf_records_add_fd would: when the set is
 * empty and fd is a regular, non-empty file at offset 0 (not, say, stdin
 * redirected from a file after another program read part of it).  Returns 1
 * when mapped (fd is then positioned at its end, as after
 * rf_records_add_fd); 0 when not -- mmap(2) failed, or any other input --
 * and then the set and fd's offset are as they were: read fd with
 * rf_records_add_fd or rf_records_add_fd_max.  For a program that bounds
 * the memory it holds: mapped bytes are the page cache's, not heap, so map
 * first and bound only what is read (rf_records_add_fd would fall back to
 * reading the whole file into the heap). */
RF_API int rf_records_map_fd(rf_records *r, int fd);

/* Append bytes[0..len) as one more input, copied: like rf_records_add_fd
 * of a file holding them (a delimiter is inserted first when the set does
 * not end with one).  Returns 0 or ENOMEM.  Invalidates offs. */
RF_API RF_NODISCARD int rf_records_add_bytes(rf_records *r, const void *bytes, size_t len);

/* Append one record: bytes[0..len) followed by the delimiter.  The bytes should
 * not contain the delimiter (if they do, they become several records).
 * Returns 0 or ENOMEM.  Invalidates offs. */
RF_API RF_NODISCARD int rf_records_add_record(rf_records *r, const void *bytes, size_t len);

/* Find the records: fills offs[0..n) and sets n.  One pass over the bytes
 * not yet searched (inputs that are read, not mapped, are searched slice by
 * slice as they arrive, while the bytes are still in cache).  Allocates the
 * offsets.  Returns 0 or ENOMEM.  Empty input has n = 0. */
RF_API RF_NODISCARD int rf_records_index(rf_records *r);

/* Length of the record starting at offset `off` (a value of offs), excluding
 * its delimiter. */
RF_API size_t rf_records_length(const rf_records *r, uint64_t off);

/* Release everything (unmapping or freeing) and leave an empty set with the
 * same delimiter.  Safe on an initialised, never-filled set. */
RF_API void rf_records_free(rf_records *r);

/* ------------------------------------------------------------------------ */
/* Inputs that change while they are read                                   */
/* ------------------------------------------------------------------------ */

/* A mapped file that shrinks inside its last page reads as zeros there, and
 * one rewritten in place mixes old and new records: neither raises a
 * signal.  A program that reads a file whole and then uses it takes its
 * stamp when it opens it and compares at the end, before it commits an
 * output, as GNU tar does before it says "file changed as we read it".  The
 * times are only as fine as the file system and the kernel's clock keep
 * them (often one clock tick, 1 to 10 ms, before Linux 6.13): a rewrite at
 * the same size within the tick of the file's last change goes unseen; a
 * change of size never does.  Fields are private. */
typedef struct rf_file_stamp {
    int regular; /* 0: not a regular file (a pipe, a device): nothing to compare */
    uint64_t dev, ino;
    int64_t size;
    int64_t mtime_sec, ctime_sec;
    long mtime_nsec, ctime_nsec;
    int summed;   /* sum holds a hash of the bytes [0, size): taken by
                     rf_file_stamp_sum_fd, or by the engine as it read
                     them; the library's own hash, kept within one run */
    int fresh;    /* changed so recently that the times may not show more */
    uint64_t sum;
} rf_file_stamp;

/* The stamp of the file open as fd (fstat(2)), not summed; `fresh` is set
 * (see RF_FILE_FRESH_SECONDS).  Returns 0 or its errno. */
RF_API RF_NODISCARD int rf_file_stamp_fd(int fd, rf_file_stamp *s);

/* The stamp of the file named path (stat(2), links followed).  Returns 0 or
 * its errno. */
RF_API RF_NODISCARD int rf_file_stamp_path(const char *path, rf_file_stamp *s);

/* 1 when `then` and `now` stamp the same regular file (device and inode)
 * and its size, modification time or change time differ; else 0.  A name
 * that has come to mean another file is no change to what was read. */
RF_API int rf_file_changed(const rf_file_stamp *then, const rf_file_stamp *now);

/* A file that only grows (a log being appended to) is a snapshot: its
 * bytes as stamped are still its first bytes, and a program that read only
 * those is exact for the file as it was.  Telling an append from a rewrite
 * needs the bytes themselves, not only the size and times: a file
 * truncated and rewritten longer has grown too.  rf_file_stamp_sum_fd
 * stamps as rf_file_stamp_fd does and adds a hash of the file's bytes
 * [0, size), read with pread(2) (the descriptor's offset is left as it
 * was; one extra pass over the file, from the page cache when it was just
 * read or is about to be).  Returns 0 or its errno.  The engine
 * (riffle_engine.h) takes no such pass: it hashes each regular input's
 * bytes as it reads them anyway, and compares at the end.
 *
 * The hash also closes the gap the times leave: a file whose modification
 * time is within RF_FILE_FRESH_SECONDS of the clock when it is stamped
 * could be rewritten at the same size within the same clock tick
 * (or FAT's two seconds) without a new time; such a file is read again and
 * compared at the check.  An older file cannot be written without a new
 * time, so the check reads it again only when it grew. */
#define RF_FILE_FRESH_SECONDS 3
RF_API RF_NODISCARD int rf_file_stamp_sum_fd(int fd, rf_file_stamp *s);

/* 1 when the bytes `then` stamped are no longer the file's first bytes:
 * the file open as fd (or, with fd < 0, named path) shrank, changed its
 * modification or change time at the same size, grew with other bytes in
 * front (compared by hash when `then` has one, else any growth counts as a
 * change), or, stamped fresh, holds other bytes at the same size and times;
 * 0 when it is unchanged, only grew, or is not the file stamped (a name
 * that came to mean another file, or none). */
RF_API int rf_file_snapshot_changed(const rf_file_stamp *then, int fd, const char *path);

/* ------------------------------------------------------------------------ */
/* Compressed formats                                                       */
/* ------------------------------------------------------------------------ */

/* The library reads records as bytes and no compressed format; a program
 * that decompresses (riffle does, with zlib and libzstd), or one that must
 * refuse what it would otherwise shuffle as bytes (riffle-mpi, riffle
 * scatter), tells the formats apart by their magic bytes with these. */
typedef enum rf_compression {
    RF_COMPRESSION_NONE = 0,
    RF_COMPRESSION_GZIP = 1, /* RFC 1952: 1f 8b */
    RF_COMPRESSION_ZSTD = 2  /* RFC 8878: a frame (28 b5 2f fd) or a skippable one (5X 2a 4d 18) */
} rf_compression;

/* Bytes enough to tell the formats apart. */
#define RF_COMPRESSION_MAGIC 4

/* The format whose magic number begins bytes[0..len); NONE otherwise.
 * *partial (when not NULL) is set when len is too short to tell but the
 * bytes begin a magic number. */
RF_API rf_compression rf_compression_sniff(const void *bytes, size_t len, int *partial);
/* "gzip", "zstd" or "none". */
RF_API const char *rf_compression_name(rf_compression c);
/* The format of the file named path, from its first bytes (a pipe with
 * nothing to read yet is NONE: the call never waits).  Returns 0 with *c
 * set, or the errno of opening or reading it. */
RF_API RF_NODISCARD int rf_compression_of_path(const char *path, rf_compression *c);

/* ------------------------------------------------------------------------ */
/* Delimiters                                                               */
/* ------------------------------------------------------------------------ */

/* The scans under rf_records_index, for programs that find records their own
 * way (streaming, or locating a few records without an offset per record).
 * 64 bytes at a time with SIMD where the CPU has it (AVX2, else SSE2 on
 * x86-64), memchr elsewhere; all give the same results. */

/* How many bytes of p[0..len) equal delim. */
RF_API size_t rf_delims_count(const void *p, size_t len, unsigned char delim);

/* The index in p of the delimiter that is k-th from 0 (k = 0: the first), or
 * len when p[0..len) holds k or fewer. */
RF_API size_t rf_delims_nth(const void *p, size_t len, unsigned char delim, size_t k);

/* For every delimiter p[i], in order, store base + i + 1 (where the next
 * record starts) in out; return how many.  out needs room for
 * rf_delims_count(p, len, delim) values. */
RF_API size_t rf_delims_find(const void *p, size_t len, unsigned char delim, uint64_t base,
                             uint64_t *out);

/* ------------------------------------------------------------------------ */
/* CSV records                                                              */
/* ------------------------------------------------------------------------ */

/* CSV records as RFC 4180 (section 2) cuts them: a line feed ends a record
 * unless it lies inside double quotes, so a quoted field may hold commas,
 * line feeds and carriage returns; a record ending in CR LF keeps its CR
 * among its bytes, as the LF is its delimiter.  Every double quote opens or
 * closes a quoted section: an escaped quote ("") closes and reopens at
 * once, so it needs nothing of its own.  This is exact for what RFC 4180
 * allows; a stray quote inside an unquoted field (which it does not allow)
 * opens a quoted section too, as in most fast CSV readers.  Fields are not
 * parsed: the delimiter between fields does not matter.
 *
 * The scans take p at the start of a record unless they take `quoted`
 * (whether p[0] lies inside quotes).  64 bytes at a time with AVX2 where
 * the CPU has it, memchr elsewhere; all give the same results. */

/* How many records end in p[0..len) (line feeds outside quotes), where
 * *quoted says whether p[0] is inside quotes; *quoted is then set for the
 * byte after p[len - 1].  A block read in pieces is counted piece by piece
 * this way.  At the end of an input, *quoted 1 means its last record has an
 * unterminated quote. */
RF_API size_t rf_csv_count(const void *p, size_t len, int *quoted);

/* The index of the line feed that ends record k (from 0) of p[0..len), p
 * starting a record; len when fewer than k + 1 records end there.  With
 * k = 0: the length of the first record (without its delimiter). */
RF_API size_t rf_csv_nth(const void *p, size_t len, size_t k);

/* For every record end in p[0..len) (p starting a record), in order, store
 * base + i + 1 (where the next record starts, i the line feed) in out;
 * return how many.  out needs room for rf_csv_count(p, len, &zero) values
 * (at most the line feeds of p). */
RF_API size_t rf_csv_find(const void *p, size_t len, uint64_t base, uint64_t *out);

/* The bytes of the whole records at the front of p[0..len), p starting a
 * record: the index just after the last record end, 0 if none.  The rest,
 * p[result..len), is the start of a record still unfinished.  *quoted (may
 * be NULL) is set to whether p[len - 1] leaves a quote open. */
RF_API size_t rf_csv_whole(const void *p, size_t len, int *quoted);

/* Where an input's last record starts when it leaves a quote open: its line
 * (from 1) in p[0..len), the whole input, for the message "unterminated
 * quote in the record starting at line N".  0 when no quote is left open
 * (the input's records are all well formed). */
RF_API uint64_t rf_csv_open_quote_line(const void *p, size_t len);

/* ------------------------------------------------------------------------ */
/* Buffered output                                                          */
/* ------------------------------------------------------------------------ */

/* A write buffer in front of a file descriptor.  The buffer is the caller's
 * (so rf_writer_init never allocates); large writes (1 MiB or more) are what
 * make output cheap.  The first write error sticks in `err` and every later
 * call returns it without writing: check once at the end.  EINTR and short
 * writes are handled.  Fields are private except `err`. */
typedef struct rf_writer {
    int fd;
    unsigned char *buf;
    size_t len, cap;
    int err; /* 0 or the first errno value of a failed write */
} rf_writer;

/* Write to fd through buf[0..cap), cap >= 1. */
RF_API void rf_writer_init(rf_writer *w, int fd, void *buf, size_t cap);
/* Append bytes[0..len).  Returns w->err (0 when all is well).  The append
 * functions may be called without looking at their result: an error sticks
 * in w->err and rf_writer_flush returns it. */
RF_API int rf_writer_put(rf_writer *w, const void *bytes, size_t len);
/* Append one byte. */
RF_API int rf_writer_putc(rf_writer *w, unsigned char c);
/* Append the decimal form of v. */
RF_API int rf_writer_put_u64(rf_writer *w, uint64_t v);
/* Write out what is buffered.  Returns w->err: the check for everything
 * appended since rf_writer_init. */
RF_API RF_NODISCARD int rf_writer_flush(rf_writer *w);

/* Write the records starting at offs[0..count) of r, in that order, each
 * followed by r->delim (so an unterminated last record gets its delimiter).
 * Upcoming records are prefetched a few dozen ahead: with shuffled offsets
 * every record is a cache miss, and overlapping them is what makes the gather
 * fast.  Returns w->err. */
RF_API RF_NODISCARD int rf_records_write(const rf_records *r, const uint64_t *offs, size_t count,
                                         rf_writer *w);

/* Progress of rf_records_write_threads: the first `done` records of the call
 * are written (handed to the writer in order).  Called on the calling thread. */
typedef void rf_records_progress_fn(void *ctx, size_t done);

/* rf_records_write on `threads` threads (0: one per online CPU; 1: exactly
 * rf_records_write): the same bytes in the same order, only the write(2)
 * calls differ.  The records are cut into consecutive slices (about 512 KiB
 * of output each) that threads - 1 workers and the calling thread gather,
 * each into a buffer of its own; the calling thread writes the buffers in
 * order, straight from them (after flushing w; bytes it leaves in w's
 * buffer at the end stay there, as with rf_records_write), and gathers
 * whenever the next buffer is not ready.  offs may be any record starts of
 * r in any order, repeats allowed; r and offs must not change during the
 * call.  Every shuffled record is a cache miss, and each core keeps its own
 * misses in flight: that is what threads buy here.
 *
 * Memory: two 1 MiB buffers per thread, allocated here and freed before the
 * return, whatever the record lengths: a record that does not fit in what is
 * left of a buffer is written by the calling thread with the rest of its
 * slice (one longer than w's buffer straight from r, as rf_records_write
 * does).  Small calls (under about 1 MiB of output), a failed allocation, or
 * no thread that could be started: the serial path, the same output.
 *
 * progress (may be NULL) is called with ctx on the calling thread after
 * each slice (every 2^16 records on the serial path), never after an error.
 * The first write error sticks in w->err; the workers then stop after their
 * current slice (at most a buffer's worth of work), and every worker has
 * ended when the function returns.  Returns w->err.
 *
 * Signals: workers block every signal except those a fault raises in the
 * faulting thread (SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS,
 * SIGABRT), so a program's SIGINT, SIGTERM and SIGHUP handlers run on its
 * own threads; every write, hence any SIGPIPE, is the calling thread's.  A
 * SIGBUS from a mapped input that shrank may arrive on a worker.
 *
 * Speed: measurements against rf_records_write are in riffle's
 * documentation (BENCHMARKS_CLI.md). */
RF_API RF_NODISCARD int rf_records_write_threads(const rf_records *r, const uint64_t *offs,
                                                 size_t count, rf_writer *w, unsigned threads,
                                                 rf_records_progress_fn *progress, void *ctx);

/* ------------------------------------------------------------------------ */
/* Atomic output file                                                       */
/* ------------------------------------------------------------------------ */

/* Replacing `path` atomically: output goes to a new temporary file in the same
 * directory (named ".riffle-XXXXXX"), which rf_atomic_commit() flushes to disk
 * (fsync) and renames over path.  Until then path is untouched, so a reader, a
 * crash, an error or a signal never sees a half-written file, and path may
 * safely be the input too.  The new file gets the old file's permission bits
 * (and owner and group, as far as the caller may set them), or 0666 minus
 * the umask when path is new.  An existing path is replaced only where
 * writing to it would be allowed: a file the caller may not write
 * (faccessat(2), effective IDs, access control lists included), or another
 * user's file in a sticky directory that is not the caller's, fails with
 * EACCES before anything is created, although the directory would let a
 * rename through.  A
 * symbolic link is followed: its target is replaced, the link kept; a
 * dangling link gets its target created (as open(2) with O_CREAT would).
 * If path, links followed, is not a regular file (a terminal, /dev/null,
 * /dev/full, a FIFO, a socket, or a descriptor named by /dev/stdout, /dev/fd/N
 * or /proc/self/fd/N that is one of those), it is opened and written in
 * place: renaming over it would replace the name, not write to what it names.
 * A socket, which open(2) refuses, is written through a duplicate of the
 * descriptor when path names one.  Fields are private except `fd`.
 *
 * Where the directory's file system takes it, the temporary file is unnamed
 * (O_TMPFILE): it has no name until rf_atomic_commit links it to path (or
 * links it as ".riffle-XXXXXX" and renames that over path, when path
 * exists), so even a process killed by SIGKILL leaves nothing behind.
 * Elsewhere (vfat, kernels before 3.11, no /proc) it is the named
 * ".riffle-XXXXXX", which a SIGKILL leaves. */
typedef struct rf_atomic_file {
    int fd;      /* write the output here */
    char *path;  /* final name (symlinks resolved), or path as given in place */
    char *tmp;   /* temporary name, NULL when writing in place */
    int unnamed; /* the temporary is O_TMPFILE; tmp is a template for its link */
} rf_atomic_file;

/* Create the temporary file (or open a non-regular path).  Allocates the
 * names.  Returns 0 or an errno value (ENOENT for a missing directory, EACCES,
 * ...); on error nothing is left behind. */
RF_API RF_NODISCARD int rf_atomic_open(rf_atomic_file *a, const char *path);
/* rf_atomic_open with a named temporary even where an unnamed one works:
 * for a file other processes must open by its temporary name while it is
 * written (the ranks of an MPI job writing one output), and for tests of
 * the fallback path. */
RF_API RF_NODISCARD int rf_atomic_open_named(rf_atomic_file *a, const char *path);
/* fsync, close, rename into place, and free.  Returns 0 or an errno value; on
 * error the temporary file is removed and path is left as it was. */
RF_API RF_NODISCARD int rf_atomic_commit(rf_atomic_file *a);
/* Close and remove the temporary file, leaving path as it was; free.  Safe
 * after a failed open or a commit (then a no-op). */
RF_API void rf_atomic_abort(rf_atomic_file *a);

/* The temporary file's name while a is open, or NULL when path is written in
 * place (a device, a FIFO), when the temporary is unnamed, or after
 * commit/abort.  For a program's own signal cleanup, which may guard several
 * files: the library installs no handlers. */
RF_API const char *rf_atomic_temp_path(const rf_atomic_file *a);
/* Nonzero while a writes to a temporary (named or not) that commit will put
 * in place; 0 when path is written in place or after commit/abort. */
RF_API int rf_atomic_staged(const rf_atomic_file *a);

/* Among the output names names[0..n), the first pair that would be the same
 * file once created -- "a", "./a", "d/../a", an absolute path, a hard or
 * symbolic link: an existing name by device and inode (links followed), a
 * name still to be created by its directory's device and inode and its last
 * component (a dangling link by its target's).  Two outputs committed over
 * one file would lose one of them: call it before opening any.  Returns 1
 * and sets *a < *b; 0 when every name is a file of its own (a name whose
 * directory is missing is left to the open to report); -1 when out of
 * memory.  Allocates only for the call. */
RF_API RF_NODISCARD int rf_same_file_pair(const char *const *names, size_t n, size_t *a,
                                          size_t *b);

/* ------------------------------------------------------------------------ */
/* Temporary files: where, and their removal at a signal                    */
/* ------------------------------------------------------------------------ */

/* The temporary directory of every riffle program: `dir` when not NULL (a
 * -T option), else $TMPDIR when set and not empty, else "/tmp".  The
 * engine's rule for rf_engine_options.tmpdir NULL.  Does not allocate; the
 * result lives as long as dir or the environment. */
RF_API const char *rf_temp_dir(const char *dir);

/* Whether dir can hold temporary files: 0, or the errno value that says why
 * not (ENOTDIR, or what stat(2) or access(2) gave: ENOENT, EACCES...). */
RF_API int rf_temp_dir_usable(const char *dir);

/* A registry of the temporary files a program would leave if a signal
 * ended it, for its own signal handler to remove: the library installs no
 * handlers, and a handler may call only async-signal-safe functions
 * (POSIX.1-2017, XSH 2.4.3), so it cannot ask anyone which files exist.
 * The registry holds copies of up to RF_REMOVAL_MAX_FILES paths (the
 * temporaries of -o and of the parts of --split, the output temporaries of
 * MPI ranks) and one directory of numbered files DIR/0 .. DIR/(N-1) (an
 * engine's named temporary files, kept up to date by rf_removal_temp as the
 * engine's temp callback).
 *
 * Updates copy the data first and then publish the flag or count that
 * makes it visible (a release store to a lock-free atomic, which
 * rf_removal_run loads with acquire), with the calling thread's
 * asynchronous signals blocked: a handler sees an entry whole or not at all,
 * on the updating thread (it cannot run during the update) and on any other
 * (it sees what was published before it read the flag).  The updates are
 * for one thread at a time.  One window is left to a handler on another
 * thread: if, while it reads a path, the updating thread forgets that slot
 * and reuses its room for a new path, or replaces the directory, it may
 * read a mix of the two; a program that needs more delivers its handled
 * signals to the updating thread (blocks them in its other threads, as the
 * library's threads do). */
typedef struct rf_removal rf_removal;

#define RF_REMOVAL_MAX_FILES 4100

/* An empty registry: about 1 MiB of path room, whose pages are touched only
 * as paths come.  NULL when out of memory.  Keep it until the process ends
 * (a handler may hold it), or free it with rf_removal_free once no handler
 * can run. */
RF_API rf_removal *rf_removal_new(void);
RF_API void rf_removal_free(rf_removal *r);

/* Register `path` (copied) for removal.  Returns its slot (>= 0), or -1 if
 * the registry is full or the path longer than PATH_MAX: then nothing
 * guards the file, and a caller should not create it. */
RF_API RF_NODISCARD int rf_removal_add(rf_removal *r, const char *path);
/* Forget slot `slot` (the file was renamed into place or removed); -1 is
 * ignored. */
RF_API void rf_removal_forget(rf_removal *r, int slot);

/* The engine's temp callback (riffle_engine.h, rf_engine_temp_fn) with
 * ctx = the registry: dir with files 0 registers the directory (copied;
 * it replaces any earlier one), files > 0 says DIR/0 .. DIR/(files - 1) may
 * exist, dir NULL forgets the directory.  Returns 0, or ENAMETOOLONG for a
 * directory that does not fit (the engine then refuses to make files there). */
RF_API int rf_removal_temp(void *ctx, const char *dir, unsigned long files);

/* Remove every registered path, then DIR/0 .. DIR/(N-1), then the directory.
 * Async-signal-safe (POSIX.1-2017, XSH 2.4.3), for a signal handler: it
 * reads the registry through lock-free atomic loads, allocates nothing,
 * takes no lock, and calls only unlink(2), rmdir(2) and memcpy.  It may run
 * more than once (files already gone are no error).  Returns the first
 * errno value other than ENOENT, or 0; errno is changed, so a handler that
 * returns saves and restores it. */
RF_API int rf_removal_run(const rf_removal *r);

#ifdef __cplusplus
}
#endif

#endif /* RIFFLE_IO_H */
