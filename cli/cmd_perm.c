/*
 * cmd_perm.c -- `riffle perm`: evaluate the keyed random-access permutation
 * rf_perm (riffle_perm.h) of [0, N) at given indices, forwards or backwards.
 *
 * The key is the one --seed gives a generator (cli_rng_key: rf_seed_u64 for a
 * decimal uint64, rf_seed_string otherwise; OS entropy without --seed).  For
 * N > 2^20 --mode=auto is the SipHash cipher, and `riffle -i LO-HI --seed S`
 * with HI - LO + 1 = N streams LO + p(0), LO + p(1), ... of this very p, keyed
 * the same way whatever --rng (cli/cmd_shuf.c, run_range_perm).  Up to 2^20
 * numbers -i shuffles its lines in the keyed order instead, and --mode=auto
 * is an exact table: the two are unrelated there.  tests/cli/cli_parsers.bats
 * holds both statements.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "cmd_numbers.h"
#include "riffle_io.h"
#include "riffle_perm.h"

#define PERM_OUT_BUFFER ((size_t)1 << 16)

enum { OPT_MODE = CLI_OPT_FIRST_FREE, OPT_HELP };

struct perm_opts {
    const char *size_arg;
    uint64_t max; /* N - 1 */
    int inverse;
    struct cli_rng_opts rng; /* --seed only: perm has no --rng or --random-source */
    rf_perm_mode mode;
    const char *mode_arg;
    char **indices;
    int n_indices;
};

static const struct option perm_longopts[] = {
    {"size", required_argument, NULL, 's'},
    {"inverse", no_argument, NULL, 'I'},
    {"seed", required_argument, NULL, CLI_OPT_SEED},
    {"mode", required_argument, NULL, OPT_MODE},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_perm_options = {"perm", 0, "s:I", perm_longopts};

static int perm_help(void)
{
    return cli_print_stdout(
        "Usage: riffle perm --size=N [OPTION]... [INDEX]...\n"
        "Print p(INDEX) for a random permutation p of the numbers 0 .. N-1, one per\n"
        "line, without ever holding the permutation: any N up to 2^64.\n"
        "\n"
        "With no INDEX, read the indices from standard input (separated by blanks\n"
        "or newlines).\n"
        "\n"
        "  -s, --size=N       the size of the domain, 1 <= N <= 18446744073709551616\n"
        "  -I, --inverse      print p^-1(INDEX): the index that p maps to INDEX\n"
        "      --seed=S       choose p by S (a decimal integer up to 2^64-1, or any\n"
        "                       string), as --seed chooses a shuffle; without it p\n"
        "                       is keyed from the operating system\n"
        "      --mode=MODE    auto (default): table when N <= 2^20, else siphash\n"
        "                     table: an exact Fisher-Yates table (8 bytes per\n"
        "                       element, N <= 2^32)\n"
        "                     siphash: a Feistel cipher with SipHash rounds and\n"
        "                       cycle walking, O(1) memory (a pseudo-random\n"
        "                       permutation)\n"
        "                     multiply: a faster, non-cryptographic Feistel cipher\n"
        "      --help         display this help and exit\n"
        "\n"
        "For N > 2^20 (--mode=auto or siphash), p is the order in which\n"
        "`riffle -i 0-(N-1) --seed=S` prints the numbers, whatever its --rng: p(i)\n"
        "is its line i (counting from 0), and with -i LO-HI line i is LO + p(i).\n"
        "Up to 2^20 numbers `riffle -i` shuffles them as lines (the keyed order of\n"
        "`seq`'s output), which is not this p.\n");
}

/* N as a decimal, 1 <= N <= 2^64, into o->max = N - 1. */
static int parse_size(struct perm_opts *o)
{
    const char *s = o->size_arg;
    uint64_t v;
    int over;
    if (cli_parse_u64(s, &v, &over) != 0)
        return cli_usage("perm", "invalid size %s", cli_quote(s));
    if (over) {
        /* 2^64 itself is allowed: the full 64-bit domain. */
        const char *d = s + strspn(s, " \t\n\v\f\r+");
        d += strspn(d, "0");
        if (strcmp(d, "18446744073709551616") != 0)
            return cli_usage("perm", "invalid size %s: at most 18446744073709551616",
                             cli_quote(s));
        o->max = UINT64_MAX;
        return CLI_CONTINUE;
    }
    if (v == 0)
        return cli_usage("perm", "invalid size %s: at least 1", cli_quote(s));
    o->max = v - 1;
    return CLI_CONTINUE;
}

static int on_perm_option(struct perm_opts *o, int c, const char *arg)
{
    const int r = cli_rng_option(&o->rng, c, arg);
    if (r != CLI_NOT_RNG)
        return r;
    switch (c) {
    case 's':
        if (cli_set_once(&o->size_arg, arg, "sizes") != CLI_CONTINUE)
            return CLI_FAIL;
        return parse_size(o);
    case 'I':
        o->inverse = 1;
        return CLI_CONTINUE;
    case OPT_MODE:
        if (cli_set_once(&o->mode_arg, arg, "modes") != CLI_CONTINUE)
            return CLI_FAIL;
        if (rf_perm_mode_parse(arg, &o->mode) != RF_OK)
            return cli_usage("perm", "invalid mode %s (auto, table, siphash or multiply)",
                             cli_quote(arg));
        return CLI_CONTINUE;
    case OPT_HELP:
        return perm_help();
    default:
        return cli_try_help("perm");
    }
}

static int parse_perm(int argc, char **argv, struct perm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mode = RF_PERM_AUTO;
    for (;;) {
        const int c = getopt_long(argc, argv, cli_perm_options.shortopts, perm_longopts, NULL);
        if (c == -1)
            break;
        const int r = on_perm_option(o, c, optarg);
        if (r != CLI_CONTINUE)
            return r;
    }
    if (!o->size_arg)
        return cli_usage("perm", "missing --size=N");
    o->indices = argv + optind;
    o->n_indices = argc - optind;
    return CLI_CONTINUE;
}

static rf_perm *make_perm(const struct perm_opts *o)
{
    uint8_t key[RF_KEY_BYTES];
    if (cli_rng_key(&o->rng, key) != 0)
        return NULL;
    rf_status s;
    rf_perm *p = rf_perm_new(key, o->max, o->mode, &s);
    if (p)
        return p;
    if (s == RF_ERANGE)
        cli_error("--mode=table needs a size of at most 4294967296");
    else if (s == RF_ENOMEM)
        cli_error("memory exhausted");
    else
        cli_error("cannot make the permutation: %s", rf_strerror(s));
    return NULL;
}

/* Evaluate one index token and write the result; 1 after a message, which
 * starts with `where` ("-:LINE:COLUMN: " for standard input, else ""). */
static int eval_one(const rf_perm *p, const struct perm_opts *o, const char *tok,
                    const char *where, rf_writer *w)
{
    uint64_t i;
    int over;
    const int bad_number = cli_parse_u64(tok, &i, &over) != 0;
    if (bad_number || over || i > o->max) {
        /* What came before the bad index goes out first; a write error
         * sticks in w and is reported when the output is closed. */
        const int flushed = rf_writer_flush(w);
        (void)flushed;
    }
    if (bad_number) {
        cli_error("%sinvalid index %s", where, cli_quote(tok));
        return 1;
    }
    if (over || i > o->max) {
        if (o->max == UINT64_MAX)
            cli_error("%sindex %s is out of range for size 18446744073709551616", where,
                      cli_quote(tok));
        else
            cli_error("%sindex %s is out of range for size %llu", where, cli_quote(tok),
                      (unsigned long long)o->max + 1);
        return 1;
    }
    rf_writer_put_u64(w, o->inverse ? rf_perm_inverse(p, i) : rf_perm_at(p, i));
    rf_writer_putc(w, '\n');
    return 0;
}

/* Indices from standard input, as many as come: streamed, constant memory. */
static int eval_stdin(const rf_perm *p, const struct perm_opts *o, rf_writer *w)
{
    struct nums_tokens t;
    nums_tokens_init(&t, stdin, 0);
    const char *tok;
    int err, bad = 0;
    char where[sizeof t.where + 2];
    while (!bad && (tok = nums_token(&t, &err))) {
        snprintf(where, sizeof where, "%s: ", t.where);
        bad = eval_one(p, o, tok, where, w);
    }
    if (!bad && err) {
        const int flushed = rf_writer_flush(w); /* what came before goes first */
        (void)flushed;
        nums_token_error(&t, err);
        bad = 1;
    }
    nums_tokens_free(&t);
    return bad;
}

int cmd_perm(int argc, char **argv)
{
    struct perm_opts o;
    const int r = parse_perm(argc, argv, &o);
    if (r != CLI_CONTINUE)
        return r;
    rf_perm *p = make_perm(&o);
    if (!p)
        return CLI_FAIL;
    static unsigned char buf[PERM_OUT_BUFFER];
    rf_writer w;
    rf_writer_init(&w, STDOUT_FILENO, buf, sizeof buf);
    int bad = 0;
    for (int k = 0; k < o.n_indices && !bad; k++)
        bad = eval_one(p, &o, o.indices[k], "", &w);
    if (o.n_indices == 0)
        bad = eval_stdin(p, &o, &w);
    rf_perm_free(p);
    const int werr = nums_write_failed(rf_writer_flush(&w));
    return bad || werr ? CLI_FAIL : CLI_OK;
}
