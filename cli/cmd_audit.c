/*
 * cmd_audit.c -- `riffle audit`: options, the run plan and the reports.
 *
 * Statistical mode looks at the data a few times (adaptive trials) and asks
 * the audit library for the verdict after each look (audit_verdict.h); it
 * stops as soon as the verdict is final.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "audit_build.h"
#include "audit_log.h"
#include "audit_runner.h"
#include "audit_verdict.h"
#include "cleanup.h"
#include "cli.h"
#include "cli_options.h"
#include "commands.h"
#include "dist.h"

#define MAX_SIZES AUDIT_MAX_SIZES
#define DEFAULT_N 8
#define DEFAULT_CMD_N 6
#define DEFAULT_ALPHA 0.001
/* The sequential design: the first look (trials per size), in-process and
 * with --cmd; the trial cap when --max-trials is not given (the time budget
 * ends a run first); the trials the accumulators are sized for (the order
 * counts of n <= 9 kept when n! fits, the duplicate-orderings test's room);
 * and the default time budget, in seconds. */
#define SEQ_FIRST ((uint64_t)1024)
#define SEQ_FIRST_CMD ((uint64_t)64)
#define SEQ_MAX_TRIALS ((uint64_t)1 << 40)
#define SEQ_ROOM ((uint64_t)1 << 26)
#define SEQ_ROOM_CMD ((uint64_t)1 << 20)
#define DEFAULT_BUDGET 60.0
#define MAX_JOBS 256

enum { EXIT_FAIR = 0, EXIT_ERROR = 1, EXIT_BIASED = 2, EXIT_INCONCLUSIVE = 3 };

typedef struct audit_opts {
    const char *name, *cmd, *report, *as_shuffler, *from_log;
    struct dist_file *report_file; /* --report, opened before the work */
    unsigned param;
    size_t sizes[MAX_SIZES], nsizes;
    int exact, walk, json, list, help, seed_set, progress, deviation_set;
    uint64_t trials, max_trials, seed, max_output;
    unsigned jobs, threads;
    double alpha, timeout, time_limit, deviation;
} audit_opts;

static const char usage_text[] =
    "Usage: riffle audit NAME[:PARAM] [OPTION]...\n"
    "  or:  riffle audit --cmd=COMMAND [OPTION]...\n"
    "  or:  riffle audit --from-log=FILE [OPTION]...\n"
    "  or:  riffle audit --list\n"
    "Measure how fair a shuffler is: a built-in algorithm (see --list) or any\n"
    "program that reads lines on stdin and writes them shuffled.\n"
    "\n"
    "  --n=N[,N...]      deck sizes (default 8; 6 with --cmd)\n"
    "  --exact           exact distribution by enumerating every draw sequence\n"
    "  --walk            with --exact: walk every path even where a dynamic\n"
    "                    programme would do\n"
    "  --trials=N        exactly N trials per size, judged once (default:\n"
    "                    sequential, looking after 1024, 2048, 4096, ... trials;\n"
    "                    64, 128, ... with --cmd)\n"
    "  --deviation=D     the item-position bias the sequential audit (and\n"
    "                    --from-log) rules out before it calls a shuffler fair\n"
    "                    (default 0.01: 1%)\n"
    "  --budget=SECONDS  bound the sequential audit's time (default 60)\n"
    "  --max-trials=N    bound its trials per size\n"
    "  --alpha=A         family-wise false-alarm rate over every look\n"
    "                    (default 0.001)\n"
    "  --seed=S          seed of the in-process trials (default: random, printed)\n"
    "  --threads=T       threads for in-process trials\n"
    "  --jobs=J          concurrent processes with --cmd\n"
    "  --timeout=SECONDS  kill a --cmd trial after this long (default: 60 s for\n"
    "                    the first 5 trials, then max(10 s, 20 x the slowest))\n"
    "  --max-output=BYTES  kill a --cmd trial that writes more, on stdout and\n"
    "                    stderr (default: 4 x the input, at least 4096); such a\n"
    "                    trial is broken\n"
    "  --time-limit=SECONDS  stop starting trials after this long and judge what\n"
    "                    was gathered (the same as --budget)\n"
    "  --progress        progress on stderr (default: when it is a terminal)\n"
    "  --json            the full report as JSON (docs/audit-json.md)\n"
    "  --report=FILE     also write a self-contained HTML report with figures\n"
    "  --from-log=FILE   test the decks a game recorded, one per line (cards as\n"
    "                    names such as AS 10H, or numbers 1..n; '-': stdin)\n"
    "  --list            name the built-in algorithms\n"
    "  --as-shuffler=NAME  act as a line shuffler running algorithm NAME\n"
    "  -h, --help        this help\n"
    "\n"
    "Exit status: 0 fair (no test finds bias, and the tests ruled out, with 90%\n"
    "power, an item-position bias of --deviation; with --trials: could have found\n"
    "a deviation of Cohen's w = 0.25), 2 biased or broken, 3 inconclusive (the\n"
    "budget ended first: the report says which bias was ruled out and how many\n"
    "trials would decide), 1 on error.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("riffle: audit: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'riffle audit --help' for more information.\n", stderr);
    va_end(ap);
    return EXIT_ERROR;
}

static int parse_u64(const char *s, uint64_t *v)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    const unsigned long long x = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *v = x;
    return 0;
}

static int parse_sizes(audit_opts *o, const char *s)
{
    char *copy = strdup(s), *save = NULL;
    int ret = copy != NULL ? 0 : -1;
    o->nsizes = 0;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && ret == 0;
         t = strtok_r(NULL, ",", &save)) {
        uint64_t v;
        if (o->nsizes == MAX_SIZES || parse_u64(t, &v) != 0 || v < 1 || v > 1000000)
            ret = -1;
        else
            o->sizes[o->nsizes++] = (size_t)v;
    }
    free(copy);
    return ret == 0 && o->nsizes > 0 ? 0 : -1;
}

/* The options, exported for the completions and the command-line fuzzer
 * (cli_options.h).  A value option given again must have the same value
 * ("multiple seeds specified": cli_set_once, the rule of every command):
 * given[] holds the value of each, indexed from A_FIRST. */
enum {
    A_FIRST = CLI_OPT_FIRST_FREE,
    A_N = A_FIRST, A_TRIALS, A_MAX_TRIALS, A_ALPHA, A_SEED, A_THREADS, A_JOBS, A_REPORT,
    A_CMD, A_AS_SHUFFLER, A_TIMEOUT, A_MAX_OUTPUT, A_TIME_LIMIT, A_DEVIATION, A_FROM_LOG,
    A_WITH_VALUE, /* flags: */
    A_EXACT = A_WITH_VALUE, A_WALK, A_JSON, A_LIST, A_PROGRESS
};
static const char *const plural[A_WITH_VALUE - A_FIRST] = {
    "deck sizes", "trial counts", "trial budgets", "alphas", "seeds", "thread counts",
    "job counts", "report files", "commands", "shufflers", "timeouts", "output limits",
    "time limits", "deviations", "logs",
};
static const struct option audit_longopts[] = {
    {"n", required_argument, NULL, A_N},
    {"trials", required_argument, NULL, A_TRIALS},
    {"max-trials", required_argument, NULL, A_MAX_TRIALS},
    {"alpha", required_argument, NULL, A_ALPHA},
    {"seed", required_argument, NULL, A_SEED},
    {"threads", required_argument, NULL, A_THREADS},
    {"jobs", required_argument, NULL, A_JOBS},
    {"report", required_argument, NULL, A_REPORT},
    {"cmd", required_argument, NULL, A_CMD},
    {"as-shuffler", required_argument, NULL, A_AS_SHUFFLER},
    {"timeout", required_argument, NULL, A_TIMEOUT},
    {"max-output", required_argument, NULL, A_MAX_OUTPUT},
    {"time-limit", required_argument, NULL, A_TIME_LIMIT},
    {"budget", required_argument, NULL, A_TIME_LIMIT},
    {"deviation", required_argument, NULL, A_DEVIATION},
    {"from-log", required_argument, NULL, A_FROM_LOG},
    {"exact", no_argument, NULL, A_EXACT},
    {"walk", no_argument, NULL, A_WALK},
    {"json", no_argument, NULL, A_JSON},
    {"list", no_argument, NULL, A_LIST},
    {"progress", no_argument, NULL, A_PROGRESS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_audit_options = {"audit", 0, "h", audit_longopts};

static int parse_seconds(const char *v, double *t)
{
    char *end;
    *t = strtod(v, &end);
    return end == v || *end != '\0' || !(*t > 0.0 && *t <= 1e7);
}

static int parse_alpha(const char *v, double *a)
{
    char *end;
    *a = strtod(v, &end);
    return end == v || *end != '\0' || !(*a > 0.0 && *a < 1.0);
}

/* The value v of option c into o; nonzero if v is not valid. */
static int set_value(audit_opts *o, int c, const char *v)
{
    uint64_t x = 0;
    switch (c) {
    case A_N:
        return parse_sizes(o, v);
    case A_TRIALS:
        return parse_u64(v, &o->trials) || o->trials == 0;
    case A_MAX_TRIALS:
        return parse_u64(v, &o->max_trials) || o->max_trials == 0;
    case A_SEED:
        o->seed_set = 1;
        return parse_u64(v, &o->seed);
    case A_THREADS:
        o->threads = parse_u64(v, &x) || x < 1 || x > 64 ? 0 : (unsigned)x;
        return o->threads == 0;
    case A_JOBS:
        o->jobs = parse_u64(v, &x) || x < 1 || x > MAX_JOBS ? 0 : (unsigned)x;
        return o->jobs == 0;
    case A_ALPHA:
        return parse_alpha(v, &o->alpha);
    case A_TIMEOUT:
        return parse_seconds(v, &o->timeout);
    case A_TIME_LIMIT:
        return parse_seconds(v, &o->time_limit);
    case A_DEVIATION:
        o->deviation_set = 1;
        return parse_alpha(v, &o->deviation);
    case A_MAX_OUTPUT:
        return parse_u64(v, &o->max_output) || o->max_output == 0 ||
               o->max_output > ((uint64_t)1 << 40);
    case A_REPORT:
        o->report = v;
        return 0;
    case A_CMD:
        o->cmd = v;
        return 0;
    case A_FROM_LOG:
        o->from_log = v;
        return 0;
    default:
        o->as_shuffler = v;
        return 0;
    }
}

/* One option from getopt_long: 0 to go on, else the exit status. */
static int take_option(audit_opts *o, const char **given, int c, const char *v)
{
    if (c >= A_FIRST && c < A_WITH_VALUE) {
        if (cli_set_once(&given[c - A_FIRST], v, plural[c - A_FIRST]) != CLI_CONTINUE)
            return cli_try_help("audit");
        if (set_value(o, c, v) != 0)
            return usage_error("invalid argument '%s'", v);
        return 0;
    }
    switch (c) {
    case A_EXACT:
        o->exact = 1;
        return 0;
    case A_WALK:
        o->walk = o->exact = 1;
        return 0;
    case A_JSON:
        o->json = 1;
        return 0;
    case A_LIST:
        o->list = 1;
        return 0;
    case A_PROGRESS:
        o->progress = 1;
        return 0;
    case 'h':
        o->help = 1;
        return 0;
    default: /* getopt_long said what was wrong */
        return cli_try_help("audit");
    }
}

static int parse_args(audit_opts *o, int argc, char **argv)
{
    const char *given[A_WITH_VALUE - A_FIRST] = {NULL};
    for (;;) {
        const int c = getopt_long(argc, argv, cli_audit_options.shortopts, audit_longopts,
                                  NULL);
        if (c == -1)
            break;
        const int status = take_option(o, given, c, optarg);
        if (status != 0)
            return status;
    }
    if (optind < argc)
        o->name = argv[optind++];
    if (optind < argc)
        return usage_error("extra operand '%s'", argv[optind]);
    return 0;
}

/* NAME or NAME:PARAM. */
static const audit_algo *find_algo(const char *spec, unsigned *param)
{
    char name[64];
    const char *colon = strchr(spec, ':');
    const size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    *param = 0;
    if (len >= sizeof name)
        return NULL;
    memcpy(name, spec, len);
    name[len] = '\0';
    const audit_algo *al = audit_zoo_find(name);
    if (al == NULL)
        return NULL;
    if (colon != NULL) {
        uint64_t v;
        if (al->param_name == NULL || parse_u64(colon + 1, &v) != 0 || v < 1 ||
            v > 100000)
            return NULL;
        *param = (unsigned)v;
    }
    return al;
}

static int list_zoo(void)
{
    size_t count;
    const audit_algo *z = audit_zoo(&count);
    for (size_t i = 0; i < count; i++)
        printf("%-16s %s\n", z[i].name, z[i].summary);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "riffle: audit: write error: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    return EXIT_FAIR;
}

static unsigned online_cpus(void)
{
    const long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c < 1 ? 1 : c > 8 ? 8 : (unsigned)c;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- writing the reports -------------------------------------------------- */

/* The HTML report into the file opened before the work (dist_file: its
 * temporary replaces the target only when complete). */
static int write_html(const audit_opts *o, const audit_result *r)
{
    const int fd = dup(o->report_file->a.fd);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL && fd >= 0)
        close(fd);
    int bad = f == NULL || audit_report_html(f, r) != 0;
    if (f != NULL && fclose(f) != 0)
        bad = 1;
    if (bad) {
        fprintf(stderr, "riffle: audit: %s: %s\n", o->report, strerror(errno));
        return EXIT_ERROR;
    }
    return dist_file_commit(o->report_file, o->report) == 0 ? 0 : EXIT_ERROR;
}

static int emit(const audit_opts *o, audit_result *r)
{
    if (o->json)
        audit_report_json(stdout, r);
    else
        audit_report_text(stdout, r);
    if (o->report != NULL && write_html(o, r) != 0)
        return EXIT_ERROR;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "riffle: audit: write error: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    return audit_exit_status(r->verdict);
}

/* ---- exact mode ------------------------------------------------------------ */

static int run_exact(const audit_opts *o, const audit_algo *al, unsigned param,
                     audit_result *r)
{
    audit_exact ex[MAX_SIZES];
    size_t done = 0;
    int status = EXIT_ERROR;
    r->mode = "exact";
    r->verdict = "fair";
    snprintf(r->reason, sizeof r->reason, "every ordering is exactly equally likely");
    for (; done < o->nsizes; done++) {
        const size_t n = o->sizes[done];
        audit_exact_init(&ex[done]);
        if (audit_exact_run(al, n, audit_param(al, n, param), o->walk, &ex[done]) != 0) {
            fprintf(stderr, "riffle: audit: %s\n", ex[done].error);
            done++;
            goto out;
        }
        r->sizes[done].n = n;
        r->sizes[done].ex = &ex[done];
        audit_exact_summary s;
        audit_exact_summarize(&ex[done], &s);
        const int ok = s.full ? s.uniform : s.matrix_uniform;
        if (!s.full && ok && strcmp(r->verdict, "fair") == 0)
            snprintf(r->reason, sizeof r->reason,
                     "the item-to-position matrix is exactly uniform (n = %zu: "
                     "matrix only, which does not prove uniformity)", n);
        if (!ok && strcmp(r->verdict, "fair") == 0) {
            r->verdict = "biased";
            if (s.full)
                snprintf(r->reason, sizeof r->reason,
                         "at n = %zu the orderings are not equally likely "
                         "(total variation %.6g)", n, mpq_get_d(s.tv));
            else
                snprintf(r->reason, sizeof r->reason,
                         "at n = %zu the item-to-position matrix is not uniform", n);
        }
        audit_exact_summary_clear(&s);
    }
    r->nsizes = o->nsizes;
    r->seconds = seconds_now() - r->seconds;
    status = emit(o, r);
out:
    for (size_t i = 0; i < done; i++)
        audit_exact_clear(&ex[i]);
    return status;
}

/* ---- statistical mode ------------------------------------------------------ */

/* The looks: a fixed design (--trials) looks once; the sequential design
 * looks after first, 2 first, 4 first, ... trials per size, up to cap (and
 * the time budget), and its verdict spends alpha over the looks
 * (audit_verdict.h). */
typedef struct plan {
    int sequential;
    uint64_t first, cap;
} plan;

static plan make_plan(const audit_opts *o)
{
    if (o->trials)
        return (plan){0, o->trials, o->trials};
    const uint64_t cap = o->max_trials ? o->max_trials : SEQ_MAX_TRIALS;
    const uint64_t first = o->cmd ? SEQ_FIRST_CMD : SEQ_FIRST;
    return (plan){1, first < cap ? first : cap, cap};
}

/* Trials per size at look k (from 1); 0 after the last look. */
static uint64_t look_target(const plan *p, size_t k)
{
    if (!p->sequential)
        return k == 1 ? p->cap : 0;
    uint64_t t = p->first;
    for (size_t i = 1; i < k && t < p->cap; i++)
        t = t > p->cap / 2 ? p->cap : 2 * t;
    if (k > 1 && t == p->cap && look_target(p, k - 1) == p->cap)
        return 0;
    return t;
}

/* Batch numbers keep every (look, size) on its own generator streams. */
static int add_trials(const audit_opts *o, const audit_algo *al, unsigned param,
                      audit_runner *cmd, uint64_t batch, uint64_t more, audit_acc *acc)
{
    if (cmd != NULL)
        return audit_runner_run(cmd, acc->n, more, acc);
    if (audit_run_builtin(al, audit_param(al, acc->n, param), o->seed, batch, more,
                          o->threads, acc) != 0) {
        fprintf(stderr, "riffle: audit: out of memory\n");
        return -1;
    }
    return 0;
}

/* In-process trials under --time-limit: in steps of TIMED_STEP trials, the
 * clock read between them, each step on its own generator streams (batch
 * numbers above those of untimed runs, whose seeded results stay as they
 * are).  A time-limited run depends on the clock, so it is not reproducible. */
#define TIMED_STEP ((uint64_t)1 << 16)
#define TIMED_BATCH ((uint64_t)1 << 31) /* untimed batches are below 8 x 16 */
#define TIMED_STEPS ((uint64_t)1 << 22) /* steps of one (look, size): 2^38 trials */
static int add_builtin_timed(const audit_opts *o, const audit_algo *al, unsigned param,
                             size_t look, size_t s, uint64_t target, audit_acc *acc,
                             double start, int *time_up)
{
    for (uint64_t step = 0; acc->trials < target; step++) {
        if (seconds_now() - start >= o->time_limit || step == TIMED_STEPS) {
            *time_up = 1;
            return 0;
        }
        const uint64_t more =
            target - acc->trials < TIMED_STEP ? target - acc->trials : TIMED_STEP;
        const uint64_t batch = TIMED_BATCH + (look * MAX_SIZES + s) * TIMED_STEPS + step;
        if (add_trials(o, al, param, NULL, batch, more, acc) != 0)
            return -1;
    }
    return 0;
}

static void note_command(audit_result *r, const audit_runner *cmd, size_t max_n)
{
    r->broken = cmd->broken;
    r->broken_example = cmd->example;
    r->per_trial_us = cmd->runs ? 1e6 * cmd->seconds / (double)cmd->runs : 0.0;
    r->timeout = audit_runner_timeout(cmd);
    r->timeout_derived = cmd->timeout <= 0.0;
    r->max_output = audit_runner_output_limit(cmd, max_n);
    r->timed_out = cmd->timed_out;
    r->over_output = cmd->overflowed;
    r->time_limited = cmd->time_up;
    r->strays_caught = cmd->subreaper;
}

/* One look: every size brought to `target` trials, then judged.  Returns
 * -1 on error, else whether the verdict is final. */
static int one_look(const audit_opts *o, const audit_algo *al, unsigned param,
                    audit_runner *cmd, size_t look, uint64_t target, audit_acc *acc,
                    double start, size_t max_n, audit_result *r)
{
    for (size_t s = 0; s < o->nsizes && !r->time_limited; s++) {
        if (cmd != NULL || o->time_limit <= 0.0) {
            if (add_trials(o, al, param, cmd, (look - 1) * MAX_SIZES + s,
                           target - acc[s].trials, &acc[s]) != 0)
                return -1;
        } else if (add_builtin_timed(o, al, param, look - 1, s, target, &acc[s], start,
                                     &r->time_limited) != 0) {
            return -1;
        }
        r->sizes[s] = (audit_size_result){.n = o->sizes[s], .trials = acc[s].trials,
                                          .acc = &acc[s]};
        audit_acc_tests(&acc[s], r->sizes[s].tests);
    }
    if (cmd != NULL)
        note_command(r, cmd, max_n);
    r->look = look;
    return audit_verdict(r);
}

static int run_statistical(const audit_opts *o, const audit_algo *al, unsigned param,
                           audit_result *r)
{
    audit_acc acc[MAX_SIZES];
    audit_runner cmd;
    size_t ready = 0, max_n = 0;
    int status = EXIT_ERROR, have_cmd = 0;
    const double start = seconds_now();
    for (size_t i = 0; i < o->nsizes; i++)
        max_n = o->sizes[i] > max_n ? o->sizes[i] : max_n;
    const plan p = make_plan(o);
    r->mode = "statistical";
    r->time_limit = o->time_limit;
    r->sequential = p.sequential;
    r->nlooks = 1;
    r->deviation = o->deviation;
    if (o->cmd != NULL) {
        if (audit_runner_open(&cmd, o->cmd, o->jobs) != 0) {
            fprintf(stderr, "riffle: audit: cannot prepare '%s': %s\n", o->cmd, cmd.error);
            audit_runner_close(&cmd);
            return EXIT_ERROR;
        }
        have_cmd = 1;
        cmd.timeout = o->timeout;
        cmd.max_output = o->max_output;
        cmd.deadline = o->time_limit > 0.0 ? start + o->time_limit : 0.0;
        cmd.progress = o->progress || isatty(STDERR_FILENO);
    }
    const uint64_t room = p.sequential ? (o->cmd ? SEQ_ROOM_CMD : SEQ_ROOM) : p.cap;
    for (; ready < o->nsizes; ready++)
        if (audit_acc_init(&acc[ready], o->sizes[ready], room < p.cap ? room : p.cap) != 0) {
            fprintf(stderr, "riffle: audit: out of memory\n");
            goto out;
        }
    r->nsizes = o->nsizes;
    for (size_t s = 0; s < o->nsizes; s++) {
        r->sizes[s] = (audit_size_result){.n = o->sizes[s], .acc = &acc[s]};
        audit_acc_tests(&acc[s], r->sizes[s].tests);
    }
    int stop = 0;
    uint64_t target;
    for (size_t look = 1; !stop && !r->time_limited && (target = look_target(&p, look)) != 0;
         look++) {
        if ((stop = one_look(o, al, param, have_cmd ? &cmd : NULL, look, target, acc, start,
                             max_n, r)) < 0)
            goto out;
        if (have_cmd && cmd.stop)
            break;
    }
    if (have_cmd)
        note_command(r, &cmd, max_n);
    audit_verdict(r); /* the last word, with every trial gathered */
    r->seconds = seconds_now() - r->seconds;
    status = emit(o, r);
out:
    for (size_t i = 0; i < ready; i++)
        audit_acc_free(&acc[i]);
    if (have_cmd)
        audit_runner_close(&cmd);
    return status;
}

/* --report, opened before any work: an unwritable one is an error at once,
 * not after the whole audit.  0, or -1 when the message is out. */
static int open_report(audit_opts *o, struct dist_file *report)
{
    if (o->report == NULL)
        return 0;
    (void)cleanup_init();
    if (dist_file_open(report, o->report) != 0)
        return -1;
    o->report_file = report;
    return 0;
}

/* ---- decks from a game's log (--from-log) ---------------------------------- */

/* Every deck of the log, in its order, as one look at one deck size. */
static int judge_log(const audit_opts *o, const audit_cert *cert, audit_acc *acc,
                     double start)
{
    audit_size_result size = {.n = acc->n, .trials = acc->trials, .acc = acc};
    audit_acc_tests(acc, size.tests);
    audit_result r = {.subject = o->from_log, .kind = "log", .mode = "statistical",
                      .alpha = o->alpha, .sizes = &size, .nsizes = 1, .verdict = "fair",
                      .cert = cert, .look = 1, .nlooks = 1, .deviation = o->deviation,
                      .by_deviation = 1};
    audit_verdict(&r);
    /* A log cannot be given more trials: say how many decks would decide. */
    char *more = strstr(r.reason, "; about --trials=");
    if (more != NULL)
        snprintf(more, sizeof r.reason - (size_t)(more - r.reason),
                 "; a log of about %llu decks would decide",
                 (unsigned long long)r.trials_to_decide);
    r.seconds = seconds_now() - start;
    return emit(o, &r);
}

/* Every deck of the log, in its order, as one look at one deck size; the
 * --report file opened before the log is read, as for every audit. */
static int run_from_log(const audit_opts *o_in, const audit_cert *cert)
{
    audit_opts o = *o_in;
    audit_log log;
    audit_acc acc;
    int status = EXIT_ERROR;
    const double start = seconds_now();
    struct dist_file report = {.guard = -1};
    if (open_report(&o, &report) != 0)
        return EXIT_ERROR;
    if (audit_log_load(o.from_log, &log) != 0)
        goto done;
    if (audit_acc_init(&acc, log.n, log.decks) != 0) {
        fprintf(stderr, "riffle: audit: out of memory\n");
        audit_log_free(&log);
        goto done;
    }
    if (audit_log_feed(&log, &acc) != 0)
        fprintf(stderr, "riffle: audit: out of memory\n");
    else
        status = judge_log(&o, cert, &acc, start);
    audit_acc_free(&acc);
    audit_log_free(&log);
done:
    dist_file_abort(&report);
    return status;
}

/* ---- the line shuffler behind the zoo (--as-shuffler) --------------------- */

static char *slurp(FILE *in, size_t *len)
{
    size_t cap = 1 << 16, used = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (used == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (nb == NULL)
                break;
            buf = nb;
        }
        const size_t got = fread(buf + used, 1, cap - used, in);
        used += got;
        if (got == 0) {
            if (ferror(in))
                break;
            *len = used;
            return buf;
        }
    }
    free(buf);
    return NULL;
}

static int shuffle_lines(const audit_algo *al, unsigned param, rf_rng *g, char *buf,
                         size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += buf[i] == '\n';
    if (len > 0 && buf[len - 1] != '\n')
        n++;
    char **line = malloc((n + 1) * sizeof *line);
    uint32_t *a = malloc((n + 1) * sizeof *a);
    uint32_t *scratch = calloc(AUDIT_SCRATCH(n), sizeof *scratch); /* audit.h */
    int ret = -1;
    if (line != NULL && a != NULL && scratch != NULL && n < UINT32_MAX) {
        size_t k = 0;
        for (char *s = buf; k < n; k++) {
            line[k] = s;
            char *nl = memchr(s, '\n', (size_t)(buf + len - s));
            if (nl != NULL)
                *nl = '\0', s = nl + 1;
            else
                buf[len] = '\0';
            a[k] = (uint32_t)k;
        }
        al->shuffle(g, a, n, audit_param(al, n, param), scratch);
        for (k = 0; k < n; k++)
            if (fputs(line[a[k]], stdout) == EOF || putchar('\n') == EOF)
                break;
        ret = fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
    }
    free(line);
    free(a);
    free(scratch);
    return ret;
}

static int as_shuffler(const audit_opts *o)
{
    unsigned param;
    const audit_algo *al = find_algo(o->as_shuffler, &param);
    if (al == NULL)
        return usage_error("unknown algorithm '%s' (see --list)", o->as_shuffler);
    rf_rng storage, *g = &storage;
    if (o->seed_set) {
        if (rf_rng_seed_u64(g, RF_RNG_CHACHA20, o->seed) != RF_OK)
            g = NULL;
    } else {
        g = rf_rng_new_os(NULL);
    }
    if (g == NULL) {
        fprintf(stderr, "riffle: audit: cannot seed a generator\n");
        return EXIT_ERROR;
    }
    size_t len = 0;
    char *buf = slurp(stdin, &len);
    int status = EXIT_ERROR;
    if (buf == NULL) {
        fprintf(stderr, "riffle: audit: standard input: %s\n", strerror(errno));
    } else if (shuffle_lines(al, param, g, buf, len) != 0) {
        fprintf(stderr, "riffle: audit: write error\n");
    } else {
        status = EXIT_FAIR;
    }
    free(buf);
    if (g != &storage)
        rf_rng_free(g);
    return status;
}

/* ---- entry point ----------------------------------------------------------- */

/* --from-log judges decks already dealt: nothing to run, one look. */
static int check_from_log(const audit_opts *o)
{
    if (o->name != NULL || o->cmd != NULL)
        return usage_error("give one of NAME, --cmd and --from-log");
    if (o->exact || o->nsizes || o->trials || o->max_trials || o->seed_set ||
        o->threads || o->jobs || o->timeout > 0.0 || o->max_output || o->time_limit > 0.0)
        return usage_error("--from-log takes only --alpha, --deviation, --json and --report");
    return 0;
}

static int check_combination(const audit_opts *o)
{
    if (o->from_log != NULL)
        return check_from_log(o);
    if (o->cmd != NULL && o->name != NULL)
        return usage_error("give either NAME or --cmd, not both");
    if (o->cmd == NULL && o->name == NULL)
        return usage_error("missing algorithm NAME or --cmd=COMMAND");
    if (o->cmd != NULL && o->exact)
        return usage_error("--exact needs a built-in algorithm, not --cmd");
    if (o->cmd != NULL && audit_command_blank(o->cmd))
        return usage_error("empty command");
    if (o->cmd == NULL && (o->timeout > 0.0 || o->max_output != 0))
        return usage_error("--timeout and --max-output apply to --cmd only");
    if (o->exact && o->time_limit > 0.0)
        return usage_error("--budget and --time-limit apply to statistical mode only");
    if ((o->exact || o->trials) && o->deviation_set)
        return usage_error("--deviation applies to the sequential mode only (not with "
                           "--exact or --trials)");
    if (o->trials && o->max_trials)
        return usage_error("give either --trials or --max-trials, not both");
    return 0;
}

static int run_audit(const audit_opts *o_in, const audit_cert *cert)
{
    audit_opts o = *o_in;
    int status;
    unsigned param = 0;
    const audit_algo *al = NULL;
    if (o.name != NULL && (al = find_algo(o.name, &param)) == NULL)
        return usage_error("unknown algorithm or parameter '%s' (see --list)", o.name);
    if (o.nsizes == 0)
        o.sizes[o.nsizes++] = o.cmd ? DEFAULT_CMD_N : DEFAULT_N;
    if (!o.exact && !o.trials && o.time_limit <= 0.0)
        o.time_limit = DEFAULT_BUDGET;
    if (o.threads == 0)
        o.threads = online_cpus();
    if (o.jobs == 0)
        o.jobs = online_cpus();
    if (!o.seed_set && rf_entropy(&o.seed, sizeof o.seed) != RF_OK) {
        fprintf(stderr, "riffle: audit: no randomness from the operating system\n");
        return EXIT_ERROR;
    }
    audit_size_result sizes[MAX_SIZES];
    memset(sizes, 0, sizeof sizes);
    audit_result r = {.subject = al ? al->name : o.cmd, .kind = al ? "builtin" : "command",
                      .algo = al, .param = al ? audit_param(al, o.sizes[0], param) : 0,
                      .seed = o.seed, .alpha = o.alpha, .sizes = sizes, .verdict = "fair",
                      .cert = cert};
    struct dist_file report = {.guard = -1};
    if (open_report(&o, &report) != 0)
        return EXIT_ERROR;
    r.seconds = seconds_now(); /* start time; the run stores the duration */
    status = o.exact ? run_exact(&o, al, param, &r) : run_statistical(&o, al, param, &r);
    dist_file_abort(&report);
    return status;
}

static int audit_typed(audit_opts *o_parsed, int argc, char **argv);

int cmd_audit(int argc, char **argv)
{
    audit_opts o = {.alpha = DEFAULT_ALPHA, .deviation = AUDIT_DEFAULT_DEVIATION};
    /* The words as typed, for the report: getopt_long permutes argv. */
    char **typed = malloc(((size_t)argc + 1) * sizeof *typed);
    if (typed == NULL) {
        fprintf(stderr, "riffle: audit: out of memory\n");
        return EXIT_ERROR;
    }
    memcpy(typed, argv, ((size_t)argc + 1) * sizeof *typed);
    int status = parse_args(&o, argc, argv);
    if (status == 0)
        status = audit_typed(&o, argc, typed);
    free(typed);
    return status;
}

/* After the options: the work, with the command line as typed. */
static int audit_typed(audit_opts *o_parsed, int argc, char **argv)
{
    audit_opts o = *o_parsed;
    int status;
    if (o.help)
        return fputs(usage_text, stdout) == EOF || fflush(stdout) ? EXIT_ERROR : EXIT_FAIR;
    if (o.list)
        return list_zoo();
    if (o.as_shuffler != NULL)
        return as_shuffler(&o);
    if ((status = check_combination(&o)) != 0)
        return status;
    audit_cert cert;
    if (audit_build_cert(&cert, argc, argv) != 0) {
        audit_build_free(&cert);
        fprintf(stderr, "riffle: audit: out of memory\n");
        return EXIT_ERROR;
    }
    status = o.from_log != NULL ? run_from_log(&o, &cert) : run_audit(&o, &cert);
    audit_build_free(&cert);
    return status;
}
