/* progress.h -- the progress line of long runs, on standard error:
 *
 *     riffle: scatter  1.2 GiB / 4.0 GiB  31%  310 MiB/s  ETA 9s
 *
 * (without a known total: "riffle: read  1.2 GiB  310 MiB/s").  Nothing is
 * printed during the first second of the run, so short runs stay silent.  On
 * a terminal the line is rewritten in place ("\r...\033[K") at most 4 times a
 * second and erased by progress_done; when forced onto a non-terminal
 * (--progress), one newline-terminated line at most once a second.
 *
 * The environment variable RIFFLE_PROGRESS_DELAY_MS replaces the initial
 * delay of 1000 ms (for tests: RIFFLE_PROGRESS_DELAY_MS=0 shows the first
 * update at once).
 *
 * Cost: a disabled progress returns at the first test; an enabled one reads
 * CLOCK_MONOTONIC (a vDSO call, ~20 ns) per update, so calling
 * progress_update every ~1 MB of work is free.  One thread at a time: an
 * engine with workers sums their counts and reports from one thread.
 * Before printing an error message while a progress line may be shown, call
 * progress_done (the line would otherwise prefix the message).
 */
#ifndef RIFFLE_PROGRESS_H
#define RIFFLE_PROGRESS_H

#include <stdint.h>

/* Modes, as struct shuf_opts' `progress`. */
#define PROGRESS_NEVER (-1)
#define PROGRESS_AUTO 0   /* only when standard error is a terminal */
#define PROGRESS_FORCED 1

/* Fields are private, except `done` (read-only: the bytes of the current
 * phase last reported, kept up to date even when the progress is off). */
struct progress {
    int on, tty, shown;
    const char *phase;
    uint64_t total, done;
    uint64_t start_ns, phase_ns, last_ns; /* CLOCK_MONOTONIC */
    uint64_t delay_ns, every_ns;
};

/* Start the clock of the run (the initial delay counts from here). */
void progress_init(struct progress *p, int mode);
/* Begin a phase ("read", "scatter", "shuffle", "write") of total_bytes (0:
 * unknown); its rate and ETA count from now. */
void progress_phase(struct progress *p, const char *phase, uint64_t total_bytes);
/* done_bytes of the current phase are done (monotonic within the phase). */
void progress_update(struct progress *p, uint64_t done_bytes);
/* End the line: erase it on a terminal.  The progress may be reused with
 * progress_phase. */
void progress_done(struct progress *p);

#endif
