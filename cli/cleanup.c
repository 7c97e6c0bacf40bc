/*
 * cleanup.c -- the signal-time removal of temporary files (cleanup.h).
 *
 * The paths are kept in the library's registry (riffle_io.h, rf_removal),
 * whose rf_removal_run is async-signal-safe; this file owns the signals:
 * which ones, the handler, the message of a SIGBUS, dying of the signal.
 * A handler may only call async-signal-safe functions (POSIX.1-2017, XSH
 * 2.4.3) and may only rely on objects of type volatile sig_atomic_t or
 * lock-free atomics (C11 7.14.1.1p5): the registry is reached through a
 * lock-free atomic pointer, set once.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"
#include "riffle_io.h"

_Static_assert(ATOMIC_POINTER_LOCK_FREE == 2, "the handler reads an atomic pointer");
_Static_assert(CLEANUP_MAX_SIGNALS >= 64, "the standard signals and Linux's 33 real-time ones");
_Static_assert(CLEANUP_MAX_FILES <= RF_REMOVAL_MAX_FILES, "the registry holds every path");

/* The registry, made at the first need (cleanup_init, or a path before it)
 * and kept until the process ends. */
static _Atomic(rf_removal *) registry;

static volatile sig_atomic_t line_shown;
static char bus_msg[256];
static size_t bus_len;

/* Every signal whose default action ends the process, except the ones a
 * fault raises (SIGSEGV, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS: a bug,
 * where the state is not to be trusted) and the uncatchable SIGKILL: the
 * list of GNU sort, plus SIGUSR1, SIGUSR2 and the real-time signals.
 *  - SIGPIPE comes to the thread that wrote to a closed pipe (`riffle big |
 *    head`): the temporaries go, then riffle dies of it quietly as shuf does.
 *  - SIGXFSZ comes to the thread whose write went past RLIMIT_FSIZE
 *    (`ulimit -f`).
 * The library's workers block both with every other asynchronous signal (a
 * write of theirs past the limit fails with EFBIG instead, an error the
 * engine reports); the program's own writes, and any process-directed signal,
 * are taken by a program thread. */
static const int handled_sigs[] = {
    SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ,
    SIGVTALRM, SIGPROF,
#ifdef SIGPOLL
    SIGPOLL,
#endif
#if defined SIGIO && (!defined SIGPOLL || SIGIO != SIGPOLL)
    SIGIO,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
#ifdef SIGPWR
    SIGPWR,
#endif
#if defined SIGLOST && (!defined SIGPWR || SIGLOST != SIGPWR)
    SIGLOST,
#endif
};

size_t cleanup_signals(int sigs[CLEANUP_MAX_SIGNALS])
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof handled_sigs / sizeof handled_sigs[0]; i++)
        sigs[n++] = handled_sigs[i];
#if defined SIGRTMIN && defined SIGRTMAX
    for (int r = SIGRTMIN; r <= SIGRTMAX && n < CLEANUP_MAX_SIGNALS; r++)
        sigs[n++] = r;
#endif
    return n;
}

/* The handled signals, SIGBUS included (it can only come from the input
 * mapping, never from the registry's own stores). */
static void fill_handled(sigset_t *s)
{
    int sigs[CLEANUP_MAX_SIGNALS];
    const size_t n = cleanup_signals(sigs);
    sigemptyset(s);
    for (size_t i = 0; i < n; i++)
        sigaddset(s, sigs[i]);
    sigaddset(s, SIGBUS);
}

/* Updates block every handled signal. */
static void block_all(sigset_t *old)
{
    sigset_t s;
    fill_handled(&s);
    pthread_sigmask(SIG_BLOCK, &s, old);
}

static void unblock(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
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

static void put_err(const char *s, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0 && errno != EINTR)
            return;
        if (w > 0) {
            s += w;
            n -= (size_t)w;
        }
    }
}

/* Set by the first handler to run: the cleanup and the message happen
 * once, even when two threads fault on a truncated mapping together (the
 * gather runs on several) or two signals come at once.  Any later handler
 * waits for the first to end the process. */
static atomic_flag handling = ATOMIC_FLAG_INIT;

static void on_signal(int sig)
{
    if (atomic_flag_test_and_set(&handling))
        for (;;)
            pause();
    if (line_shown)
        put_err("\r\033[K", 4);
    if (sig == SIGBUS)
        put_err(bus_msg, bus_len);
    remove_all();
    if (sig == SIGBUS)
        _exit(CLI_FAIL);
    /* Die of the signal itself: default action, raised while still blocked
     * (it stays pending), then unblocked. */
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

static void make_bus_msg(void)
{
    static const char tail[] = ": bus error: an input file shrank while being read\n";
    size_t p = strlen(cli_prog);
    if (p > sizeof bus_msg - sizeof tail)
        p = sizeof bus_msg - sizeof tail;
    memcpy(bus_msg, cli_prog, p);
    memcpy(bus_msg + p, tail, sizeof tail);
    bus_len = p + sizeof tail - 1;
}

/* Handle `sig` unless it was ignored by the parent (nohup, a background job
 * of a non-interactive shell, SIGPIPE ignored to get EPIPE): that stays
 * ignored, as POSIX shells expect; a write error then takes the normal error
 * path. */
static int take(int sig, const struct sigaction *sa)
{
    struct sigaction old;
    if (sigaction(sig, NULL, &old) != 0)
        return errno;
    if (old.sa_handler == SIG_IGN)
        return 0;
    return sigaction(sig, sa, NULL) == 0 ? 0 : errno;
}

int cleanup_init(void)
{
    if (!reg())
        return ENOMEM;
    make_bus_msg();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    fill_handled(&sa.sa_mask);
    int sigs[CLEANUP_MAX_SIGNALS];
    const size_t n = cleanup_signals(sigs);
    for (size_t i = 0; i < n; i++) {
        const int e = take(sigs[i], &sa);
        if (e)
            return e;
    }
    return sigaction(SIGBUS, &sa, NULL) == 0 ? 0 : errno;
}

int cleanup_add(const char *path)
{
    rf_removal *r = reg();
    return r ? rf_removal_add(r, path) : -1;
}

void cleanup_remove(int id)
{
    rf_removal *r = atomic_load(&registry);
    if (r)
        rf_removal_forget(r, id);
}

int cleanup_engine_temp(void *ctx, const char *dir, unsigned long files)
{
    (void)ctx;
    rf_removal *r = reg();
    return r ? rf_removal_temp(r, dir, files) : ENOMEM;
}

void cleanup_progress_line(int shown)
{
    line_shown = shown;
}

void cleanup_hold(sigset_t *old)
{
    block_all(old);
}

void cleanup_release(const sigset_t *old)
{
    unblock(old);
}
