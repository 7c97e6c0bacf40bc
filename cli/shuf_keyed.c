/* shuf_keyed.c -- the shuf mode's records (files, stdin, -e) without -r: the
 * keyed order (riffle.h, "Keyed order"), by whichever engine fits (engine.h).
 *
 * Choice of engine -- never a choice of output, which only the seed and the
 * input decide:
 *   - -n K with K small against --memory: engine_head, O(K) memory, one
 *     streaming pass (a pipe never has to be held);
 *   - everything fits in --memory (input bytes + 8 per record): engine_memory
 *     (regular files mapped, anything else read);
 *   - otherwise engine_external, which starts from whatever was already read.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "engine.h"
#include "output.h"
#include "progress.h"
#include "reader.h"
#include "shuf.h"

/* -n K goes to engine_head when K records surely fit: K up to 2^22 and at
 * most one per 256 bytes of the budget. */
static int head_fits(const struct shuf_opts *o, uint64_t budget)
{
    return o->have_count && o->count <= ((uint64_t)1 << 22) && o->count <= budget / 256;
}

/* Total size of the inputs when all are regular files, else 0 (unknown). */
static uint64_t regular_size(char **names, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        const int r = strcmp(names[i], "-") == 0 ? fstat(STDIN_FILENO, &st)
                                                 : stat(names[i], &st);
        if (r != 0 || !S_ISREG(st.st_mode))
            return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

/* Records in memory: engine_memory if they fit, else the external engine
 * fed from them. */
static int from_memory(struct engine *e, rf_records *r)
{
    struct layout l;
    if (layout_init(&l, e, r) != 0)
        return 1;
    if (engine_memory_fits(e, &l)) {
        const int status = engine_memory(e, r, &l);
        layout_free(&l);
        return status;
    }
    layout_free(&l);
    struct reader rd;
    if (reader_open(&rd, NULL, 0, e->delim) != 0)
        return 1;
    reader_prefix(&rd, r->data, r->size, -1, "-");
    e->size_hint = r->size;
    const int status = engine_external(e, &rd);
    reader_close(&rd);
    return status;
}

/* Mapping windows for streamed regular files: 64 MiB, or a quarter of the
 * budget if that is less (but 1 MiB at least). */
size_t shuf_window(const struct engine *e)
{
    uint64_t w = e->budget / 4;
    if (w > ((uint64_t)64 << 20))
        w = (uint64_t)64 << 20;
    if (w < ((uint64_t)1 << 20))
        w = (uint64_t)1 << 20;
    return (size_t)w;
}

static int open_input(const char *name)
{
    const int fd = strcmp(name, "-") == 0 ? STDIN_FILENO : open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        cli_error("%s: %s", name, strerror(errno));
    return fd;
}

/* Read the inputs into memory until half the budget is used; then go on
 * with the external engine from there. */
static int read_then_decide(struct engine *e, char **names, int n)
{
    rf_records r;
    rf_records_init(&r, e->delim);
    rf_records_defer_index(&r); /* the engines count and find records themselves */
    const size_t limit = e->budget / 2 < SIZE_MAX ? (size_t)(e->budget / 2) : SIZE_MAX;
    int status = 1;
    if (e->progress)
        progress_phase(e->progress, "read", e->size_hint);
    for (int i = 0; i < n; i++) {
        const int fd = open_input(names[i]);
        if (fd < 0)
            goto done;
        int more = 0;
        const int err = rf_records_add_fd_max(&r, fd, limit, &more);
        if (err) {
            cli_error("%s: %s", names[i], strerror(err));
            if (fd != STDIN_FILENO)
                close(fd);
            goto done;
        }
        if (e->progress)
            progress_update(e->progress, r.size);
        if (more) { /* too big for memory: external from here on */
            if (e->progress)
                progress_done(e->progress);
            struct reader rd;
            if (reader_open(&rd, names + i + 1, n - i - 1, e->delim) != 0) {
                if (fd != STDIN_FILENO)
                    close(fd);
                goto done;
            }
            reader_map(&rd, shuf_window(e));
            reader_prefix(&rd, r.data, r.size, fd, names[i]);
            status = engine_external(e, &rd);
            reader_close(&rd);
            goto done;
        }
        if (fd != STDIN_FILENO)
            close(fd);
    }
    if (e->progress)
        progress_done(e->progress);
    status = from_memory(e, &r);
done:
    rf_records_free(&r);
    return status;
}

static int from_names(struct engine *e, const struct shuf_opts *o)
{
    static char *dash[] = {(char *)"-"};
    char **names = o->n_operands > 0 ? o->operands : dash;
    const int n = o->n_operands > 0 ? o->n_operands : 1;
    e->size_hint = regular_size(names, n);
    if (head_fits(o, e->budget) || (e->size_hint > e->budget / 2)) {
        /* Streamed: the head of -n K, or regular files too big to hold. */
        struct reader rd;
        if (reader_open(&rd, names, n, e->delim) != 0)
            return 1;
        reader_map(&rd, shuf_window(e));
        const int status = head_fits(o, e->budget) ? engine_head(e, &rd)
                                                   : engine_external(e, &rd);
        reader_close(&rd);
        return status;
    }
    return read_then_decide(e, names, n);
}

static int from_echo(struct engine *e, const struct shuf_opts *o)
{
    rf_records r;
    rf_records_init(&r, e->delim);
    int err = 0;
    for (int i = 0; i < o->n_operands && !err; i++)
        err = rf_records_add_record(&r, o->operands[i], strlen(o->operands[i]));
    const int status = err ? (cli_error("memory exhausted"), 1) : from_memory(e, &r);
    rf_records_free(&r);
    return status;
}

int shuf_keyed_order(const struct shuf_opts *o, rf_keyed_order *order)
{
    uint8_t key[RF_KEY_BYTES];
    if (cli_rng_key(&o->rng, key) != 0)
        return 1;
    const rf_status st = rf_keyed_order_init(order, cli_rng_kind(&o->rng), key);
    sodium_memzero(key, sizeof key);
    if (st != RF_OK) {
        cli_error("cannot make the random key: %s", rf_strerror(st));
        return 1;
    }
    return 0;
}

int shuf_run_keyed(const struct shuf_opts *o, struct progress *p)
{
    struct engine e = {
        .delim = o->delim,
        .header = o->header,
        .limited = o->have_count,
        .count = o->count,
        .budget = o->memory ? o->memory : cli_default_memory(),
        .threads = o->threads ? o->threads : 1,
        .tmpdir = cli_tmpdir(o),
        .progress = p,
    };
    if (shuf_keyed_order(o, &e.order) != 0)
        return CLI_FAIL;
    struct cli_output out;
    if (output_open(&out, o) != 0)
        return CLI_FAIL;
    e.out = &out;
    const int status = o->echo ? from_echo(&e, o) : from_names(&e, o);
    sodium_memzero(&e.order, sizeof e.order);
    if (status != 0) {
        output_abort(&out);
        return CLI_FAIL;
    }
    return output_close(&out);
}
