/*
 * mpi_output.c -- the output of riffle-mpi: -o FILE, or the parts of
 * --split, each one temporary file beside its target that every rank
 * writes at its own offsets, renamed into place by rank 0 at the end.
 *
 * The global order is the owners' orders one after another (owner order is
 * key order: riffle_engine.h, "Distributed runs").  An exclusive scan of the
 * owners' record counts says where each owner's records fall in it, so
 * which of them -n K keeps and which part of a split each goes to; an
 * exclusive scan of the byte counts of those pieces (rf_engine_gather_bytes)
 * says where in each file each owner writes.  Rank 0 writes the header at
 * the start of every file.  The writes are rf_writer's bounded write(2)
 * calls (1 MiB) from the offset on, so no call passes 2 GiB.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_job.h"

#define OUT_BUFFER ((size_t)1 << 20)

struct job_output {
    size_t parts;        /* 1 for -o */
    rf_split split;      /* --split */
    int splitting;
    char **names;        /* the targets */
    rf_atomic_file *files; /* rank 0: the temporaries */
    size_t opened;       /* rank 0: files[0..opened) are open */
    int committed;
    char **paths;        /* every rank: the file to write (temporary, or the target in place) */
    int *slots;          /* cleanup registrations of the temporaries */
    unsigned char *header;
    uint64_t header_len;
    /* this rank's piece of each part: records from `local` on, written at `offset` */
    uint64_t *local, *records, *offset;
    uint64_t total;      /* this rank's records written */
};

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */
/* ------------------------------------------------------------------------ */

static int split_names(struct job *j, struct job_output *out)
{
    const struct mpi_opts *o = j->opts;
    rf_split_error se;
    char why[512];
    rf_status st = rf_split_parse(&out->split, o->split_spec, &se);
    if (st != RF_OK) {
        rf_split_error_message(&se, why, sizeof why);
        if (st == RF_EINVAL)
            job_fail(j, "invalid split '%s'%s%s", o->split_spec, *why ? ": " : "", why);
        else
            job_fail(j, "memory exhausted");
        return -1;
    }
    out->splitting = 1;
    out->parts = out->split.parts;
    st = rf_split_names(o->pattern, out->parts, &out->names, &se);
    if (st != RF_OK) {
        out->names = NULL;
        rf_split_error_message(&se, why, sizeof why);
        if (st == RF_EINVAL)
            job_fail(j, "invalid output pattern '%s': %s", o->pattern, why);
        else
            job_fail(j, "memory exhausted");
        return -1;
    }
    return 0;
}

static int make_names(struct job *j, struct job_output *out)
{
    if (j->opts->split_spec)
        return split_names(j, out);
    out->parts = 1;
    out->names = calloc(1, sizeof *out->names);
    if (!out->names || !(out->names[0] = strdup(j->opts->output))) {
        job_fail(j, "memory exhausted");
        return -1;
    }
    return 0;
}

/* The signals of mpi_cleanup.c blocked while a temporary is created and
 * registered, so that none comes between the two. */
static void hold(sigset_t *old)
{
    sigset_t s;
    sigfillset(&s);
    sigdelset(&s, SIGSEGV);
    sigdelset(&s, SIGBUS);
    sigdelset(&s, SIGFPE);
    sigdelset(&s, SIGILL);
    pthread_sigmask(SIG_BLOCK, &s, old);
}

/* Rank 0: the temporaries, "T<path>\0" (a temporary) or "P<path>\0" (a
 * target written in place, e.g. /dev/null) one after another in *list. */
static char *create_files(struct job *j, struct job_output *out, size_t *len)
{
    out->files = calloc(out->parts, sizeof *out->files);
    if (!out->files) {
        job_fail(j, "memory exhausted");
        return NULL;
    }
    size_t cap = 0;
    char *list = NULL;
    *len = 0;
    for (size_t i = 0; i < out->parts; i++) {
        sigset_t old;
        hold(&old);
        /* named: every rank opens the temporary by its name */
        const int e = rf_atomic_open_named(&out->files[i], out->names[i]);
        const char *tmp = e ? NULL : rf_atomic_temp_path(&out->files[i]);
        if (tmp && (out->slots[i] = cleanup_file(tmp)) < 0) {
            rf_atomic_abort(&out->files[i]);
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            job_fail(j, "%s: %s", out->names[i], strerror(ENAMETOOLONG));
            break;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e) {
            job_fail(j, "%s: %s", out->names[i], strerror(e));
            break;
        }
        out->opened = i + 1;
        if (!tmp && lseek(out->files[i].fd, 0, SEEK_CUR) < 0) {
            job_fail(j, "%s: the ranks write at offsets: a pipe or a terminal cannot take them",
                     out->names[i]);
            break;
        }
        const char *p = tmp ? tmp : out->files[i].path;
        const size_t need = *len + strlen(p) + 2;
        if (need > cap) {
            cap = need * 2;
            char *grown = realloc(list, cap);
            if (!grown) {
                job_fail(j, "memory exhausted");
                break;
            }
            list = grown;
        }
        list[(*len)++] = tmp ? 'T' : 'P';
        memcpy(list + *len, p, strlen(p) + 1);
        *len += strlen(p) + 1;
    }
    return list;
}

/* Every rank: the list of rank 0, as paths, temporaries registered. */
static void take_paths(struct job *j, struct job_output *out, const char *list, size_t len)
{
    size_t at = 0;
    for (size_t i = 0; i < out->parts && at < len; i++) {
        const char kind = list[at++];
        if (!(out->paths[i] = strdup(list + at))) {
            job_fail(j, "memory exhausted");
            return;
        }
        at += strlen(list + at) + 1;
        if (kind == 'T' && j->rank != 0 && (out->slots[i] = cleanup_file(out->paths[i])) < 0) {
            job_fail(j, "%s: %s", out->names[i], strerror(ENAMETOOLONG));
            return;
        }
    }
}

int job_output_open(struct job *j, struct job_output **outp)
{
    struct job_output *out = calloc(1, sizeof *out);
    *outp = out;
    if (!out) {
        job_fail(j, "memory exhausted");
        return job_agree(j);
    }
    /* Every rank parses the same spec: a refusal is everyone's. */
    if (make_names(j, out) != 0) {
        j->err.global = 1;
        return job_agree(j);
    }
    const size_t n = out->parts;
    out->paths = calloc(n, sizeof *out->paths);
    out->slots = malloc(n * sizeof *out->slots);
    out->local = calloc(n, sizeof *out->local);
    out->records = calloc(n, sizeof *out->records);
    out->offset = calloc(n, sizeof *out->offset);
    if (!out->paths || !out->slots || !out->local || !out->records || !out->offset) {
        job_fail(j, "memory exhausted");
        return job_agree(j);
    }
    for (size_t i = 0; i < n; i++)
        out->slots[i] = -1;
    size_t len = 0;
    char *list = j->rank == 0 ? create_files(j, out, &len) : NULL;
    if (job_agree(j) != 0) {
        free(list);
        return -1;
    }
    uint64_t len64 = len;
    MPI_Bcast(&len64, 1, MPI_UINT64_T, 0, j->comm);
    if (j->rank != 0 && !(list = malloc(len64 ? len64 : 1)))
        job_fail(j, "memory exhausted");
    /* len64 stays below 4096 paths of PATH_MAX bytes: an int. */
    if (job_agree(j) == 0) {
        MPI_Bcast(list, (int)len64, MPI_CHAR, 0, j->comm);
        take_paths(j, out, list, (size_t)len64);
    }
    free(list);
    return job_agree(j);
}

int job_output_header(struct job *j, struct job_output *out)
{
    size_t len = 0;
    void *bytes = NULL;
    if (j->rank == 0 && j->opts->header > 0) {
        rf_engine_error e;
        if (rf_engine_header(&j->eo, j->in, j->n_in, &bytes, &len, &e) != RF_OK)
            job_fail_engine(j, &e);
    }
    out->header = bytes;
    if (job_agree(j) != 0)
        return -1;
    out->header_len = len;
    MPI_Bcast(&out->header_len, 1, MPI_UINT64_T, 0, j->comm);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The plan                                                                 */
/* ------------------------------------------------------------------------ */

/* Why the split's counts do not fit the records output, in riffle's words
 * (the library's reason names no option). */
static void split_refused(struct job *j, const rf_split_error *se)
{
    if (se->problem == RF_SPLIT_COUNTS_EXCEED)
        job_fail(j, "the --split counts add up to %llu, more than the %llu records output",
                 (unsigned long long)se->sum, (unsigned long long)se->total);
    else if (se->problem == RF_SPLIT_COUNTS_DIFFER)
        job_fail(j, "the --split counts add up to %llu, but %llu records are output",
                 (unsigned long long)se->sum, (unsigned long long)se->total);
    else
        job_fail(j, "memory exhausted");
    j->err.global = 1; /* every rank computes the same plan */
}

/* b[0..parts] over the `count` records output. */
static int bounds(struct job *j, struct job_output *out, uint64_t count, uint64_t *b)
{
    if (!out->splitting) {
        b[0] = 0;
        b[1] = count;
        return 0;
    }
    rf_split_error se;
    if (rf_split_bounds(&out->split, count, b, &se) != RF_OK) {
        split_refused(j, &se);
        return -1;
    }
    return 0;
}

/* The bytes of this rank's first k records (the gather orders its records
 * once, at the first call, and counts all of them as they come). */
static int bytes_at(struct job *j, rf_engine_gather *g, uint64_t k, uint64_t *bytes)
{
    rf_engine_error e;
    if (rf_engine_gather_bytes(g, k, bytes, &e) != RF_OK) {
        job_fail_engine(j, &e);
        return -1;
    }
    return 0;
}

/* This rank's piece of each part, from its place in the global order
 * [start, start + mine), and the bytes of each piece. */
static int pieces(struct job *j, struct job_output *out, rf_engine_gather *g, const uint64_t *b,
                  uint64_t start, uint64_t mine, uint64_t *bytes)
{
    uint64_t at = 0, at_bytes = 0; /* bytes_at(at) */
    for (size_t i = 0; i < out->parts; i++) {
        const uint64_t lo = b[i] > start ? b[i] : start;
        const uint64_t hi = b[i + 1] < start + mine ? b[i + 1] : start + mine;
        bytes[i] = 0;
        if (lo >= hi)
            continue;
        out->local[i] = lo - start;
        out->records[i] = hi - lo;
        uint64_t lo_bytes = at_bytes, hi_bytes;
        if ((lo - start != at && bytes_at(j, g, lo - start, &lo_bytes) != 0) ||
            bytes_at(j, g, hi - start, &hi_bytes) != 0)
            return -1;
        at = hi - start;
        at_bytes = hi_bytes;
        bytes[i] = hi_bytes - lo_bytes;
    }
    return 0;
}

int job_output_plan(struct job *j, struct job_output *out, rf_engine_gather *g)
{
    const size_t n = (size_t)j->size;
    uint64_t mine = rf_engine_gather_records(g);
    uint64_t *all = malloc(n * sizeof *all);
    uint64_t *b = malloc((out->parts + 1) * sizeof *b);
    uint64_t *bytes = calloc(out->parts, sizeof *bytes);
    if (!all || !b || !bytes)
        job_fail(j, "memory exhausted");
    int status = job_agree(j);
    if (status == 0) {
        MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, j->comm);
        uint64_t start = 0, total = 0;
        for (size_t r = 0; r < n; r++) {
            if (r < (size_t)j->rank)
                start += all[r];
            total += all[r];
        }
        const uint64_t count = total < j->opts->count ? total : j->opts->count;
        mine = start >= count ? 0 : count - start < mine ? count - start : mine;
        out->total = mine;
        if (bounds(j, out, count, b) == 0)
            pieces(j, out, g, b, start, mine, bytes);
        status = job_agree(j);
    }
    if (status == 0) {
        /* parts <= RF_SPLIT_MAX_PARTS: an int count */
        MPI_Exscan(bytes, out->offset, (int)out->parts, MPI_UINT64_T, MPI_SUM, j->comm);
        for (size_t i = 0; i < out->parts; i++)
            out->offset[i] = (j->rank == 0 ? 0 : out->offset[i]) + out->header_len;
    }
    free(all);
    free(b);
    free(bytes);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* The sink of this rank's pieces: part by part, each written from its
 * offset through one buffer. */
struct piece_sink {
    struct job *j;
    struct job_output *out;
    rf_writer w;
    unsigned char *buf;
    size_t part;     /* the current piece's part, parts when none is left */
    uint64_t left;   /* records the current piece still takes */
    int fd;          /* the current piece's file, -1 until its first record */
    int err;         /* errno of the last failed open, flush or fsync */
};

/* Flush, fsync and close the current piece's file. */
static int piece_end(struct piece_sink *s)
{
    if (s->fd < 0)
        return s->err;
    int e = rf_writer_flush(&s->w);
    if (!e && fsync(s->fd) != 0 && errno != EINVAL && errno != EROFS)
        e = errno; /* EINVAL: a device such as /dev/null */
    if (close(s->fd) != 0 && !e)
        e = errno;
    s->fd = -1;
    if (e && !s->err)
        s->err = e;
    return s->err;
}

/* Move to the next part that has records of this rank. */
static void piece_next(struct piece_sink *s, size_t from)
{
    s->part = from;
    while (s->part < s->out->parts && s->out->records[s->part] == 0)
        s->part++;
    s->left = s->part < s->out->parts ? s->out->records[s->part] : 0;
}

static int open_at(const char *path, uint64_t offset, int *fd)
{
    *fd = open(path, O_WRONLY | O_CLOEXEC);
    if (*fd < 0)
        return errno;
    /* A pipe or a terminal (ESPIPE) cannot take writes at offsets. */
    if (lseek(*fd, (off_t)offset, SEEK_SET) < 0) {
        const int e = errno;
        close(*fd);
        *fd = -1;
        return e;
    }
    return 0;
}

static int ps_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    struct piece_sink *s = ctx;
    (void)header;
    (void)len;
    return records == s->out->total ? 0 : EINVAL;
}

static rf_writer *ps_writer(void *ctx)
{
    struct piece_sink *s = ctx;
    if (s->fd < 0 && s->part < s->out->parts && !s->w.err) {
        const int e = open_at(s->out->paths[s->part], s->out->offset[s->part], &s->fd);
        rf_writer_init(&s->w, s->fd, s->buf, OUT_BUFFER);
        if (e)
            s->w.err = s->err = e;
    }
    return &s->w;
}

static uint64_t ps_room(void *ctx)
{
    const struct piece_sink *s = ctx;
    return s->left;
}

static int ps_advance(void *ctx, uint64_t records)
{
    struct piece_sink *s = ctx;
    s->left -= records;
    if (s->left == 0 && s->part < s->out->parts) {
        if (piece_end(s) != 0)
            return s->err;
        piece_next(s, s->part + 1);
    }
    return s->w.err;
}

/* Rank 0: the header at the start of every file (an empty part is its
 * header alone). */
static void write_headers(struct job *j, struct job_output *out)
{
    for (size_t i = 0; i < out->parts && out->header_len > 0; i++) {
        const unsigned char *p = out->header;
        uint64_t left = out->header_len, at = 0;
        const int fd = out->files[i].fd;
        while (left > 0) {
            const size_t chunk = left < OUT_BUFFER ? (size_t)left : OUT_BUFFER;
            const ssize_t w = pwrite(fd, p + at, chunk, (off_t)at);
            if (w < 0 && errno == ESPIPE) {
                job_fail(j, "%s: a parallel output must be seekable", out->names[i]);
                return;
            }
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                job_fail(j, "%s: %s", out->names[i], strerror(w < 0 ? errno : ENOSPC));
                return;
            }
            at += (uint64_t)w;
            left -= (uint64_t)w;
        }
    }
}

int job_output_write(struct job *j, struct job_output *out, rf_engine_gather *g)
{
    if (j->rank == 0)
        write_headers(j, out);
    struct piece_sink s = {.j = j, .out = out, .fd = -1};
    piece_next(&s, 0);
    if (out->total > 0 && !j->err.failed) {
        s.buf = malloc(OUT_BUFFER);
        const rf_engine_sink sink = {ps_begin, ps_writer, ps_room, ps_advance, &s};
        rf_engine_error e;
        if (!s.buf)
            job_fail(j, "memory exhausted");
        else if (rf_engine_gather_write(g, out->total, &sink, &e) != RF_OK) {
            const size_t part = s.part < out->parts ? s.part : out->parts - 1;
            if (e.op == RF_ENGINE_OP_OUTPUT)
                job_fail(j, "%s: %s", out->names[part],
                         strerror(s.err ? s.err : e.err > 0 ? e.err : EIO));
            else
                job_fail_engine(j, &e);
        }
        if (piece_end(&s) != 0)
            job_fail(j, "%s: %s", out->names[s.part < out->parts ? s.part : out->parts - 1],
                     strerror(s.err));
        free(s.buf);
    }
    return job_agree(j);
}

/* ------------------------------------------------------------------------ */
/* One rank                                                                 */
/* ------------------------------------------------------------------------ */

/* The sink of a one-rank job: the file's sink (rf_fd_sink, or rf_split_sink
 * for --split), through which the records announced at begin are counted
 * for --stats. */
struct alone_sink {
    const rf_engine_sink *to;
    uint64_t records;
};

static int alone_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    struct alone_sink *a = ctx;
    a->records = records;
    return a->to->begin(a->to->ctx, header, len, records);
}

static rf_writer *alone_writer(void *ctx)
{
    const struct alone_sink *a = ctx;
    return a->to->writer(a->to->ctx);
}

static uint64_t alone_room(void *ctx)
{
    const struct alone_sink *a = ctx;
    return a->to->room(a->to->ctx);
}

static int alone_advance(void *ctx, uint64_t records)
{
    const struct alone_sink *a = ctx;
    return a->to->advance(a->to->ctx, records);
}

/* The part a failed write names: the split sink's current one. */
static const char *alone_target(const struct job_output *out, const rf_split_sink *ss)
{
    return out->splitting && ss->cur < out->parts ? out->names[ss->cur] : out->names[0];
}

/* Run the engine into the open temporaries, then flush and fsync them. */
static void alone_run(struct job *j, struct job_output *out, int *fds, unsigned char *buf)
{
    rf_fd_sink fs;
    rf_split_sink ss;
    memset(&ss, 0, sizeof ss);
    if (out->splitting && rf_split_sink_init(&ss, &out->split, fds, buf, OUT_BUFFER) != RF_OK) {
        job_fail(j, "memory exhausted");
        return;
    }
    if (!out->splitting)
        rf_fd_sink_init(&fs, fds[0], buf, OUT_BUFFER);
    struct alone_sink a = {out->splitting ? &ss.sink : &fs.sink, 0};
    const rf_engine_sink sink = {alone_begin, alone_writer, alone_room, alone_advance, &a};
    rf_engine_error e;
    if (rf_engine_shuffle(&j->eo, j->in, j->n_in, &sink, &e) != RF_OK) {
        if (e.op != RF_ENGINE_OP_OUTPUT)
            job_fail_engine(j, &e);
        else if (out->splitting && ss.error.problem != RF_SPLIT_OK)
            split_refused(j, &ss.error);
        else
            job_fail(j, "%s: %s", alone_target(out, &ss), strerror(e.err > 0 ? e.err : EIO));
    } else {
        const int err = out->splitting ? rf_split_sink_finish(&ss) : rf_fd_sink_flush(&fs);
        if (err)
            job_fail(j, "%s: %s", alone_target(out, &ss), strerror(err));
    }
    for (size_t i = 0; i < out->parts && !j->err.failed; i++)
        if (fsync(fds[i]) != 0 && errno != EINVAL && errno != EROFS)
            job_fail(j, "%s: %s", out->names[i], strerror(errno));
    if (out->splitting)
        rf_split_sink_free(&ss);
    j->st.records = a.records;
}

int job_output_alone(struct job *j, struct job_output *out)
{
    int *fds = malloc(out->parts * sizeof *fds);
    unsigned char *buf = malloc(OUT_BUFFER);
    if (!fds || !buf) {
        job_fail(j, "memory exhausted");
    } else {
        for (size_t i = 0; i < out->parts; i++)
            fds[i] = out->files[i].fd;
        alone_run(j, out, fds, buf);
    }
    free(buf);
    free(fds);
    return job_agree(j);
}

/* ------------------------------------------------------------------------ */
/* Commit                                                                   */
/* ------------------------------------------------------------------------ */

int job_output_commit(struct job *j, struct job_output *out)
{
    int ok = 1;
    if (j->rank == 0) {
        for (size_t i = 0; i < out->parts; i++) {
            const int e = rf_atomic_commit(&out->files[i]);
            cleanup_forget(out->slots[i]);
            out->slots[i] = -1;
            if (e) {
                fprintf(stderr, "%s: %s: %s\n", MPI_PROG, out->names[i], strerror(e));
                if (i > 0)
                    fprintf(stderr, "%s: %zu of %zu parts were already in place\n", MPI_PROG, i,
                            out->parts);
                for (size_t k = i + 1; k < out->parts; k++)
                    rf_atomic_abort(&out->files[k]);
                ok = 0;
                break;
            }
        }
        out->committed = 1;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, j->comm);
    return ok ? 0 : -1;
}

void job_output_close(struct job *j, struct job_output *out)
{
    if (!out)
        return;
    for (size_t i = 0; i < out->parts; i++) {
        if (j->rank == 0 && i < out->opened && !out->committed)
            rf_atomic_abort(&out->files[i]);
        if (out->slots)
            cleanup_forget(out->slots[i]);
        if (out->paths)
            free(out->paths[i]);
    }
    if (out->splitting) {
        rf_split_names_free(out->names, out->parts);
        rf_split_free(&out->split);
    } else if (out->names) {
        free(out->names[0]);
        free(out->names);
    }
    free(out->files);
    free(out->paths);
    free(out->slots);
    free(out->header);
    free(out->local);
    free(out->records);
    free(out->offset);
    free(out);
}
