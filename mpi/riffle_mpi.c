/*
 * riffle_mpi.c -- riffle-mpi: the keyed order of files on P MPI ranks, byte
 * for byte the output of `riffle --seed=S` (riffle_engine.h, "Distributed
 * runs").
 *
 * Every rank runs the same phases, each ended by an agreement on failures
 * (job_agree), so that a failure anywhere ends the whole job with one
 * message from rank 0 and no output, never a hang:
 *   1. the key: rank 0 makes it (--seed, --random-source, or the OS) and
 *      broadcasts it;
 *   2. the output temporaries: rank 0 creates them, every rank opens them;
 *   3. the exchange (mpi_exchange.c): rank r counts part r of the input,
 *      numbers its records from an exclusive scan of the counts, and sends
 *      each record to the owner of its key; each rank gathers what it owns
 *      (or, when every rank can map the whole input, each reads its own
 *      records itself and nothing is sent);
 *   4. the plan (mpi_output.c): an exclusive scan of the owners' record
 *      counts places each owner in the global order (-n K and --split cut
 *      it), and one of their byte counts gives each owner its offset;
 *   5. the writes: every owner writes at its offsets into the temporaries;
 *   6. the commit: rank 0 renames the temporaries into place.
 * The failures, their agreement and the progress line that every phase
 * uses are mpi_job.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "mpi_job.h"
#include "riffle_io.h"

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

#define STATS_TAG 7202

/* A field of a /proc/self file in MiB ("RssAnon" of status, "Pss" of
 * smaps_rollup), or -1 where the kernel does not say. */
static double proc_mib(const char *file, const char *field)
{
    FILE *f = fopen(file, "r");
    double mib = -1;
    char line[256];
    const size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f)) {
        unsigned long kib;
        if (strncmp(line, field, n) == 0 && line[n] == ':' &&
            sscanf(line + n + 1, "%lu kB", &kib) == 1) {
            mib = (double)kib / 1024.0;
            break;
        }
    }
    if (f)
        fclose(f);
    return mib;
}

/* The rank's memory now, in MiB: private (RssAnon: what it holds itself,
 * without the pages of the files it maps, which the page cache shares
 * between the ranks of a machine) and proportional (Pss: each shared page
 * counted as its share among the processes that map it -- the memory the
 * rank costs its machine). */
static void note_memory(struct job *j)
{
    j->st.anon_mib = proc_mib("/proc/self/status", "RssAnon");
    j->st.pss_mib = proc_mib("/proc/self/smaps_rollup", "Pss");
}

/* Every rank's measures, printed by rank 0: one line per rank. */
static void print_stats(struct job *j)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mine[PH_N + 13];
    for (int i = 0; i < PH_N; i++)
        mine[i] = j->st.seconds[i];
    mine[PH_N] = (double)j->st.sent;
    mine[PH_N + 1] = (double)j->st.received;
    mine[PH_N + 2] = (double)j->st.records;
    mine[PH_N + 3] = (double)j->st.rounds;
    mine[PH_N + 4] = (double)ru.ru_maxrss / 1024.0; /* MiB */
    mine[PH_N + 5] = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    mine[PH_N + 6] = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    mine[PH_N + 7] = (double)j->st.temp_files;
    mine[PH_N + 8] = (double)j->st.kept;
    mine[PH_N + 9] = (double)j->st.referred;
    mine[PH_N + 10] = j->st.anon_mib;
    mine[PH_N + 11] = j->st.direct;
    mine[PH_N + 12] = j->st.pss_mib;
    const int w = PH_N + 13;
    if (j->rank != 0) {
        MPI_Send(mine, w, MPI_DOUBLE, 0, STATS_TAG, j->comm);
        return;
    }
    fprintf(stderr, "%s: stats: rank count_s exchange_s sizes_s write_s commit_s sent_MB "
                    "received_MB records rounds peak_rss_MiB user_s sys_s temp_files kept_MB "
                    "refs anon_MiB direct pss_MiB\n",
            MPI_PROG);
    for (int r = 0; r < j->size; r++) {
        double v[PH_N + 13];
        if (r == 0)
            memcpy(v, mine, sizeof v);
        else
            MPI_Recv(v, w, MPI_DOUBLE, r, STATS_TAG, j->comm, MPI_STATUS_IGNORE);
        fprintf(stderr,
                "%s: stats: %d %.3f %.3f %.3f %.3f %.3f %.3f %.3f %.0f %.0f %.1f %.2f %.2f %.0f "
                "%.3f %.0f %.1f %.0f %.1f\n",
                MPI_PROG, r, v[PH_COUNT], v[PH_EXCHANGE], v[PH_SIZES], v[PH_WRITE], v[PH_COMMIT],
                v[PH_N] / 1e6, v[PH_N + 1] / 1e6, v[PH_N + 2], v[PH_N + 3], v[PH_N + 4],
                v[PH_N + 5], v[PH_N + 6], v[PH_N + 7], v[PH_N + 8] / 1e6, v[PH_N + 9],
                v[PH_N + 10], v[PH_N + 11], v[PH_N + 12]);
    }
}

/* ------------------------------------------------------------------------ */
/* The key                                                                  */
/* ------------------------------------------------------------------------ */

static void read_key_file(struct job *j, const char *path, uint8_t key[RF_KEY_BYTES])
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        job_fail(j, "%s: %s", path, strerror(errno));
        return;
    }
    size_t got = 0;
    while (got < RF_KEY_BYTES) {
        const ssize_t k = read(fd, key + got, RF_KEY_BYTES - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            job_fail(j, "%s: %s", path, k < 0 ? strerror(errno) : "end of file");
            break;
        }
        got += (size_t)k;
    }
    close(fd);
}

/* Rank 0 makes the key; every rank gets it. */
static int make_key(struct job *j)
{
    const struct mpi_opts *o = j->opts;
    if (j->rank == 0) {
        rf_status s = RF_OK;
        if (o->seed)
            s = rf_seed_text(j->eo.key, o->seed); /* riffle's --seed rule */
        else if (o->random_source)
            read_key_file(j, o->random_source, j->eo.key);
        else
            s = rf_seed_os(j->eo.key);
        if (s != RF_OK)
            job_fail(j, "cannot make the random key: %s", rf_strerror(s));
    }
    if (job_agree(j) != 0)
        return -1;
    MPI_Bcast(j->eo.key, RF_KEY_BYTES, MPI_UNSIGNED_CHAR, 0, j->comm);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The run                                                                  */
/* ------------------------------------------------------------------------ */

/* -T DIR must exist on this rank (a wrapper may give each rank its own). */
static void check_tmpdir(struct job *j)
{
    const char *dir = j->eo.tmpdir;
    const int e = rf_temp_dir_usable(dir);
    if (e)
        job_fail(j, "cannot use temporary directory '%s': %s", dir, strerror(e));
}

/* A compressed input would be shuffled as bytes: riffle-mpi reads inputs
 * in place, at every rank's offsets, and decompresses none (rank 0 looks;
 * a file it cannot open is the exchange's to report, on every rank). */
static void refuse_compressed(struct job *j)
{
    const struct mpi_opts *o = j->opts;
    for (int i = 0; i < o->n_files && j->rank == 0; i++) {
        rf_compression c;
        if (rf_compression_of_path(o->files[i], &c) == 0 && c != RF_COMPRESSION_NONE) {
            job_fail(j, "%s: %s-compressed input is not read by %s: decompress it first "
                        "(riffle reads it as it is)",
                     o->files[i], rf_compression_name(c), MPI_PROG);
            j->err.global = 1; /* the job's, not the rank's */
            return;
        }
    }
}

static void on_engine_progress(void *ctx, rf_engine_phase ph, uint64_t done, uint64_t total)
{
    job_progress(ctx, ph == RF_ENGINE_WRITE ? "write" : "order", done, total);
}

/* The named temporaries the gather announces: guarded (unnamed ones need
 * no guard). */
static int on_temp(void *ctx, const char *dir, unsigned long files)
{
    (void)ctx;
    return cleanup_on_temp(NULL, dir, files);
}

/* This rank's machine (MPI_COMM_TYPE_SHARED): j->machine, its lowest rank,
 * and j->machine_ranks.  Collective. */
static void find_machine(struct job *j)
{
    MPI_Comm node;
    j->machine = j->rank;
    j->machine_ranks = 1;
    if (MPI_Comm_split_type(j->comm, MPI_COMM_TYPE_SHARED, j->rank, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &j->machine_ranks);
        MPI_Allreduce(&j->rank, &j->machine, 1, MPI_INT, MPI_MIN, node);
        MPI_Comm_free(&node);
    }
}

/* --threads' default: this machine's online CPUs shared among its ranks,
 * at least one each, so that ranks of one machine do not run a thread per
 * CPU each. */
static unsigned machine_share(const struct job *j)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const long share = cpus > 0 ? cpus / j->machine_ranks : 1;
    return share > 0 ? (unsigned)share : 1u;
}

static int setup(struct job *j)
{
    const struct mpi_opts *o = j->opts;
    rf_engine_options *eo = &j->eo;
    rf_engine_options_init(eo);
    eo->rng = mpi_rng_kind(o);
    eo->delim = o->delim;
    eo->header = o->header;
    eo->count = o->count;
    eo->memory = o->memory;
    eo->tmpdir = rf_temp_dir(o->tmpdir);
    find_machine(j); /* collective: every rank, always */
    eo->threads = o->threads ? o->threads : machine_share(j);
    eo->temp = on_temp;
    eo->temp_ctx = j;
    eo->progress = j->show_progress ? on_engine_progress : NULL;
    eo->progress_ctx = j;
    j->in = malloc((size_t)o->n_files * sizeof *j->in);
    if (!j->in)
        job_fail(j, "memory exhausted");
    else
        for (int i = 0; i < o->n_files; i++)
            j->in[i] = rf_engine_input_path(o->files[i]);
    j->n_in = (size_t)o->n_files;
    const int e = cleanup_start();
    if (e)
        job_fail(j, "cannot install signal handlers: %s", strerror(e));
    check_tmpdir(j);
    refuse_compressed(j);
    return job_agree(j);
}

/* For the tests of signal-time cleanup: with RIFFLE_MPI_PAUSE=PHASE every
 * rank stops where PHASE begins (after rank 0 has shown it with --progress),
 * its temporaries made, until a signal ends it -- so a test signals a job
 * known to be in that phase, never one that may have finished. */
static void pause_for_tests(const char *phase)
{
    const char *want = getenv("RIFFLE_MPI_PAUSE");
    if (want && strcmp(want, phase) == 0)
        for (;;)
            pause();
}

/* One rank: the whole job is one process's, so it is the one-process
 * engine's run (rf_engine_shuffle, with --threads and --memory as riffle
 * uses them) into the temporaries -- by the distributed contract the same
 * bytes as any P, without packets, owners or a gather to pay for. */
static int run_alone(struct job *j, struct job_output *out)
{
    job_progress(j, "order", 0, 0);
    pause_for_tests("order");
    const double t = now();
    if (job_output_alone(j, out) != 0)
        return JOB_FAIL;
    j->st.seconds[PH_WRITE] = now() - t;
    j->st.anon_mib = j->st.pss_mib = -1; /* the engine has freed its memory: not measured */
    job_progress_end(j);
    const double c = now();
    const int status = job_output_commit(j, out) == 0 ? JOB_OK : JOB_FAIL;
    j->st.seconds[PH_COMMIT] = now() - c;
    return status;
}

static int run(struct job *j)
{
    if (setup(j) != 0 || make_key(j) != 0)
        return JOB_FAIL;
    struct job_output *out = NULL;
    rf_engine_gather *g = NULL;
    int status = JOB_FAIL;
    if (job_output_open(j, &out) != 0)
        goto done;
    if (j->size == 1) {
        status = run_alone(j, out);
        goto done;
    }
    if (job_output_header(j, out) != 0 || job_exchange(j, &g) != 0)
        goto done;
    job_progress(j, "order", 0, 0);
    pause_for_tests("order");
    double t = now();
    if (job_output_plan(j, out, g) != 0)
        goto done;
    j->st.seconds[PH_SIZES] = now() - t;
    job_progress(j, "write", 0, 0);
    t = now();
    if (job_output_write(j, out, g) != 0)
        goto done;
    j->st.seconds[PH_WRITE] = now() - t;
    if (j->opts->stats)
        note_memory(j);
    job_progress_end(j);
    t = now();
    status = job_output_commit(j, out) == 0 ? JOB_OK : JOB_FAIL;
    j->st.seconds[PH_COMMIT] = now() - t;
done:
    job_progress_end(j);
    if (g)
        j->st.temp_files = rf_engine_gather_temp_files(g);
    rf_engine_gather_close(g);
    job_output_close(j, out);
    if (j->opts->stats)
        print_stats(j);
    return status;
}

int main(int argc, char **argv)
{
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "%s: cannot start MPI\n", MPI_PROG);
        return JOB_FAIL;
    }
    struct job j;
    memset(&j, 0, sizeof j);
    j.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(j.comm, &j.rank);
    MPI_Comm_size(j.comm, &j.size);
    struct mpi_opts o;
    int status = mpi_parse(argc, argv, j.rank == 0, &o);
    if (status == JOB_CONTINUE) {
        j.opts = &o;
        j.show_progress = o.progress && j.rank == 0;
        status = run(&j);
    }
    sodium_memzero(j.eo.key, sizeof j.eo.key);
    free(j.in);
    MPI_Finalize();
    return status;
}
