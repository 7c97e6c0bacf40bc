/*
 * audit_runner.h -- `riffle audit --cmd`: run an external shuffler many times
 * as an untrusted program (own sessions, timeouts, output limits, a child
 * subreaper, signal handlers that kill the trials), each output judged by the
 * audit library (audit_parse_output) before it counts.  Processes, signals
 * and messages on stderr are the program's, never a library's: hence here and
 * not in audit/.
 */
#ifndef RIFFLE_AUDIT_RUNNER_H
#define RIFFLE_AUDIT_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "audit.h"

typedef struct audit_runner {
    const char *command;
    int use_shell;
    char **argv;             /* when !use_shell */
    unsigned jobs;
    char *tmpdir;            /* $TMPDIR/riffle-audit.XXXXXX */
    char *input_path;
    size_t input_n;          /* deck size the input file holds */
    size_t input_bytes;
    /* Limits, set by the caller after audit_runner_open (0: the default). */
    double timeout;          /* seconds per trial; 0: derived (audit_runner_timeout) */
    uint64_t max_output;     /* bytes per trial; 0: audit_runner_output_limit */
    double deadline;         /* CLOCK_MONOTONIC seconds of --time-limit, or 0 */
    int progress;            /* progress lines on stderr */
    /* What happened. */
    uint64_t broken;         /* trials whose output was not a permutation */
    uint64_t timed_out;      /* ...of which killed at the timeout */
    uint64_t overflowed;     /* ...of which killed over the output limit */
    char example[256];       /* first broken output explained (raw bytes) */
    double seconds;          /* wall time spent in run */
    uint64_t runs, started;
    unsigned calibrated;     /* good trials timed for the derived timeout */
    double slowest;          /* the slowest of those, seconds */
    int stop;                /* no more trials: a timeout or the time limit */
    int time_up;             /* the time limit ended the trials */
    int cannot_run;          /* 126 or 127: the shell could not run it */
    int subreaper;           /* stray descendants are caught (see audit_runner.c) */
    char error[256];         /* why open or run failed */
} audit_runner;

/* Returns 0, or -1 with c->error set (an empty command, an unusable TMPDIR). */
int audit_runner_open(audit_runner *c, const char *command, unsigned jobs);
void audit_runner_close(audit_runner *c);
/* Run the command `trials` times on the lines "1".."n", adding each valid
 * output to acc.  Returns 0 (also when a timeout or the time limit stopped
 * the trials: see c->stop), or -1 when the command cannot be run at all or on
 * an I/O error (message printed). */
int audit_runner_run(audit_runner *c, size_t n, uint64_t trials, audit_acc *acc);
/* The timeout in force (seconds) and the output limit for n lines (bytes). */
double audit_runner_timeout(const audit_runner *c);
uint64_t audit_runner_output_limit(const audit_runner *c, size_t n);

#endif /* RIFFLE_AUDIT_RUNNER_H */
