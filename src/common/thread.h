/* Internal: the library's worker threads. */
#ifndef RF_COMMON_THREAD_H
#define RF_COMMON_THREAD_H

#include <pthread.h>

/* Most threads any library call runs. */
#define RFI_THREADS_MAX 64

/* Online CPUs, between 1 and RFI_THREADS_MAX: what a thread count of 0 means. */
unsigned rfi_online_cpus(void);

/* A thread count as callers give it (0: every online CPU), capped at
 * RFI_THREADS_MAX. */
unsigned rfi_threads(unsigned threads);

/* pthread_create for the library's workers, with every asynchronous signal
 * blocked in the new thread (the fault signals SIGBUS, SIGSEGV, ... stay open:
 * blocked, they would kill): a program's SIGINT handler then runs on one of
 * its own threads, never on a worker while the program goes on (riffle.h,
 * "Threads").  Returns 1 if the thread started, else 0. */
int rfi_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

#endif
