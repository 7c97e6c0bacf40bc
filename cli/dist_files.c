/* dist_files.c -- the file transport's options and files (dist.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cleanup.h"
#include "dist.h"

/* --task=I or --tasks=P: a decimal count. */
static int parse_task(struct dist_opts *o, int tasks, const char *arg)
{
    uint64_t v;
    int over;
    if (cli_set_once(tasks ? &o->tasks_arg : &o->task_arg, arg,
                     tasks ? "task counts" : "task numbers") != CLI_CONTINUE)
        return CLI_FAIL;
    if (cli_parse_u64(arg, &v, &over) != 0 || over)
        return cli_usage(o->cmd, "invalid %s %s", tasks ? "task count" : "task number",
                         cli_quote(arg));
    if (tasks) {
        o->tasks = v;
        o->have_tasks = 1;
    } else {
        o->task = v;
        o->have_task = 1;
    }
    return CLI_CONTINUE;
}

/* One option: the steps' own to o, another to on. */
static int take_option(struct dist_opts *o, int c, const char *arg,
                       int (*on)(void *ctx, int c, const char *arg), void *ctx)
{
    const int r = cli_rng_option(&o->rng, c, arg);
    if (r != CLI_NOT_RNG)
        return r;
    switch (c) {
    case DIST_OPT_TASK:
    case DIST_OPT_TASKS:
        return parse_task(o, c == DIST_OPT_TASKS, arg);
    case DIST_OPT_DIR:
        return cli_set_once(&o->dir, arg, "directories");
    default:
        return on(ctx, c, arg);
    }
}

int dist_getopt(struct dist_opts *o, int argc, char **argv, const struct cli_options *t,
                int (*on)(void *ctx, int c, const char *arg), void *ctx)
{
    optind = 0; /* a fresh getopt scan (GNU) */
    int c;
    while ((c = getopt_long(argc, argv, t->shortopts, t->longopts, NULL)) != -1) {
        const int r = take_option(o, c, optarg, on, ctx);
        if (r != CLI_CONTINUE)
            return r;
    }
    return CLI_CONTINUE;
}

int dist_check(const struct dist_opts *o, int need_key)
{
    if (!o->have_task || !o->have_tasks || !o->dir)
        return cli_usage(o->cmd, "--task, --tasks and --dir are required");
    if (o->tasks == 0 || o->tasks > DIST_MAX_TASKS)
        return cli_usage(o->cmd, "invalid task count %llu: from 1 to %u",
                         (unsigned long long)o->tasks, DIST_MAX_TASKS);
    if (o->task >= o->tasks)
        return cli_usage(o->cmd, "invalid task number %llu: tasks are numbered 0 to %llu",
                         (unsigned long long)o->task, (unsigned long long)(o->tasks - 1));
    if (cli_rng_check(&o->rng, o->cmd) != CLI_OK)
        return CLI_FAIL;
    if (need_key && !o->rng.seed && !o->rng.random_source)
        return cli_usage(o->cmd, "--seed or --random-source is required: every task must "
                                 "use the same key");
    return CLI_CONTINUE;
}

int dist_key(const struct dist_opts *o, rf_engine_options *eo)
{
    eo->rng = cli_rng_kind(&o->rng);
    return cli_rng_key(&o->rng, eo->key) != 0;
}

int dist_path(const struct dist_opts *o, char *buf, size_t len, const char *fmt, ...)
{
    const int n = snprintf(buf, len, "%s/", o->dir);
    va_list ap;
    va_start(ap, fmt);
    const int m = n >= 0 && (size_t)n < len ? vsnprintf(buf + n, len - (size_t)n, fmt, ap) : -1;
    va_end(ap);
    if (m < 0 || (size_t)n + (size_t)m >= len) {
        cli_error("%s: %s", cli_quote(o->dir), strerror(ENAMETOOLONG));
        return -1;
    }
    return 0;
}

int dist_file_open(struct dist_file *f, const char *path)
{
    sigset_t old;
    f->guard = -1;
    f->open = 0;
    cleanup_hold(&old);
    int e = rf_atomic_open(&f->a, path);
    if (!e) {
        const char *tmp = rf_atomic_temp_path(&f->a);
        if (tmp && (f->guard = cleanup_add(tmp)) < 0) {
            rf_atomic_abort(&f->a);
            e = ENAMETOOLONG;
        }
    }
    cleanup_release(&old);
    if (e) {
        cli_error("%s: %s", path, strerror(e));
        return -1;
    }
    f->open = 1;
    return 0;
}

int dist_file_write(struct dist_file *f, const void *p, size_t len)
{
    const unsigned char *b = p;
    while (len > 0) {
        const ssize_t w = write(f->a.fd, b, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        b += w;
        len -= (size_t)w;
    }
    return 0;
}

int dist_file_commit(struct dist_file *f, const char *path)
{
    cleanup_remove(f->guard);
    f->guard = -1;
    f->open = 0;
    const int e = rf_atomic_commit(&f->a);
    if (e) {
        cli_error("%s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

void dist_file_abort(struct dist_file *f)
{
    if (!f->open)
        return;
    rf_atomic_abort(&f->a);
    cleanup_remove(f->guard);
    f->guard = -1;
    f->open = 0;
}

int dist_read_small(const char *path, const char *why, char **bytes, size_t *len)
{
    *bytes = NULL;
    *len = 0;
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            cli_error("%s: %s (%s)", path, strerror(errno), why);
        else
            cli_error("%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 256, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) {
            close(fd);
            cli_error("memory exhausted");
            return -1;
        }
        if (n + 1 == cap) {
            char *nb = realloc(b, cap * 2);
            if (!nb)
                free(b);
            b = nb;
            cap *= 2;
            continue;
        }
        const ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            cli_read_error(path, errno);
            free(b);
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    b[n] = '\0';
    *bytes = b;
    *len = n;
    return 0;
}

void dist_engine_error(const rf_engine_error *err)
{
    if (err->op == RF_ENGINE_OP_READ) {
        cli_read_error(err->path, err->err);
        return;
    }
    char msg[4096 + 256];
    rf_engine_error_message(err, msg, sizeof msg);
    cli_error("%s", msg);
}
