/* removal.c -- the registry of temporary files a signal handler removes
 * (riffle_io.h, "Temporary files").
 *
 * A handler may only call async-signal-safe functions (POSIX.1-2017, XSH
 * 2.4.3: unlink, rmdir, and since Technical Corrigendum 2 memcpy) and may
 * only rely on lock-free atomics or volatile sig_atomic_t (C11 7.14.1.1p5).
 * So the paths are copied into the registry's own storage, and each update
 * writes the data first and then, with a release store to a lock-free
 * atomic, the flag or count that makes it visible; rf_removal_run loads
 * those with acquire, so a handler on another thread sees the data too
 * (C11 5.1.2.4), and formats "DIR/123" by hand.  The updating thread blocks
 * its asynchronous signals meanwhile, so its own handler never sees an
 * update half done. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "riffle_io.h"

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "a handler reads atomic ints");
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2, "a handler reads an atomic long");

/* The paths, packed one after another ("a\0b\0"): a thousand split parts in
 * deep directories fit. */
#define ARENA_BYTES ((size_t)1 << 20)

struct rf_removal {
    atomic_int slots;            /* slots [0, slots) may be read */
    atomic_int dir_on;
    atomic_ulong dir_n;          /* numbered files that may exist */
    size_t dir_len;              /* bytes of dir_path (no NUL needed) */
    size_t arena_used;
    char dir_path[PATH_MAX];
    size_t slot_off[RF_REMOVAL_MAX_FILES];
    atomic_int slot_live[RF_REMOVAL_MAX_FILES];
    char arena[ARENA_BYTES];
};

/* calloc of this size maps fresh zero pages: only those used are touched.
 * All-zero atomics are the zero values on every target riffle builds for
 * (the lock-free ones are plain integers). */
rf_removal *rf_removal_new(void)
{
    return calloc(1, sizeof(rf_removal));
}

void rf_removal_free(rf_removal *r)
{
    free(r);
}

/* Every asynchronous signal blocked in this thread during an update, so
 * that no handler of this thread sees it half done (pthread_sigmask leaves
 * SIGKILL and SIGSTOP alone). */
static void hold(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

static void release(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

int rf_removal_add(rf_removal *r, const char *path)
{
    const size_t len = strlen(path) + 1;
    int id = -1;
    sigset_t old;
    hold(&old);
    const int n = atomic_load_explicit(&r->slots, memory_order_relaxed);
    if (n < RF_REMOVAL_MAX_FILES && len <= ARENA_BYTES - r->arena_used && len <= PATH_MAX) {
        id = n;
        r->slot_off[id] = r->arena_used;
        memcpy(r->arena + r->arena_used, path, len);
        r->arena_used += len;
        atomic_store_explicit(&r->slot_live[id], 1, memory_order_release);
        atomic_store_explicit(&r->slots, id + 1, memory_order_release);
    }
    release(&old);
    return id;
}

static int live(const rf_removal *r, int i)
{
    return atomic_load_explicit(&r->slot_live[i], memory_order_acquire);
}

/* Drop dead slots at the top, and reclaim the arena when none is left. */
static void trim(rf_removal *r)
{
    int n = atomic_load_explicit(&r->slots, memory_order_relaxed);
    while (n > 0 && !live(r, n - 1))
        n--;
    atomic_store_explicit(&r->slots, n, memory_order_release);
    r->arena_used = n ? r->slot_off[n - 1] + strlen(r->arena + r->slot_off[n - 1]) + 1 : 0;
}

void rf_removal_forget(rf_removal *r, int slot)
{
    if (slot < 0 || slot >= atomic_load_explicit(&r->slots, memory_order_relaxed))
        return;
    sigset_t old;
    hold(&old);
    atomic_store_explicit(&r->slot_live[slot], 0, memory_order_release);
    trim(r);
    release(&old);
}

static int set_dir(rf_removal *r, const char *dir)
{
    const size_t len = strlen(dir);
    if (len >= sizeof r->dir_path)
        return ENAMETOOLONG;
    sigset_t old;
    hold(&old);
    atomic_store_explicit(&r->dir_on, 0, memory_order_release);
    memcpy(r->dir_path, dir, len);
    r->dir_len = len;
    atomic_store_explicit(&r->dir_n, 0, memory_order_release);
    atomic_store_explicit(&r->dir_on, 1, memory_order_release);
    release(&old);
    return 0;
}

int rf_removal_temp(void *ctx, const char *dir, unsigned long files)
{
    rf_removal *r = ctx;
    if (!dir) {
        atomic_store_explicit(&r->dir_on, 0, memory_order_release);
        return 0;
    }
    if (files == 0)
        return set_dir(r, dir);
    atomic_store_explicit(&r->dir_n, files, memory_order_release);
    return 0;
}

/* "DIR/<n>" into buf (PATH_MAX + 24 bytes), NUL-terminated. */
static void numbered_path(const rf_removal *r, char *buf, unsigned long n)
{
    memcpy(buf, r->dir_path, r->dir_len);
    char digits[24];
    size_t k = 0;
    do {
        digits[k++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    char *p = buf + r->dir_len;
    *p++ = '/';
    while (k)
        *p++ = digits[--k];
    *p = '\0';
}

/* Keep the first failure other than ENOENT (a file not made yet, or gone). */
static void note(int *first)
{
    if (errno != ENOENT && !*first)
        *first = errno;
}

static int remove_dir(const rf_removal *r)
{
    int first = 0;
    if (!atomic_load_explicit(&r->dir_on, memory_order_acquire))
        return 0;
    char buf[PATH_MAX + 24];
    const unsigned long n = atomic_load_explicit(&r->dir_n, memory_order_acquire);
    for (unsigned long i = 0; i < n; i++) {
        numbered_path(r, buf, i);
        if (unlink(buf) != 0)
            note(&first);
    }
    memcpy(buf, r->dir_path, r->dir_len);
    buf[r->dir_len] = '\0';
    if (rmdir(buf) != 0)
        note(&first);
    return first;
}

int rf_removal_run(const rf_removal *r)
{
    int first = 0;
    const int n = atomic_load_explicit(&r->slots, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (live(r, i) && unlink(r->arena + r->slot_off[i]) != 0)
            note(&first);
    const int dir = remove_dir(r);
    return first ? first : dir;
}
