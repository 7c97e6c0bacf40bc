/*
 * mpi_cleanup.c -- signal-time removal of this rank's temporary files: the
 * output temporaries (every rank registers them, so whichever rank a signal
 * reaches first removes them) and the gather's bucket directory.
 *
 * mpirun forwards SIGINT and SIGTERM to every rank (then SIGKILL after a
 * grace period), so each rank removes what it may have made and dies of the
 * signal.  The paths are kept in the library's registry (riffle_io.h,
 * rf_removal), as the `riffle` program keeps its own, and its
 * rf_removal_run, async-signal-safe, removes them; this file owns the
 * signals.  A handler may only call async-signal-safe functions
 * (POSIX.1-2017, XSH 2.4.3) and read volatile sig_atomic_t or lock-free
 * atomics (C11 7.14.1.1p5): the registry is reached through a lock-free
 * atomic pointer, set once.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "mpi_job.h"
#include "riffle_io.h"

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "the handler reads an atomic pointer");

/* Made at the first need (cleanup_start, or a path before it) and kept
 * until the process ends. */
static _Atomic(rf_removal *) registry;

/* The signals whose default action ends the process, but those of a fault
 * (a bug: the state is not to be trusted) and SIGKILL. */
static const int handled_sigs[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE, SIGALRM,   SIGTERM,
                                   SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};

static void fill_handled(sigset_t *s)
{
    sigemptyset(s);
    for (size_t i = 0; i < sizeof handled_sigs / sizeof handled_sigs[0]; i++)
        sigaddset(s, handled_sigs[i]);
}

/* The registry, made if need be; NULL when out of memory. */
static rf_removal *reg(void)
{
    rf_removal *r = atomic_load(&registry);
    if (!r) {
        r = rf_removal_new();
        atomic_store(&registry, r);
    }
    return r;
}

static void remove_all(void)
{
    rf_removal *r = atomic_load(&registry);
    if (r)
        (void)rf_removal_run(r);
}

static atomic_flag handling = ATOMIC_FLAG_INIT;

static void on_signal(int sig)
{
    if (atomic_flag_test_and_set(&handling))
        for (;;)
            pause();
    remove_all();
    /* Die of the signal itself, so that mpirun and the shell see it. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
}

int cleanup_start(void)
{
    if (!reg())
        return ENOMEM;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    fill_handled(&sa.sa_mask);
    for (size_t i = 0; i < sizeof handled_sigs / sizeof handled_sigs[0]; i++) {
        struct sigaction old;
        if (sigaction(handled_sigs[i], NULL, &old) != 0)
            return errno;
        if (old.sa_handler == SIG_IGN)
            continue; /* ignored by the parent (nohup): stays ignored */
        if (sigaction(handled_sigs[i], &sa, NULL) != 0)
            return errno;
    }
    return 0;
}

int cleanup_file(const char *path)
{
    rf_removal *r = reg();
    return r ? rf_removal_add(r, path) : -1;
}

void cleanup_forget(int slot)
{
    rf_removal *r = atomic_load(&registry);
    if (r)
        rf_removal_forget(r, slot);
}

int cleanup_on_temp(void *ctx, const char *dir, unsigned long files)
{
    (void)ctx;
    rf_removal *r = reg();
    return r ? rf_removal_temp(r, dir, files) : ENOMEM;
}
