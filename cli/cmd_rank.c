/*
 * cmd_rank.c -- `riffle rank` and `riffle unrank`: a permutation as one number
 * and back, with the library's lexicographic rank (the Lehmer code read in
 * the factorial number system, riffle_perm.h): the identity is 0 and the
 * reversed permutation n! - 1, for any n (decimal strings; GMP inside the
 * library beyond n = 20).
 *
 * Items are numbers 0..n-1 (1..n with --one-based: explicit, never guessed,
 * so that an invalid permutation is reported as such), or the card names of
 * a 52- or 54-card deck numbered as `riffle deal` numbers its deck
 * (nums_cards.c).  rank reads the items from its arguments or standard input
 * (blanks, newlines and commas separate them) and takes card names when
 * --cards is given or the first item is not a number.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "cmd_numbers.h"
#include "riffle_io.h"
#include "riffle_perm.h"

#define RANK_OUT_BUFFER ((size_t)1 << 16)

enum { OPT_HELP = CLI_OPT_FIRST_FREE };

struct rank_opts {
    const char *size_arg;
    size_t size; /* valid when size_arg */
    int one_based, cards, unicode;
    char **operands;
    int n_operands;
};

/* The items read: their text (for messages) and their 0-based values, a
 * value >= n standing for anything out of range. */
struct items {
    char **text;
    char **where; /* "-:LINE:COLUMN: " of an item from standard input, else NULL */
    size_t *v;
    size_t n, cap;
};

static int rank_help(void)
{
    return cli_print_stdout(
        "Usage: riffle rank [OPTION]... [ITEM]...\n"
        "Print the lexicographic rank of a permutation: its position, counting from\n"
        "0, in the sorted list of all n! permutations of its n items.  The identity\n"
        "0 1 .. n-1 has rank 0, the reversed permutation n!-1.\n"
        "\n"
        "The ITEMs are the numbers 0 .. n-1 in some order, or the 52 cards of a deck\n"
        "(54 with the jokers BJ and RJ) named as `riffle deal` names them: AS 10D KC,\n"
        "in the deck order AS 2S .. KS AH .. KH AD .. KD AC .. KC BJ RJ (rank 0).\n"
        "With no ITEM, read them from standard input; blanks, newlines and commas\n"
        "separate items.\n"
        "\n"
        "  -s, --size=N       require exactly N items\n"
        "  -1, --one-based    the numbers are 1 .. n\n"
        "  -c, --cards        the items are card names (the default when the first\n"
        "                       item is not a number); letters in any case, T for\n"
        "                       10, and deal -u's suit symbols are accepted\n"
        "      --help         display this help and exit\n");
}

static int unrank_help(void)
{
    return cli_print_stdout(
        "Usage: riffle unrank --size=N [OPTION]... [RANK]\n"
        "Print the permutation of 0 .. N-1 whose lexicographic rank is RANK (a\n"
        "decimal number below N!): the inverse of `riffle rank`.  With no RANK, read\n"
        "it from standard input.\n"
        "\n"
        "  -s, --size=N       the number of items (52 by default with --cards)\n"
        "  -1, --one-based    print the numbers 1 .. N\n"
        "  -c, --cards        print the cards of a 52-card deck (--size=54: with the\n"
        "                       jokers) in `riffle deal`'s notation\n"
        "  -u, --unicode      with --cards, suit symbols as `riffle deal -u`\n"
        "      --help         display this help and exit\n");
}

static const struct option rank_longopts[] = {
    {"size", required_argument, NULL, 's'},
    {"one-based", no_argument, NULL, '1'},
    {"cards", no_argument, NULL, 'c'},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};
static const struct option unrank_longopts[] = {
    {"size", required_argument, NULL, 's'},
    {"one-based", no_argument, NULL, '1'},
    {"cards", no_argument, NULL, 'c'},
    {"unicode", no_argument, NULL, 'u'},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_rank_options = {"rank", 0, "s:1c", rank_longopts};
const struct cli_options cli_unrank_options = {"unrank", 0, "s:1cu", unrank_longopts};

static int parse_size(const char *cmd, const char *arg, size_t *size)
{
    uint64_t v;
    int over;
    if (cli_parse_u64(arg, &v, &over) != 0)
        return cli_usage(cmd, "invalid size %s", cli_quote(arg));
    if (v == 0)
        return cli_usage(cmd, "invalid size %s: at least 1", cli_quote(arg));
    if (over || v > SIZE_MAX / (4 * sizeof(size_t)))
        return cli_usage(cmd, "invalid size %s: too large", cli_quote(arg));
    *size = (size_t)v;
    return CLI_CONTINUE;
}

static int parse_rank_opts(const char *cmd, int argc, char **argv, struct rank_opts *o)
{
    const int unrank = strcmp(cmd, "unrank") == 0;
    memset(o, 0, sizeof *o);
    for (;;) {
        const struct cli_options *t = unrank ? &cli_unrank_options : &cli_rank_options;
        const int c = getopt_long(argc, argv, t->shortopts, t->longopts, NULL);
        if (c == -1)
            break;
        if (c == 's') {
            if (cli_set_once(&o->size_arg, optarg, "sizes") != CLI_CONTINUE ||
                parse_size(cmd, optarg, &o->size) != CLI_CONTINUE)
                return CLI_FAIL;
        } else if (c == '1') {
            o->one_based = 1;
        } else if (c == 'c') {
            o->cards = 1;
        } else if (c == 'u') {
            o->unicode = 1;
        } else if (c == OPT_HELP) {
            return unrank ? unrank_help() : rank_help();
        } else {
            return cli_try_help(cmd);
        }
    }
    o->operands = argv + optind;
    o->n_operands = argc - optind;
    return CLI_CONTINUE;
}

/* ---- rank ---- */

static int items_add(struct items *it, const char *s, size_t len, const char *where)
{
    if (it->n == it->cap) {
        const size_t cap = it->cap ? 2 * it->cap : 64;
        char **text = realloc(it->text, cap * sizeof *text);
        if (!text)
            return -1;
        it->text = text;
        char **at = realloc(it->where, cap * sizeof *at);
        if (!at)
            return -1;
        it->where = at;
        size_t *v = realloc(it->v, cap * sizeof *v);
        if (!v)
            return -1;
        it->v = v;
        it->cap = cap;
    }
    it->where[it->n] = NULL;
    if (!(it->text[it->n] = strndup(s, len)))
        return -1;
    if (where && !(it->where[it->n] = malloc(strlen(where) + 3))) {
        free(it->text[it->n]);
        return -1;
    }
    if (where)
        sprintf(it->where[it->n], "%s: ", where);
    it->n++;
    return 0;
}

static void items_free(struct items *it)
{
    for (size_t i = 0; i < it->n; i++) {
        free(it->text[i]);
        free(it->where[i]);
    }
    free(it->text);
    free(it->where);
    free(it->v);
}

static int is_item_sep(char c)
{
    return isspace((unsigned char)c) || c == ',';
}

/* Every item of every argument ("3 1 2 0" may be one argument). */
static int items_from_args(struct items *it, char **args, int n)
{
    for (int a = 0; a < n; a++) {
        const char *s = args[a];
        while (*s) {
            while (*s && is_item_sep(*s))
                s++;
            size_t len = 0;
            while (s[len] && !is_item_sep(s[len]))
                len++;
            if (len && items_add(it, s, len, NULL) != 0)
                return -1;
            s += len;
        }
    }
    return 0;
}

static int items_from_stdin(struct items *it)
{
    struct nums_tokens t;
    nums_tokens_init(&t, stdin, 1);
    const char *tok;
    int err = 0, bad = 0;
    while (!bad && (tok = nums_token(&t, &err)))
        if (items_add(it, tok, strlen(tok), t.where) != 0)
            bad = 1;
    nums_tokens_free(&t);
    if (bad || err) {
        nums_token_error(&t, bad ? ENOMEM : err);
        return -1;
    }
    return 0;
}

static int all_digits(const char *s)
{
    return *s && strspn(s, "0123456789") == strlen(s);
}

/* The 0-based values of the items; 1 after a message. */
static int item_values(struct items *it, const struct rank_opts *o)
{
    for (size_t i = 0; i < it->n; i++) {
        const char *s = it->text[i];
        uint64_t x;
        int over = 0;
        if (o->cards) {
            if (nums_card_parse(s, &it->v[i]) != 0) {
                cli_error("%sinvalid card %s (item %zu)", it->where[i] ? it->where[i] : "",
                          cli_quote(s), i + 1);
                return 1;
            }
            continue;
        }
        if (!all_digits(s) || cli_parse_u64(s, &x, &over) != 0) {
            cli_error("%sinvalid number %s (item %zu)", it->where[i] ? it->where[i] : "",
                      cli_quote(s), i + 1);
            return 1;
        }
        if (over || x > SIZE_MAX || (o->one_based && x == 0))
            it->v[i] = SIZE_MAX;
        else
            it->v[i] = (size_t)(o->one_based ? x - 1 : x);
    }
    return 0;
}

/* The item count against --size and the deck sizes; 1 after a message. */
static int check_count(const struct items *it, const struct rank_opts *o)
{
    if (it->n == 0) {
        cli_error("no permutation given");
        return 1;
    }
    if (o->size_arg && it->n != o->size) {
        cli_error("invalid permutation: %zu items, expected %zu", it->n, o->size);
        return 1;
    }
    if (o->cards && it->n != NUMS_DECK && it->n != NUMS_DECK_JOKERS) {
        cli_error("invalid deck: %zu cards, expected 52 (or 54 with jokers)", it->n);
        return 1;
    }
    return 0;
}

/* The library found an invalid permutation at item `where`. */
static void report_invalid(const struct items *it, const struct rank_opts *o, size_t where)
{
    const size_t n = it->n;
    if (it->v[where] >= n) {
        if (o->cards)
            cli_error("invalid permutation: item %zu is %s, not in a %zu-card deck",
                      where + 1, cli_quote(it->text[where]), n);
        else
            cli_error("invalid permutation: item %zu is %s, not in %d..%zu", where + 1,
                      cli_quote(it->text[where]), o->one_based, n - !o->one_based);
        return;
    }
    size_t first = 0;
    while (first < where && it->v[first] != it->v[where])
        first++;
    cli_error("invalid permutation: item %zu (%s) repeats item %zu", where + 1,
              cli_quote(it->text[where]), first + 1);
}

static int print_rank(const struct items *it, const struct rank_opts *o)
{
    const size_t len = rf_rank_string_size(it->n);
    char *buf = malloc(len);
    size_t where = 0;
    rf_status s = buf ? rf_rank_string(it->v, it->n, buf, len, &where, NULL, 0) : RF_ENOMEM;
    int status = CLI_FAIL;
    if (s == RF_EINVAL)
        report_invalid(it, o, where);
    else if (s != RF_OK)
        cli_error("%s", s == RF_ENOMEM ? "memory exhausted" : rf_strerror(s));
    else if (printf("%s\n", buf) < 0 || fflush(stdout) != 0)
        nums_write_failed(errno);
    else
        status = CLI_OK;
    free(buf);
    return status;
}

int cmd_rank(int argc, char **argv)
{
    struct rank_opts o;
    int status = parse_rank_opts("rank", argc, argv, &o);
    if (status != CLI_CONTINUE)
        return status;
    struct items it = {0};
    status = CLI_FAIL;
    const int got = o.n_operands ? items_from_args(&it, o.operands, o.n_operands)
                                 : items_from_stdin(&it);
    if (got != 0) {
        if (o.n_operands)
            cli_error("memory exhausted");
        goto done;
    }
    if (it.n && !all_digits(it.text[0]))
        o.cards = 1;
    if (item_values(&it, &o) == 0 && check_count(&it, &o) == 0)
        status = print_rank(&it, &o);
done:
    items_free(&it);
    return status;
}

/* ---- unrank ---- */

static int unrank_size(struct rank_opts *o)
{
    if (!o->size_arg && !o->cards)
        return cli_usage("unrank", "missing --size=N");
    if (!o->size_arg)
        o->size = NUMS_DECK;
    if (o->cards && o->size != NUMS_DECK && o->size != NUMS_DECK_JOKERS)
        return cli_usage("unrank", "--cards needs --size=52 or --size=54");
    if (o->unicode && !o->cards)
        return cli_usage("unrank", "--unicode needs --cards");
    if (o->n_operands > 1)
        return cli_usage("unrank", "extra operand %s", cli_quote(o->operands[1]));
    return CLI_CONTINUE;
}

static void write_perm(rf_writer *w, const size_t *perm, size_t n, const struct rank_opts *o)
{
    char name[NUMS_CARD_NAME];
    for (size_t i = 0; i < n; i++) {
        if (i)
            rf_writer_putc(w, ' ');
        if (o->cards) {
            nums_card_name(perm[i], o->unicode, name);
            rf_writer_put(w, name, strlen(name));
        } else {
            rf_writer_put_u64(w, (uint64_t)perm[i] + (uint64_t)o->one_based);
        }
    }
    rf_writer_putc(w, '\n');
}

/* Print the permutation of `rank`; 1 after a message, which starts with
 * `where` ("-:LINE:COLUMN: " for standard input, else ""). */
static int unrank_print(const char *rank, const char *where, const struct rank_opts *o)
{
    size_t *perm = malloc(o->size * sizeof *perm);
    rf_status s = perm ? rf_unrank_string(rank, o->size, perm, NULL, 0) : RF_ENOMEM;
    int status = CLI_FAIL;
    if (s == RF_EINVAL) {
        cli_error("%sinvalid rank %s", where, cli_quote(rank));
    } else if (s == RF_ERANGE) {
        cli_error("%srank %s is out of range for size %zu: it must be less than %zu!", where,
                  cli_quote(rank), o->size, o->size);
    } else if (s != RF_OK) {
        cli_error("%s", s == RF_ENOMEM ? "memory exhausted" : rf_strerror(s));
    } else {
        static unsigned char buf[RANK_OUT_BUFFER];
        rf_writer w;
        rf_writer_init(&w, STDOUT_FILENO, buf, sizeof buf);
        write_perm(&w, perm, o->size, o);
        status = nums_write_failed(rf_writer_flush(&w)) ? CLI_FAIL : CLI_OK;
    }
    free(perm);
    return status;
}

/* The rank from standard input: exactly one token. */
static int unrank_stdin(const struct rank_opts *o)
{
    struct nums_tokens t;
    nums_tokens_init(&t, stdin, 0);
    int err = 0, status = CLI_FAIL;
    const char *tok = nums_token(&t, &err);
    char *rank = tok ? strdup(tok) : NULL;
    char where[sizeof t.where + 2];
    snprintf(where, sizeof where, "%s: ", t.where);
    if (err || (tok && !rank))
        nums_token_error(&t, err ? err : ENOMEM);
    else if (!tok)
        cli_error("no rank given");
    else if ((tok = nums_token(&t, &err)) != NULL)
        cli_error("%s: extra input %s after the rank", t.where, cli_quote(tok));
    else if (err)
        nums_token_error(&t, err);
    else
        status = unrank_print(rank, where, o);
    free(rank);
    nums_tokens_free(&t);
    return status;
}

int cmd_unrank(int argc, char **argv)
{
    struct rank_opts o;
    int status = parse_rank_opts("unrank", argc, argv, &o);
    if (status == CLI_CONTINUE)
        status = unrank_size(&o);
    if (status != CLI_CONTINUE)
        return status;
    return o.n_operands ? unrank_print(o.operands[0], "", &o) : unrank_stdin(&o);
}
