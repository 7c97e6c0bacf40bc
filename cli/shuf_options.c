/*
 * shuf_options.c -- the options of `riffle` in its shuf-compatible mode, with
 * GNU shuf's messages (coreutils 9.x), and riffle's extensions (--seed, --rng,
 * --header, --memory, -T, --threads, --progress, --split, --output-pattern,
 * --key, -d/--field-delimiter, --lockstep)
 * unless invoked as `shuf`.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "progress.h"
#include "riffle_engine.h"
#include "run_options.h"
#include "shuf.h"

enum {
    OPT_HELP = CLI_OPT_FIRST_FREE,
    OPT_VERSION,
    OPT_MEMORY,
    OPT_THREADS,
    OPT_PROGRESS,
    OPT_NO_PROGRESS,
    OPT_KEY,
    OPT_COMPRESS,
    OPT_LOCKSTEP,
    OPT_CSV
};

/* GNU shuf's long options, in its order: the whole table as `shuf`, the start
 * of riffle's. */
#define SHUF_LONGOPTS                                                    \
    {"echo", no_argument, NULL, 'e'},                                    \
    {"input-range", required_argument, NULL, 'i'},                       \
    {"head-count", required_argument, NULL, 'n'},                        \
    {"output", required_argument, NULL, 'o'},                            \
    {"random-source", required_argument, NULL, CLI_OPT_RANDOM_SOURCE},   \
    {"repeat", no_argument, NULL, 'r'},                                  \
    {"zero-terminated", no_argument, NULL, 'z'},                         \
    {"help", no_argument, NULL, OPT_HELP},                               \
    {"version", no_argument, NULL, OPT_VERSION}

/* --header shares 'n' (and has_arg) with --head-count on purpose: glibc's
 * getopt_long then resolves the abbreviations "--hea" and "--head" to the first
 * entry, --head-count, instead of calling them ambiguous, so shuf scripts that
 * abbreviate --head-count keep working.  The same trick keeps the
 * abbreviations of older options unambiguous: --split shares --seed's entry
 * shape ("--s" stays --seed) and --output-pattern shares --output's ("--out"
 * stays --output).  The name of the matched entry, never its place in the
 * table, tells each pair apart (on_option, on_count). */
static const struct option riffle_longopts[] = {
    SHUF_LONGOPTS,
    {"header", required_argument, NULL, 'n'},
    {"seed", required_argument, NULL, CLI_OPT_SEED},
    {"rng", required_argument, NULL, CLI_OPT_RNG},
    {"production", no_argument, NULL, CLI_OPT_PRODUCTION},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"temporary-directory", required_argument, NULL, 'T'},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"split", required_argument, NULL, CLI_OPT_SEED},
    {"output-pattern", required_argument, NULL, 'o'},
    {"key", required_argument, NULL, OPT_KEY},
    {"field-delimiter", required_argument, NULL, 'd'},
    {"compress", required_argument, NULL, OPT_COMPRESS},
    {"lockstep", no_argument, NULL, OPT_LOCKSTEP},
    {"csv", no_argument, NULL, OPT_CSV},
    {NULL, 0, NULL, 0},
};
static const struct option shuf_longopts[] = {
    SHUF_LONGOPTS,
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_riffle_options = {"", 0, "ei:n:o:rzT:d:", riffle_longopts};
const struct cli_options cli_shuf_options = {"", 1, "ei:n:o:rz", shuf_longopts};

static const char usage_riffle[] =
    "\n"
    "riffle extensions:\n"
    "      --seed=S              reproducible output: a function of S and the input\n"
    "                              only; S is a decimal integer (up to 2^64-1) or any\n"
    "                              string\n"
    "      --rng=NAME            generator: chacha20 (default), xoshiro256++, pcg64\n"
    "      --production          refuse --seed and --random-source (also when the\n"
    "                              environment has RIFFLE_PRODUCTION=1)\n"
    "      --header=K            output the first K lines first, in place; -n counts\n"
    "                              only the shuffled lines after them\n"
    "      --csv                 records are CSV records (RFC 4180), not lines: a\n"
    "                              quoted field may hold newlines; --header, -n and\n"
    "                              --split count records\n"
    "      --memory=SIZE         use at most SIZE bytes of memory: an integer with an\n"
    "                              optional suffix K, M, G, T (powers of 1024, an\n"
    "                              optional B after it), or N% of the memory riffle\n"
    "                              may use (the machine's, its cgroup's limit,\n"
    "                              ulimit -v/-d); default: 50%.\n"
    "                              Inputs that do not fit are shuffled through\n"
    "                              temporary files\n"
    "  -T, --temporary-directory=DIR  put temporary files in DIR (default: $TMPDIR,\n"
    "                              else /tmp); DIR must exist\n"
    "      --threads=N           use N threads; 0 (the default) means all cores\n"
    "      --progress            show a progress line on standard error, even when\n"
    "                              it is not a terminal\n"
    "      --no-progress         never show progress (default: shown on a terminal\n"
    "                              for runs longer than a second)\n"
    "      --split=SPEC          cut the output into consecutive parts, every line\n"
    "                              in exactly one: N equal parts (--split=16),\n"
    "                              percentages (--split=80%,10%,10%) or counts\n"
    "                              (--split=1000,500,*  where * is the rest)\n"
    "      --output-pattern=PATTERN  the parts' files: a pattern with one %d, parts\n"
    "                              numbered from 0 (part-%02d.txt), or as many names\n"
    "                              as parts (train.txt,valid.txt,test.txt); every\n"
    "                              part starts with the --header lines; all parts\n"
    "                              are replaced atomically at the end, or none\n"
    "      --key=FIELD           with --split: every line whose field FIELD (from 1)\n"
    "                              holds the same key goes to the same part, chosen\n"
    "                              by a keyed hash of the key and the seed only; the\n"
    "                              parts take their fractions of the keys (N equal\n"
    "                              parts or percentages, not counts); with --csv,\n"
    "                              FIELD is a column named in the header (or its\n"
    "                              number)\n"
    "  -d, --field-delimiter=C   fields are separated by the byte C (default: TAB;\n"
    "                              with --csv, a comma)\n"
    "      --lockstep            shuffle every FILE in one order (aligned files: a\n"
    "                              source and its translation), each to its own\n"
    "                              -o, one per FILE in order, or with --split to\n"
    "                              its own --output-pattern; the FILEs must have\n"
    "                              the same number of lines; all outputs are\n"
    "                              replaced at the end, or none\n"
    "  -i LO-HI takes any range of 64-bit numbers, up to 0-18446744073709551615.\n"
    "  Above 2^20 numbers the range is never held: it is streamed in the order of\n"
    "  a keyed pseudo-random permutation (riffle perm --mode=siphash) whose key is\n"
    "  made from --seed or --random-source as the generator's, whatever --rng.\n"
    "  Several FILEs are read one after another, as one input.  A FILE (or\n"
    "  standard input) compressed with gzip or zstd is decompressed, whatever\n"
    "  its name: its first bytes tell (a pipe only as the first input).\n"
    "\n"
    "Without --seed or --random-source the generator is ChaCha20 keyed from the\n"
    "operating system.  With --seed, -n K prints exactly the first K lines of the\n"
    "full shuffle, and a file, standard input, -e and -i (up to 2^20 numbers)\n"
    "give the same output.\n";

static const char usage_tail[] =
    "      --help        display this help and exit\n"
    "      --version     output version information and exit\n";

static int print_help(int shuf_mode)
{
    char buf[8192];
    const char *prog = shuf_mode ? "shuf" : "riffle";
    snprintf(buf, sizeof buf,
    "Usage: %1$s [OPTION]... [FILE]%2$s\n"
    "  or:  %1$s -e [OPTION]... [ARG]...\n"
    "  or:  %1$s -i LO-HI [OPTION]...\n"
    "%3$s"
    "Write a random permutation of the input lines to standard output.\n"
    "\n"
    "With no FILE, or when FILE is -, read standard input.\n"
    "\n"
    "Mandatory arguments to long options are mandatory for short options too.\n"
    "  -e, --echo                treat each ARG as an input line\n"
    "  -i, --input-range=LO-HI   treat each number LO through HI as an input line\n"
    "  -n, --head-count=COUNT    output at most COUNT lines\n"
    "  -o, --output=FILE         write result to FILE instead of standard output;\n"
    "                              FILE is replaced atomically (it may be the input)\n"
    "      --random-source=FILE  use the first 32 bytes of FILE as the generator key\n"
    "                              (an error if FILE is shorter)\n"
    "  -r, --repeat              output lines can be repeated\n"
    "  -z, --zero-terminated     line delimiter is NUL, not newline\n",
             prog, shuf_mode ? "" : "...",
             shuf_mode ? "" : "  or:  riffle COMMAND [OPTION]...   COMMAND: deal, sample, perm, rank,\n"
                               "        unrank, audit, scatter, gather, rng, verify (riffle COMMAND --help)\n");
    size_t len = strlen(buf);
    snprintf(buf + len, sizeof buf - len, "%s%s", usage_tail, shuf_mode ? "" : usage_riffle);
    return cli_print_stdout(buf);
}

static int print_version(int shuf_mode)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "%s (riffle) %s\n"
             "A fair, fast shuffler compatible with GNU shuf.\n",
             shuf_mode ? "shuf" : "riffle", rf_version());
    return cli_print_stdout(buf);
}

/* Print shuf's "invalid input range" message about `part`; returns 1. */
static int bad_range(const char *part, int overflow)
{
    if (overflow)
        cli_error("invalid input range: %s: %s", cli_quote(part), strerror(EOVERFLOW));
    else
        cli_error("invalid input range: %s", cli_quote(part));
    return CLI_FAIL;
}

/* -i LO-HI as shuf reads it: split at the first '-', each side a count, and
 * HI + 1 >= LO (LO = HI + 1 is the empty range); the message quotes the part
 * that is wrong.  Both bounds are 64-bit: riffle (not shuf) takes the whole
 * 0-18446744073709551615. */
static int parse_range(const char *arg, struct shuf_opts *o)
{
    const char *dash = strchr(arg, '-');
    if (!dash)
        return bad_range(arg, 0);
    char lo_str[128];
    const size_t lo_len = (size_t)(dash - arg);
    if (lo_len >= sizeof lo_str)
        return bad_range(arg, 0);
    memcpy(lo_str, arg, lo_len);
    lo_str[lo_len] = '\0';
    int over;
    if (cli_parse_u64(lo_str, &o->lo, &over) != 0 || over)
        return bad_range(lo_str, over);
    if (cli_parse_u64(dash + 1, &o->hi, &over) != 0 || over)
        return bad_range(dash + 1, over);
    const uint64_t n = o->hi - o->lo + 1; /* wraps to 0 for the full 2^64 */
    if (o->lo > o->hi && n != 0)
        return bad_range(arg, 0);
    /* shuf refuses 0-18446744073709551615 (2^64 numbers: its count wraps to
     * 0); riffle streams it with a keyed permutation (cmd_shuf.c). */
    if (o->shuf_mode && o->lo <= o->hi && n == 0)
        return bad_range(arg, 0);
    return CLI_CONTINUE;
}

static int parse_count(const char *arg, const char *what, uint64_t *v)
{
    int over;
    if (cli_parse_u64(arg, v, &over) != 0) {
        cli_error("invalid %s: %s", what, cli_quote(arg));
        return CLI_FAIL;
    }
    return CLI_CONTINUE;
}

/* -n, --head-count or --header (`name`: see riffle_longopts). */
static int on_count(struct shuf_opts *o, const char *arg, const char *name)
{
    uint64_t v;
    if (strcmp(name, "header") == 0) {
        if (cli_set_once(&o->header_arg, arg, "header line counts") != CLI_CONTINUE ||
            parse_count(arg, "header line count", &v) != CLI_CONTINUE)
            return CLI_FAIL;
        o->header = v;
        return CLI_CONTINUE;
    }
    if (parse_count(arg, "line count", &v) != CLI_CONTINUE)
        return CLI_FAIL;
    if (!o->have_count || v < o->count)
        o->count = v; /* repeated -n: the smallest wins, as in shuf */
    o->have_count = 1;
    return CLI_CONTINUE;
}

static int on_riffle_option(struct shuf_opts *o, int c, const char *arg)
{
    switch (c) {
    case 'T':
        return cli_set_once(&o->tmpdir, arg, "temporary directories");
    case OPT_MEMORY:
        return cli_parse_memory(NULL, arg, &o->memory_arg, &o->memory);
    case OPT_THREADS:
        return cli_parse_threads(NULL, arg, &o->threads_arg, &o->threads);
    case OPT_KEY:
        if (cli_set_once(&o->key_arg, arg, "key fields") != CLI_CONTINUE)
            return CLI_FAIL;
        o->key.field = KEY_FIELD_BY_NAME; /* a number unless --csv: check_riffle */
        return CLI_CONTINUE;
    case 'd':
        if (cli_set_once(&o->field_delim_arg, arg, "field delimiters") != CLI_CONTINUE)
            return CLI_FAIL;
        return key_field_parse_delim(NULL, arg, &o->key.delim);
    case OPT_PROGRESS:
        o->progress = PROGRESS_FORCED;
        return CLI_CONTINUE;
    case OPT_LOCKSTEP:
        o->lockstep = 1;
        return CLI_CONTINUE;
    case OPT_COMPRESS:
        if (cli_set_once(&o->compress_arg, arg, "compression formats") != CLI_CONTINUE)
            return CLI_FAIL;
        if (codec_parse(arg, &o->compress) != 0)
            return cli_usage(NULL, "invalid compression format %s (gzip, zstd or none)",
                             cli_quote(arg));
        return CLI_CONTINUE;
    default: /* OPT_NO_PROGRESS */
        o->progress = PROGRESS_NEVER;
        return CLI_CONTINUE;
    }
}

/* Option `c` with its argument; `name` is the long option's name ("" for a
 * short option), which alone tells --split and --output-pattern from the
 * options whose code they share. */
static int on_option(struct shuf_opts *o, int c, const char *arg, const char *name)
{
    if (strcmp(name, "split") == 0) {
        if (o->split_spec && strcmp(o->split_spec, arg) != 0) {
            cli_error("multiple split specifications");
            return CLI_FAIL;
        }
        o->split_spec = arg;
        return CLI_CONTINUE;
    }
    if (strcmp(name, "output-pattern") == 0) {
        o->patterns[o->n_patterns++] = arg; /* one per file with --lockstep */
        if (!o->output_pattern)
            o->output_pattern = arg;
        return CLI_CONTINUE;
    }
    if (!o->shuf_mode && c == OPT_CSV) {
        o->csv = 1;
        return CLI_CONTINUE;
    }
    if (!o->shuf_mode && (c == 'T' || c == OPT_MEMORY || c == OPT_THREADS ||
                          c == OPT_PROGRESS || c == OPT_NO_PROGRESS || c == OPT_KEY ||
                          c == 'd' || c == OPT_COMPRESS ||
                          c == OPT_LOCKSTEP))
        return on_riffle_option(o, c, arg);
    const int r = cli_rng_option(&o->rng, c, arg);
    if (r != CLI_NOT_RNG)
        return r;
    switch (c) {
    case 'e':
        o->echo = 1;
        return CLI_CONTINUE;
    case 'i':
        if (o->have_range) {
            cli_error("multiple -i options specified");
            return CLI_FAIL;
        }
        o->have_range = 1;
        return parse_range(arg, o);
    case 'n':
        return on_count(o, arg, name);
    case 'o':
        o->outputs[o->n_outputs++] = arg; /* one per file with --lockstep */
        if (!o->output)
            o->output = arg;
        return CLI_CONTINUE;
    case 'r':
        o->repeat = 1;
        return CLI_CONTINUE;
    case 'z':
        o->delim = '\0';
        return CLI_CONTINUE;
    case OPT_HELP:
        return print_help(o->shuf_mode);
    case OPT_VERSION:
        return print_version(o->shuf_mode);
    default:
        return cli_try_help(NULL); /* getopt printed the message */
    }
}

/* Without --lockstep, -o and --output-pattern are options given once, or
 * again with the same value (cli_set_once's rule). */
static int check_once(const char **given, int n, const char *plural)
{
    const char *first = NULL;
    for (int i = 0; i < n; i++)
        if (cli_set_once(&first, given[i], plural) != CLI_CONTINUE)
            return CLI_FAIL;
    return CLI_CONTINUE;
}

/* --lockstep --split: the plan parsed once per file, with that file's
 * --output-pattern. */
static int parse_lockstep_splits(struct shuf_opts *o)
{
    o->splits = calloc((size_t)o->n_patterns, sizeof *o->splits);
    if (!o->splits) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    for (int i = 0; i < o->n_patterns; i++)
        if (split_parse(&o->splits[i], o->split_spec) != CLI_CONTINUE ||
            split_set_pattern(&o->splits[i], o->patterns[i]) != CLI_CONTINUE)
            return CLI_FAIL;
    return CLI_CONTINUE;
}

static int check_split(struct shuf_opts *o)
{
    if (!o->split_spec && !o->output_pattern)
        return CLI_CONTINUE;
    if (!o->split_spec)
        return cli_usage(NULL, "--output-pattern needs --split");
    if (!o->output_pattern)
        return cli_usage(NULL, "--split needs --output-pattern");
    if (o->output)
        return cli_usage(NULL, "cannot combine --split and -o");
    if (o->repeat)
        return cli_usage(NULL, "cannot combine --split and -r");
    if (o->lockstep)
        return parse_lockstep_splits(o);
    if (split_parse(&o->split, o->split_spec) != CLI_CONTINUE)
        return CLI_FAIL;
    return split_set_pattern(&o->split, o->output_pattern);
}

/* --csv records come from files only, cut at newlines outside quotes. */
static int check_csv(const struct shuf_opts *o)
{
    if (!o->csv)
        return CLI_CONTINUE;
    if (o->delim != '\n')
        return cli_usage(NULL, "cannot combine --csv and -z");
    if (o->echo)
        return cli_usage(NULL, "cannot combine --csv and -e");
    if (o->have_range)
        return cli_usage(NULL, "cannot combine --csv and -i");
    if (o->repeat)
        return cli_usage(NULL, "cannot combine --csv and -r");
    return CLI_CONTINUE;
}

/* --lockstep: files (not -e or -i), no -r (which draws records, not an
 * order), and one output per file: an -o each, or with --split an
 * --output-pattern each. */
static int check_lockstep(const struct shuf_opts *o)
{
    const int files = o->n_operands > 0 ? o->n_operands : 1;
    if (o->echo)
        return cli_usage(NULL, "cannot combine --lockstep and -e");
    if (o->have_range)
        return cli_usage(NULL, "cannot combine --lockstep and -i");
    if (o->repeat)
        return cli_usage(NULL, "cannot combine --lockstep and -r");
    if (o->key.field)
        return cli_usage(NULL, "cannot combine --lockstep and --key");
    if (o->split_spec && o->n_patterns != files)
        return cli_usage(NULL, "--lockstep --split needs one --output-pattern per file: "
                               "%d given for %d files", o->n_patterns, files);
    if (!o->split_spec && o->n_outputs != files)
        return cli_usage(NULL, "--lockstep needs one -o per file: %d given for %d files",
                         o->n_outputs, files);
    return CLI_CONTINUE;
}

/* --key: a split by key of records (shuf_bykey.c). */
static int check_key(const struct shuf_opts *o)
{
    if (!o->key.field)
        return o->field_delim_arg ? cli_usage(NULL, "--field-delimiter needs --key")
                                  : CLI_CONTINUE;
    if (!o->split.plan.parts)
        return cli_usage(NULL, "--key needs --split");
    if (o->split.plan.kind == RF_SPLIT_COUNTS)
        return cli_usage(NULL, "--key needs --split as N parts or percentages, not counts");
    if (o->have_count)
        return cli_usage(NULL, "cannot combine --key and -n");
    if (o->have_range)
        return cli_usage(NULL, "cannot combine --key and -i");
    return CLI_CONTINUE;
}

/* riffle's own options, after shuf's checks. */
static int check_riffle(struct shuf_opts *o)
{
    if (o->shuf_mode) {
        o->threads = 1;
        o->progress = PROGRESS_NEVER; /* shuf never prints progress */
        return CLI_CONTINUE;
    }
    o->threads = cli_threads_resolve(o->threads);
    if (o->tmpdir && cli_check_tmpdir(o->tmpdir) != CLI_CONTINUE)
        return CLI_FAIL;
    if (check_csv(o) != CLI_CONTINUE)
        return CLI_FAIL;
    if (o->key_arg && o->csv) /* a column, found in the header when the run reads it */
        key_field_csv(&o->key, o->key_arg, o->field_delim_arg != NULL);
    else if (o->key_arg && key_field_parse(NULL, "key", o->key_arg, &o->key.field) != CLI_CONTINUE)
        return CLI_FAIL;
    if (o->lockstep && check_lockstep(o) != CLI_CONTINUE)
        return CLI_FAIL;
    if (check_split(o) != CLI_CONTINUE)
        return CLI_FAIL;
    return check_key(o);
}

/* The checks shuf makes after reading the options, in its order. */
static int check_combination(struct shuf_opts *o)
{
    if (!o->lockstep && (check_once(o->outputs, o->n_outputs, "output files") != CLI_CONTINUE ||
                         check_once(o->patterns, o->n_patterns, "output patterns") != CLI_CONTINUE))
        return CLI_FAIL;
    if (o->echo && o->have_range)
        return cli_usage(NULL, "cannot combine -e and -i options");
    if (o->have_range && o->n_operands > 0)
        return cli_usage(NULL, "extra operand %s", cli_quote(o->operands[0]));
    if (o->shuf_mode && !o->echo && o->n_operands > 1)
        return cli_usage(NULL, "extra operand %s", cli_quote(o->operands[1]));
    if (cli_rng_check(&o->rng, NULL) != CLI_OK)
        return CLI_FAIL;
    if (!o->shuf_mode && cli_production_check(&o->rng, NULL) != CLI_OK)
        return CLI_FAIL;
    return check_riffle(o);
}

void cli_shuf_free(struct shuf_opts *o)
{
    split_free(&o->split);
    for (int i = 0; o->splits && i < o->n_patterns; i++)
        split_free(&o->splits[i]);
    free(o->splits);
    free(o->outputs);
    free(o->patterns);
}

const char *cli_tmpdir(const struct shuf_opts *o)
{
    return rf_temp_dir(o->tmpdir);
}

int shuf_output_open(struct cli_output *out, const struct shuf_opts *o)
{
    const struct cli_output_spec spec = {o->output, &o->split, o->compress, o->threads};
    return output_open(out, &spec);
}

int cli_shuf_parse(int argc, char **argv, int shuf_mode, struct shuf_opts *o)
{
    memset(o, 0, sizeof *o);
    o->shuf_mode = shuf_mode;
    o->delim = '\n';
    o->key.delim = '\t';
    /* shuf writes what it is given, whatever the name. */
    o->compress = shuf_mode ? CLI_CODEC_NONE : CLI_CODEC_BY_NAME;
    const struct cli_options *t = shuf_mode ? &cli_shuf_options : &cli_riffle_options;
    const struct option *longopts = t->longopts;
    o->outputs = calloc((size_t)argc + 1, sizeof *o->outputs);
    o->patterns = calloc((size_t)argc + 1, sizeof *o->patterns);
    if (!o->outputs || !o->patterns) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    for (;;) {
        int index = -1;
        const int c = getopt_long(argc, argv, t->shortopts, longopts, &index);
        if (c == -1)
            break;
        const int r = on_option(o, c, optarg, index >= 0 ? longopts[index].name : "");
        if (r != CLI_CONTINUE)
            return r;
    }
    o->operands = argv + optind;
    o->n_operands = argc - optind;
    return check_combination(o);
}
