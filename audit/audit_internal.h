/*
 * audit_internal.h -- pieces of the audit library that only its own files and
 * its tests use: the steps inside audit_exact_run, exposed so that the tests
 * can check one method against another on the same input.
 */
#ifndef RIFFLE_AUDIT_INTERNAL_H
#define RIFFLE_AUDIT_INTERNAL_H

#include <pthread.h>

#include "audit.h"

/* ---- audit_thread.c ----------------------------------------------------- */

/* pthread_create with every asynchronous signal blocked in the new thread
 * (the caller's mask is left as it was).  Returns pthread_create's result. */
int audit_thread_start(pthread_t *tid, void *(*fn)(void *), void *arg);

/* ---- audit_exact.c ------------------------------------------------------ */

/* The swap programme of `al` (which must have one) on n items: a malloc'ed
 * array of *count steps, or NULL with e->error set. */
audit_step *audit_exact_program(const audit_algo *al, size_t n, unsigned param,
                                size_t *count, audit_exact *e);
/* The dynamic programme over positions: fills e->pos_num and e->pos_den (the
 * item-to-position matrix) for the swap programme st[0..steps) on e->n items,
 * at any n, also where the full distribution is known.  Returns 0, or -1 with
 * e->error set. */
int audit_exact_positions(const audit_step *st, size_t steps, audit_exact *e);

#endif /* RIFFLE_AUDIT_INTERNAL_H */
