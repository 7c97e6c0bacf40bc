/*
 * mpi_cleanup.c -- signal-time removal of this rank's temporary files: the
 * output temporaries (every rank registers them, so whichever rank a signal
 * reaches first removes them) and the gather's bucket directory.
 *
 * mpirun forwards SIGINT and SIGTERM to every rank (then SIGKILL after a
 * grace period), so each rank removes what it may have made and dies of the
 * signal.  A handler may only call async-signal-safe functions (POSIX.1-2017,
 * XSH 2.4.3) and read volatile sig_atomic_t or lock-free atomics (C11
 * 7.14.1.1p5): paths are copied into static storage, data first, then the
 * count that publishes them, with the handled signals blocked.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "mpi_job.h"

_Static_assert(ATOMIC_LONG_LOCK_FREE == 2, "the handler reads an atomic long");

/* The output temporaries: one per --split part at most, plus -o. */
#define MAX_FILES 4100
#define ARENA_BYTES ((size_t)1 << 20)
static char arena[ARENA_BYTES];
static size_t arena_used;
static size_t slot_off[MAX_FILES];
static volatile sig_atomic_t slot_live[MAX_FILES];
static volatile sig_atomic_t slots;

/* The gather's directory of numbered files dir/0 .. dir/(n-1). */
static char dir_path[PATH_MAX];
static size_t dir_len;
static volatile sig_atomic_t dir_on;
static atomic_ulong dir_n;

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

static void numbered_path(char *buf, unsigned long n)
{
    memcpy(buf, dir_path, dir_len);
    char digits[24];
    size_t k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    char *p = buf + dir_len;
    *p++ = '/';
    while (k)
        *p++ = digits[--k];
    *p = '\0';
}

static void remove_all(void)
{
    const sig_atomic_t n = slots;
    for (sig_atomic_t i = 0; i < n; i++)
        if (slot_live[i])
            unlink(arena + slot_off[i]);
    if (!dir_on)
        return;
    char buf[PATH_MAX + 24];
    const unsigned long files = atomic_load_explicit(&dir_n, memory_order_acquire);
    for (unsigned long i = 0; i < files; i++) {
        numbered_path(buf, i);
        unlink(buf);
    }
    memcpy(buf, dir_path, dir_len);
    buf[dir_len] = '\0';
    rmdir(buf);
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
    const size_t len = strlen(path) + 1;
    sigset_t s, old;
    fill_handled(&s);
    pthread_sigmask(SIG_BLOCK, &s, &old);
    int id = -1;
    if (slots < MAX_FILES && len <= ARENA_BYTES - arena_used && len <= PATH_MAX) {
        id = slots;
        slot_off[id] = arena_used;
        memcpy(arena + arena_used, path, len);
        arena_used += len;
        slot_live[id] = 1;
        atomic_signal_fence(memory_order_release);
        slots = id + 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return id;
}

void cleanup_forget(int slot)
{
    if (slot >= 0)
        slot_live[slot] = 0;
}

int cleanup_on_temp(void *ctx, const char *dir, unsigned long files)
{
    (void)ctx;
    if (!dir) {
        dir_on = 0;
        return 0;
    }
    if (files > 0) {
        atomic_store_explicit(&dir_n, files, memory_order_release);
        return 0;
    }
    const size_t len = strlen(dir);
    if (len >= sizeof dir_path)
        return ENAMETOOLONG;
    /* The engine calls this with the signals blocked (riffle_engine.h). */
    dir_on = 0;
    atomic_signal_fence(memory_order_release);
    memcpy(dir_path, dir, len);
    dir_len = len;
    atomic_store_explicit(&dir_n, 0, memory_order_release);
    dir_on = 1;
    return 0;
}
