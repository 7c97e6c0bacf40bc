/*
 * audit_thread.c -- the audit library's worker threads start with every
 * asynchronous signal blocked, as libriffle's own threads do: a program's
 * handlers (SIGINT, SIGTERM, SIGPIPE, ...) must run on the program's threads,
 * never on a worker in the middle of a trial.  The audit sits above libriffle
 * and sees only its public headers, so it sets the mask itself, the same way:
 * block everything but the signals a fault raises in the faulting thread
 * (POSIX.1-2017, XSH 2.4.1: a blocked SIGSEGV, SIGBUS, SIGFPE or SIGILL raised
 * by a fault leaves the behaviour undefined), create the thread, which
 * inherits the mask (pthread_create), and restore the caller's mask.
 */
#include <signal.h>

#include "audit_internal.h"

int audit_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg)
{
    static const int faults[] = {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    sigset_t block, old;
    sigfillset(&block);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&block, faults[i]);
    const int masked = pthread_sigmask(SIG_BLOCK, &block, &old) == 0;
    const int ret = pthread_create(tid, NULL, fn, arg);
    if (masked)
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ret;
}
