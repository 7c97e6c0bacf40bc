/*
 * mpi_options.c -- the command line of riffle-mpi: riffle's options that
 * make sense for files every rank can read, with riffle's meanings, so that
 * `riffle-mpi --seed=S ARGS` and `riffle --seed=S ARGS` write the same bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_job.h"

enum {
    OPT_SEED = 256,
    OPT_RNG,
    OPT_RANDOM_SOURCE,
    OPT_HEADER,
    OPT_MEMORY,
    OPT_THREADS,
    OPT_PROGRESS,
    OPT_STATS,
    OPT_SPLIT,
    OPT_PATTERN,
    OPT_EXCHANGE,
    OPT_HELP,
    OPT_VERSION
};

#define MAX_THREADS 4096

static const struct option longopts[] = {
    {"head-count", required_argument, NULL, 'n'},
    {"output", required_argument, NULL, 'o'},
    {"zero-terminated", no_argument, NULL, 'z'},
    {"random-source", required_argument, NULL, OPT_RANDOM_SOURCE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"rng", required_argument, NULL, OPT_RNG},
    {"header", required_argument, NULL, OPT_HEADER},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"temporary-directory", required_argument, NULL, 'T'},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"stats", no_argument, NULL, OPT_STATS},
    {"split", required_argument, NULL, OPT_SPLIT},
    {"output-pattern", required_argument, NULL, OPT_PATTERN},
    {"exchange", required_argument, NULL, OPT_EXCHANGE},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static const char usage[] =
    "Usage: mpirun -np P " MPI_PROG " [OPTION]... FILE... -o OUTPUT\n"
    "  or:  mpirun -np P " MPI_PROG " [OPTION]... FILE... --split=SPEC --output-pattern=PATTERN\n"
    "Write a random permutation of the lines of FILEs to OUTPUT, on P MPI ranks.\n"
    "With --seed, the output is exactly that of `riffle --seed` with the same\n"
    "options, on any number of ranks.  Every rank must be able to read every FILE\n"
    "and to write beside OUTPUT (a file system they share).\n"
    "\n"
    "  -n, --head-count=COUNT    output at most COUNT lines\n"
    "  -o, --output=FILE         write the result to FILE, replaced atomically\n"
    "  -z, --zero-terminated     line delimiter is NUL, not newline\n"
    "      --seed=S              reproducible output: a function of S and the input\n"
    "                              only; S is a decimal integer (up to 2^64-1) or any\n"
    "                              string\n"
    "      --random-source=FILE  use the first 32 bytes of FILE as the key (read\n"
    "                              by rank 0)\n"
    "      --rng=NAME            generator: chacha20 (default), xoshiro256++, pcg64\n"
    "      --header=K            output the first K lines first, in place\n"
    "      --memory=SIZE         per rank: use at most SIZE bytes for the records it\n"
    "                              orders (K, M, G, T suffixes; N% of its memory);\n"
    "                              beyond it, temporary files\n"
    "  -T, --temporary-directory=DIR  per rank: temporary files in DIR (default:\n"
    "                              $TMPDIR, else /tmp)\n"
    "      --threads=N           per rank: N threads; 0 (the default): the machine's\n"
    "                              cores shared among its ranks\n"
    "      --split=SPEC          cut the output into parts: N equal parts, percentages\n"
    "                              (80%,10%,10%) or counts (1000,500,*)\n"
    "      --output-pattern=PATTERN  the parts' files: one %d (part-%02d.txt), or\n"
    "                              as many names as parts\n"
    "      --exchange=MODE       how records reach the rank that writes them: direct:\n"
    "                              every rank reads all of the one input FILE and\n"
    "                              keeps its own records; refs: a rank on the same\n"
    "                              machine is sent where they lie in the input files\n"
    "                              and reads them itself, one elsewhere their bytes;\n"
    "                              bytes: their bytes to every rank; auto (the\n"
    "                              default): direct when every rank is on one machine\n"
    "                              and FILE fits --memory, else refs\n"
    "      --progress            a progress line on standard error (from rank 0)\n"
    "      --stats               per-phase times, bytes and memory of every rank on\n"
    "                              standard error (from rank 0)\n"
    "      --help                display this help and exit\n"
    "      --version             output version information and exit\n"
    "\n"
    "Without --seed or --random-source, rank 0 draws the key from the operating\n"
    "system and sends it to every rank.  Standard input is not read.\n";

static int say(int talk, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A usage error: the message and the hint, from rank 0 only. */
static int say(int talk, const char *fmt, ...)
{
    if (talk) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", MPI_PROG);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\nTry '%s --help' for more information.\n", MPI_PROG);
        va_end(ap);
    }
    return JOB_FAIL;
}

static int print_out(int talk, const char *text)
{
    if (!talk)
        return JOB_OK;
    if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "%s: write error: %s\n", MPI_PROG, strerror(errno));
        return JOB_FAIL;
    }
    return JOB_OK;
}

static int parse_u64(const char *s, uint64_t *v)
{
    if (*s < '0' || *s > '9')
        return -1;
    uint64_t x = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        const unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return *s ? -1 : 0;
}

static int once(const char **slot, const char *arg, const char *what, int talk)
{
    if (*slot && strcmp(*slot, arg) != 0)
        return say(talk, "multiple %s specified", what);
    *slot = arg;
    return JOB_CONTINUE;
}

static int exchange_mode(const char *arg, int talk, struct mpi_opts *o)
{
    static const char *const names[] = {"auto", "direct", "refs", "bytes"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(arg, names[i]) == 0) {
            o->exchange = (enum exchange_mode)i;
            return JOB_CONTINUE;
        }
    return say(talk, "invalid exchange '%s' (auto, direct, refs or bytes)", arg);
}

static int on_option(struct mpi_opts *o, int c, const char *arg, int talk)
{
    uint64_t v;
    switch (c) {
    case 'n':
        if (parse_u64(arg, &v) != 0)
            return say(talk, "invalid line count '%s'", arg);
        if (v < o->count)
            o->count = v; /* repeated -n: the smallest wins, as in shuf */
        return JOB_CONTINUE;
    case 'o':
        return once(&o->output, arg, "output files", talk);
    case 'z':
        o->delim = '\0';
        return JOB_CONTINUE;
    case 'T':
        return once(&o->tmpdir, arg, "temporary directories", talk);
    case OPT_SEED:
        return once(&o->seed, arg, "seeds", talk);
    case OPT_RNG:
        return once(&o->rng_name, arg, "generators", talk);
    case OPT_RANDOM_SOURCE:
        return once(&o->random_source, arg, "random sources", talk);
    case OPT_HEADER:
        if (parse_u64(arg, &o->header) != 0)
            return say(talk, "invalid header line count '%s'", arg);
        return JOB_CONTINUE;
    case OPT_MEMORY:
        switch (rf_engine_memory_parse(arg, &o->memory)) { /* riffle's --memory rule */
        case RF_OK:
            return JOB_CONTINUE;
        case RF_ERANGE:
            return say(talk, "cannot find the size of memory for --memory=%s", arg);
        default:
            return say(talk, "invalid memory size '%s'", arg);
        }
    case OPT_THREADS:
        if (parse_u64(arg, &v) != 0 || v > MAX_THREADS)
            return say(talk, "invalid thread count '%s'", arg);
        o->threads = (unsigned)v;
        return JOB_CONTINUE;
    case OPT_PROGRESS:
        o->progress = 1;
        return JOB_CONTINUE;
    case OPT_STATS:
        o->stats = 1;
        return JOB_CONTINUE;
    case OPT_SPLIT:
        return once(&o->split_spec, arg, "split specifications", talk);
    case OPT_PATTERN:
        return once(&o->pattern, arg, "output patterns", talk);
    case OPT_EXCHANGE:
        return exchange_mode(arg, talk, o);
    case OPT_HELP:
        return print_out(talk, usage);
    case OPT_VERSION: {
        char buf[256];
        snprintf(buf, sizeof buf, "%s (riffle) %s\n", MPI_PROG, rf_version());
        return print_out(talk, buf);
    }
    default:
        if (talk)
            fprintf(stderr, "Try '%s --help' for more information.\n", MPI_PROG);
        return JOB_FAIL;
    }
}

/* --split and --output-pattern checked at once, with riffle's messages
 * (mpi_output.c parses them again where they are used). */
static int check_split(const struct mpi_opts *o, int talk)
{
    rf_split split;
    rf_split_error se;
    char why[512];
    rf_status st = rf_split_parse(&split, o->split_spec, &se);
    if (st == RF_EINVAL) {
        rf_split_error_message(&se, why, sizeof why);
        return say(talk, "invalid split '%s'%s%s", o->split_spec, *why ? ": " : "", why);
    }
    if (st != RF_OK)
        return JOB_CONTINUE; /* out of memory: said where it is parsed again */
    char **names;
    st = rf_split_names(o->pattern, split.parts, &names, &se);
    const size_t parts = split.parts;
    rf_split_free(&split);
    if (st == RF_EINVAL) {
        rf_split_error_message(&se, why, sizeof why);
        return say(talk, "invalid output pattern '%s': %s", o->pattern, why);
    }
    if (st == RF_OK)
        rf_split_names_free(names, parts);
    return JOB_CONTINUE;
}

static int check(const struct mpi_opts *o, int talk)
{
    rf_rng_kind k;
    if (o->rng_name && rf_rng_kind_parse(o->rng_name, &k) != RF_OK)
        return say(talk, "invalid generator '%s' (chacha20, xoshiro256++ or pcg64)",
                   o->rng_name);
    if (o->seed && o->random_source)
        return say(talk, "--seed and --random-source cannot be combined");
    if (o->n_files == 0)
        return say(talk, "no input file (standard input cannot be shared by the ranks)");
    for (int i = 0; i < o->n_files; i++)
        if (strcmp(o->files[i], "-") == 0)
            return say(talk, "standard input cannot be read: name a file every rank can read");
    if (o->split_spec && !o->pattern)
        return say(talk, "--split needs --output-pattern");
    if (o->pattern && !o->split_spec)
        return say(talk, "--output-pattern needs --split");
    if (o->split_spec && o->output)
        return say(talk, "cannot combine --split and -o");
    if (!o->split_spec && !o->output)
        return say(talk, "no output: -o FILE is required (or --split with --output-pattern)");
    return o->split_spec ? check_split(o, talk) : JOB_CONTINUE;
}

int mpi_parse(int argc, char **argv, int talk, struct mpi_opts *o)
{
    memset(o, 0, sizeof *o);
    o->delim = '\n';
    o->count = RF_ENGINE_ALL;
    opterr = talk;
    for (;;) {
        const int c = getopt_long(argc, argv, "n:o:zT:", longopts, NULL);
        if (c == -1)
            break;
        const int r = on_option(o, c, optarg, talk);
        if (r != JOB_CONTINUE)
            return r;
    }
    o->files = argv + optind;
    o->n_files = argc - optind;
    return check(o, talk);
}

rf_rng_kind mpi_rng_kind(const struct mpi_opts *o)
{
    rf_rng_kind k = RF_RNG_CHACHA20;
    if (o->rng_name && rf_rng_kind_parse(o->rng_name, &k) != RF_OK)
        k = RF_RNG_CHACHA20; /* refused by check() */
    return k;
}
