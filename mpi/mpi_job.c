/*
 * mpi_job.c -- what every phase of riffle-mpi calls: a rank's failure kept
 * until the next agreement, the agreement itself (one message, from rank 0,
 * naming the lowest failing rank), and rank 0's progress line.  The driver
 * (riffle_mpi.c) and the phases (mpi_exchange.c, mpi_output.c) call these;
 * these call neither.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mpi_job.h"

/* ------------------------------------------------------------------------ */
/* Failures                                                                 */
/* ------------------------------------------------------------------------ */

void job_fail(struct job *j, const char *fmt, ...)
{
    if (j->err.failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->err.msg, sizeof j->err.msg, fmt, ap);
    va_end(ap);
    j->err.failed = 1;
}

void job_fail_engine(struct job *j, const rf_engine_error *e)
{
    char msg[4096 + 256];
    rf_engine_error_message(e, msg, sizeof msg);
    job_fail(j, "%s", msg);
}

#define MSG_TAG 7201

int job_agree(struct job *j)
{
    /* The lowest failing rank, or size; a global failure counts as rank 0's. */
    int mine = j->err.failed ? j->rank : j->size, first;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, j->comm);
    if (first == j->size)
        return 0;
    job_progress_end(j);
    if (first != 0 && j->rank == first) {
        MPI_Send(&j->err.global, 1, MPI_INT, 0, MSG_TAG, j->comm);
        MPI_Send(j->err.msg, (int)strlen(j->err.msg) + 1, MPI_CHAR, 0, MSG_TAG, j->comm);
    }
    if (j->rank == 0) {
        struct job_error e = j->err;
        if (first != 0) {
            MPI_Recv(&e.global, 1, MPI_INT, first, MSG_TAG, j->comm, MPI_STATUS_IGNORE);
            MPI_Recv(e.msg, (int)sizeof e.msg, MPI_CHAR, first, MSG_TAG, j->comm,
                     MPI_STATUS_IGNORE);
        }
        if (e.global)
            fprintf(stderr, "%s: %s\n", MPI_PROG, e.msg);
        else
            fprintf(stderr, "%s: rank %d: %s\n", MPI_PROG, first, e.msg);
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Progress and statistics                                                  */
/* ------------------------------------------------------------------------ */

static const char *shown_phase;
static int shown_percent = -1;

void job_progress(struct job *j, const char *phase, uint64_t done, uint64_t total)
{
    if (!j->show_progress)
        return;
    const int percent = total ? (int)(done >= total ? 100 : done * 100 / total) : -1;
    if (phase == shown_phase && percent == shown_percent)
        return;
    if (total)
        fprintf(stderr, "\r%s: %s %3d%%\033[K", MPI_PROG, phase, percent);
    else
        fprintf(stderr, "\r%s: %s\033[K", MPI_PROG, phase);
    shown_phase = phase;
    shown_percent = percent;
}

void job_progress_end(struct job *j)
{
    if (j->show_progress && shown_phase) {
        fputc('\n', stderr);
        shown_phase = NULL;
        shown_percent = -1;
    }
}
