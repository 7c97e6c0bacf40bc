/*
 * audit_child.c -- run an external line shuffler many times (--cmd).
 *
 * Each trial feeds the lines "1".."n" on stdin (a file, so a child can never
 * block the parent on a pipe) and collects stdout in a per-slot file; up to
 * `jobs` children run at once.  Commands without shell syntax are split on
 * blanks and started directly (posix_spawnp: no shell, and no copy of the
 * parent's page tables as fork would make); others go through /bin/sh -c.
 * Every output is checked to be a permutation of the input before it counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"

extern char **environ;

#define MAX_JOBS 256
#define PATH_LEN 128

/* Files to remove if a signal ends the audit: temporary files are removed on
 * every exit path, signals included.  Paths are built
 * beforehand: the handler only calls unlink and rmdir, which are
 * async-signal-safe (POSIX XSH 2.4.3). */
static char cleanup_path[MAX_JOBS + 2][PATH_LEN];
static volatile sig_atomic_t cleanup_count;

static void cleanup_on_signal(int sig)
{
    for (sig_atomic_t i = 0; i < cleanup_count; i++) {
        if (i + 1 < cleanup_count)
            unlink(cleanup_path[i]);
        else
            rmdir(cleanup_path[i]);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void arm_cleanup(const audit_child *c)
{
    sig_atomic_t k = 0;
    for (unsigned s = 0; s < c->jobs; s++)
        snprintf(cleanup_path[k++], PATH_LEN, "%s/out.%u", c->tmpdir, s);
    snprintf(cleanup_path[k++], PATH_LEN, "%s", c->input_path);
    snprintf(cleanup_path[k++], PATH_LEN, "%s", c->tmpdir); /* last: the directory */
    cleanup_count = k;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cleanup_on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static void disarm_cleanup(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], SIG_DFL);
    cleanup_count = 0;
}

int audit_child_needs_shell(const char *command)
{
    /* POSIX sh metacharacters, quotes and expansions (XCU 2.2, 2.6, 2.13), and
     * a leading VAR=value assignment. */
    if (strpbrk(command, "|&;<>()$`\\\"'*?[]#~{}\n") != NULL)
        return 1;
    const size_t first = strcspn(command + strspn(command, " \t"), " \t");
    const char *eq = memchr(command + strspn(command, " \t"), '=', first);
    return eq != NULL;
}

static char **split_words(const char *command)
{
    const size_t len = strlen(command);
    char **argv = calloc(len / 2 + 2, sizeof *argv);
    char *copy = strdup(command);
    if (argv == NULL || copy == NULL) {
        free(argv);
        free(copy);
        return NULL;
    }
    size_t k = 0;
    for (char *tok = strtok(copy, " \t"); tok != NULL; tok = strtok(NULL, " \t"))
        argv[k++] = tok;
    if (k == 0) {
        free(argv);
        free(copy);
        return NULL;
    }
    return argv; /* argv[0] points at the start of copy */
}

int audit_child_open(audit_child *c, const char *command, unsigned jobs)
{
    memset(c, 0, sizeof *c);
    c->command = command;
    c->jobs = jobs < 1 ? 1 : jobs > MAX_JOBS ? MAX_JOBS : jobs;
    c->use_shell = audit_child_needs_shell(command);
    if (!c->use_shell) {
        c->argv = split_words(command);
        if (c->argv == NULL)
            return -1;
    }
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || *tmp == '\0' || strlen(tmp) > 40)
        tmp = "/tmp";
    snprintf(c->tmpdir, sizeof c->tmpdir, "%s/riffle-audit.XXXXXX", tmp);
    if (mkdtemp(c->tmpdir) == NULL) {
        c->tmpdir[0] = '\0';
        return -1;
    }
    snprintf(c->input_path, sizeof c->input_path, "%s/input", c->tmpdir);
    arm_cleanup(c);
    return 0;
}

static void slot_path(const audit_child *c, unsigned slot, char *buf, size_t len)
{
    snprintf(buf, len, "%s/out.%u", c->tmpdir, slot);
}

void audit_child_close(audit_child *c)
{
    if (c->tmpdir[0] != '\0') {
        disarm_cleanup();
        char path[PATH_LEN];
        for (unsigned s = 0; s < c->jobs; s++) {
            slot_path(c, s, path, sizeof path);
            unlink(path);
        }
        unlink(c->input_path);
        rmdir(c->tmpdir);
    }
    if (c->argv != NULL) {
        free(c->argv[0]);
        free(c->argv);
    }
    memset(c, 0, sizeof *c);
}

static int write_input(audit_child *c, size_t n)
{
    FILE *f = fopen(c->input_path, "w");
    if (f == NULL)
        return -1;
    for (size_t i = 1; i <= n; i++)
        fprintf(f, "%zu\n", i);
    if (fclose(f) != 0)
        return -1;
    c->input_n = n;
    return 0;
}

static pid_t spawn_trial(const audit_child *c, unsigned slot)
{
    char out[PATH_LEN];
    slot_path(c, slot, out, sizeof out);
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    pid_t pid = -1;
    if (posix_spawn_file_actions_addopen(&fa, 0, c->input_path, O_RDONLY, 0) == 0 &&
        posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
                                         0600) == 0) {
        static char sh[] = "/bin/sh", dash_c[] = "-c";
        char *shell_argv[] = {sh, dash_c, (char *)(uintptr_t)c->command, NULL};
        char **argv = c->use_shell ? shell_argv : c->argv;
        if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0)
            pid = -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

static char *read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (used == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        const ssize_t r = read(fd, buf + used, cap - used);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            buf = NULL;
        } else if (r == 0) {
            break;
        } else {
            used += (size_t)r;
        }
    }
    close(fd);
    *len = used;
    return buf;
}

/* Is s[0..len) the canonical decimal of a number in 1..n?  Returns it or 0. */
static size_t line_value(const char *s, size_t len, size_t n)
{
    if (len == 0 || len > 19 || s[0] == '0')
        return 0;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    return v <= n ? v : 0;
}

int audit_parse_output(const char *buf, size_t len, size_t n, uint32_t *a,
                       unsigned char *seen, char *why, size_t why_len)
{
    memset(seen, 0, n);
    size_t count = 0, pos = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        const size_t end = nl ? (size_t)(nl - buf) : len;
        const size_t v = line_value(buf + pos, end - pos, n);
        if (v == 0) {
            snprintf(why, why_len, "altered or unexpected line '%.*s'",
                     (int)(end - pos > 40 ? 40 : end - pos), buf + pos);
            return -1;
        }
        if (seen[v - 1]) {
            snprintf(why, why_len, "line '%zu' appears twice", v);
            return -1;
        }
        seen[v - 1] = 1;
        if (count < n)
            a[count] = (uint32_t)(v - 1);
        count++;
        pos = end + 1;
    }
    if (count != n) {
        size_t missing = 0;
        while (missing < n && seen[missing])
            missing++;
        snprintf(why, why_len, "%zu lines out for %zu in; line '%zu' is missing", count,
                 n, missing + 1);
        return -1;
    }
    return 0;
}

typedef struct cmd_run {
    audit_child *c;
    size_t n;
    audit_acc *acc;
    uint32_t *a;
    unsigned char *seen;
    pid_t *pid; /* per slot; 0 when free */
} cmd_run;

static void note_broken(audit_child *c, uint64_t trial, const char *why)
{
    if (c->broken++ == 0)
        snprintf(c->example, sizeof c->example, "trial %llu: %s",
                 (unsigned long long)trial + 1, why);
}

/* Collect the output of the child that ran in `slot`.  Returns -1 when the
 * command could not be run at all. */
static int collect(cmd_run *r, unsigned slot, int status, uint64_t trial)
{
    char path[PATH_LEN], why[160];
    slot_path(r->c, slot, path, sizeof path);
    size_t len = 0;
    char *buf = read_file(path, &len);
    if (buf == NULL)
        return -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && len == 0) {
        free(buf);
        return -1; /* the shell or posix_spawnp could not find the command */
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, sizeof why, WIFEXITED(status) ? "exit status %d" : "killed by signal %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        note_broken(r->c, trial, why);
    } else if (audit_parse_output(buf, len, r->n, r->a, r->seen, why, sizeof why) != 0) {
        note_broken(r->c, trial, why);
    } else {
        audit_acc_add(r->acc, r->a);
    }
    free(buf);
    return 0;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_loop(cmd_run *r, uint64_t trials)
{
    audit_child *c = r->c;
    uint64_t started = 0, *slot_trial = calloc(c->jobs, sizeof *slot_trial);
    unsigned running = 0;
    int ret = 0;
    if (slot_trial == NULL)
        return -1;
    while (started < trials || running > 0) {
        for (unsigned s = 0; s < c->jobs && started < trials && ret == 0; s++) {
            if (r->pid[s] != 0)
                continue;
            r->pid[s] = spawn_trial(c, s);
            if (r->pid[s] < 0) {
                r->pid[s] = 0;
                ret = -1;
                break;
            }
            slot_trial[s] = started++;
            running++;
        }
        if (running == 0)
            break;
        int status;
        const pid_t done = waitpid(-1, &status, 0);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            ret = -1;
            break;
        }
        for (unsigned s = 0; s < c->jobs; s++) {
            if (r->pid[s] != done)
                continue;
            r->pid[s] = 0;
            running--;
            c->runs++;
            if (collect(r, s, status, slot_trial[s]) != 0)
                ret = -1;
        }
        if (ret != 0)
            trials = started; /* stop starting; reap the others */
    }
    free(slot_trial);
    return ret;
}

int audit_child_run(audit_child *c, size_t n, uint64_t trials, audit_acc *acc)
{
    if (c->input_n != n && write_input(c, n) != 0) {
        fprintf(stderr, "riffle: audit: %s: %s\n", c->input_path, strerror(errno));
        return -1;
    }
    cmd_run r = {c, n, acc, malloc((n + 1) * sizeof(uint32_t)), malloc(n + 1),
                 calloc(c->jobs, sizeof(pid_t))};
    int ret = -1;
    if (r.a == NULL || r.seen == NULL || r.pid == NULL) {
        fprintf(stderr, "riffle: audit: out of memory\n");
        goto done;
    }
    const double t0 = seconds_now();
    ret = run_loop(&r, trials);
    c->seconds += seconds_now() - t0;
    if (ret != 0)
        fprintf(stderr, "riffle: audit: cannot run '%s'\n", c->command);
done:
    free(r.a);
    free(r.seen);
    free(r.pid);
    return ret;
}
