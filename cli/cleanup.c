/*
 * cleanup.c -- the signal-time removal of temporary files (cleanup.h).
 *
 * A handler may only call async-signal-safe functions (POSIX.1-2017, XSH
 * 2.4.3) and may only rely on objects of type volatile sig_atomic_t or
 * lock-free atomics (C11 7.14.1.1p5).  So the paths are copied into static
 * storage, and each update writes the data first and the count or flag that
 * makes it visible last, with the handled signals blocked in the updating
 * thread; the handler formats "DIR/123" by hand.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "cli.h"

_Static_assert(ATOMIC_LONG_LOCK_FREE == 2, "the handler reads an atomic long");
_Static_assert(CLEANUP_MAX_SIGNALS >= 64, "the standard signals and Linux's 33 real-time ones");

/* The paths, packed one after another ("a\0b\0"), in a static arena: a
 * thousand split parts in deep directories fit, and the pages of the arena
 * that are never used are never touched. */
#define ARENA_BYTES ((size_t)1 << 20)
static char arena[ARENA_BYTES];
static size_t arena_used;
static size_t slot_off[CLEANUP_MAX_FILES];
static volatile sig_atomic_t slot_live[CLEANUP_MAX_FILES];
static volatile sig_atomic_t slots; /* slots [0, slots) may be read */

/* The numbered directory: dir_len bytes of dir_path (no trailing NUL needed
 * by the handler, which appends "/N"). */
static char dir_path[PATH_MAX];
static size_t dir_len;
static volatile sig_atomic_t dir_on;
static atomic_ulong dir_n;

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

/* Write "dir/<n>" into buf (PATH_MAX + 24 bytes), NUL-terminated. */
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

/* Remove everything registered; async-signal-safe.  Returns the first errno
 * value other than ENOENT (for the normal path), 0 if none. */
static int remove_dir_files(void)
{
    int first = 0;
    if (!dir_on)
        return 0;
    char buf[PATH_MAX + 24];
    const unsigned long n = atomic_load_explicit(&dir_n, memory_order_acquire);
    for (unsigned long i = 0; i < n; i++) {
        numbered_path(buf, i);
        if (unlink(buf) != 0 && errno != ENOENT && !first)
            first = errno;
    }
    memcpy(buf, dir_path, dir_len);
    buf[dir_len] = '\0';
    if (rmdir(buf) != 0 && errno != ENOENT && !first)
        first = errno;
    return first;
}

static void remove_all(void)
{
    const sig_atomic_t n = slots;
    for (sig_atomic_t i = 0; i < n; i++)
        if (slot_live[i])
            unlink(arena + slot_off[i]);
    remove_dir_files();
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

/* Drop dead slots at the top, and reclaim the arena when none is left. */
static void trim(void)
{
    sig_atomic_t n = slots;
    while (n > 0 && !slot_live[n - 1])
        n--;
    slots = n;
    arena_used = n ? slot_off[n - 1] + strlen(arena + slot_off[n - 1]) + 1 : 0;
}

int cleanup_add(const char *path)
{
    const size_t len = strlen(path) + 1;
    sigset_t old;
    block_all(&old);
    int id = -1;
    if (slots < CLEANUP_MAX_FILES && len <= ARENA_BYTES - arena_used && len <= PATH_MAX) {
        id = slots;
        slot_off[id] = arena_used;
        memcpy(arena + arena_used, path, len);
        arena_used += len;
        slot_live[id] = 1;
        atomic_signal_fence(memory_order_release);
        slots = id + 1;
    }
    unblock(&old);
    return id;
}

void cleanup_remove(int id)
{
    if (id < 0)
        return;
    sigset_t old;
    block_all(&old);
    slot_live[id] = 0;
    atomic_signal_fence(memory_order_release);
    trim();
    unblock(&old);
}

int cleanup_dir_set(const char *dir)
{
    const size_t len = strlen(dir);
    if (len >= sizeof dir_path)
        return -1;
    sigset_t old;
    block_all(&old);
    dir_on = 0;
    atomic_signal_fence(memory_order_release);
    memcpy(dir_path, dir, len);
    dir_len = len;
    atomic_store_explicit(&dir_n, 0, memory_order_release);
    dir_on = 1;
    unblock(&old);
    return 0;
}

void cleanup_dir_count(unsigned long n)
{
    atomic_store_explicit(&dir_n, n, memory_order_release);
}

void cleanup_dir_clear(void)
{
    dir_on = 0;
    atomic_signal_fence(memory_order_release);
}

int cleanup_engine_temp(void *ctx, const char *dir, unsigned long files)
{
    (void)ctx;
    if (!dir)
        cleanup_dir_clear();
    else if (files == 0)
        return cleanup_dir_set(dir) == 0 ? 0 : ENAMETOOLONG;
    else
        cleanup_dir_count(files);
    return 0;
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
