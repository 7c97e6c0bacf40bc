/* The temporary directory rule and the registry a signal handler empties
 * (src/records/temp_dir.c, src/records/removal.c): registered paths and a
 * numbered directory removed, forgotten ones kept, limits refused, and the
 * removal run from a real signal handler. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "riffle_io.h"

static char dir[PATH_MAX / 2]; /* room for a name after it */

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/riffle-removal-XXXXXX", rf_temp_dir(NULL));
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/%s", dir, name);
}

static void make_file(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fclose(f), 0);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void temp_dir_rule(void **state)
{
    (void)state;
    const char *saved = getenv("TMPDIR");
    char *copy = saved ? strdup(saved) : NULL;
    assert_string_equal(rf_temp_dir("/given"), "/given");
    assert_int_equal(setenv("TMPDIR", "/from/env", 1), 0);
    assert_string_equal(rf_temp_dir(NULL), "/from/env");
    assert_string_equal(rf_temp_dir("/given"), "/given");
    assert_int_equal(setenv("TMPDIR", "", 1), 0);
    assert_string_equal(rf_temp_dir(NULL), "/tmp");
    assert_int_equal(unsetenv("TMPDIR"), 0);
    assert_string_equal(rf_temp_dir(NULL), "/tmp");
    if (copy)
        assert_int_equal(setenv("TMPDIR", copy, 1), 0);
    free(copy);
}

static void paths_removed_forgotten_kept(void **state)
{
    (void)state;
    char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
    path_of(a, "a");
    path_of(b, "b");
    path_of(c, "c");
    make_file(a);
    make_file(b);
    make_file(c);
    rf_removal *r = rf_removal_new();
    assert_non_null(r);
    const int sa = rf_removal_add(r, a), sb = rf_removal_add(r, b), sc = rf_removal_add(r, c);
    assert_true(sa >= 0 && sb >= 0 && sc >= 0);
    rf_removal_forget(r, sb);
    rf_removal_forget(r, -1);
    assert_int_equal(rf_removal_run(r), 0);
    assert_false(exists(a));
    assert_true(exists(b));
    assert_false(exists(c));
    assert_int_equal(rf_removal_run(r), 0); /* already gone: no error */
    /* the forgotten top slots are reused */
    rf_removal_forget(r, sc);
    rf_removal_forget(r, sa);
    assert_int_equal(rf_removal_add(r, b), 0);
    assert_int_equal(rf_removal_run(r), 0);
    assert_false(exists(b));
    rf_removal_free(r);
}

static void numbered_directory(void **state)
{
    (void)state;
    char sub[PATH_MAX], f[PATH_MAX + 8];
    path_of(sub, "riffle-000000");
    assert_int_equal(mkdir(sub, 0700), 0);
    rf_removal *r = rf_removal_new();
    assert_non_null(r);
    assert_int_equal(rf_removal_temp(r, sub, 0), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rf_removal_temp(r, sub, (unsigned long)i + 1), 0);
        snprintf(f, sizeof f, "%s/%d", sub, i);
        make_file(f);
    }
    assert_int_equal(rf_removal_temp(r, sub, 5), 0); /* 3 and 4 not made yet */
    assert_int_equal(rf_removal_run(r), 0);
    assert_false(exists(sub));
    /* forgotten: a directory of the same name is left alone */
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(rf_removal_temp(r, NULL, 0), 0);
    assert_int_equal(rf_removal_run(r), 0);
    assert_true(exists(sub));
    assert_int_equal(rmdir(sub), 0);
    rf_removal_free(r);
}

static void limits_refused(void **state)
{
    (void)state;
    rf_removal *r = rf_removal_new();
    assert_non_null(r);
    char *long_path = malloc(PATH_MAX + 2);
    assert_non_null(long_path);
    memset(long_path, 'x', PATH_MAX + 1);
    long_path[PATH_MAX + 1] = '\0';
    assert_int_equal(rf_removal_add(r, long_path), -1);
    assert_int_equal(rf_removal_temp(r, long_path, 0), ENAMETOOLONG);
    free(long_path);
    char p[PATH_MAX];
    path_of(p, "never-made");
    for (int i = 0; i < RF_REMOVAL_MAX_FILES; i++)
        assert_int_equal(rf_removal_add(r, p), i);
    assert_int_equal(rf_removal_add(r, p), -1);
    assert_int_equal(rf_removal_run(r), 0); /* missing files are no error */
    rf_removal_free(r);
}

/* The first failure other than ENOENT is returned, and the removal goes on
 * past it: a registered directory (unlink fails with EISDIR) does not keep
 * the next path, and a numbered file beyond the count is left alone (so
 * the directory is not empty: ENOTEMPTY). */
static void failures_reported_and_passed(void **state)
{
    (void)state;
    char sub[PATH_MAX], after[PATH_MAX], f[PATH_MAX + 8];
    path_of(sub, "a-directory");
    path_of(after, "after");
    assert_int_equal(mkdir(sub, 0700), 0);
    make_file(after);
    rf_removal *r = rf_removal_new();
    assert_non_null(r);
    assert_int_equal(rf_removal_add(r, sub), 0);
    assert_int_equal(rf_removal_add(r, after), 1);
    assert_int_equal(rf_removal_run(r), EISDIR);
    assert_false(exists(after));
    assert_true(exists(sub));
    rf_removal_forget(r, 0);
    rf_removal_forget(r, 1);
    assert_int_equal(rf_removal_temp(r, sub, 0), 0);
    assert_int_equal(rf_removal_temp(r, sub, 2), 0);
    for (int i = 0; i < 3; i++) {
        snprintf(f, sizeof f, "%s/%d", sub, i);
        make_file(f);
    }
    assert_int_equal(rf_removal_run(r), ENOTEMPTY);
    snprintf(f, sizeof f, "%s/0", sub);
    assert_false(exists(f));
    snprintf(f, sizeof f, "%s/2", sub);
    assert_true(exists(f));
    assert_int_equal(unlink(f), 0);
    assert_int_equal(rf_removal_run(r), 0);
    assert_false(exists(sub));
    rf_removal_free(r);
}

/* The path room is bounded (about 1 MiB): long paths run out of it before
 * the slots do, and forgetting them all gives it back. */
static void path_room(void **state)
{
    (void)state;
    rf_removal *r = rf_removal_new();
    assert_non_null(r);
    char p[PATH_MAX];
    memset(p, 'y', sizeof p - 1);
    p[sizeof p - 1] = '\0';
    int n = 0;
    while (n < RF_REMOVAL_MAX_FILES && rf_removal_add(r, p) == n)
        n++;
    assert_true(n >= (1 << 20) / PATH_MAX - 1);
    assert_true(n < RF_REMOVAL_MAX_FILES);
    for (int i = 0; i < n; i++)
        rf_removal_forget(r, i);
    assert_int_equal(rf_removal_add(r, p), 0);
    rf_removal_free(r);
}

/* An update blocks this thread's signals only while it runs: the mask is
 * the caller's again after each. */
static void signal_mask_restored(void **state)
{
    (void)state;
    sigset_t before, after;
    sigemptyset(&before);
    sigaddset(&before, SIGUSR2);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &before, NULL), 0);
    rf_removal *r = rf_removal_new();
    assert_non_null(r);
    char p[PATH_MAX];
    path_of(p, "x");
    const int slot = rf_removal_add(r, p);
    assert_int_equal(slot, 0);
    rf_removal_forget(r, slot);
    assert_int_equal(rf_removal_temp(r, dir, 0), 0);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &after), 0);
    assert_true(sigismember(&after, SIGUSR2));
    assert_false(sigismember(&after, SIGUSR1));
    assert_false(sigismember(&after, SIGTERM));
    sigemptyset(&before);
    assert_int_equal(pthread_sigmask(SIG_SETMASK, &before, NULL), 0);
    assert_int_equal(rf_removal_temp(r, NULL, 0), 0);
    rf_removal_free(r);
}

/* The handler a front end would install: rf_removal_run only. */
static rf_removal *handler_registry;
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    (void)sig;
    (void)rf_removal_run(handler_registry);
    handled = 1;
}

static void from_a_signal_handler(void **state)
{
    (void)state;
    char a[PATH_MAX];
    path_of(a, "guarded");
    make_file(a);
    handler_registry = rf_removal_new();
    assert_non_null(handler_registry);
    assert_true(rf_removal_add(handler_registry, a) >= 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
    assert_int_equal(raise(SIGUSR1), 0);
    assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
    assert_true(handled);
    assert_false(exists(a));
    rf_removal_free(handler_registry);
    handler_registry = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(temp_dir_rule),
        cmocka_unit_test_setup_teardown(paths_removed_forgotten_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(numbered_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(limits_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(failures_reported_and_passed, setup, teardown),
        cmocka_unit_test_setup_teardown(path_room, setup, teardown),
        cmocka_unit_test_setup_teardown(signal_mask_restored, setup, teardown),
        cmocka_unit_test_setup_teardown(from_a_signal_handler, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
