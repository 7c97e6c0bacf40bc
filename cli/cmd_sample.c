/*
 * cmd_sample.c -- `riffle sample -n K`: K records of the input chosen
 * uniformly without replacement, in one pass over a stream of unknown length
 * with memory for the K kept records only.
 *
 * Order contract (seeded runs; pinned by tests/cli/cli_sample.bats):
 *   unweighted: every record is offered, in input order, to Li's Algorithm L
 *     (rf_reservoir_offer), which says which of the K slots it replaces; at the
 *     end the filled slots are put in random order by rf_shuffle of the slot
 *     numbers with the same generator -- or, with --keep-order, in input
 *     order (no draw).  So --keep-order prints the same records as the random
 *     order, sorted back into input order.
 *   weighted (--weights): A-ExpJ (rf_wsample) with K slots; the records come
 *     out in the sampler's order (successive weighted draws without
 *     replacement), or in input order with --keep-order.  Zero weights are
 *     never offered.  Until K positive-weight records have arrived they are
 *     only buffered, then offered in arrival order to a sampler of K slots (or
 *     of all of them at the end of a shorter input): the first K offers of
 *     A-ExpJ just fill its slots, so the draws are the same as with a sampler
 *     made up front, while the memory stays O(min(K, input)) even for a huge K.
 *   --prob, --key, --group: sample_select.c (its own contract).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_options.h"
#include "cmd_numbers.h"
#include "riffle_io.h"
#include "riffle_perm.h"
#include "sample_input.h"
#include "sample_select.h"

#define SAMPLE_OUT_BUFFER ((size_t)1 << 16)

enum { OPT_HELP = CLI_OPT_FIRST_FREE, OPT_KEY, OPT_GROUP, OPT_PROB, OPT_CSV, OPT_HEADER };

struct sample_opts {
    uint64_t count;
    int have_count;
    const char *field_arg, *delim_arg; /* as given, for cli_set_once */
    int keep_order;
    size_t field;     /* 1-based weight field; 0: unweighted */
    int field_delim;  /* byte separating fields, or -1 for runs of blanks */
    unsigned char delim;
    struct cli_rng_opts rng;
    char **files;
    int n_files;
    /* --key, --group, --prob (sample_select.c) */
    const char *key_arg, *group_arg, *prob_arg;
    struct sample_select sel;
    /* --csv, --header: the records read (sample_input.h) */
    const char *header_arg;
    struct sample_input in;
};

/* A kept record: a copy of its bytes, its input position and weight. */
struct kept {
    char *data;
    size_t len, cap;
    uint64_t pos;
    double weight;
};

struct pool {
    struct kept *items;
    size_t n, cap;
};

/* What the reading loop feeds. */
struct sampler {
    const struct sample_opts *o;
    struct sample_input *in; /* the records read */
    rf_rng *g;
    size_t k;
    struct pool pool;
    rf_reservoir res;
    rf_wsample *ws; /* weighted, once K positive records were seen */
    char *field;    /* scratch copy of a weight field */
    size_t field_cap;
};

static int sample_help(void)
{
    return cli_print_stdout(
        "Usage: riffle sample -n K [OPTION]... [FILE]...\n"
        "  or:  riffle sample --prob=P [OPTION]... [FILE]...\n"
        "Write K lines of the input chosen uniformly at random without replacement\n"
        "(every K-subset of the lines equally likely; all lines if there are fewer),\n"
        "in random order.  One pass, memory for K lines: works on endless streams.\n"
        "\n"
        "With no FILE, or when FILE is -, read standard input.  Several FILEs are\n"
        "read one after another, as one input.  Equal lines count separately.\n"
        "\n"
        "  -n, --count=K          the number of lines to choose (repeated: the\n"
        "                           smallest K)\n"
        "  -k, --keep-order       print the chosen lines in input order\n"
        "      --sorted           the same as --keep-order\n"
        "  -w, --weights=FIELD    weighted sampling: field FIELD (from 1) of each line\n"
        "                           is its weight, a number >= 0; each pick chooses\n"
        "                           among the lines left with probability proportional\n"
        "                           to weight, and zero weights are never chosen\n"
        "  -d, --delimiter=C      with --weights: fields are separated by the byte C\n"
        "                           (default: runs of blanks)\n"
        "  -z, --zero-terminated  line delimiter is NUL, not newline\n"
        "      --key=FIELD        sample keys, not lines: field FIELD (from 1) of each\n"
        "                           line is its key, and all lines of a chosen key\n"
        "                           are printed; with -n K the K keys of smallest\n"
        "                           keyed hash (a uniform K-subset of the keys), with\n"
        "                           --prob=P each key with probability P\n"
        "      --group=FIELD      with -n K: K lines of each group (field FIELD)\n"
        "      --csv              records are CSV records (RFC 4180): a quoted field\n"
        "                           may hold newlines; with --key or --group, FIELD\n"
        "                           is a column named in the header (or a number)\n"
        "      --header=K         print the first K records first; they are never\n"
        "                           chosen (with --csv, the first names the columns)\n"
        "      --prob=P           keep each line with probability P (0 <= P <= 1), in\n"
        "                           one pass with geometric skips; with one seed, a\n"
        "                           larger P keeps every line a smaller P keeps\n"
        "  -d, --field-delimiter=C  with --key or --group: fields are separated by\n"
        "                           the byte C (default: TAB)\n"
        "      --seed=S           reproducible output (S: decimal integer or any string)\n"
        "      --rng=NAME         generator: chacha20 (default), xoshiro256++, pcg64\n"
        "      --production       refuse --seed and --random-source (also when the\n"
        "                           environment has RIFFLE_PRODUCTION=1)\n"
        "      --random-source=FILE  use the first 32 bytes of FILE as the key\n"
        "      --help             display this help and exit\n"
        "\n"
        "Algorithms: reservoir sampling with geometric skips (Li's Algorithm L),\n"
        "weighted sampling by Efraimidis and Spirakis's A-ExpJ.  --key, --group and\n"
        "--prob print the lines they keep in input order, once the input is read.  A negative, NaN,\n"
        "infinite or non-numeric weight is an error, reported with its line and\n"
        "column.\n");
}

static const struct option sample_longopts[] = {
    {"count", required_argument, NULL, 'n'},
    {"keep-order", no_argument, NULL, 'k'},
    {"sorted", no_argument, NULL, 'k'},
    {"weights", required_argument, NULL, 'w'},
    {"delimiter", required_argument, NULL, 'd'},
    {"field-delimiter", required_argument, NULL, 'd'},
    {"key", required_argument, NULL, OPT_KEY},
    {"group", required_argument, NULL, OPT_GROUP},
    {"prob", required_argument, NULL, OPT_PROB},
    {"csv", no_argument, NULL, OPT_CSV},
    {"header", required_argument, NULL, OPT_HEADER},
    {"zero-terminated", no_argument, NULL, 'z'},
    {"seed", required_argument, NULL, CLI_OPT_SEED},
    {"rng", required_argument, NULL, CLI_OPT_RNG},
    {"random-source", required_argument, NULL, CLI_OPT_RANDOM_SOURCE},
    {"production", no_argument, NULL, CLI_OPT_PRODUCTION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_sample_options = {"sample", 0, "n:kw:d:z", sample_longopts};

/* --prob=P: a decimal number in [0, 1]. */
static int parse_prob(const char *arg, double *p)
{
    char *end;
    errno = 0;
    *p = strtod(arg, &end);
    if (end == arg || *end || isspace((unsigned char)*arg) || !(*p >= 0.0 && *p <= 1.0))
        return cli_usage("sample", "invalid probability %s: it must be a number from 0 to 1",
                         cli_quote(arg));
    return CLI_CONTINUE;
}

static int on_sample_option(struct sample_opts *o, int c, const char *arg)
{
    const int r = cli_rng_option(&o->rng, c, arg);
    if (r != CLI_NOT_RNG)
        return r;
    uint64_t v;
    int over;
    switch (c) {
    case 'n':
        if (cli_parse_u64(arg, &v, &over) != 0)
            return cli_usage("sample", "invalid sample size %s", cli_quote(arg));
        /* saturated when huge: all lines, as shuf -n; repeated, the
         * smallest wins, as in shuf */
        if (!o->have_count || v < o->count)
            o->count = v;
        o->have_count = 1;
        return CLI_CONTINUE;
    case 'k':
        o->keep_order = 1;
        return CLI_CONTINUE;
    case 'w':
        if (cli_set_once(&o->field_arg, arg, "weight fields") != CLI_CONTINUE)
            return CLI_FAIL;
        if (cli_parse_u64(arg, &v, &over) != 0 || over || v == 0 || v > SIZE_MAX)
            return cli_usage("sample", "invalid field number %s", cli_quote(arg));
        o->field = (size_t)v;
        return CLI_CONTINUE;
    case 'd':
        if (cli_set_once(&o->delim_arg, arg, "delimiters") != CLI_CONTINUE)
            return CLI_FAIL;
        if (strlen(arg) != 1)
            return cli_usage("sample", "the delimiter must be a single character");
        o->field_delim = (unsigned char)arg[0];
        return CLI_CONTINUE;
    case 'z':
        o->delim = '\0';
        return CLI_CONTINUE;
    case OPT_KEY: /* a field number unless --csv (check_select) */
        return cli_set_once(&o->key_arg, arg, "key fields");
    case OPT_GROUP:
        return cli_set_once(&o->group_arg, arg, "group fields");
    case OPT_CSV:
        o->in.csv = 1;
        return CLI_CONTINUE;
    case OPT_HEADER:
        if (cli_set_once(&o->header_arg, arg, "header counts") != CLI_CONTINUE)
            return CLI_FAIL;
        if (cli_parse_u64(arg, &v, &over) != 0)
            return cli_usage("sample", "invalid header count %s", cli_quote(arg));
        o->in.header = v; /* saturated when huge: everything is header */
        return CLI_CONTINUE;
    case OPT_PROB:
        if (cli_set_once(&o->prob_arg, arg, "probabilities") != CLI_CONTINUE)
            return CLI_FAIL;
        return parse_prob(arg, &o->sel.prob);
    case OPT_HELP:
        return sample_help();
    default:
        return cli_try_help("sample");
    }
}

/* --key or --group: a field number, or with --csv a column (found in the
 * header by sample_input_each). */
static int check_fields(struct sample_opts *o)
{
    const char *arg = o->key_arg ? o->key_arg : o->group_arg;
    const char *what = o->key_arg ? "key" : "group";
    o->in.key_what = what;
    if (o->in.csv && o->delim != '\n')
        return cli_usage("sample", "cannot combine --csv and -z");
    if (o->in.csv && o->field)
        return cli_usage("sample", "cannot combine --csv and --weights");
    if (!arg)
        return CLI_CONTINUE;
    if (!o->in.csv)
        return key_field_parse("sample", what, arg, &o->sel.key.field);
    key_field_csv(&o->sel.key, arg, o->field_delim >= 0);
    o->in.key = &o->sel.key;
    return CLI_CONTINUE;
}

/* --key, --group, --prob against the rest. */
static int check_select(struct sample_opts *o)
{
    const int keyed = o->key_arg || o->group_arg;
    if (o->key_arg && o->group_arg)
        return cli_usage("sample", "cannot combine --key and --group");
    if (o->field && (keyed || o->prob_arg))
        return cli_usage("sample", "cannot combine --weights with %s",
                         o->prob_arg ? "--prob" : o->key_arg ? "--key" : "--group");
    if (o->group_arg && !o->have_count)
        return cli_usage("sample", "--group needs -n K");
    if (o->prob_arg && o->have_count)
        return cli_usage("sample", "cannot combine -n and --prob");
    if (o->group_arg && o->prob_arg)
        return cli_usage("sample", "cannot combine --group and --prob");
    if (!o->have_count && !o->prob_arg)
        return cli_usage("sample", "missing the sample size -n K");
    if (o->field_delim >= 0 && !o->field && !keyed)
        return cli_usage("sample", "--delimiter needs --weights");
    o->sel.by_group = o->group_arg != NULL;
    o->sel.have_prob = o->prob_arg != NULL;
    o->sel.count = o->count;
    o->sel.key.delim = o->field_delim >= 0 ? (unsigned char)o->field_delim : '\t';
    return check_fields(o);
}

static int parse_sample(int argc, char **argv, struct sample_opts *o)
{
    memset(o, 0, sizeof *o);
    o->delim = '\n';
    o->field_delim = -1;
    for (;;) {
        const int c = getopt_long(argc, argv, cli_sample_options.shortopts, sample_longopts, NULL);
        if (c == -1)
            break;
        const int r = on_sample_option(o, c, optarg);
        if (r != CLI_CONTINUE)
            return r;
    }
    if (check_select(o) != CLI_CONTINUE)
        return CLI_FAIL;
    o->files = argv + optind;
    o->n_files = argc - optind;
    o->in.files = o->files;
    o->in.n_files = o->n_files;
    o->in.delim = o->delim;
    if (cli_rng_check(&o->rng, "sample") != CLI_OK ||
        cli_production_check(&o->rng, "sample") != CLI_OK)
        return CLI_FAIL;
    return CLI_CONTINUE;
}

/* ---- kept records ---- */

/* Copy a record into slot `slot` (== pool->n appends).  -1 if out of memory. */
static int keep(struct pool *p, size_t slot, const char *data, size_t len, uint64_t pos,
                double weight)
{
    if (slot == p->n) {
        if (p->n == p->cap) {
            struct kept *items = cli_grow(p->items, &p->cap, sizeof *items, 16);
            if (!items)
                return -1;
            p->items = items;
        }
        memset(&p->items[p->n++], 0, sizeof *p->items);
    }
    struct kept *e = &p->items[slot];
    if (e->cap < len + 1) {
        char *d = realloc(e->data, len + 1);
        if (!d)
            return -1;
        e->data = d;
        e->cap = len + 1;
    }
    memcpy(e->data, data, len);
    e->len = len;
    e->pos = pos;
    e->weight = weight;
    return 0;
}

static void pool_free(struct pool *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->items[i].data);
    free(p->items);
}

/* ---- weights ---- */

/* Bounds [*b, *e) of field f (1-based) of the record s[0..len): fields are
 * runs of non-blanks (delim < 0, as awk's default), or the bytes between
 * delimiter bytes (as cut -d).  -1 if the record has fewer fields. */
static int find_field(const char *s, size_t len, size_t f, int delim, size_t *b, size_t *e)
{
    size_t i = 0;
    for (size_t n = 1;; n++) {
        if (delim < 0) {
            while (i < len && isspace((unsigned char)s[i]))
                i++;
            if (i == len)
                return -1;
        }
        const size_t start = i;
        while (i < len && (delim < 0 ? !isspace((unsigned char)s[i])
                                     : (unsigned char)s[i] != delim))
            i++;
        if (n == f) {
            *b = start;
            *e = i;
            return 0;
        }
        if (i == len)
            return -1;
        if (delim >= 0)
            i++;
    }
}

/* The weight of a record, or -1 after a message naming file:line:column,
 * the column (from 1) where the weight field starts, or just past the end
 * of a record that has too few fields. */
static int record_weight(struct sampler *sm, const char *s, size_t len, const char *file,
                         uint64_t line, double *w)
{
    size_t b, e;
    if (find_field(s, len, sm->o->field, sm->o->field_delim, &b, &e) != 0) {
        cli_error("%s:%llu:%zu: missing weight field %zu", file, (unsigned long long)line,
                  len + 1, sm->o->field);
        return -1;
    }
    if (sm->field_cap < e - b + 1) {
        char *f = realloc(sm->field, e - b + 1);
        if (!f) {
            cli_error("memory exhausted");
            return -1;
        }
        sm->field = f;
        sm->field_cap = e - b + 1;
    }
    /* A NUL would end the number's C string early: the bytes after it would
     * pass unseen ("3\0x" read as 3). */
    const char *nul = memchr(s + b, '\0', e - b);
    if (nul) {
        cli_error("%s:%llu:%zu: invalid byte '\\000'", file, (unsigned long long)line,
                  (size_t)(nul - s) + 1);
        return -1;
    }
    memcpy(sm->field, s + b, e - b);
    sm->field[e - b] = '\0';
    char *end;
    *w = strtod(sm->field, &end);
    while (end != sm->field && *end && isspace((unsigned char)*end))
        end++;
    if (end == sm->field || *end || !isfinite(*w) || *w < 0) {
        cli_error("%s:%llu:%zu: invalid weight %s", file, (unsigned long long)line, b + 1,
                  cli_quote(sm->field));
        return -1;
    }
    return 0;
}

/* ---- the two samplers ---- */

static int offer_plain(struct sampler *sm, const char *s, size_t len, uint64_t pos)
{
    const size_t slot = rf_reservoir_offer(&sm->res, sm->g);
    if (slot == RF_RESERVOIR_DISCARD)
        return 0;
    return keep(&sm->pool, slot, s, len, pos, 1.0);
}

/* Make the weighted sampler of k slots and offer it the buffered records. */
static int start_weighted(struct sampler *sm, size_t k)
{
    if (!(sm->ws = rf_wsample_new(k)))
        return -1;
    for (size_t i = 0; i < k; i++) {
        size_t slot;
        if (rf_wsample_offer(sm->ws, sm->g, sm->pool.items[i].weight, &slot) != RF_OK ||
            slot != i)
            return -1; /* cannot happen: weights were checked, the fill is in order */
    }
    return 0;
}

static int offer_weighted(struct sampler *sm, const char *s, size_t len, uint64_t pos,
                          double w)
{
    if (w == 0.0)
        return 0;
    if (!sm->ws) {
        if (keep(&sm->pool, sm->pool.n, s, len, pos, w) != 0)
            return -1;
        return sm->pool.n == sm->k ? start_weighted(sm, sm->k) : 0;
    }
    size_t slot;
    if (rf_wsample_offer(sm->ws, sm->g, w, &slot) != RF_OK)
        return -1;
    return slot == RF_RESERVOIR_DISCARD ? 0 : keep(&sm->pool, slot, s, len, pos, w);
}

/* ---- input ---- */

/* One record of the input offered to the sampler (cli_each_record). */
static int offer_record(void *ctx, char *line, size_t len, uint64_t pos, const char *name,
                        uint64_t lineno)
{
    struct sampler *sm = ctx;
    double w = 1.0;
    if (sm->o->field && record_weight(sm, line, len, name, lineno, &w) != 0)
        return 1;
    const int r = sm->o->field ? offer_weighted(sm, line, len, pos, w)
                               : offer_plain(sm, line, len, pos);
    if (r != 0)
        cli_error("memory exhausted");
    return r != 0;
}

/* ---- output ---- */

static const struct pool *sort_pool;

static int by_pos(const void *a, const void *b)
{
    const uint64_t x = sort_pool->items[*(const size_t *)a].pos;
    const uint64_t y = sort_pool->items[*(const size_t *)b].pos;
    return (x > y) - (x < y);
}

/* The slots to print, in output order, into *order (count in *n). */
static int output_order(struct sampler *sm, size_t **order, size_t *n)
{
    const size_t m = sm->pool.n;
    size_t *idx = malloc((m ? m : 1) * sizeof *idx);
    if (!idx)
        return -1;
    if (sm->o->field) {
        if (!sm->ws && m && start_weighted(sm, m) != 0) {
            free(idx);
            return -1;
        }
        *n = sm->ws ? rf_wsample_result(sm->ws, idx) : 0;
    } else {
        for (size_t i = 0; i < m; i++)
            idx[i] = i;
        *n = m;
        if (!sm->o->keep_order)
            rf_shuffle(sm->g, idx, m, sizeof *idx);
    }
    if (sm->o->keep_order) {
        sort_pool = &sm->pool;
        qsort(idx, *n, sizeof *idx, by_pos);
    }
    *order = idx;
    return 0;
}

static int write_sample(struct sampler *sm)
{
    size_t *order, n;
    if (output_order(sm, &order, &n) != 0) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    static unsigned char buf[SAMPLE_OUT_BUFFER];
    rf_writer w;
    rf_writer_init(&w, STDOUT_FILENO, buf, sizeof buf);
    sample_input_put_header(sm->in, &w);
    for (size_t i = 0; i < n; i++) {
        const struct kept *e = &sm->pool.items[order[i]];
        rf_writer_put(&w, e->data, e->len);
        rf_writer_putc(&w, sm->o->delim);
    }
    free(order);
    return nums_write_failed(rf_writer_flush(&w)) ? CLI_FAIL : CLI_OK;
}

static int run_sample(const struct sample_opts *o, struct sample_input *in, rf_rng *g)
{
    struct sampler sm;
    memset(&sm, 0, sizeof sm);
    sm.o = o;
    sm.in = in;
    sm.g = g;
    sm.k = o->count > SIZE_MAX ? SIZE_MAX : (size_t)o->count;
    if (!o->field && rf_reservoir_init(&sm.res, sm.k) != RF_OK) {
        cli_error("invalid sample size");
        return CLI_FAIL;
    }
    int status = sample_input_each(sm.in, offer_record, &sm)
                     ? CLI_FAIL
                     : write_sample(&sm);
    rf_wsample_free(sm.ws);
    pool_free(&sm.pool);
    free(sm.field);
    return status;
}

int cmd_sample(int argc, char **argv)
{
    struct sample_opts o;
    const int r = parse_sample(argc, argv, &o);
    if (r != CLI_CONTINUE)
        return r;
    /* As shuf -n 0: nothing to choose, so nothing is read or drawn. */
    if (o.have_count && o.count == 0)
        return CLI_OK;
    if (o.key_arg || o.group_arg || o.prob_arg) {
        o.sel.delim = o.delim;
        o.sel.rng = &o.rng;
        o.sel.files = o.files;
        o.sel.n_files = o.n_files;
        o.sel.input = &o.in;
        const int st = sample_run_select(&o.sel);
        sample_input_free(&o.in);
        return st;
    }
    rf_rng storage;
    rf_rng *g = cli_rng_make(&o.rng, &storage);
    if (!g)
        return CLI_FAIL;
    const int status = run_sample(&o, &o.in, g);
    sample_input_free(&o.in);
    cli_rng_release(g, &storage);
    return status;
}
