/*
 * test_audit_thread.c -- the audit's worker threads run with every
 * asynchronous signal blocked (audit/audit_thread.c), seen from inside a
 * shuffle that the trials call on those threads, and the caller's own mask is
 * left as it was.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "audit.h"

static atomic_int calls, unmasked, faults_blocked;

/* A fair shuffle that also looks at the mask of the thread it runs on. */
static void probing_shuffle(rf_rng *g, uint32_t *a, size_t n, unsigned param,
                            uint32_t *scratch)
{
    (void)param;
    (void)scratch;
    sigset_t cur;
    if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0)
        atomic_fetch_add(&unmasked, 1);
    static const int async[] = {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGUSR1, SIGCHLD,
                                SIGALRM};
    for (size_t i = 0; i < sizeof async / sizeof async[0]; i++)
        if (!sigismember(&cur, async[i]))
            atomic_fetch_add(&unmasked, 1);
    if (sigismember(&cur, SIGSEGV) || sigismember(&cur, SIGBUS) || sigismember(&cur, SIGFPE))
        atomic_fetch_add(&faults_blocked, 1);
    atomic_fetch_add(&calls, 1);
    rf_shuffle_u32(g, a, n);
}

static void workers_block_async_signals(void **state)
{
    (void)state;
    const audit_algo probe = {"probe", "fair, and looks at its signal mask", 1, 1, NULL, 0,
                              probing_shuffle, NULL};
    sigset_t before, after;
    assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &before), 0);
    assert_false(sigismember(&before, SIGINT));
    audit_acc acc;
    assert_int_equal(audit_acc_init(&acc, 5, 400), 0);
    assert_int_equal(audit_run_builtin(&probe, 0, 1, 0, 400, 4, &acc), 0);
    assert_int_equal(acc.trials, 400);
    audit_acc_free(&acc);
    assert_int_equal(atomic_load(&calls), 400);
    assert_int_equal(atomic_load(&unmasked), 0);
    assert_int_equal(atomic_load(&faults_blocked), 0);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, NULL, &after), 0);
    assert_false(sigismember(&after, SIGINT));
    assert_false(sigismember(&after, SIGTERM));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workers_block_async_signals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
