/*
 * cmd_audit.c -- `riffle audit`: options, the run plan and the verdict.
 *
 * Statistical mode looks at the data a few times (adaptive trials): after
 * each look every applicable test of every deck size is Holm-adjusted, and the
 * audit stops as "biased" as soon as an adjusted p-value falls below
 * alpha / looks (Bonferroni over the looks keeps the family-wise error at
 * alpha).  "fair" needs the whole budget.
 */
#include <errno.h>
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
#include "cli.h"
#include "cli_options.h"
#include "commands.h"

#define MAX_SIZES 16
#define DEFAULT_N 8
#define DEFAULT_CMD_N 6
#define DEFAULT_ALPHA 0.001
#define DEFAULT_CMD_TRIALS 2000
#define MAX_JOBS 256
/* What "fair" promises (docs/audit.md, "What a verdict means"): every deck
 * size had a test able to find, with probability AUDIT_POWER at its level, a
 * deviation of Cohen's w = AUDIT_PROMISED_W; else the verdict is inconclusive. */
#define AUDIT_POWER 0.9
#define AUDIT_PROMISED_W 0.25
#define MIN_EXPECTED 5.0 /* Cochran's rule, as the tests apply it */

enum { EXIT_FAIR = 0, EXIT_ERROR = 1, EXIT_BIASED = 2, EXIT_INCONCLUSIVE = 3 };

typedef struct audit_opts {
    const char *name, *cmd, *report, *as_shuffler, *from_log;
    unsigned param;
    size_t sizes[MAX_SIZES], nsizes;
    int exact, walk, json, list, help, seed_set, progress;
    uint64_t trials, max_trials, seed, max_output;
    unsigned jobs, threads;
    double alpha, timeout, time_limit;
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
    "  --trials=N        exactly N trials per size (default: adaptive)\n"
    "  --max-trials=N    budget of the adaptive mode\n"
    "  --alpha=A         family-wise false-alarm rate (default 0.001)\n"
    "  --seed=S          seed of the in-process trials (default: random, printed)\n"
    "  --threads=T       threads for in-process trials\n"
    "  --jobs=J          concurrent processes with --cmd\n"
    "  --timeout=SECONDS  kill a --cmd trial after this long (default: 60 s for\n"
    "                    the first 5 trials, then max(10 s, 20 x the slowest))\n"
    "  --max-output=BYTES  kill a --cmd trial that writes more, on stdout and\n"
    "                    stderr (default: 4 x the input, at least 4096); such a\n"
    "                    trial is broken\n"
    "  --time-limit=SECONDS  stop starting trials after this long and judge what\n"
    "                    was gathered\n"
    "  --progress        progress on stderr (default: when it is a terminal)\n"
    "  --json            the full report as JSON (docs/audit-json.md)\n"
    "  --report=FILE     also write a self-contained HTML report with figures\n"
    "  --from-log=FILE   test the decks a game recorded, one per line (cards as\n"
    "                    names such as AS 10H, or numbers 1..n; '-': stdin)\n"
    "  --list            name the built-in algorithms\n"
    "  --as-shuffler=NAME  act as a line shuffler running algorithm NAME\n"
    "  -h, --help        this help\n"
    "\n"
    "Exit status: 0 fair (no test finds bias, and the tests could have found a\n"
    "deviation of Cohen's w = 0.25 with 90% power), 2 biased or broken, 3\n"
    "inconclusive (too few trials to say: the report gives how many would\n"
    "decide), 1 on error.\n";

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

/* The options: their names and whether they take a value (audit parses
 * them itself, exact names only, --name=VALUE or --name VALUE), exported for
 * the command-line fuzzer (cli_options.h).  `val` indexes what a repeat of a
 * value option with another value says ("multiple seeds specified":
 * cli_set_once, the rule of every command). */
enum {
    A_N, A_TRIALS, A_MAX_TRIALS, A_ALPHA, A_SEED, A_THREADS, A_JOBS, A_REPORT, A_CMD,
    A_AS_SHUFFLER, A_TIMEOUT, A_MAX_OUTPUT, A_TIME_LIMIT, A_FROM_LOG,
    A_WITH_VALUE, /* flags: */
    A_EXACT = A_WITH_VALUE, A_WALK, A_JSON, A_LIST, A_PROGRESS, A_HELP
};
static const char *const plural[A_WITH_VALUE] = {
    "deck sizes", "trial counts", "trial budgets", "alphas", "seeds", "thread counts",
    "job counts", "report files", "commands", "shufflers", "timeouts", "output limits",
    "time limits", "logs",
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
    {"from-log", required_argument, NULL, A_FROM_LOG},
    {"exact", no_argument, NULL, A_EXACT},
    {"walk", no_argument, NULL, A_WALK},
    {"json", no_argument, NULL, A_JSON},
    {"list", no_argument, NULL, A_LIST},
    {"progress", no_argument, NULL, A_PROGRESS},
    {"help", no_argument, NULL, A_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_audit_options = {"audit", 0, "h", audit_longopts};

/* The option named opt, or NULL. */
static const struct option *find_option(const char *opt)
{
    for (const struct option *o = audit_longopts; o->name; o++)
        if (strcmp(opt, o->name) == 0)
            return o;
    return NULL;
}

static int takes_value(const char *opt)
{
    const struct option *o = find_option(opt);
    return o != NULL && o->has_arg == required_argument;
}

/* A value given again must be the same: given[] holds the value each option
 * was given. */
static int set_once(const char **given, const char *opt, const char *v)
{
    const int k = find_option(opt)->val;
    if (cli_set_once(&given[k], v, plural[k]) != CLI_CONTINUE) {
        cli_try_help("audit");
        return EXIT_ERROR;
    }
    return 0;
}

static int set_flag(audit_opts *o, const char *opt)
{
    if (strcmp(opt, "exact") == 0)
        o->exact = 1;
    else if (strcmp(opt, "walk") == 0)
        o->walk = o->exact = 1;
    else if (strcmp(opt, "json") == 0)
        o->json = 1;
    else if (strcmp(opt, "list") == 0)
        o->list = 1;
    else if (strcmp(opt, "help") == 0)
        o->help = 1;
    else if (strcmp(opt, "progress") == 0)
        o->progress = 1;
    else
        return usage_error("unrecognized option '--%s'", opt);
    return 0;
}

static int set_value(audit_opts *o, const char *opt, const char *v)
{
    uint64_t x = 0;
    int bad = 0;
    if (strcmp(opt, "n") == 0)
        bad = parse_sizes(o, v);
    else if (strcmp(opt, "trials") == 0)
        bad = parse_u64(v, &o->trials) || o->trials == 0;
    else if (strcmp(opt, "max-trials") == 0)
        bad = parse_u64(v, &o->max_trials) || o->max_trials == 0;
    else if (strcmp(opt, "seed") == 0)
        bad = parse_u64(v, &o->seed), o->seed_set = 1;
    else if (strcmp(opt, "threads") == 0)
        bad = parse_u64(v, &x) || x < 1 || x > 64, o->threads = (unsigned)x;
    else if (strcmp(opt, "jobs") == 0)
        bad = parse_u64(v, &x) || x < 1 || x > MAX_JOBS, o->jobs = (unsigned)x;
    else if (strcmp(opt, "alpha") == 0) {
        char *end;
        o->alpha = strtod(v, &end);
        bad = *end != '\0' || !(o->alpha > 0.0 && o->alpha < 1.0);
    } else if (strcmp(opt, "timeout") == 0 || strcmp(opt, "time-limit") == 0) {
        char *end;
        const double t = strtod(v, &end);
        bad = end == v || *end != '\0' || !(t > 0.0 && t <= 1e7);
        *(strcmp(opt, "timeout") == 0 ? &o->timeout : &o->time_limit) = t;
    } else if (strcmp(opt, "max-output") == 0) {
        bad = parse_u64(v, &o->max_output) || o->max_output == 0 ||
              o->max_output > ((uint64_t)1 << 40);
    } else if (strcmp(opt, "report") == 0)
        o->report = v;
    else if (strcmp(opt, "cmd") == 0)
        o->cmd = v;
    else if (strcmp(opt, "from-log") == 0)
        o->from_log = v;
    else
        o->as_shuffler = v;
    if (bad)
        return usage_error("invalid argument '%s'", v);
    return 0;
}

static int parse_args(audit_opts *o, int argc, char **argv)
{
    const char *given[A_WITH_VALUE] = {NULL};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0) {
            o->help = 1;
            continue;
        }
        if (arg[0] == '-' && arg[1] != '-' && arg[1] != '\0')
            return usage_error("invalid option '%s'", arg);
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (o->name != NULL)
                return usage_error("extra operand '%s'", arg);
            o->name = arg;
            continue;
        }
        char opt[32];
        const char *eq = strchr(arg + 2, '=');
        const size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (len >= sizeof opt)
            return usage_error("unrecognized option '%s'", arg);
        memcpy(opt, arg + 2, len);
        opt[len] = '\0';
        int status;
        if (!takes_value(opt)) {
            if (eq != NULL)
                return usage_error("option '--%s' takes no argument", opt);
            status = set_flag(o, opt);
        } else if (eq != NULL || i + 1 < argc) {
            const char *v = eq != NULL ? eq + 1 : argv[++i];
            status = set_once(given, opt, v);
            if (status == 0)
                status = set_value(o, opt, v);
        } else {
            return usage_error("option '--%s' requires an argument", opt);
        }
        if (status != 0)
            return status;
    }
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

static int emit(const audit_opts *o, audit_result *r)
{
    if (o->json)
        audit_report_json(stdout, r);
    else
        audit_report_text(stdout, r);
    if (o->report != NULL) {
        FILE *f = fopen(o->report, "w");
        int bad = f == NULL || audit_report_html(f, r) != 0;
        if (f != NULL && fclose(f) != 0)
            bad = 1;
        if (bad) {
            fprintf(stderr, "riffle: audit: %s: %s\n", o->report, strerror(errno));
            return EXIT_ERROR;
        }
    }
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

typedef struct plan {
    uint64_t looks[8];
    size_t nlooks;
} plan;

static plan make_plan(const audit_opts *o, size_t max_n)
{
    plan p = {{0}, 0};
    if (o->trials) {
        p.looks[p.nlooks++] = o->trials;
        return p;
    }
    uint64_t max = o->max_trials;
    if (max == 0 && o->cmd != NULL)
        max = DEFAULT_CMD_TRIALS;
    if (max == 0) {
        /* About 2^27 item moves per size: a second or two in-process. */
        max = ((uint64_t)1 << 27) / (max_n ? max_n : 1);
        max = max < 65536 ? 65536 : max > ((uint64_t)1 << 22) ? (uint64_t)1 << 22 : max;
    }
    /* Growing looks, each 4 times the last, from a quarter (--cmd) or a
     * sixteenth of the budget; a budget too small to divide is one look. */
    const uint64_t first = o->cmd ? max / 4 : max / 16;
    for (uint64_t t = first; t > 0 && t < max && p.nlooks < 7; t *= 4)
        p.looks[p.nlooks++] = t;
    p.looks[p.nlooks++] = max;
    return p;
}

/* Holm-adjust every applicable test of every size; the smallest adjusted
 * p-value is returned with its test and size. */
static double adjust_all(audit_result *r, const audit_test **worst, size_t *worst_n)
{
    double p[MAX_SIZES * AUDIT_T_COUNT] = {0}, adj[MAX_SIZES * AUDIT_T_COUNT];
    audit_test *ref[MAX_SIZES * AUDIT_T_COUNT];
    size_t m = 0, sz[MAX_SIZES * AUDIT_T_COUNT];
    for (size_t s = 0; s < r->nsizes; s++)
        for (int t = 0; t < AUDIT_T_COUNT; t++)
            if (r->sizes[s].tests[t].applicable) {
                ref[m] = &r->sizes[s].tests[t];
                sz[m] = r->sizes[s].n;
                p[m] = ref[m]->pvalue;
                m++;
            }
    audit_holm(p, m, adj);
    double best = 1.0;
    *worst = NULL;
    for (size_t i = 0; i < m; i++) {
        ref[i]->adjusted = adj[i];
        if (*worst == NULL || adj[i] < best) {
            best = adj[i];
            *worst = ref[i];
            *worst_n = sz[i];
        }
    }
    return best;
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

/* Trials per size that would give the best test of sz a detectable effect of
 * promised_w: w shrinks as 1/sqrt(trials) at a fixed df and level.  When no
 * test ran, the item-position test's needs: every cell expecting
 * MIN_EXPECTED, and the noncentrality of its df. */
static uint64_t trials_needed(const audit_size_result *sz, double level, double w)
{
    double best = INFINITY;
    for (int t = 0; t < AUDIT_T_COUNT; t++) {
        const audit_test *x = &sz->tests[t];
        if (x->applicable && isfinite(x->detectable_w))
            best = fmin(best, (double)sz->trials * (x->detectable_w / w) *
                                  (x->detectable_w / w));
    }
    if (!isfinite(best)) {
        const size_t n = sz->n, b = n <= 32 ? n : 16;
        const double cell = (double)(n / b), df = (double)((b - 1) * (b - 1));
        const double by_cells = MIN_EXPECTED * (double)n / (cell * cell);
        const double by_power =
            audit_detectable_lambda(df, level, AUDIT_POWER) / (w * w * (double)(n - 1));
        best = fmax(by_cells, by_power);
    }
    best = ceil(best);
    return best > (double)sz->trials ? (uint64_t)best : sz->trials + 1;
}

/* The effect each applicable chi-square test could have found (at the
 * Bonferroni level of one test, the strictest Holm applies), and whether
 * every deck size had a test able to see promised_w.  Sets
 * r->trials_to_decide when not. */
static int powerful_enough(audit_result *r, double level, size_t m)
{
    const double test_level = level / (double)(m ? m : AUDIT_T_COUNT);
    int enough = 1;
    r->stat_known = 1;
    r->power = AUDIT_POWER;
    r->promised_w = AUDIT_PROMISED_W;
    r->test_level = test_level;
    r->trials_to_decide = 0;
    for (size_t s = 0; s < r->nsizes; s++) {
        audit_size_result *sz = &r->sizes[s];
        double best = INFINITY;
        for (int t = 0; t < AUDIT_T_COUNT; t++) {
            audit_test *x = &sz->tests[t];
            x->detectable_w = NAN;
            if (!x->applicable || !(x->df > 0.0) || !(x->nobs > 0.0))
                continue;
            x->detectable_w =
                sqrt(audit_detectable_lambda(x->df, test_level, AUDIT_POWER) / x->nobs);
            best = fmin(best, x->detectable_w);
        }
        if (sz->n < 2) {
            enough = 0; /* one ordering: every trial the same, nothing to test */
            continue;
        }
        if (best <= AUDIT_PROMISED_W)
            continue;
        enough = 0;
        const uint64_t need = trials_needed(sz, test_level, AUDIT_PROMISED_W);
        if (need > r->trials_to_decide)
            r->trials_to_decide = need;
    }
    return enough;
}

/* A size whose every trial gave the same ordering, and the probability of
 * that under a uniform shuffle, (1/n!)^(trials-1), as a natural logarithm. */
static const audit_size_result *degenerate(const audit_result *r, double *log_p)
{
    for (size_t s = 0; s < r->nsizes; s++) {
        const audit_size_result *sz = &r->sizes[s];
        if (sz->n >= 2 && sz->acc != NULL && audit_acc_degenerate(sz->acc)) {
            *log_p = -(double)(sz->trials - 1) * audit_lgamma((double)sz->n + 1.0);
            return sz;
        }
    }
    return NULL;
}

/* A deck size of 1 (the smallest such n), or 0. */
static size_t single_size(const audit_result *r)
{
    for (size_t s = 0; s < r->nsizes; s++)
        if (r->sizes[s].n < 2)
            return r->sizes[s].n ? r->sizes[s].n : 1;
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

static void decide(const audit_opts *o, audit_result *r, const plan *p, int *stop)
{
    const audit_test *worst;
    size_t worst_n = 0, m = 0;
    const double level = o->alpha / (double)p->nlooks;
    const double best = adjust_all(r, &worst, &worst_n);
    for (size_t s = 0; s < r->nsizes; s++)
        for (int t = 0; t < AUDIT_T_COUNT; t++)
            m += r->sizes[s].tests[t].applicable != 0;
    const int enough = powerful_enough(r, level, m);
    double log_p = 0.0;
    const audit_size_result *same = degenerate(r, &log_p);
    if (r->broken) {
        r->verdict = "broken";
        snprintf(r->reason, sizeof r->reason,
                 "%llu outputs were not permutations of their input (%llu killed at "
                 "the timeout, %llu over the output limit)",
                 (unsigned long long)r->broken, (unsigned long long)r->timed_out,
                 (unsigned long long)r->over_output);
        *stop = 1;
    } else if (worst != NULL && best < level) {
        r->verdict = "biased";
        char pv[32];
        if (best < 1e-300)
            snprintf(pv, sizeof pv, "< 1e-300");
        else
            snprintf(pv, sizeof pv, "= %.3g", best);
        snprintf(r->reason, sizeof r->reason,
                 "%s at n = %zu rejects uniformity: adjusted p %s, below %.3g "
                 "(alpha %g over %zu look%s)", worst->name, worst_n, pv, level,
                 o->alpha, p->nlooks, p->nlooks > 1 ? "s" : "");
        *stop = 1;
    } else if (same != NULL && log_p < log(level / (double)(m + 1))) {
        /* One more test beside the m others, Bonferroni-corrected. */
        r->verdict = "biased";
        snprintf(r->reason, sizeof r->reason,
                 "all %llu trials at n = %zu gave the same ordering (probability "
                 "1e%.0f for a uniform shuffle, below %.3g)",
                 (unsigned long long)same->trials, same->n, floor(log_p / log(10.0)),
                 level / (double)(m + 1));
        *stop = 1;
    } else if (same != NULL || !enough) {
        r->verdict = "inconclusive";
        char why[128];
        const size_t single = single_size(r);
        if (single != 0 && r->trials_to_decide == 0) {
            snprintf(r->reason, sizeof r->reason,
                     "n = %zu has a single ordering: every trial is the same and no "
                     "test can tell a fair shuffler from any other (use n >= 2)", single);
            return;
        }
        if (same != NULL)
            snprintf(why, sizeof why, "all %llu trials at n = %zu gave the same ordering",
                     (unsigned long long)same->trials, same->n);
        else if (worst == NULL)
            snprintf(why, sizeof why, "no test could run (too few trials)");
        else
            snprintf(why, sizeof why,
                     "no test rejects uniformity, but none could have seen a "
                     "deviation of w = %g with %g%% power", AUDIT_PROMISED_W,
                     100.0 * AUDIT_POWER);
        if (r->trials_to_decide == 0)
            for (size_t s = 0; s < r->nsizes; s++)
                if (r->sizes[s].trials + 1 > r->trials_to_decide)
                    r->trials_to_decide = r->sizes[s].trials + 1;
        snprintf(r->reason, sizeof r->reason, "%s%s; about --trials=%llu per size would decide",
                 why, r->time_limited ? " (the time limit stopped the trials)" : "",
                 (unsigned long long)r->trials_to_decide);
    } else {
        r->verdict = "fair";
        snprintf(r->reason, sizeof r->reason,
                 "no test rejects uniformity (smallest adjusted p = %.3g, level %.3g); "
                 "each size had a test able to see w = %g with %g%% power",
                 best, level, AUDIT_PROMISED_W, 100.0 * AUDIT_POWER);
    }
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
    const plan p = make_plan(o, max_n);
    r->mode = "statistical";
    r->time_limit = o->time_limit;
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
    for (; ready < o->nsizes; ready++)
        if (audit_acc_init(&acc[ready], o->sizes[ready], p.looks[p.nlooks - 1]) != 0) {
            fprintf(stderr, "riffle: audit: out of memory\n");
            goto out;
        }
    r->nsizes = o->nsizes;
    for (size_t s = 0; s < o->nsizes; s++) {
        r->sizes[s] = (audit_size_result){.n = o->sizes[s], .acc = &acc[s]};
        audit_acc_tests(&acc[s], r->sizes[s].tests);
    }
    int stop = 0;
    for (size_t look = 0; look < p.nlooks && !stop && !r->time_limited; look++) {
        for (size_t s = 0; s < o->nsizes && !r->time_limited; s++) {
            if (have_cmd || o->time_limit <= 0.0) {
                if (add_trials(o, al, param, have_cmd ? &cmd : NULL, look * MAX_SIZES + s,
                               p.looks[look] - acc[s].trials, &acc[s]) != 0)
                    goto out;
            } else if (add_builtin_timed(o, al, param, look, s, p.looks[look], &acc[s],
                                         start, &r->time_limited) != 0) {
                goto out;
            }
            r->sizes[s] = (audit_size_result){.n = o->sizes[s], .trials = acc[s].trials,
                                              .acc = &acc[s]};
            audit_acc_tests(&acc[s], r->sizes[s].tests);
        }
        if (have_cmd)
            note_command(r, &cmd, max_n);
        decide(o, r, &p, &stop);
        if (have_cmd && cmd.stop)
            break;
    }
    if (have_cmd)
        note_command(r, &cmd, max_n);
    decide(o, r, &p, &stop); /* the last word, with every trial gathered */
    r->seconds = seconds_now() - r->seconds;
    status = emit(o, r);
out:
    for (size_t i = 0; i < ready; i++)
        audit_acc_free(&acc[i]);
    if (have_cmd)
        audit_runner_close(&cmd);
    return status;
}

/* ---- decks from a game's log (--from-log) ---------------------------------- */

/* Every deck of the log, in its order, as one look at one deck size. */
static int run_from_log(const audit_opts *o, const audit_cert *cert)
{
    audit_log log;
    audit_acc acc;
    audit_size_result size;
    int status = EXIT_ERROR;
    const double start = seconds_now();
    if (audit_log_load(o->from_log, &log) != 0)
        return EXIT_ERROR;
    if (audit_acc_init(&acc, log.n, log.decks) != 0) {
        fprintf(stderr, "riffle: audit: out of memory\n");
        audit_log_free(&log);
        return EXIT_ERROR;
    }
    if (audit_log_feed(&log, &acc) != 0) {
        fprintf(stderr, "riffle: audit: out of memory\n");
        goto out;
    }
    size = (audit_size_result){.n = log.n, .trials = acc.trials, .acc = &acc};
    audit_acc_tests(&acc, size.tests);
    audit_result r = {.subject = o->from_log, .kind = "log", .mode = "statistical",
                      .alpha = o->alpha, .sizes = &size, .nsizes = 1, .verdict = "fair",
                      .cert = cert};
    const plan p = {{log.decks}, 1};
    int stop = 0;
    decide(o, &r, &p, &stop);
    /* A log cannot be given more trials: say how many decks would decide. */
    char *more = strstr(r.reason, "; about --trials=");
    if (more != NULL)
        snprintf(more, sizeof r.reason - (size_t)(more - r.reason),
                 "; a log of about %llu decks would decide",
                 (unsigned long long)r.trials_to_decide);
    r.seconds = seconds_now() - start;
    status = emit(o, &r);
out:
    audit_acc_free(&acc);
    audit_log_free(&log);
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
        return usage_error("--from-log takes only --alpha, --json and --report");
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
        return usage_error("--time-limit applies to statistical mode only");
    return 0;
}

static int run_audit(const audit_opts *o_in, const audit_cert *cert)
{
    audit_opts o = *o_in;
    unsigned param = 0;
    const audit_algo *al = NULL;
    if (o.name != NULL && (al = find_algo(o.name, &param)) == NULL)
        return usage_error("unknown algorithm or parameter '%s' (see --list)", o.name);
    if (o.nsizes == 0)
        o.sizes[o.nsizes++] = o.cmd ? DEFAULT_CMD_N : DEFAULT_N;
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
    r.seconds = seconds_now(); /* start time; the run stores the duration */
    if (o.exact)
        return run_exact(&o, al, param, &r);
    return run_statistical(&o, al, param, &r);
}

int cmd_audit(int argc, char **argv)
{
    audit_opts o = {.alpha = DEFAULT_ALPHA};
    int status = parse_args(&o, argc, argv);
    if (status != 0)
        return status;
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
