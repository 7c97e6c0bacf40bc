/* mpi_job.h -- what the files of riffle-mpi share: the options, the job
 * (this rank's place in it and its state), the collective agreement on
 * failures, and the phases.  riffle-mpi uses the public headers only. */
#ifndef RIFFLE_MPI_JOB_H
#define RIFFLE_MPI_JOB_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "riffle_engine.h"

#define MPI_PROG "riffle-mpi"

/* Exit statuses. */
#define JOB_OK 0
#define JOB_FAIL 1
/* Returned by the option parser when the run should go on. */
#define JOB_CONTINUE (-1)

/* How records reach the rank that writes them (--exchange). */
enum exchange_mode {
    EXCHANGE_AUTO,   /* direct when it can be, else references where they can go */
    EXCHANGE_DIRECT, /* every rank reads all of the input and keeps its own */
    EXCHANGE_REFS,   /* references between the ranks of a machine, bytes elsewhere */
    EXCHANGE_BYTES   /* the records' bytes to every rank */
};

/* The command line.  Every rank parses the same argv, so every rank holds
 * the same options (but -T, which a wrapper may set per rank). */
struct mpi_opts {
    const char *seed, *rng_name, *random_source;
    const char *output;
    const char *tmpdir;
    const char *split_spec, *pattern;
    uint64_t count; /* RF_ENGINE_ALL: no -n */
    uint64_t header;
    uint64_t memory; /* 0: the library's default */
    unsigned threads; /* 0: one per online CPU */
    unsigned char delim;
    int progress, stats;
    enum exchange_mode exchange; /* --exchange */
    char **files;
    int n_files;
};

/* Parse argv into o.  Returns JOB_CONTINUE, or an exit status after --help,
 * --version or a usage error (printed by rank 0 only: `talk`). */
int mpi_parse(int argc, char **argv, int talk, struct mpi_opts *o);
/* The generator --rng names (ChaCha20 without it). */
rf_rng_kind mpi_rng_kind(const struct mpi_opts *o);

/* A failure of this rank, kept until the next agreement: the first one
 * wins.  `global`: every rank fails the same way (a --split plan that
 * does not fit): printed once, without a rank. */
struct job_error {
    int failed, global;
    char msg[4096 + 512];
};

/* Per-phase measures for --stats. */
enum job_phase { PH_COUNT, PH_EXCHANGE, PH_SIZES, PH_WRITE, PH_COMMIT, PH_N };

struct job_stats {
    double seconds[PH_N];
    uint64_t sent, received, records, rounds;
    uint64_t kept; /* bytes of the rank's own records, which do not travel */
    unsigned referred; /* ranks (itself included) sent references, not bytes */
    int direct;        /* the rank read its records itself (no exchange) */
    double anon_mib;   /* private resident memory at the end of the write, */
    double pss_mib;    /* and proportional (shared pages divided among their mappers) */
    uint64_t temp_files;      /* the gather made (rf_engine_gather_temp_files) */
};

struct job {
    MPI_Comm comm;
    int rank, size;
    const struct mpi_opts *opts;
    rf_engine_options eo;
    rf_engine_input *in;
    size_t n_in;
    struct job_error err;
    struct job_stats st;
    int show_progress; /* rank 0 with --progress */
    /* this rank's machine (MPI_COMM_TYPE_SHARED): its lowest rank, which
     * names it, and how many ranks it runs */
    int machine, machine_ranks;
};

/* ---- failures and progress (mpi_job.c) ---- */

/* Record a failure (printf-like); the first one is kept. */
void job_fail(struct job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The engine's error as the failure. */
void job_fail_engine(struct job *j, const rf_engine_error *e);
/* Every rank learns whether any failed (MPI_Allreduce); the lowest failing
 * rank's message goes to rank 0, which prints it.  Returns 0 when none
 * failed, -1 otherwise (on every rank alike). */
int job_agree(struct job *j);

/* The progress line of rank 0 (--progress): a phase with its total (0:
 * unknown), then how much of it is done. */
void job_progress(struct job *j, const char *phase, uint64_t done, uint64_t total);
void job_progress_end(struct job *j);

/* Seconds, for --stats. */
static inline double now(void)
{
    return MPI_Wtime();
}

/* ---- the phases (mpi_exchange.c, mpi_output.c) ---- */

struct job_output;

/* The records of every part moved to their owners: the gather of this
 * rank, filled (NULL after a failure; agreed). */
int job_exchange(struct job *j, rf_engine_gather **g);

/* The output files: created as temporaries by rank 0 (beside each target),
 * opened by every rank.  Agreed. */
int job_output_open(struct job *j, struct job_output **out);
/* The header's bytes (rank 0 reads them; every rank learns the length). */
int job_output_header(struct job *j, struct job_output *out);
/* Where this rank's records go: the global count, the split plan, the
 * offsets (exclusive scans).  Agreed. */
int job_output_plan(struct job *j, struct job_output *out, rf_engine_gather *g);
/* Write this rank's records (and rank 0 the headers) at their offsets,
 * fsync.  Agreed. */
int job_output_write(struct job *j, struct job_output *out, rf_engine_gather *g);
/* A job of one rank: the one-process engine writes every record (header
 * included) into the temporaries, fsync.  Agreed. */
int job_output_alone(struct job *j, struct job_output *out);
/* Rank 0 renames every temporary into place; every rank learns the
 * outcome.  Returns 0 or -1. */
int job_output_commit(struct job *j, struct job_output *out);
/* Remove every temporary (after a failure) and free. */
void job_output_close(struct job *j, struct job_output *out);

/* ---- signal-time clean-up (mpi_cleanup.c) ---- */

/* Install handlers for the signals that end a process (SIGINT, SIGTERM,
 * SIGHUP, ...): they remove the registered files and the registered
 * temporary directory, then die of the signal.  Returns 0 or an errno. */
int cleanup_start(void);
/* Register a path (copied); returns a slot, or -1 when full. */
int cleanup_file(const char *path);
/* Forget a slot (-1 ignored). */
void cleanup_forget(int slot);
/* The engine's temporary callback (riffle_engine.h, rf_engine_temp_fn). */
int cleanup_on_temp(void *ctx, const char *dir, unsigned long files);

#endif
