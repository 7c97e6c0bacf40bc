/*
 * audit.h -- internal interfaces of `riffle audit` (front-end code: it uses only
 * the public header riffle.h).  One file per idea:
 *   audit_stats.c   distribution tails and exact laws (chi-square, Poisson,
 *                   rencontres, Eulerian, successions), Holm's correction
 *   audit_perm.c    permutation helpers (rank, statistics of one ordering)
 *   audit_zoo.c     the built-in algorithms, fair and deliberately wrong
 *   audit_odometer.c  the draw-tree odometer (every sequence of bounded draws)
 *   audit_exact.c   exact enumeration (odometer, dynamic programmes)
 *   audit_trials.c  statistical mode: accumulate trials, run the tests
 *                   (its threads start in audit_thread.c, signals blocked)
 *   audit_rules.c   the tests gaming rules name (runs, serial correlation,
 *                   poker, gap, coupon collector; audit_rules.h), their laws
 *                   in audit_rules_law.c
 *   audit_power.c   what a test that found nothing could have found
 *                   (noncentral chi-square)
 *   audit_verdict.c the verdict over every test and size (audit_verdict.h)
 *   audit_output.c  external shufflers (--cmd): check and parse an output
 *                   (running them is the program's: cli/audit_runner.c)
 *   audit_report.c  text and JSON reports;  audit_html.c  HTML + SVG report
 * audit_internal.h declares the few inner steps that the tests also check.
 */
#ifndef RIFFLE_AUDIT_H
#define RIFFLE_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <gmp.h>

#include "riffle.h"

/* ---- audit_stats.c ------------------------------------------------------ */

/* log Gamma(x), x > 0. */
double audit_lgamma(double x);
/* Regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x),
 * a > 0, x >= 0. */
double audit_gamma_p(double a, double x);
double audit_gamma_q(double a, double x);
/* Upper tail Pr[X >= x] of the chi-square law with df degrees of freedom. */
double audit_chi2_sf(double x, double df);
/* Upper tail Pr[X >= k] of Poisson(lambda), k >= 0. */
double audit_poisson_sf(uint64_t k, double lambda);
/* Laws of a uniform random permutation of n items, written into p[0..n]:
 * fixed points (rencontres: p[k] = Pr[k fixed points]), rising sequences
 * (Eulerian: p[k] = Pr[k rising sequences], p[0] = 0) and successions
 * (p[k] = Pr[k positions with a[i+1] == a[i] + 1]).  n >= 1. */
void audit_law_fixed_points(size_t n, double *p);
void audit_law_rising(size_t n, double *p);
/* The two ways audit_law_rising computes its law: the Eulerian recurrence,
 * exact to rounding and O(n^2), for n <= AUDIT_RISING_EXACT_MAX_N (n >= 1),
 * and beyond it an Edgeworth expansion, O(n), each cell within 0.01 / n^3
 * of the exact law (n >= 64; audit_stats.c gives the derivation). */
#define AUDIT_RISING_EXACT_MAX_N 2048
void audit_law_rising_exact(size_t n, double *p);
void audit_law_rising_edgeworth(size_t n, double *p);
void audit_law_successions(size_t n, double *p);

/* Pearson chi-square of observed counts against probabilities, pooling
 * neighbouring cells until each pooled cell expects at least `min_expected`.
 * Returns the statistic and stores the degrees of freedom (pooled cells - 1).
 * With min_expected == 0 no cells are pooled: Pearson's plain statistic. */
double audit_chi2_pooled(const uint64_t *obs, const double *prob, size_t cells,
                         uint64_t total, double min_expected, double *df);

/* Holm's step-down adjustment (Holm, Scand. J. Statist. 1979): adj[i] is the
 * adjusted p-value of p[i]; family-wise error rate controlled at any level. */
void audit_holm(const double *p, size_t m, double *adj);

/* ---- audit_perm.c ------------------------------------------------------- */

/* n! as a double, and as an integer when it fits (else 0). */
double audit_factorial(size_t n);
uint64_t audit_factorial_u64(size_t n);
/* Lexicographic rank of the ordering a[0..n) of 0..n-1 (identity = 0), n <= 20. */
uint64_t audit_rank(const uint32_t *a, size_t n);
/* Inverse of audit_rank. */
void audit_unrank(uint64_t rank, size_t n, uint32_t *a);
/* Statistics of one ordering a[0..n) (a[p] = item at position p): fixed points,
 * rising sequences (1 + #{i : item i+1 lies before item i}; pos is scratch of
 * n entries), successions (#{p : a[p+1] == a[p] + 1}). */
size_t audit_fixed_points(const uint32_t *a, size_t n);
size_t audit_rising_sequences(const uint32_t *a, size_t n, uint32_t *pos);
size_t audit_successions(const uint32_t *a, size_t n);
/* True if a[0..n) is a cycle (one n-cycle); scratch seen[n]. */
int audit_is_cycle(const uint32_t *a, size_t n, unsigned char *seen);

/* ---- audit_zoo.c -------------------------------------------------------- */

/* A draw-only "swap programme": what the dynamic programmes of exact mode need
 * to know about an algorithm made of swaps.  A FIXED step swaps positions i and
 * j, j = lo + r where r follows `mod`: uniform on [0, hi - lo) when mod == 0,
 * else X % (hi - lo) with X uniform on [0, mod).  A TRANSPOSE step swaps two
 * positions drawn independently and uniformly from [0, n). */
enum audit_step_kind { AUDIT_STEP_FIXED = 0, AUDIT_STEP_TRANSPOSE = 1 };
typedef struct audit_step {
    enum audit_step_kind kind;
    size_t i, lo, hi;
    uint64_t mod;
} audit_step;

/* A zoo shuffle permutes a[0..n) in place, drawing only through g (bounded
 * draws); scratch holds AUDIT_SCRATCH(n) uint32_t, zeroed before the first
 * shuffle of a stream and kept between its shuffles: the entries that
 * remember earlier games (stateful, not `finite`) keep their memory there. */
#define AUDIT_SCRATCH(n) (4 * (n) + 4)
typedef void (*audit_shuffle_fn)(rf_rng *g, uint32_t *a, size_t n, unsigned param,
                                 uint32_t *scratch);

typedef struct audit_algo {
    const char *name;
    const char *summary;     /* one line for --list */
    int fair;                /* 1: a correct shuffle; 0: DELIBERATELY WRONG */
    int finite;              /* 1: finite draw tree (exact enumeration possible) */
    const char *param_name;  /* NULL if the algorithm takes no parameter */
    unsigned param_default;  /* 0 = "n" where param_name is set */
    audit_shuffle_fn shuffle;
    /* Swap programme for the dynamic programmes, or NULL.  Fills steps (room
     * for max entries) and returns the count; returns SIZE_MAX if too long. */
    size_t (*program)(size_t n, unsigned param, audit_step *steps, size_t max);
} audit_algo;

const audit_algo *audit_zoo(size_t *count);
const audit_algo *audit_zoo_find(const char *name);
/* Parameter value for `n` items (param 0 means the default). */
unsigned audit_param(const audit_algo *al, size_t n, unsigned param);

/* ---- audit_odometer.c --------------------------------------------------- */

#if !defined(__SIZEOF_INT128__)
#error "the audit needs a 128-bit integer type (gcc or clang)"
#endif
/* Path probabilities: products of draw bounds outgrow 64 bits quickly. */
__extension__ typedef unsigned __int128 audit_u128;

/* The draw-tree odometer: a generator whose bounded draws follow a path,
 * advanced after each run so that the runs visit every sequence of draws
 * exactly once.  Use: init; rng (once, or before every run); then per run:
 * run the algorithm on g, audit_odometer_check, audit_odometer_den, and
 * audit_odometer_next to go on to the next sequence. */
#define AUDIT_ODOMETER_MAX_DRAWS 4096
enum audit_odometer_fault {
    AUDIT_ODOMETER_OK = 0,
    AUDIT_ODOMETER_TOO_DEEP = 1,     /* a run made more than ..._MAX_DRAWS draws */
    AUDIT_ODOMETER_NOT_FUNCTION = 2, /* a replayed draw changed its bound, or a
                                      * run stopped short of the fixed path */
    AUDIT_ODOMETER_RAW_WORD = 3      /* the algorithm asked for a raw word */
};
typedef struct audit_odometer {
    uint64_t path[AUDIT_ODOMETER_MAX_DRAWS];  /* the draws of the current path */
    uint64_t bound[AUDIT_ODOMETER_MAX_DRAWS]; /* and the bound of each */
    size_t len;   /* draws fixed by the odometer */
    size_t depth; /* draws made by the current run */
    int fault;    /* enum audit_odometer_fault: the last problem seen */
} audit_odometer;

void audit_odometer_init(audit_odometer *o);
/* Make g draw from o (bounded draws only: a raw word is a fault) and start a
 * run.  Returns 0, or -1 if the generator cannot be made. */
int audit_odometer_rng(audit_odometer *o, rf_rng *g);
/* After a run: its fault (AUDIT_ODOMETER_OK if none). */
int audit_odometer_check(audit_odometer *o);
/* The inverse probability of the run just made (the product of its bounds)
 * into *den; -1 if it exceeds 128 bits. */
int audit_odometer_den(const audit_odometer *o, audit_u128 *den);
/* Go on to the next sequence and start its run; 0 when every sequence has
 * been run, or after a run with a fault. */
int audit_odometer_next(audit_odometer *o);
/* A fault in words. */
const char *audit_odometer_problem(int fault);

/* ---- audit_exact.c ------------------------------------------------------ */

/* Exact distribution of an algorithm over all n! orderings: prob[rank] =
 * num[rank] / den.  Matrix: P[item][pos] = pos_num[item*n+pos] / pos_den. */
typedef struct audit_exact {
    size_t n;
    uint64_t nperm;    /* n! (0 when the full distribution was not computed) */
    mpz_t den;
    mpz_t *num;        /* nperm entries, or NULL */
    mpz_t pos_den;
    mpz_t *pos_num;    /* n*n entries */
    uint64_t paths;    /* draw sequences walked (0 for dynamic programmes) */
    const char *method;
    char error[160];
} audit_exact;

void audit_exact_init(audit_exact *e);
void audit_exact_clear(audit_exact *e);
/* Compute the exact distribution of `al` on n items: the full distribution when
 * n <= AUDIT_EXACT_MAX_FULL (odometer over every draw path, or a dynamic
 * programme over orderings for swap programmes), and otherwise the matrix only
 * (dynamic programme over positions, swap programmes only).  force_walk makes
 * the odometer walk every path even when a programme exists.  Returns 0, or -1
 * with e->error set. */
#define AUDIT_EXACT_MAX_FULL 9
int audit_exact_run(const audit_algo *al, size_t n, unsigned param, int force_walk,
                    audit_exact *e);
/* The odometer itself on any shuffle function (for tests).  It first checks
 * the tree with audit_exact_fits. */
int audit_exact_walk(audit_shuffle_fn fn, size_t n, unsigned param, audit_exact *e);
/* Whether the draw tree of fn on n items is small enough to walk, estimated
 * from a few random paths before any walking: 0 if so, else -1 with e->error
 * naming the largest n that fits. */
int audit_exact_fits(audit_shuffle_fn fn, size_t n, unsigned param, audit_exact *e);

/* What the reports say about an exact distribution (fractions are exact). */
typedef struct audit_exact_summary {
    mpq_t min, max, median; /* over all n! orderings (full distribution only) */
    mpq_t tv;               /* total-variation distance from uniform */
    mpq_t fixed;            /* expected number of fixed points */
    uint64_t argmin, argmax; /* ranks of a least and a most likely ordering */
    uint64_t distinct;      /* distinct probability values */
    uint64_t support;       /* orderings with probability > 0 */
    int full;               /* the full distribution is known */
    int uniform;            /* all orderings equally likely (full) */
    int matrix_uniform;     /* every P[item][pos] == 1/n */
} audit_exact_summary;

int audit_exact_summarize(const audit_exact *e, audit_exact_summary *s);
void audit_exact_summary_clear(audit_exact_summary *s);

/* ---- audit_trials.c ----------------------------------------------------- */

enum audit_test_id {
    AUDIT_T_ORDER = 0, AUDIT_T_POSITION, AUDIT_T_FIXED, AUDIT_T_RISING,
    AUDIT_T_SUCCESSION, AUDIT_T_BIRTHDAY,
    /* the tests the gaming rules name (audit_rules.h), in its order */
    AUDIT_T_RUNS, AUDIT_T_SERIAL, AUDIT_T_POKER, AUDIT_T_GAP, AUDIT_T_COUPON,
    AUDIT_T_COUNT
};

typedef struct audit_test {
    const char *name;
    int applicable;
    double stat, df, pvalue, adjusted;
    double nobs;             /* observations in a chi-square statistic (power) */
    double detectable_w;     /* smallest effect it had the power to find, or NAN */
    char note[96];
} audit_test;

/* Accumulated observations for one deck size. */
typedef struct audit_acc {
    size_t n;
    uint64_t trials;
    uint64_t nperm;          /* n! when order counts are kept, else 0 */
    uint64_t *order;         /* nperm counts */
    size_t blocks;           /* side of the (blocked) position matrix */
    uint64_t *pos;           /* blocks*blocks counts, [item block][pos block] */
    uint64_t *fixed, *rising, *succ; /* n+1 counts each */
    uint64_t *hashes;        /* birthday test: one hash per trial, or NULL */
    uint64_t hash_cap;
    uint32_t *scratch;       /* n entries */
    uint32_t *first;         /* the first ordering seen (n entries) */
    int varied;              /* some ordering differed from the first */
    struct audit_rules_acc *rules; /* the rules' tests (audit_rules.h) */
} audit_acc;

int audit_acc_init(audit_acc *acc, size_t n, uint64_t max_trials);
/* Items (or positions) in block k when n are cut into b blocks by x -> x b / n. */
double audit_block_size(size_t k, size_t b, size_t n);
void audit_acc_free(audit_acc *acc);
void audit_acc_add(audit_acc *acc, const uint32_t *a);
/* Merge src into dst (same n); used by worker threads. */
void audit_acc_merge(audit_acc *dst, const audit_acc *src);
/* Every trial so far gave one and the same ordering (2 trials or more). */
int audit_acc_degenerate(const audit_acc *acc);
/* Compute the tests of acc into t[AUDIT_T_COUNT] (adjusted left unset). */
void audit_acc_tests(const audit_acc *acc, audit_test *t);

/* In-process trials: run `trials` more shuffles of `al` on n items into acc,
 * with xoshiro256++ streams derived from (seed, batch, chunk); each call of one
 * audit must use a distinct batch number.  Spread over `threads` threads; the
 * result does not depend on the thread count. */
int audit_run_builtin(const audit_algo *al, unsigned param, uint64_t seed,
                      uint64_t batch, uint64_t trials, unsigned threads, audit_acc *acc);

/* ---- audit_power.c ------------------------------------------------------ */

/* Upper a-quantile of chi-square(df). */
double audit_chi2_isf(double a, double df);
/* Upper tail Pr[X > x] of the noncentral chi-square(df, lambda). */
double audit_ncx2_sf(double x, double df, double lambda);
/* The smallest noncentrality that a chi-square(df) test at `level` rejects
 * with probability `power` (the detectable effect is sqrt(lambda / N)). */
double audit_detectable_lambda(double df, double level, double power);

/* ---- audit_output.c ------------------------------------------------------ */

/* Does the command need /bin/sh (quotes, pipes, redirections, variables...)? */
int audit_command_needs_shell(const char *command);
/* Is the command empty or only blanks? */
int audit_command_blank(const char *command);
/* The length of s[0..len) cut to at most max bytes at a UTF-8 character
 * boundary. */
size_t audit_utf8_cut(const char *s, size_t len, size_t max);
/* Parse one output (len bytes) into a[0..n) (0-based items).  Returns 0 if it
 * is a permutation of "1".."n", else -1 with why[] explaining. */
int audit_parse_output(const char *buf, size_t len, size_t n, uint32_t *a,
                       unsigned char *seen, char *why, size_t why_len);

/* ---- audit_report.c / audit_html.c -------------------------------------- */

typedef struct audit_size_result {
    size_t n;
    uint64_t trials;
    audit_test tests[AUDIT_T_COUNT];
    const audit_acc *acc;    /* statistical mode */
    const audit_exact *ex;   /* exact mode */
    /* Statistical mode: the deviations ruled out with probability r->power
     * (audit_verdict.c): the smallest relative bias of an item (block) to land
     * in a position (block), INFINITY when none; the smallest total variation
     * among the n! orderings, NAN when the orderings test did not run on
     * every ordering. */
    double ruled_out_bias, ruled_out_tv;
} audit_size_result;

typedef struct audit_result {
    const char *subject;     /* algorithm name or command */
    const char *kind;        /* "builtin" or "command" */
    const char *mode;        /* "exact" or "statistical" */
    const audit_algo *algo;  /* NULL for --cmd */
    unsigned param;
    uint64_t seed;
    double alpha;
    const char *verdict;     /* "fair", "biased", "broken", "inconclusive" */
    char reason[384];
    size_t nsizes;
    audit_size_result *sizes;
    double seconds;
    double per_trial_us;     /* --cmd: wall time per trial */
    uint64_t broken;
    const char *broken_example;
    /* Statistical mode (stat_known): what "no bias found" could have found. */
    int stat_known;
    double power;            /* probability of detection used below */
    double promised_w;       /* effect size a "fair" verdict must have been able to see */
    double test_level;       /* level of one test: alpha / (looks x tests) */
    uint64_t trials_to_decide; /* inconclusive: trials per size that would decide */
    int time_limited;        /* --time-limit ended the trials */
    double time_limit;       /* seconds, or 0 */
    /* --cmd: the limits in force and what they caught. */
    double timeout;          /* seconds per trial at the end of the audit */
    int timeout_derived;     /* 1: derived from the first trials */
    uint64_t max_output;     /* bytes per trial, at the largest deck size */
    uint64_t timed_out, over_output;
    int strays_caught;       /* a subreaper caught descendants that left the group */
    const struct audit_cert *cert; /* the certification section, or NULL
                                    * (audit_cert.h) */
    /* The design of the looks (audit_verdict.h): fixed, nlooks looks sharing
     * alpha equally, or sequential, look number `look` (from 1) of an
     * open-ended series that stops when it rejects or rules out an
     * item-position bias of `deviation`.  by_deviation: a fixed design
     * judged as the sequential one is -- "fair" only once `deviation` is
     * ruled out at every size -- rather than by the power to see w = 0.25
     * (a game's log: decks that cannot be added to, judged at the
     * deviation a studio states). */
    int sequential;
    int by_deviation;
    size_t look, nlooks;
    double deviation;
    double look_level;       /* the family-wise level of this look */
} audit_result;

/* The exit status of a verdict: 0 fair, 2 biased or broken, 3 inconclusive. */
/* Whether an applicable test passes at the regulators' 99 % level (its own
 * p-value, unadjusted, at least 0.01); the verdict is the adjusted one. */
int audit_level_pass(const audit_test *t);
int audit_exit_status(const char *verdict);

void audit_report_text(FILE *f, const audit_result *r);
void audit_report_json(FILE *f, const audit_result *r);
int audit_report_html(FILE *f, const audit_result *r);
/* The length of the well-formed UTF-8 character at s, or 0 (also at NUL). */
size_t audit_utf8_char(const unsigned char *s);
/* Bytes from a command's output, safe on a terminal: control characters and
 * bytes that are not UTF-8 escaped (\xHH, \u00HH), a backslash doubled. */
void audit_fput_text(FILE *f, const char *s);
/* The same for len bytes that may hold NULs (written as \x00). */
void audit_fput_bytes(FILE *f, const char *s, size_t len);
/* Exact fractions as decimal strings (helpers shared by the writers). */
void audit_fprint_ratio(FILE *f, const mpz_t num, const mpz_t den);
double audit_ratio_double(const mpz_t num, const mpz_t den);

#endif /* RIFFLE_AUDIT_H */
