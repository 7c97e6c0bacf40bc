/*
 * cli_argv.c -- the command-line fuzzer: random argument vectors for the
 * riffle program, built from its real getopt tables (cli/cli_options.h, the
 * tables the commands parse with), run against a sanitizer build of the
 * program for a bounded time.
 *
 * Why not a libFuzzer target: libFuzzer calls its target in its own process,
 * and riffle's main() cannot run that way.  Some command lines are endless by
 * design (-r without -n, -i over 2^64 numbers), and the program sets
 * process-wide state once (signal handlers that remove its temporary files,
 * libsodium's randomness, held standard descriptors, getopt's globals).  So
 * this is a deterministic random driver instead: every vector runs in a child
 * (fork, then exec of the program), in a scratch directory of a few input
 * files, standard input from one of them, under limits -- an alarm, a CPU
 * time limit, RLIMIT_FSIZE on what it writes, allocations above 1 GiB
 * refused by the sanitizer's allocator -- whose signals end an endless run as
 * an expected outcome, not a failure.
 *
 * A run fails when the child
 *   - dies of another signal (SIGSEGV, SIGABRT, ...);
 *   - exits with a status riffle never uses (not 0, 1 or 2, nor 3 for
 *     `audit`: inconclusive), the sanitizers' exit codes among them (set
 *     here to 86, 87 and 88);
 *   - writes a sanitizer report to standard error;
 *   - exits with status 1 and says nothing on standard error.
 * The driver then prints the vector as a shell command line with the child's
 * standard error, writes it to CRASH_DIR/cli_argv-SEED-N (arguments separated
 * by NUL bytes, the corpus format) and exits 1.
 *
 * Usage: cli_argv RIFFLE SECONDS SEED CORPUS_DIR CRASH_DIR
 * First every file of CORPUS_DIR runs once (arguments separated by NUL
 * bytes; a first argument "@shuf" runs the program under the name shuf);
 * then random vectors, new or corpus entries mutated, until SECONDS have
 * passed.  The same SEED gives the same vectors.  `riffle audit --cmd` runs
 * only harmless commands (audit_commands), and half the audit vectors start
 * with a --time-limit, so that its long runs stay short.  The last line of output is
 * "N runs (C from the corpus): S ok, E errors, L limits, F failures".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_options.h"

#define MAX_ARGS 24
#define MAX_ARG_LEN 64
#define RUN_SECONDS 5          /* alarm per run */
#define OUTPUT_LIMIT (4 << 20) /* RLIMIT_FSIZE per run */

/* ---- a seeded generator: splitmix64 (Steele, Lea and Flood, "Fast
 * splittable pseudorandom number generators", OOPSLA 2014) ---- */

static uint64_t rng_state;

static uint64_t next64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform below n (n small: the bias of the modulo does not matter here). */
static size_t below(size_t n)
{
    return n ? (size_t)(next64() % n) : 0;
}

/* ---- the scratch directory ---- */

struct fixture {
    const char *name;
    const char *data;
    size_t len;
};

/* Inputs for every command: lines, NUL records, weights, a CRLF deck, a
 * permutation, a key of 40 bytes for --random-source. */
#define FIXTURE(name, text) {name, text, sizeof text - 1}
static const struct fixture fixtures[] = {
    FIXTURE("in", "a\nb\nc\nd\ne\n"),
    FIXTURE("empty", ""),
    FIXTURE("z", "a\0b\0c\0"),
    FIXTURE("w", "x 1\ny 2.5\nz 0\nt 1e-310\nh 1e308\n"),
    FIXTURE("deck", "AS\r\nKH\r\n\r\nQD\nJC\n\xff\n"),
    FIXTURE("perm", "3 1 0 2\n"),
    FIXTURE("key", "0123456789abcdefghijklmnopqrstuvwxyz-+=_"),
    FIXTURE("stdin", "1 0 2\n3\n"),
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

static int write_fixtures(const char *dir)
{
    char path[4096];
    for (size_t i = 0; i < N_FIXTURES; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, fixtures[i].name);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(fixtures[i].data, 1, fixtures[i].len, f) != fixtures[i].len) {
            if (f)
                fclose(f);
            return -1;
        }
        if (fclose(f) != 0)
            return -1;
    }
    snprintf(path, sizeof path, "%s/dir", dir);
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

/* Remove path and, for a directory, everything under it. */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            chmod(sub, 0700);
            remove_tree(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Back to the fixtures alone: whatever a run wrote (-o, --split, temporary
 * files of a killed run) goes, and the fixtures are written again. */
static int reset_scratch(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        remove_tree(sub);
    }
    if (d)
        closedir(d);
    return write_fixtures(dir);
}

/* ---- argument vectors ---- */

struct argv_buf {
    int shuf_name; /* run under the name shuf */
    int n;
    char arg[MAX_ARGS][MAX_ARG_LEN + 1];
};

/* Append s, cut to MAX_ARG_LEN bytes. */
static void push(struct argv_buf *v, const char *s)
{
    if (v->n >= MAX_ARGS)
        return;
    const size_t len = strnlen(s, MAX_ARG_LEN);
    memcpy(v->arg[v->n], s, len);
    v->arg[v->n++][len] = '\0';
}

/* Option values and operands that reach the parsers' edges: counts, ranges,
 * sizes, split specifications, seeds, generator and mode names, presets,
 * cards, files of the scratch directory (no '/' anywhere: every file a run
 * writes stays in it). */
static const char *const values[] = {
    "0", "1", "2", "3", "4", "5", "7", "10", "13", "52", "54", "100", "1000",
    "-1", "+3", " 4", "007", "3x", "1e3", "18446744073709551615", "18446744073709551616",
    "99999999999999999999999", "0-9", "5-3", "4-3", "1-18446744073709551615",
    "0-18446744073709551615", "3-", "-5", "x-1", "1K", "64M", "1G", "1T", "0K", "50%",
    "0%", "101%", "2B", "80%,20%", "1,1,*", "*", "3,*,1", "50%,60%", "1000,500,*",
    "part-%d", "p%02d.txt", "a,b,c", "%d%d", "%s", "chacha20", "xoshiro256++", "pcg64",
    "mt19937", "auto", "table", "siphash", "multiply", "bridge", "holdem", "doudizhu",
    "poker", "AS", "KH", "10D", "BJ", "rj", "\xe2\x99\xa0", "1e-310", "1e308", "nan",
    "inf", ",", ":", "", "in", "empty", "z", "w", "deck", "perm", "key", "stdin", "dir",
    "missing", "-", "out", "x y", "\xff", "\n", "it's",
};
#define N_VALUES (sizeof values / sizeof values[0])

/* The only commands `audit --cmd` is given: junk could spell anything.  Each
 * ends at once or is stopped by the audit (output limit, kill 0). */
static const char *const audit_commands[] = {
    "cat", "true", "false", "tac", "sort -r", "sed 1d", "sed 2p", "yes",
    "sh -c 'kill -TERM 0; cat'", "sh -c 'echo x >&2; cat'", "no-such-command", "", "  ",
};
#define N_AUDIT_COMMANDS (sizeof audit_commands / sizeof audit_commands[0])

/* Bytes of a junk argument: any but '/' and NUL. */
static void junk(char *s)
{
    const size_t len = below(12);
    for (size_t i = 0; i < len; i++) {
        char c;
        do
            c = (char)(1 + below(255));
        while (c == '/');
        s[i] = c;
    }
    s[len] = '\0';
}

static void value(char *s)
{
    const size_t r = below(10);
    if (r < 7)
        snprintf(s, MAX_ARG_LEN + 1, "%s", values[below(N_VALUES)]);
    else if (r < 9)
        snprintf(s, MAX_ARG_LEN + 1, "%llu", (unsigned long long)below(70));
    else
        junk(s);
}

static size_t count_longopts(const struct option *o)
{
    size_t n = 0;
    while (o[n].name)
        n++;
    return n;
}

/* A long option from the table, maybe abbreviated, with its value attached
 * (--name=V) or as the next argument. */
static void long_option(struct argv_buf *v, const struct cli_options *t)
{
    const struct option *o = &t->longopts[below(count_longopts(t->longopts))];
    char name[MAX_ARG_LEN + 1], val[MAX_ARG_LEN + 1], s[2 * MAX_ARG_LEN + 4];
    snprintf(name, sizeof name, "%s", o->name);
    if (below(8) == 0)
        name[1 + below(strlen(name))] = '\0'; /* an abbreviation, maybe ambiguous */
    if (strcmp(t->command, "audit") == 0 && strcmp(o->name, "cmd") == 0) {
        snprintf(s, sizeof s, "--%s=%s", name, audit_commands[below(N_AUDIT_COMMANDS)]);
        push(v, s);
        return;
    }
    if (o->has_arg == no_argument) {
        if (below(16) == 0) {
            value(val);
            snprintf(s, sizeof s, "--%s=%s", name, val);
        } else {
            snprintf(s, sizeof s, "--%s", name);
        }
        push(v, s);
        return;
    }
    value(val);
    if (below(2)) {
        snprintf(s, sizeof s, "--%s=%s", name, val);
        push(v, s);
    } else {
        snprintf(s, sizeof s, "--%s", name);
        push(v, s);
        if (below(16))
            push(v, val); /* else the value is missing at the end */
    }
}

/* A short option of the optstring: alone, with its value attached or next,
 * or a cluster of flags. */
static void short_option(struct argv_buf *v, const struct cli_options *t)
{
    char letters[64], takes[64];
    size_t n = 0;
    for (const char *p = t->shortopts; *p && n < sizeof letters; p++) {
        if (*p == ':')
            continue;
        letters[n] = *p;
        takes[n++] = p[1] == ':';
    }
    if (n == 0)
        return;
    char s[MAX_ARG_LEN + 4], val[MAX_ARG_LEN + 1];
    const size_t i = below(n);
    if (!takes[i]) {
        size_t len = 0;
        s[len++] = '-';
        s[len++] = letters[i];
        for (size_t more = below(3); more-- > 0;)
            s[len++] = letters[below(n)]; /* a cluster: -ek, -zr, maybe -rn5 */
        s[len] = '\0';
        push(v, s);
        return;
    }
    value(val);
    if (below(2)) {
        snprintf(s, sizeof s, "-%c%s", letters[i], val);
        push(v, s);
    } else {
        snprintf(s, sizeof s, "-%c", letters[i]);
        push(v, s);
        push(v, val);
    }
}

static void token(struct argv_buf *v, const struct cli_options *t)
{
    char s[MAX_ARG_LEN + 1];
    const size_t r = below(100);
    if (r < 38) {
        long_option(v, t);
    } else if (r < 62) {
        short_option(v, t);
    } else if (r < 88) {
        value(s);
        push(v, s);
    } else if (r < 91) {
        push(v, "--");
    } else {
        junk(s);
        push(v, s);
    }
}

static size_t n_tables(void)
{
    size_t n = 0;
    while (cli_all_options[n])
        n++;
    return n;
}

/* The table of the command named by the vector (after "@shuf", or its
 * first argument), the shuffle's otherwise. */
static const struct cli_options *table_of(const struct argv_buf *v)
{
    if (v->shuf_name)
        return &cli_shuf_options;
    for (size_t i = 0; cli_all_options[i]; i++)
        if (v->n > 0 && cli_all_options[i]->command[0] &&
            strcmp(v->arg[0], cli_all_options[i]->command) == 0)
            return cli_all_options[i];
    return &cli_riffle_options;
}

static void random_vector(struct argv_buf *v)
{
    memset(v, 0, sizeof *v);
    const struct cli_options *t = cli_all_options[below(n_tables())];
    v->shuf_name = t->shuf_name;
    if (t->command[0])
        push(v, t->command);
    if (strcmp(t->command, "audit") == 0 && below(2))
        push(v, "--time-limit=2");
    for (size_t k = below(8); k-- > 0;)
        token(v, t);
}

/* 1 to 3 edits of a corpus vector: a token inserted, one removed, one
 * replaced by a new token. */
static void mutate(struct argv_buf *v)
{
    const struct cli_options *t = table_of(v);
    const int first = t->command[0] ? 1 : 0; /* keep the command's name */
    for (size_t e = 1 + below(3); e-- > 0;) {
        struct argv_buf tail;
        memset(&tail, 0, sizeof tail);
        token(&tail, t);
        const int at = first + (int)below((size_t)(v->n - first + 1));
        const size_t op = below(3);
        if (op > 0 && at < v->n) /* remove (and, for a replacement, insert) */
            memmove(v->arg[at], v->arg[at + 1], (size_t)(v->n-- - at - 1) * sizeof v->arg[0]);
        if (op != 1) {
            for (int i = 0; i < tail.n && v->n < MAX_ARGS; i++) {
                memmove(v->arg[at + i + 1], v->arg[at + i],
                        (size_t)(v->n - at - i) * sizeof v->arg[0]);
                memcpy(v->arg[at + i], tail.arg[i], sizeof v->arg[0]);
                v->n++;
            }
        }
    }
}

static int load_vector(const char *path, struct argv_buf *v)
{
    memset(v, 0, sizeof *v);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char buf[MAX_ARGS * (MAX_ARG_LEN + 1)];
    const size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t i = 0;
    while (i < len) {
        const size_t end = i + strnlen(buf + i, len - i);
        char arg[MAX_ARG_LEN + 1];
        snprintf(arg, sizeof arg, "%.*s", (int)(end - i), buf + i);
        if (i == 0 && strcmp(arg, "@shuf") == 0)
            v->shuf_name = 1;
        else
            push(v, arg);
        i = end + 1;
    }
    return 0;
}

static void save_vector(const char *path, const struct argv_buf *v)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    if (v->shuf_name)
        fwrite("@shuf", 1, 6, f);
    for (int i = 0; i < v->n; i++)
        fwrite(v->arg[i], 1, strlen(v->arg[i]) + 1, f);
    fclose(f);
}

/* The vector as a command line for a POSIX shell, each argument quoted. */
static void print_vector(FILE *out, const char *prog, const struct argv_buf *v)
{
    fprintf(out, "%s", prog);
    for (int i = 0; i < v->n; i++) {
        fputs(" '", out);
        for (const char *p = v->arg[i]; *p; p++) {
            if (*p == '\'')
                fputs("'\\''", out);
            else
                fputc(*p, out);
        }
        fputc('\'', out);
    }
    fputc('\n', out);
}

/* ---- running ---- */

enum outcome { RUN_OK, RUN_ERROR, RUN_LIMIT, RUN_FAILED };

static void child(const char *dir, const char *path, struct argv_buf *v)
{
    char *argv[MAX_ARGS + 2];
    argv[0] = v->shuf_name ? "shuf" : "riffle";
    for (int i = 0; i < v->n; i++)
        argv[i + 1] = v->arg[i];
    argv[v->n + 1] = NULL;
    if (chdir(dir) != 0)
        _exit(120);
    const int in = open("stdin", O_RDONLY);
    const int out = open(".out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(".err", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
        dup2(err, 2) < 0)
        _exit(121);
    const struct rlimit cpu = {RUN_SECONDS, RUN_SECONDS + 1};
    const struct rlimit fsize = {OUTPUT_LIMIT, OUTPUT_LIMIT};
    setrlimit(RLIMIT_CPU, &cpu);
    setrlimit(RLIMIT_FSIZE, &fsize);
    alarm(RUN_SECONDS);
    execv(path, argv);
    _exit(122);
}

/* Does the child's standard error hold a sanitizer report, or anything? */
static void read_stderr(const char *dir, int *report, int *said)
{
    char path[4096], buf[1 << 16];
    snprintf(path, sizeof path, "%s/.err", dir);
    FILE *f = fopen(path, "rb");
    const size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[len] = '\0';
    *said = len > 0;
    *report = len > 0 && (memmem(buf, len, "Sanitizer", 9) || memmem(buf, len, "runtime error:", 14));
}

static enum outcome run(const char *dir, const char *path, struct argv_buf *v, int *wstatus)
{
    const pid_t pid = fork();
    if (pid < 0)
        return RUN_FAILED;
    if (pid == 0)
        child(dir, path, v);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return RUN_FAILED;
    *wstatus = st;
    int report, said;
    read_stderr(dir, &report, &said);
    if (report)
        return RUN_FAILED;
    if (WIFSIGNALED(st)) {
        const int s = WTERMSIG(st);
        return s == SIGALRM || s == SIGXCPU || s == SIGXFSZ || s == SIGPIPE ? RUN_LIMIT
                                                                             : RUN_FAILED;
    }
    const int code = WEXITSTATUS(st);
    const int audit = !v->shuf_name && v->n > 0 && strcmp(v->arg[0], "audit") == 0;
    if (code == 0 || (audit && (code == 2 || code == 3)))
        return RUN_OK; /* audit: biased or broken, inconclusive */
    if (code == 1 || code == 2)
        return said ? RUN_ERROR : RUN_FAILED;
    return RUN_FAILED;
}

static void show_failure(const char *dir, const char *prog, const struct argv_buf *v, int st)
{
    printf("FAILED: ");
    print_vector(stdout, prog, v);
    if (WIFSIGNALED(st))
        printf("killed by signal %d\n", WTERMSIG(st));
    else
        printf("exit status %d\n", WEXITSTATUS(st));
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/.err", dir);
    FILE *f = fopen(path, "r");
    for (int i = 0; f && i < 40 && fgets(line, sizeof line, f); i++)
        printf("  %s", line);
    if (f)
        fclose(f);
}

struct tally {
    unsigned long runs, corpus, ok, errors, limits, failures;
};

/* Run one vector; 0, or -1 after a failure was shown and saved. */
static int try_vector(const char *dir, const char *riffle, const char *shuf,
                      const char *crash_dir, uint64_t seed, struct argv_buf *v,
                      struct tally *t)
{
    int st = 0;
    const enum outcome o = run(dir, v->shuf_name ? shuf : riffle, v, &st);
    t->runs++;
    t->ok += o == RUN_OK;
    t->errors += o == RUN_ERROR;
    t->limits += o == RUN_LIMIT;
    if (o == RUN_FAILED) {
        t->failures++;
        show_failure(dir, v->shuf_name ? "shuf" : "riffle", v, st);
        char path[4096];
        mkdir(crash_dir, 0755);
        snprintf(path, sizeof path, "%s/cli_argv-%llu-%lu", crash_dir,
                 (unsigned long long)seed, t->runs);
        save_vector(path, v);
        printf("saved as %s\n", path);
    }
    return reset_scratch(dir) != 0 || o == RUN_FAILED ? -1 : 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every regular file of the corpus, in name order, as vectors. */
static struct argv_buf *load_corpus(const char *corpus, size_t *count)
{
    struct dirent **names = NULL;
    const int n = scandir(corpus, &names, NULL, by_name);
    struct argv_buf *all = calloc(n > 0 ? (size_t)n : 1, sizeof *all);
    *count = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", corpus, names[i]->d_name);
        struct stat st;
        if (all && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            load_vector(path, &all[*count]) == 0)
            ++*count;
        free(names[i]);
    }
    free(names);
    return all;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s RIFFLE SECONDS SEED CORPUS_DIR CRASH_DIR\n", argv[0]);
        return 2;
    }
    const char *riffle = argv[1], *corpus = argv[4], *crash_dir = argv[5];
    const double seconds = atof(argv[2]);
    const uint64_t seed = strtoull(argv[3], NULL, 10);
    rng_state = seed;
    char shuf[4096], dir[4096];
    snprintf(shuf, sizeof shuf, "%s", riffle);
    char *slash = strrchr(shuf, '/');
    snprintf(slash ? slash + 1 : shuf, sizeof shuf - (size_t)(slash ? slash + 1 - shuf : 0),
             "shuf");
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/riffle-cli-argv.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir) || write_fixtures(dir) != 0) {
        perror("scratch directory");
        return 2;
    }
    /* The children's sanitizers: their own exit codes, leaks looked for,
     * allocations above 1 GiB refused (a table of 2^32 entries is a
     * "memory exhausted" message, not 32 GiB of this shared machine), and
     * temporary files in the scratch directory. */
    setenv("ASAN_OPTIONS",
           "exitcode=86:detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=1024",
           1);
    setenv("UBSAN_OPTIONS", "exitcode=87:print_stacktrace=1", 1);
    setenv("LSAN_OPTIONS", "exitcode=88", 1);
    setenv("TMPDIR", dir, 1);
    setenv("LC_ALL", "C", 1);
    signal(SIGPIPE, SIG_DFL);

    struct tally t = {0};
    int status = 0;
    size_t n_corpus;
    struct argv_buf *corpus_v = load_corpus(corpus, &n_corpus), v;
    for (size_t i = 0; i < n_corpus && !status; i++) {
        t.corpus++;
        v = corpus_v[i];
        status = try_vector(dir, riffle, shuf, crash_dir, seed, &v, &t) != 0;
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!status) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 >=
            seconds)
            break;
        if (n_corpus && below(2)) {
            v = corpus_v[below(n_corpus)];
            mutate(&v);
        } else {
            random_vector(&v);
        }
        status = try_vector(dir, riffle, shuf, crash_dir, seed, &v, &t) != 0;
    }
    free(corpus_v);
    remove_tree(dir);
    printf("%lu runs (%lu from the corpus): %lu ok, %lu errors, %lu limits, %lu failures\n",
           t.runs, t.corpus, t.ok, t.errors, t.limits, t.failures);
    return status;
}
