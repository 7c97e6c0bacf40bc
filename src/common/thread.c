/* The library's worker threads: one way to start them, with the signal mask
 * every library thread must have. */
#include <signal.h>
#include <unistd.h>

#include "thread.h"

unsigned rfi_online_cpus(void)
{
    const long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c < 1 ? 1u : c > RFI_THREADS_MAX ? RFI_THREADS_MAX : (unsigned)c;
}

unsigned rfi_threads(unsigned threads)
{
    if (threads == 0)
        return rfi_online_cpus();
    return threads > RFI_THREADS_MAX ? RFI_THREADS_MAX : threads;
}

int rfi_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
    /* Faults are delivered to the faulting thread; blocked, they kill. */
    static const int sync_sigs[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    sigset_t block, old;
    sigfillset(&block);
    for (size_t i = 0; i < sizeof sync_sigs / sizeof sync_sigs[0]; i++)
        sigdelset(&block, sync_sigs[i]);
    const int masked = pthread_sigmask(SIG_BLOCK, &block, &old) == 0;
    const int ok = pthread_create(tid, NULL, fn, arg) == 0;
    if (masked)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}
