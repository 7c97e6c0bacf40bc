/*
 * cmd_rng.c -- `riffle rng`: a generator's output on stdout, for the
 * statistical batteries a test lab runs (dieharder -g 200, ent, rngtest).
 *
 *   raw stream      rf_rng_fill: the generator's 64-bit words, little-endian,
 *                   exactly the bytes every riffle algorithm consumes.
 *   --below=N       the scaled stream: rf_below(g, N) draws, each uniform in
 *                   [0, N), as little-endian u8, u32 or u64 words or as
 *                   decimal text lines -- the draws the shuffles make.
 *
 * Endless unless --bytes or --count bounds it.  A reader that goes away
 * (EPIPE, as in `riffle rng | head -c 100`) ends it quietly with status 0,
 * as `yes | head` does: SIGPIPE is ignored here, so the write reports it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_options.h"
#include "commands.h"

/* Output is written in blocks of this size: at ChaCha20's 2 GB/s (docs/
 * BENCHMARKS_CLI.md) that is about 2000 write calls a second, whose cost is
 * lost in the keystream's. */
#define RNG_BLOCK (1u << 20)
/* Room for one text draw: 20 digits and a newline. */
#define TEXT_MAX 21

enum { OPT_HELP = CLI_OPT_FIRST_FREE, OPT_BYTES, OPT_BELOW, OPT_FORMAT, OPT_COUNT };

enum rng_format { FMT_TEXT, FMT_U8, FMT_U32, FMT_U64 };

struct rng_opts {
    struct cli_rng_opts rng;
    const char *bytes_arg, *below_arg, *format_arg, *count_arg;
    uint64_t bytes, below, count;
    enum rng_format format;
};

static int rng_help(void)
{
    return cli_print_stdout(
        "Usage: riffle rng [OPTION]...\n"
        "Write a generator's output to standard output, for statistical test batteries.\n"
        "\n"
        "Without --below, the raw stream: the generator's 64-bit words, little-endian,\n"
        "the bytes every shuffle consumes.  With --below=N, the scaled stream: unbiased\n"
        "draws in [0, N), as the shuffles make them.  Endless unless --bytes or --count\n"
        "bounds it; a closed pipe ends it quietly.\n"
        "\n"
        "  -c, --bytes=N          stop after exactly N bytes (binary output only)\n"
        "  -b, --below=N          the scaled stream: draws in [0, N), 1 <= N < 2^64\n"
        "  -f, --format=FMT       how draws are written: text (default, one decimal per\n"
        "                           line), u8, u32 or u64 (little-endian words; N must\n"
        "                           fit the word)\n"
        "  -n, --count=N          stop after N draws (with --below)\n"
        "      --seed=S           reproducible stream (S: decimal integer or any string)\n"
        "      --random-source=F  the first 32 bytes of F are the generator key\n"
        "      --rng=NAME         generator: chacha20 (default), xoshiro256++, pcg64\n"
        "      --production       refuse --seed and --random-source (also when the\n"
        "                           environment has RIFFLE_PRODUCTION=1)\n"
        "      --help             display this help and exit\n"
        "\n"
        "Examples: riffle rng | dieharder -g 200 -a\n"
        "          riffle rng --below=256 --format=u8 --bytes=1000000 | ent\n");
}

static const struct option rng_longopts[] = {
    {"bytes", required_argument, NULL, 'c'},
    {"below", required_argument, NULL, 'b'},
    {"format", required_argument, NULL, 'f'},
    {"count", required_argument, NULL, 'n'},
    {"seed", required_argument, NULL, CLI_OPT_SEED},
    {"rng", required_argument, NULL, CLI_OPT_RNG},
    {"random-source", required_argument, NULL, CLI_OPT_RANDOM_SOURCE},
    {"production", no_argument, NULL, CLI_OPT_PRODUCTION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_rng_options = {"rng", 0, "c:b:f:n:", rng_longopts};

static int count_arg(const char **slot, const char *arg, const char *what, const char *plural,
                     uint64_t *v)
{
    int over;
    if (cli_set_once(slot, arg, plural) != CLI_CONTINUE)
        return CLI_FAIL;
    if (cli_parse_u64(arg, v, &over) != 0 || over)
        return cli_usage("rng", "invalid %s %s", what, cli_quote(arg));
    return CLI_CONTINUE;
}

static int parse_format(struct rng_opts *o, const char *arg)
{
    static const char *const names[] = {"text", "u8", "u32", "u64"};
    if (cli_set_once(&o->format_arg, arg, "formats") != CLI_CONTINUE)
        return CLI_FAIL;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(arg, names[i]) == 0) {
            o->format = (enum rng_format)i;
            return CLI_CONTINUE;
        }
    return cli_usage("rng", "invalid format %s (text, u8, u32 or u64)", cli_quote(arg));
}

static int on_rng_option(struct rng_opts *o, int c, const char *arg)
{
    const int r = cli_rng_option(&o->rng, c, arg);
    if (r != CLI_NOT_RNG)
        return r;
    switch (c) {
    case 'c':
        return count_arg(&o->bytes_arg, arg, "byte count", "byte counts", &o->bytes);
    case 'b':
        return count_arg(&o->below_arg, arg, "bound", "bounds", &o->below);
    case 'n':
        return count_arg(&o->count_arg, arg, "count", "counts", &o->count);
    case 'f':
        return parse_format(o, arg);
    case OPT_HELP:
        return rng_help();
    default:
        return cli_try_help("rng");
    }
}

/* The combinations that make sense, each refusal with its reason. */
static int check_rng(const struct rng_opts *o)
{
    if (o->below_arg && o->below == 0)
        return cli_usage("rng", "invalid bound %s (at least 1)", cli_quote(o->below_arg));
    if (!o->below_arg && (o->format_arg || o->count_arg))
        return cli_usage("rng", "--%s needs --below", o->format_arg ? "format" : "count");
    if (o->below_arg && o->format == FMT_TEXT && o->bytes_arg)
        return cli_usage("rng", "--bytes needs a binary --format; use --count for text");
    if (o->bytes_arg && o->count_arg)
        return cli_usage("rng", "--bytes and --count cannot be combined");
    const uint64_t top = o->format == FMT_U8 ? 1u << 8 : o->format == FMT_U32 ? 1ull << 32 : 0;
    if (o->below_arg && top && o->below > top)
        return cli_usage("rng", "bound %s does not fit the format %s", cli_quote(o->below_arg),
                         o->format_arg);
    if (cli_rng_check(&o->rng, "rng") != CLI_OK)
        return CLI_FAIL;
    return cli_production_check(&o->rng, "rng");
}

static int parse_rng(int argc, char **argv, struct rng_opts *o)
{
    memset(o, 0, sizeof *o);
    for (;;) {
        const int c = getopt_long(argc, argv, cli_rng_options.shortopts, rng_longopts, NULL);
        if (c == -1)
            break;
        const int r = on_rng_option(o, c, optarg);
        if (r != CLI_CONTINUE)
            return r;
    }
    if (optind < argc)
        return cli_usage("rng", "extra operand %s", cli_quote(argv[optind]));
    return check_rng(o) == CLI_OK ? CLI_CONTINUE : CLI_FAIL;
}

static void put_le(unsigned char *p, uint64_t v, size_t width)
{
    for (size_t i = 0; i < width; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Fill buf (room `cap`) with whole draws, at most *left of them; returns the
 * bytes used.  A binary draw of `width` bytes, or a text line. */
static size_t fill_draws(rf_rng *g, const struct rng_opts *o, unsigned char *buf, size_t cap,
                         uint64_t *left)
{
    static const size_t widths[] = {0, 1, 4, 8};
    const size_t width = widths[o->format];
    size_t used = 0;
    while (*left > 0 && used + TEXT_MAX <= cap) {
        const uint64_t v = rf_below(g, o->below);
        if (width) {
            put_le(buf + used, v, width);
            used += width;
        } else {
            used += (size_t)sprintf((char *)buf + used, "%" PRIu64 "\n", v);
        }
        --*left;
    }
    return used;
}

/* The stream: raw bytes, or draws; `left` counts bytes for --bytes (binary
 * draws come out whole, so their byte count is a count of draws) or draws. */
static int stream(rf_rng *g, const struct rng_opts *o, unsigned char *buf)
{
    static const uint64_t widths[] = {0, 1, 4, 8};
    uint64_t left = UINT64_MAX; /* endless: 2^64 - 1 bytes or draws is forever here */
    if (o->bytes_arg)
        left = o->below_arg ? o->bytes / widths[o->format] : o->bytes;
    else if (o->count_arg)
        left = o->count;
    const uint64_t rest = o->below_arg && o->bytes_arg ? o->bytes % widths[o->format] : 0;
    while (left > 0) {
        size_t len;
        if (o->below_arg) {
            len = fill_draws(g, o, buf, RNG_BLOCK, &left);
        } else {
            len = left < RNG_BLOCK ? (size_t)left : RNG_BLOCK;
            rf_rng_fill(g, buf, len);
            left -= len;
        }
        const int w = cli_write_stdout(buf, len);
        if (w != 0)
            return w < 0 ? CLI_FAIL : CLI_OK;
    }
    if (rest) { /* --bytes not a whole number of words: the head of one more */
        unsigned char word[8];
        put_le(word, rf_below(g, o->below), sizeof word);
        const int w = cli_write_stdout(word, (size_t)rest);
        if (w < 0)
            return CLI_FAIL;
    }
    return CLI_OK;
}

int cmd_rng(int argc, char **argv)
{
    struct rng_opts o;
    int status = parse_rng(argc, argv, &o);
    if (status != CLI_CONTINUE)
        return status;
    status = CLI_FAIL;
    unsigned char *buf = malloc(RNG_BLOCK);
    if (!buf) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    /* A closed pipe is the normal end of an endless stream: see it as EPIPE. */
    signal(SIGPIPE, SIG_IGN);
    rf_rng storage;
    rf_rng *g = cli_rng_make(&o.rng, &storage);
    if (g) {
        status = stream(g, &o, buf);
        cli_rng_release(g, &storage);
    }
    free(buf);
    return status;
}
