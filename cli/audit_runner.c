/*
 * audit_runner.c -- run an external line shuffler many times (--cmd), as an
 * untrusted program: it may hang, flood, signal or leave processes behind.
 *
 * Each trial feeds the lines "1".."n" on stdin (a file, so a child can never
 * block the parent on a pipe) and collects stdout through a pipe, read as it
 * comes and never beyond the output limit (a trial over it is killed: nothing
 * reaches the disk and memory stays bounded).  Its stderr is a pipe too, never
 * riffle's own: its bytes count toward the same limit, the first STDERR_KEEP
 * are kept and shown, escaped, for the first trial judged broken (a trial
 * could otherwise flood riffle's stderr or send escape sequences to the
 * user's terminal), the rest are dropped.  Up to `jobs` trials run at once.
 * Commands without shell syntax are split on blanks and started directly
 * (posix_spawnp: no shell, and no copy of the parent's page tables as fork
 * would make); others go through /bin/sh -c.  Every output is checked to be a
 * permutation of the input before it counts (audit_parse_output, in the audit
 * library: audit/audit_output.c).  Processes, signals and stderr belong to the
 * program, not to a library: hence this file is in cli/.
 *
 * Containment (docs/audit.md, "Running untrusted commands"):
 *  - each trial leads its own session, hence its own process group
 *    (POSIX_SPAWN_SETSID, glibc 2.26; elsewhere only a group): `kill 0` in a
 *    trial reaches only that trial, a trial cannot setpgid() itself into
 *    riffle's group (a group must be joined within its session, XSH
 *    setpgid), and terminal stop signals, which go to the terminal's
 *    foreground group, never reach it.  The whole group is killed (SIGKILL)
 *    as soon as its leader ends, times out or overflows, and when a signal
 *    ends the audit; the leader is killed while still a zombie, so its pid
 *    (the group's id) cannot have been reused;
 *  - riffle is a child subreaper (prctl PR_SET_CHILD_SUBREAPER, Linux 3.4):
 *    a descendant that left the group (setsid) is re-parented to riffle when
 *    its parent dies, and riffle kills and reaps every such stray child after
 *    each trial, at the end and on a signal (read from
 *    /proc/thread-self/children; a kernel without it cannot catch those);
 *  - the child starts with an empty signal mask and SIGCHLD and SIGPIPE at
 *    their default action, and riffle sets its own SIGCHLD to the default (an
 *    ignored SIGCHLD would reap the trials before riffle could);
 *  - exit is watched through a pidfd (pidfd_open, Linux 5.3) polled with the
 *    output pipes; without one, a 20 ms tick.
 * What cannot be contained: a trial may still signal riffle by its pid (same
 * user), and a SIGKILL of riffle leaves the running trials to finish alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "audit_runner.h"
#include "cleanup.h"
#include "riffle_io.h"

extern char **environ;

#define MAX_JOBS 256
#define CALIBRATION_RUNS 5       /* trials timed before the timeout is derived */
#define CALIBRATION_TIMEOUT 60.0 /* seconds allowed to each of those */
#define TIMEOUT_FACTOR 20.0
#define TIMEOUT_MIN 10.0
#define OUTPUT_FACTOR 4          /* default output limit: 4 x the input... */
#define OUTPUT_MIN 4096          /* ...and at least 4 KiB */
#define STRAY_ROUNDS 64          /* generations of strays killed per sweep */
#define TICK 0.02                /* seconds between checks without a pidfd */
#define STDERR_KEEP 4096         /* bytes of a trial's stderr kept to show... */
#define STDERR_LINES 16          /* ...in at most this many lines */

/* ---- what a signal must undo ---------------------------------------------- */

/* Files to remove and process groups to kill if a signal ends the audit.  The
 * paths are built beforehand and the groups published as sig_atomic_t; the
 * handler only calls kill, open, read, close, waitpid, unlink and rmdir,
 * which are async-signal-safe (POSIX XSH 2.4.3). */
static char *cleanup_input, *cleanup_dir; /* set before the handler is armed */
static volatile sig_atomic_t cleanup_armed;
static volatile sig_atomic_t live_group[MAX_JOBS];
static volatile sig_atomic_t subreaper;

/* Every terminating signal, the list the rest of riffle handles (cleanup.h):
 * any of them ending the audit would leave the input file and the trials
 * behind. */
static int handled_sigs[CLEANUP_MAX_SIGNALS];
static size_t nsigs;
static struct sigaction saved_action[CLEANUP_MAX_SIGNALS];
static struct sigaction saved_chld;

/* Kill every child of this thread that is not the leader of a live trial
 * (pids in `keep`, `nkeep` entries) and its group, then reap it; repeat while
 * its own children come to us.  Async-signal-safe: the list is parsed by hand. */
static void kill_strays(const volatile sig_atomic_t *keep, size_t nkeep)
{
    for (int round = 0; round < STRAY_ROUNDS; round++) {
        const int fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        char buf[4096];
        ssize_t len = 0, r;
        while (len < (ssize_t)sizeof buf &&
               ((r = read(fd, buf + len, sizeof buf - (size_t)len)) > 0 ||
                (r < 0 && errno == EINTR)))
            len += r > 0 ? r : 0;
        close(fd);
        int found = 0;
        for (ssize_t i = 0; i < len;) {
            long pid = 0;
            while (i < len && (buf[i] < '0' || buf[i] > '9'))
                i++;
            while (i < len && buf[i] >= '0' && buf[i] <= '9')
                pid = pid * 10 + (buf[i++] - '0');
            if (pid <= 0)
                continue;
            int live = 0;
            for (size_t k = 0; k < nkeep; k++)
                live |= keep[k] == (sig_atomic_t)pid;
            if (live)
                continue;
            found = 1;
            kill((pid_t)-pid, SIGKILL);
            kill((pid_t)pid, SIGKILL);
            while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        if (!found)
            return;
    }
}

static void cleanup_on_signal(int sig)
{
    const int saved = errno;
    for (size_t s = 0; s < MAX_JOBS; s++)
        if (live_group[s] > 0)
            kill(-(pid_t)live_group[s], SIGKILL);
    if (subreaper)
        kill_strays(NULL, 0);
    if (cleanup_armed) {
        unlink(cleanup_input);
        rmdir(cleanup_dir);
    }
    errno = saved;
    /* Then what was there before: the default action, or the handler of
     * cleanup.c that removes the program's own temporaries (a --report in
     * progress) and dies of the signal in turn. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    const struct sigaction *before = &dfl;
    for (size_t i = 0; i < nsigs; i++)
        if (handled_sigs[i] == sig)
            before = &saved_action[i];
    sigaction(sig, before, NULL);
    raise(sig);
}

/* Signals that were ignored when the audit started stay ignored (as nohup
 * wants); the others remove the temporaries and kill the trials. */
static void arm_cleanup(const audit_runner *c)
{
    cleanup_input = c->input_path;
    cleanup_dir = c->tmpdir;
    cleanup_armed = 1;
    nsigs = cleanup_signals(handled_sigs);
    for (size_t i = 0; i < nsigs; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = cleanup_on_signal;
        sigfillset(&sa.sa_mask);
        sigaction(handled_sigs[i], NULL, &saved_action[i]);
        if (saved_action[i].sa_handler != SIG_IGN)
            sigaction(handled_sigs[i], &sa, NULL);
    }
    /* An ignored SIGCHLD (inherited from the parent) would make the kernel reap
     * the trials itself, and their exit status would be lost. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, &saved_chld);
}

static void disarm_cleanup(void)
{
    for (size_t i = 0; i < nsigs; i++)
        sigaction(handled_sigs[i], &saved_action[i], NULL);
    sigaction(SIGCHLD, &saved_chld, NULL);
    cleanup_armed = 0;
}

/* ---- preparing ---------------------------------------------------------------- */

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
        errno = EINVAL;
        return NULL;
    }
    return argv; /* argv[0] points at the start of copy */
}

/* The temporary directory (rf_temp_dir: $TMPDIR whatever its length, else
 * /tmp). */
static int make_tmpdir(audit_runner *c)
{
    const char *tmp = rf_temp_dir(NULL);
    const size_t len = strlen(tmp) + sizeof "/riffle-audit.XXXXXX";
    c->tmpdir = malloc(len);
    c->input_path = malloc(len + sizeof "/input");
    if (c->tmpdir == NULL || c->input_path == NULL)
        return -1;
    snprintf(c->tmpdir, len, "%s/riffle-audit.XXXXXX", tmp);
    if (mkdtemp(c->tmpdir) == NULL) {
        const int e = errno;
        snprintf(c->error, sizeof c->error,
                 "cannot make a temporary directory in '%s' (TMPDIR): %s", tmp,
                 strerror(e));
        free(c->tmpdir);
        c->tmpdir = NULL;
        errno = e;
        return -1;
    }
    snprintf(c->input_path, len + sizeof "/input", "%s/input", c->tmpdir);
    return 0;
}

int audit_runner_open(audit_runner *c, const char *command, unsigned jobs)
{
    memset(c, 0, sizeof *c);
    c->command = command;
    c->jobs = jobs < 1 ? 1 : jobs > MAX_JOBS ? MAX_JOBS : jobs;
    if (audit_command_blank(command)) {
        snprintf(c->error, sizeof c->error, "empty command");
        return -1;
    }
    c->use_shell = audit_command_needs_shell(command);
    if (!c->use_shell && (c->argv = split_words(command)) == NULL) {
        snprintf(c->error, sizeof c->error, "%s", strerror(errno));
        return -1;
    }
    if (make_tmpdir(c) != 0) {
        if (c->error[0] == '\0')
            snprintf(c->error, sizeof c->error, "%s", strerror(errno));
        return -1;
    }
    arm_cleanup(c);
    subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
    c->subreaper = subreaper;
    return 0;
}

void audit_runner_close(audit_runner *c)
{
    if (subreaper)
        kill_strays(NULL, 0);
    if (c->tmpdir != NULL) {
        unlink(c->input_path);
        rmdir(c->tmpdir);
        disarm_cleanup();
    }
    if (subreaper)
        prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
    subreaper = 0;
    if (c->argv != NULL) {
        free(c->argv[0]);
        free(c->argv);
    }
    free(c->tmpdir);
    free(c->input_path);
    memset(c, 0, sizeof *c);
}

static int write_input(audit_runner *c, size_t n)
{
    FILE *f = fopen(c->input_path, "w");
    if (f == NULL)
        return -1;
    size_t bytes = 0;
    for (size_t i = 1; i <= n; i++) {
        const int k = fprintf(f, "%zu\n", i);
        bytes += k > 0 ? (size_t)k : 0;
    }
    if (fclose(f) != 0)
        return -1;
    c->input_n = n;
    c->input_bytes = bytes;
    return 0;
}

uint64_t audit_runner_output_limit(const audit_runner *c, size_t n)
{
    if (c->max_output != 0)
        return c->max_output;
    /* The input's size, computed: "1\n".."n\n". */
    uint64_t bytes = 0;
    for (uint64_t lo = 1, digits = 1; lo <= n; lo *= 10, digits++) {
        const uint64_t hi = lo * 10 - 1 < n ? lo * 10 - 1 : n;
        bytes += (hi - lo + 1) * (digits + 1);
    }
    const uint64_t lim = OUTPUT_FACTOR * bytes;
    return lim < OUTPUT_MIN ? OUTPUT_MIN : lim;
}

double audit_runner_timeout(const audit_runner *c)
{
    if (c->timeout > 0.0)
        return c->timeout;
    if (c->calibrated < CALIBRATION_RUNS)
        return CALIBRATION_TIMEOUT;
    const double t = TIMEOUT_FACTOR * c->slowest;
    return t < TIMEOUT_MIN ? TIMEOUT_MIN : t;
}

/* ---- one trial ---------------------------------------------------------------- */

typedef struct slot {
    pid_t pid;          /* 0 when free */
    int pidfd, out, err; /* -1 when closed */
    char *buf;
    size_t len, cap;    /* cap grows up to the output limit + 1 */
    char *ebuf;         /* the first STDERR_KEEP + 1 bytes of stderr, NUL ended */
    size_t elen;        /* bytes in ebuf */
    uint64_t etotal;    /* bytes of stderr read */
    int overflow, timed_out;
    double start;
    uint64_t trial;
} slot;

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int spawn_attr(posix_spawnattr_t *at)
{
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGCHLD);
    sigaddset(&dfl, SIGPIPE);
    if (posix_spawnattr_init(at) != 0)
        return -1;
#ifdef POSIX_SPAWN_SETSID
    /* A new session: its leader's group id is its pid, as with SETPGROUP. */
    const short group = POSIX_SPAWN_SETSID;
#else
    const short group = POSIX_SPAWN_SETPGROUP;
#endif
    if (posix_spawnattr_setflags(at, group | POSIX_SPAWN_SETSIGMASK |
                                         POSIX_SPAWN_SETSIGDEF) != 0 ||
        posix_spawnattr_setpgroup(at, 0) != 0 ||
        posix_spawnattr_setsigmask(at, &none) != 0 ||
        posix_spawnattr_setsigdefault(at, &dfl) != 0) {
        posix_spawnattr_destroy(at);
        return -1;
    }
    return 0;
}

/* Start a trial in slot s.  Returns 0, or an errno value (exec's included:
 * glibc's posix_spawnp reports it). */
static int spawn_trial(audit_runner *c, slot *s)
{
    if (s->ebuf == NULL && (s->ebuf = malloc(STDERR_KEEP + 2)) == NULL)
        return ENOMEM;
    int p[2], e[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return errno;
    if (pipe2(e, O_CLOEXEC) != 0) {
        const int saved = errno;
        close(p[0]);
        close(p[1]);
        return saved;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    int err = posix_spawn_file_actions_init(&fa);
    if (err != 0 || spawn_attr(&at) != 0) {
        if (err == 0)
            posix_spawn_file_actions_destroy(&fa);
        close(p[0]);
        close(p[1]);
        close(e[0]);
        close(e[1]);
        return err != 0 ? err : ENOMEM;
    }
    pid_t pid = 0;
    if ((err = posix_spawn_file_actions_addopen(&fa, 0, c->input_path, O_RDONLY, 0)) == 0 &&
        (err = posix_spawn_file_actions_adddup2(&fa, p[1], 1)) == 0 &&
        (err = posix_spawn_file_actions_adddup2(&fa, e[1], 2)) == 0) {
        static char sh[] = "/bin/sh", dash_c[] = "-c";
        char *shell_argv[] = {sh, dash_c, (char *)(uintptr_t)c->command, NULL};
        char **argv = c->use_shell ? shell_argv : c->argv;
        err = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    }
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(p[1]);
    close(e[1]);
    if (err != 0) {
        close(p[0]);
        close(e[0]);
        return err;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    fcntl(e[0], F_SETFL, O_NONBLOCK);
    s->pid = pid;
    s->out = p[0];
    s->err = e[0];
    s->len = 0;
    s->elen = 0;
    s->etotal = 0;
    s->overflow = s->timed_out = 0;
    s->start = seconds_now();
#ifdef SYS_pidfd_open
    s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
    s->pidfd = -1;
#endif
    return 0;
}

static int grow(slot *s, uint64_t limit)
{
    size_t cap = s->cap ? 2 * s->cap : 4096;
    if (cap > limit + 1)
        cap = (size_t)limit + 1;
    char *nb = realloc(s->buf, cap);
    if (nb == NULL)
        return -1;
    s->buf = nb;
    s->cap = cap;
    return 0;
}

/* read(2) of a non-blocking pipe, retried on EINTR: the bytes read (> 0); 0
 * at end of file or on an error (either ends the pipe); -1 when it holds
 * nothing now (EAGAIN). */
static ssize_t pipe_read(int fd, void *buf, size_t n)
{
    for (;;) {
        const ssize_t r = read(fd, buf, n);
        if (r >= 0)
            return r;
        if (errno != EINTR)
            return errno == EAGAIN ? -1 : 0;
    }
}

/* Read what the pipe holds now, up to the limit; returns 1 at end of file. */
static int drain(slot *s, uint64_t limit)
{
    char scratch[4096];
    for (;;) {
        char *dst = scratch;
        size_t room = sizeof scratch;
        if (!s->overflow) {
            if (s->len == s->cap && grow(s, limit) != 0)
                return s->overflow = 1, 1; /* no memory for more: as too much */
            dst = s->buf + s->len;
            room = s->cap - s->len;
        }
        const ssize_t r = pipe_read(s->out, dst, room);
        if (r <= 0)
            return r == 0;
        if (!s->overflow) {
            s->len += (size_t)r;
            if (s->len + s->etotal > limit)
                return s->overflow = 1, 1; /* stop reading: the trial is killed */
        }
    }
}

/* Read what the stderr pipe holds now: the first STDERR_KEEP + 1 bytes are
 * kept, all count toward the output limit.  Returns 1 at end of file or when
 * the limit is passed (the trial is then killed). */
static int drain_err(slot *s, uint64_t limit)
{
    char scratch[4096];
    for (;;) {
        const ssize_t r = pipe_read(s->err, scratch, sizeof scratch);
        if (r <= 0)
            return r == 0;
        const size_t room = STDERR_KEEP + 1 - s->elen;
        const size_t keep = (size_t)r < room ? (size_t)r : room;
        memcpy(s->ebuf + s->elen, scratch, keep);
        s->elen += keep;
        s->ebuf[s->elen] = '\0';
        s->etotal += (uint64_t)r;
        if (s->len + s->etotal > limit)
            return s->overflow = 1, 1;
    }
}

/* The stderr of slot s's trial on riffle's stderr, each line prefixed and
 * escaped as the text report escapes a command's output, cut at STDERR_KEEP
 * bytes on a UTF-8 character and at STDERR_LINES lines. */
static void show_stderr(const slot *s)
{
    if (s->etotal == 0)
        return;
    size_t shown = audit_utf8_cut(s->ebuf, s->elen, STDERR_KEEP);
    const char *p = s->ebuf;
    for (int lines = 0; lines < STDERR_LINES && p != NULL && p < s->ebuf + shown; lines++)
        if ((p = memchr(p, '\n', shown - (size_t)(p - s->ebuf))) != NULL)
            p++;
    if (p != NULL && p < s->ebuf + shown)
        shown = (size_t)(p - s->ebuf);
    for (size_t pos = 0; pos < shown;) {
        const char *nl = memchr(s->ebuf + pos, '\n', shown - pos);
        const size_t end = nl ? (size_t)(nl - s->ebuf) : shown;
        fprintf(stderr, "riffle: audit: trial %llu stderr: ", (unsigned long long)s->trial + 1);
        audit_fput_bytes(stderr, s->ebuf + pos, end - pos);
        fputc('\n', stderr);
        pos = end + 1;
    }
    if (s->etotal > shown)
        fprintf(stderr, "riffle: audit: trial %llu stderr: (%llu more bytes not shown)\n",
                (unsigned long long)s->trial + 1,
                (unsigned long long)(s->etotal - shown));
    fflush(stderr);
}

/* ---- the run ------------------------------------------------------------------ */

typedef struct cmd_run {
    audit_runner *c;
    size_t n;
    audit_acc *acc;
    uint32_t *a;
    unsigned char *seen;
    slot *slots;
    uint64_t limit;        /* output bytes */
    uint64_t done, target; /* trials collected in this call, and asked */
    double t0, last_progress;
    int progress_shown;
} cmd_run;

static void note_broken(audit_runner *c, const slot *s, const char *why)
{
    if (c->broken++ == 0) {
        snprintf(c->example, sizeof c->example, "trial %llu: %s",
                 (unsigned long long)s->trial + 1, why);
        show_stderr(s);
    }
}

static void progress(cmd_run *r, int final)
{
    audit_runner *c = r->c;
    if (!c->progress)
        return;
    const double now = seconds_now();
    const int tty = isatty(STDERR_FILENO);
    if (final) {
        if (r->progress_shown && tty)
            fputs("\r\033[K", stderr);
        return;
    }
    if (now - r->last_progress < (tty ? 0.25 : 1.0))
        return;
    r->last_progress = now;
    r->progress_shown = 1;
    const double rate = r->done ? (now - r->t0) / (double)r->done : 0.0;
    char eta[48] = "?";
    if (r->done)
        snprintf(eta, sizeof eta, "%.0fs", rate * (double)(r->target - r->done));
    fprintf(stderr, "%sriffle: audit: n = %zu, %llu trials done, next look after %llu"
                    " (in ~%s)%s",
            tty ? "\r" : "", r->n, (unsigned long long)r->acc->trials,
            (unsigned long long)(r->acc->trials + r->target - r->done), eta,
            tty ? "\033[K" : "\n");
    fflush(stderr);
}

static void kill_group(slot *s)
{
    kill(-s->pid, SIGKILL);
}

/* The leader of slot s has ended (a zombie, not yet reaped): kill what is left
 * of its group, reap it, take the rest of its output and judge it. */
static void finish(cmd_run *r, unsigned k)
{
    audit_runner *c = r->c;
    slot *s = &r->slots[k];
    kill_group(s);
    int status = 0;
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
        ;
    live_group[k] = 0;
    if (s->out >= 0) {
        drain(s, r->limit);
        close(s->out);
        s->out = -1;
    }
    if (s->err >= 0) {
        drain_err(s, r->limit);
        close(s->err);
        s->err = -1;
    }
    if (s->pidfd >= 0)
        close(s->pidfd);
    s->pidfd = -1;
    s->pid = 0;
    const double took = seconds_now() - s->start;
    c->runs++;
    if (subreaper)
        kill_strays(live_group, c->jobs);

    char why[160];
    if (s->timed_out) {
        snprintf(why, sizeof why, "timed out after %.3g s (killed)", audit_runner_timeout(c));
        c->timed_out++;
        note_broken(c, s, why);
    } else if (s->overflow) {
        snprintf(why, sizeof why, "more than %llu bytes of output (killed)",
                 (unsigned long long)r->limit);
        c->overflowed++;
        note_broken(c, s, why);
    } else if (c->use_shell && WIFEXITED(status) &&
               (WEXITSTATUS(status) == 127 || WEXITSTATUS(status) == 126) && s->len == 0) {
        /* The shell could not find or run the command (XCU 2.8.2); without a
         * shell, posix_spawnp reports exec's error itself. */
        if (c->cannot_run == 0)
            show_stderr(s); /* the shell's own message */
        c->cannot_run = WEXITSTATUS(status);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, sizeof why, WIFEXITED(status) ? "exit status %d" : "killed by signal %d",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        note_broken(c, s, why);
    } else if (audit_parse_output(s->buf, s->len, r->n, r->a, r->seen, why,
                                  sizeof why) != 0) {
        note_broken(c, s, why);
    } else {
        audit_acc_add(r->acc, r->a);
        if (c->calibrated < CALIBRATION_RUNS) {
            c->calibrated++;
            if (took > c->slowest)
                c->slowest = took;
        }
    }
    r->done++;
    progress(r, 0);
}

/* Has the leader of slot s ended?  Then finish it. */
static void check_exit(cmd_run *r, unsigned k)
{
    slot *s = &r->slots[k];
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)s->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == s->pid)
        finish(r, k);
}

static int start_trials(cmd_run *r, uint64_t *started, uint64_t trials, int *err)
{
    audit_runner *c = r->c;
    unsigned running = 0;
    for (unsigned k = 0; k < c->jobs; k++) {
        slot *s = &r->slots[k];
        if (s->pid == 0 && *started < trials && *err == 0 && !c->stop) {
            /* The group is published before it exists: a signal between the
             * spawn and the store would otherwise miss it. */
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_BLOCK, &all, &old);
            *err = spawn_trial(c, s);
            if (*err == 0) {
                live_group[k] = s->pid;
                s->trial = c->started++;
                (*started)++;
            }
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        running += s->pid != 0;
    }
    return (int)running;
}

/* Wait for output, exits or a deadline, at most until `until`. */
static void wait_events(cmd_run *r, double until)
{
    audit_runner *c = r->c;
    struct pollfd pfd[3 * MAX_JOBS];
    unsigned who[3 * MAX_JOBS];
    nfds_t m = 0;
    int tick = 0;
    for (unsigned k = 0; k < c->jobs; k++) {
        slot *s = &r->slots[k];
        if (s->pid == 0)
            continue;
        if (s->out >= 0)
            pfd[m] = (struct pollfd){.fd = s->out, .events = POLLIN}, who[m++] = k;
        if (s->err >= 0)
            pfd[m] = (struct pollfd){.fd = s->err, .events = POLLIN}, who[m++] = k;
        if (s->pidfd >= 0)
            pfd[m] = (struct pollfd){.fd = s->pidfd, .events = POLLIN}, who[m++] = k;
        else
            tick = 1;
    }
    const double now = seconds_now();
    double wait = until - now;
    if (tick && wait > TICK)
        wait = TICK;
    if (c->progress && wait > 0.25)
        wait = 0.25;
    const int ms = wait <= 0.0 ? 0 : (int)(wait * 1000.0) + 1;
    if (poll(pfd, m, ms) < 0)
        return; /* EINTR: look again */
    for (nfds_t i = 0; i < m; i++) {
        slot *s = &r->slots[who[i]];
        if (pfd[i].revents == 0 || s->pid == 0)
            continue;
        if (pfd[i].fd == s->out && drain(s, r->limit)) {
            close(s->out);
            s->out = -1;
            if (s->overflow)
                kill_group(s);
        } else if (pfd[i].fd == s->err && drain_err(s, r->limit)) {
            close(s->err);
            s->err = -1;
            if (s->overflow)
                kill_group(s);
        }
    }
}

static int run_loop(cmd_run *r, uint64_t trials)
{
    audit_runner *c = r->c;
    uint64_t started = 0;
    int err = 0;
    r->t0 = seconds_now();
    for (;;) {
        const int running = start_trials(r, &started, trials, &err);
        if (running == 0)
            break;
        const double timeout = audit_runner_timeout(c);
        double until = INFINITY;
        for (unsigned k = 0; k < c->jobs; k++)
            if (r->slots[k].pid != 0 && r->slots[k].start + timeout < until)
                until = r->slots[k].start + timeout;
        if (c->deadline > 0.0 && c->deadline < until)
            until = c->deadline;
        wait_events(r, until);
        const double now = seconds_now();
        for (unsigned k = 0; k < c->jobs; k++) {
            slot *s = &r->slots[k];
            if (s->pid == 0)
                continue;
            if (!s->timed_out && now >= s->start + timeout) {
                s->timed_out = 1;
                c->stop = 1; /* a hung command would cost every trial a timeout */
                kill_group(s);
            }
            check_exit(r, k);
        }
        if (c->deadline > 0.0 && now >= c->deadline && !c->time_up) {
            /* Out of time: the trials under way are killed and not counted. */
            c->time_up = c->stop = 1;
            for (unsigned k = 0; k < c->jobs; k++)
                if (r->slots[k].pid != 0)
                    kill_group(&r->slots[k]);
            for (unsigned k = 0; k < c->jobs; k++) {
                slot *s = &r->slots[k];
                if (s->pid == 0)
                    continue;
                while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
                    ;
                live_group[k] = 0;
                if (s->out >= 0)
                    close(s->out);
                if (s->err >= 0)
                    close(s->err);
                if (s->pidfd >= 0)
                    close(s->pidfd);
                *s = (slot){.pid = 0, .pidfd = -1, .out = -1, .err = -1, .buf = s->buf,
                            .cap = s->cap, .ebuf = s->ebuf};
            }
        }
    }
    if (c->cannot_run != 0 && c->error[0] == '\0')
        snprintf(c->error, sizeof c->error, "the shell could not %s it (exit status %d)",
                 c->cannot_run == 127 ? "find" : "execute", c->cannot_run);
    if (err != 0 && c->error[0] == '\0')
        snprintf(c->error, sizeof c->error, "%s", strerror(err));
    return err != 0 || c->cannot_run != 0 ? -1 : 0;
}

int audit_runner_run(audit_runner *c, size_t n, uint64_t trials, audit_acc *acc)
{
    if (c->stop)
        return 0;
    if (c->input_n != n && write_input(c, n) != 0) {
        fprintf(stderr, "riffle: audit: %s: %s\n", c->input_path, strerror(errno));
        return -1;
    }
    cmd_run r = {.c = c, .n = n, .acc = acc, .a = malloc((n + 1) * sizeof(uint32_t)),
                 .seen = malloc(n + 1), .slots = calloc(c->jobs, sizeof(slot)),
                 .limit = audit_runner_output_limit(c, n), .target = trials};
    int ret = -1;
    if (r.a == NULL || r.seen == NULL || r.slots == NULL) {
        fprintf(stderr, "riffle: audit: out of memory\n");
        goto done;
    }
    for (unsigned k = 0; k < c->jobs; k++) {
        r.slots[k] = (slot){.pid = 0, .pidfd = -1, .out = -1, .err = -1};
    }
    const double t0 = seconds_now();
    ret = run_loop(&r, trials);
    progress(&r, 1);
    c->seconds += seconds_now() - t0;
    if (ret != 0)
        fprintf(stderr, "riffle: audit: cannot run '%s': %s\n", c->command, c->error);
done:
    for (unsigned k = 0; r.slots != NULL && k < c->jobs; k++) {
        free(r.slots[k].buf);
        free(r.slots[k].ebuf);
    }
    free(r.a);
    free(r.seen);
    free(r.slots);
    return ret;
}
