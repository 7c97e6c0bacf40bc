/*
 * shuf_bykey.c -- `riffle --key=FIELD --split=SPEC`: a split in which every
 * record of a key lands in the same part (no key in two parts: train and
 * test never share a user, a session, a document).
 *
 * Contract (pinned by tests/cli/cli_bykey.bats):
 *   - the part of a record is rf_split_part_of_unit(SPEC, u), u the unit
 *     value of its key (rf_keyhash_unit under the key of --seed, or of
 *     --random-source, or the OS's; riffle_sample.h): a function of the seed,
 *     the key's bytes and SPEC only, so adding records never moves a key to
 *     another part.  Parts take their fraction of the keys, not of the
 *     records (a key with many records weighs as much as one with few);
 *   - inside a part, records come in the order of the full shuffle
 *     (`riffle --seed=S` without --key) restricted to that part;
 *   - --header lines start every part, as with --split.
 * The records are held in memory (within --memory): the shuffle's order of
 * the records after the header, then a stable pass by part.
 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decompress.h"
#include "output.h"
#include "riffle_sample.h"
#include "shuf.h"
#include "shuf_bykey.h"
#include "shuf_engine.h"

/* The input: its records, and where each input's records begin (to name a
 * file and line in a message). */
struct bykey_in {
    rf_records r;
    uint64_t budget;
    size_t n_inputs;
    const char **names;  /* per input */
    size_t *first;       /* per input: its first record */
    rf_file_stamp *stamps; /* per input: what it was when opened */
    int csv;             /* --csv: CSV records */
};

static int too_large(const struct bykey_in *in, const char *name)
{
    cli_error("%s: too large for --key within the memory budget of %llu bytes "
              "(see --memory)",
              cli_quote_file(name), (unsigned long long)in->budget);
    return -1;
}

/* Bytes held per record: its offset, its part, its place in the order and
 * its offset again in output order. */
#define HELD_PER_RECORD 32

/* Whether what is held fits the budget: the bytes read into memory (a
 * mapped file is the page cache's) and HELD_PER_RECORD per record. */
static int within_budget(const struct bykey_in *in, const char *name, int mapped)
{
    const uint64_t held = (mapped ? 0 : (uint64_t)in->r.size) + HELD_PER_RECORD * (uint64_t)in->r.n;
    return held > in->budget ? too_large(in, name) : 0;
}

/* --csv: the input added to r at `start` must end outside quotes (after
 * the delimiter that rf_records gave the input before, if it gave one). */
static int open_quote(const rf_records *r, size_t start, const char *name)
{
    if (start > 0 && start < r->size && r->data[start - 1] != '\n')
        start++;
    const uint64_t line = rf_csv_open_quote_line(r->data + start, r->size - start);
    if (line)
        cli_error("%s: unterminated quote in the CSV record starting at line %llu",
                  cli_quote_file(name), (unsigned long long)line);
    return line ? -1 : 0;
}

/* Read (or map, when it is the only one) input `name`, from `given` when
 * it is a descriptor (standard input, a decompressed input's pipe), then
 * count its records. */
static int add_input(struct bykey_in *in, const char *name, int given, int sole)
{
    const int fd = given >= 0 ? given : open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        cli_error("%s: %s", cli_quote_file(name), strerror(errno));
        return -1;
    }
    rf_file_stamp then = {0};
    const size_t start = in->r.size;
    int more = 0, e = rf_file_stamp_fd(fd, &then);
    const size_t max = in->budget < SIZE_MAX ? (size_t)in->budget : SIZE_MAX;
    const int mapped = !e && sole && rf_records_map_fd(&in->r, fd);
    if (!e && !mapped)
        e = rf_records_add_fd_max(&in->r, fd, max, &more);
    if (given < 0)
        close(fd);
    if (e) {
        cli_read_error(name, e);
        return -1;
    }
    if (more)
        return too_large(in, name);
    if (in->csv && open_quote(&in->r, start, name) != 0)
        return -1;
    in->names[in->n_inputs] = name;
    in->stamps[in->n_inputs] = then;
    in->first[in->n_inputs++] = in->r.n;
    if (rf_records_index(&in->r) != 0) {
        cli_error("memory exhausted");
        return -1;
    }
    return within_budget(in, name, mapped);
}

/* add_input as a shuf_input_fn, for shuf_each_input. */
static int add_one(void *ctx, const char *name, int fd, int sole)
{
    return add_input(ctx, name, fd, sole);
}

static int load(const struct shuf_opts *o, struct bykey_in *in)
{
    const size_t n = o->n_operands > 0 ? (size_t)o->n_operands : 1;
    in->budget = o->memory ? o->memory : rf_engine_default_memory();
    in->names = calloc(n, sizeof *in->names);
    in->first = calloc(n, sizeof *in->first);
    in->stamps = calloc(n, sizeof *in->stamps);
    if (!in->names || !in->first || !in->stamps) {
        cli_error("memory exhausted");
        return -1;
    }
    if (o->echo) {
        in->names[0] = "-e";
        in->n_inputs = 1;
        for (int i = 0; i < o->n_operands; i++)
            if (rf_records_add_record(&in->r, o->operands[i], strlen(o->operands[i])) != 0 ||
                rf_records_index(&in->r) != 0) {
                cli_error("memory exhausted");
                return -1;
            }
        return within_budget(in, "-e", 0);
    }
    /* the file operands (or standard input), compressed ones decompressed,
     * each read whole before the next */
    return shuf_each_input(o, 0, add_one, in);
}

/* The first regular input that changed since it was opened (its records,
 * perhaps mapped, would no longer be what was split): reported, -1. */
static int inputs_changed(const struct bykey_in *in)
{
    for (size_t i = 0; i < in->n_inputs; i++) {
        if (!in->stamps[i].regular)
            continue;
        rf_file_stamp now;
        const char *name = in->names[i];
        const int e = strcmp(name, "-") == 0 ? rf_file_stamp_fd(STDIN_FILENO, &now)
                                               : rf_file_stamp_path(name, &now);
        if (e == 0 && rf_file_changed(&in->stamps[i], &now)) {
            cli_error("%s: file changed as we read it", cli_quote_file(name));
            return -1;
        }
    }
    return 0;
}

/* Report the record `rec` (over all inputs) as missing its key field: at
 * its record number in its input, or for CSV records, at the line where it
 * starts. */
static void missing(const struct key_field *key, const struct bykey_in *in, size_t rec)
{
    size_t i = in->n_inputs;
    while (i > 1 && in->first[i - 1] > rec)
        i--;
    const rf_records *r = &in->r;
    const uint64_t from = r->offs[in->first[i - 1]];
    const uint64_t line = key->csv ? rf_delims_count(r->data + from, r->offs[rec] - from, '\n') + 1
                                   : rec - in->first[i - 1] + 1;
    key_field_missing(key, in->names[i - 1], (unsigned long long)line);
}

/* The part of each record after the header, by its key.  Returns 0 or -1
 * after a message. */
static int parts_of(const struct shuf_opts *o, const struct key_field *kf,
                    const struct bykey_in *in, size_t head, size_t *part)
{
    uint8_t key[RF_KEY_BYTES];
    rf_keyhash hk;
    if (cli_rng_key(&o->rng, key) != 0)
        return -1;
    const rf_status st = rf_keyhash_init(&hk, key);
    sodium_memzero(key, sizeof key);
    if (st != RF_OK) {
        cli_error("cannot make the random key: %s", rf_strerror(st));
        return -1;
    }
    const rf_records *r = &in->r;
    for (size_t i = head; i < r->n; i++) {
        const unsigned char *rec = r->data + r->offs[i], *k;
        size_t len;
        if (key_field_find(kf, rec, rf_records_length(r, r->offs[i]), &k, &len) != 0) {
            missing(kf, in, i);
            return -1;
        }
        /* Not RF_EINVAL: check_key refused counts. */
        if (rf_split_part_of_unit(&o->split.plan, rf_keyhash_unit(&hk, k, len),
                                  &part[i - head]) != RF_OK) {
            cli_error("internal error: a split by key without fractions");
            return -1;
        }
    }
    return 0;
}

static rf_status order_keys(void *ctx, uint64_t first, uint64_t *out, size_t n)
{
    return rf_keyed_keys(ctx, first, out, n);
}

/* The offsets of the m records after the header in output order: the full
 * shuffle's order, stably grouped by part; counts[p] the records of part p. */
static int arrange(const struct shuf_opts *o, const rf_records *r, size_t head,
                   const size_t *part, uint64_t *offs, uint64_t *counts)
{
    const size_t m = r->n - head, parts = o->split.plan.parts;
    rf_keyed_order order;
    if (shuf_keyed_order(o, &order) != 0)
        return -1;
    uint64_t *v = malloc(m ? m * sizeof *v : 1), *at = calloc(parts + 1, sizeof *at);
    rf_status st = v && at ? rf_keyed_index(&order, m, order_keys, &order, o->threads, v)
                           : RF_ENOMEM;
    if (st == RF_OK) {
        for (size_t i = 0; i < m; i++)
            counts[part[i]]++;
        for (size_t p = 0; p < parts; p++)
            at[p + 1] = at[p] + counts[p];
        for (size_t j = 0; j < m; j++)
            offs[at[part[v[j]]]++] = r->offs[head + v[j]];
    }
    free(v);
    free(at);
    if (st != RF_OK)
        cli_error("cannot shuffle: %s", st == RF_ENOMEM ? "memory exhausted" : rf_strerror(st));
    return st == RF_OK ? 0 : -1;
}

/* Write the parts: the split's files, cut by the counts of each part. */
static int write_parts(const struct shuf_opts *o, const struct bykey_in *in, size_t head,
                       const uint64_t *offs, uint64_t *counts)
{
    const rf_records *r = &in->r;
    struct shuf_opts by_count = *o;
    by_count.split.plan.kind = RF_SPLIT_COUNTS;
    by_count.split.plan.value = counts;
    by_count.split.plan.rest = 0;
    struct cli_output out;
    if (shuf_output_open(&out, &by_count) != 0)
        return CLI_FAIL;
    if (shuf_put_header(&out, r, head) != 0 || output_set_total(&out, r->n - head) != 0) {
        output_abort(&out);
        return CLI_FAIL;
    }
    (void)output_records(&out, r, offs, r->n - head); /* errors: output_close */
    if (inputs_changed(in) != 0) {
        output_abort(&out);
        return CLI_FAIL;
    }
    return output_close(&out);
}

int shuf_run_bykey(const struct shuf_opts *o)
{
    struct bykey_in in = {0};
    rf_records_init(&in.r, o->delim);
    if (o->csv)
        rf_records_csv(&in.r);
    in.csv = o->csv;
    struct key_field key = o->key;
    size_t *part = NULL;
    uint64_t *offs = NULL, *counts = NULL;
    int status = CLI_FAIL;
    if (load(o, &in) != 0)
        goto done;
    const size_t head = o->header < in.r.n ? (size_t)o->header : in.r.n;
    const size_t m = in.r.n - head;
    if (key.field == KEY_FIELD_BY_NAME &&
        key_field_resolve(&key, head ? in.r.data : NULL,
                          head ? rf_records_length(&in.r, 0) : 0, in.names[0], "key") != 0)
        goto done;
    part = malloc(m ? m * sizeof *part : 1);
    offs = malloc(m ? m * sizeof *offs : 1);
    counts = calloc(o->split.plan.parts, sizeof *counts);
    if (!part || !offs || !counts) {
        cli_error("memory exhausted");
        goto done;
    }
    if (parts_of(o, &key, &in, head, part) == 0 && arrange(o, &in.r, head, part, offs, counts) == 0)
        status = write_parts(o, &in, head, offs, counts);
done:
    free(part);
    free(offs);
    free(counts);
    free(in.names);
    free(in.first);
    free(in.stamps);
    rf_records_free(&in.r);
    return status;
}
