/*
 * cmd_gather.c -- `riffle gather`: step 3 of the file transport (dist.h,
 * docs/distributed.md).  Task J reads D/0.to.J .. D/(P-1).to.J in part
 * order, puts owner J's records in the keyed order (rf_engine_gather, which
 * spills to -T beyond --memory) and writes them to standard output or -o
 * (replaced atomically, as in the shuf mode: output.h); task 0 writes
 * D/header first.  Every count is read first and every file's run identity
 * (dist_run.h) checked against them and the gather's key, and, given the
 * FILEs, against those.  Packets by reference (`riffle scatter
 * --by-reference`) need the FILEs: they are mapped (rf_engine_gather_inputs)
 * and those records written from there; packets of the records' bytes only
 * have the FILEs checked.  Packets of `riffle scatter --direct` hold no
 * records: the gather reads all of the one FILE itself and keeps task J's
 * records (rf_engine_gather_direct).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cleanup.h"
#include "cli_options.h"
#include "commands.h"
#include "dist.h"
#include "dist_run.h"
#include "output.h"
#include "run_options.h"
#include "shuf_engine.h"

enum { OPT_MEMORY = DIST_OPT_FIRST_FREE, OPT_THREADS, OPT_HELP };

struct gather_opts {
    struct dist_opts d;
    const char *output;
    uint64_t memory;
    const char *tmpdir;
    unsigned threads;
    const char *memory_arg, *threads_arg; /* as given (cli_set_once) */
    char **files; /* the run's inputs, to check (optional) */
    int n_files;
};

static const struct option gather_longopts[] = {
    DIST_PLACE_LONGOPTS,
    {"output", required_argument, NULL, 'o'},
    {"memory", required_argument, NULL, OPT_MEMORY},
    {"temporary-directory", required_argument, NULL, 'T'},
    {"threads", required_argument, NULL, OPT_THREADS},
    DIST_KEY_LONGOPTS,
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_gather_options = {"gather", 0, "o:T:", gather_longopts};

static int gather_help(void)
{
    return cli_print_stdout(
        "Usage: riffle gather --task=J --tasks=P --dir=D --seed=S [OPTION]... [FILE]...\n"
        "Step 3 of a run of P tasks (see `riffle scatter --help`): read D/count.0 ..\n"
        "D/count.(P-1) and D/0.to.J .. D/(P-1).to.J, check that they are one run, and\n"
        "write task J's share of the shuffled records; task 0 writes the header\n"
        "(D/header) first.  The outputs of tasks 0 .. P-1, concatenated in order, are\n"
        "exactly the output of `riffle --seed=S FILE...`.  Given the FILEs, check too\n"
        "that they are the inputs the run counted, unchanged.  Packets of `riffle\n"
        "scatter --by-reference` need the FILEs: their records are read from there;\n"
        "after `riffle scatter --direct` the gather reads all of the one FILE itself.\n"
        "\n"
        "      --task=J             this task's number, 0 <= J < P\n"
        "      --tasks=P            the number of tasks, as given to scatter\n"
        "      --dir=D              the directory the scatter tasks wrote\n"
        "      --seed=S             the key given to scatter (it orders equal keys)\n"
        "      --random-source=FILE the key: the first 32 bytes of FILE\n"
        "      --rng=NAME           the generator given to scatter\n"
        "  -o, --output=FILE        write to FILE (replaced atomically) instead of\n"
        "                             standard output\n"
        "      --memory=SIZE        hold at most about SIZE bytes of records in memory\n"
        "                             (as riffle's --memory), the rest in temporary\n"
        "                             files\n"
        "  -T, --temporary-directory=DIR  temporary files in DIR, not $TMPDIR or /tmp\n"
        "      --threads=N          use N threads; 0 (the default) means all cores\n"
        "      --help               display this help and exit\n");
}

/* An option that is not every step's (dist_getopt). */
static int on_gather_option(void *ctx, int c, const char *arg)
{
    struct gather_opts *o = ctx;
    switch (c) {
    case 'o':
        return cli_set_once(&o->output, arg, "output files");
    case OPT_MEMORY:
        return cli_parse_memory("gather", arg, &o->memory_arg, &o->memory);
    case 'T':
        return cli_set_once(&o->tmpdir, arg, "temporary directories");
    case OPT_THREADS:
        return cli_parse_threads("gather", arg, &o->threads_arg, &o->threads);
    case OPT_HELP:
        return gather_help();
    default:
        return cli_try_help("gather");
    }
}

static int parse_gather(int argc, char **argv, struct gather_opts *o)
{
    memset(o, 0, sizeof *o);
    o->d.cmd = "gather";
    int r = dist_getopt(&o->d, argc, argv, &cli_gather_options, on_gather_option, o);
    if (r != CLI_CONTINUE)
        return r;
    o->files = argv + optind;
    o->n_files = argc - optind;
    r = dist_check(&o->d, 1);
    if (r != CLI_CONTINUE)
        return r;
    return o->tmpdir ? cli_check_tmpdir(o->tmpdir) : CLI_CONTINUE;
}

/* ---- the sink: the program's output (output.h) ---- */

static int out_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    (void)header; /* empty: the header was set before */
    (void)len;
    return output_set_total(ctx, records) != 0 ? -1 : 0;
}

/* ---- the run: every file of D checked against the counts ---- */

/* What the gather knows of the run: its own --tasks and key, the inputs it
 * was given (if any), and, once read, D/count.0's run; the next part's
 * first record number. */
struct gather_run {
    struct dist_run here; /* tasks, rng, key; inputs when FILEs were given */
    int have_files;
    char **files;
    struct dist_run count0; /* D/count.0 */
    uint64_t first;
    void **maps;            /* the packet files, mapped while the gather holds them */
    size_t *map_len;
    size_t *off;            /* where each one's frames start */
    int *refs;              /* each one's frames are references */
    int *direct;            /* each one holds no frames (scatter --direct) */
    rf_engine_input *in;    /* the FILEs, for references: kept until the end */
    size_t n_in;
};

/* D/count.I's run: task 0's against this gather (its --tasks, its FILEs),
 * the others against task 0's.  0, or -1 after a message. */
static int check_count(const struct gather_opts *o, struct gather_run *gr, const char *path,
                       unsigned i, const struct dist_run *count)
{
    struct dist_diff d;
    if (i > 0) {
        if (dist_run_diff(count, &gr->count0, DIST_CMP_RUN, &d) == DIST_SAME)
            return 0;
        char other[4200];
        snprintf(other, sizeof other, "%s/count.0", o->d.dir);
        dist_run_refuse(path, "counted", other, &d,
                        "the counts are of two runs; rerun `riffle scatter --count`, then "
                        "`riffle scatter`, on every task");
        return -1;
    }
    /* --header and -z are the scatters' alone */
    gr->here.header = count->header;
    gr->here.zero = count->zero;
    const enum dist_diff_kind k = dist_run_diff(count, &gr->here, DIST_CMP_RUN, &d);
    if (k == DIST_DIFF_OPTION) {
        dist_run_refuse(path, "counted", "this gather", &d, "give every step the same --tasks");
        return -1;
    }
    if (k != DIST_DIFF_INPUTS || !gr->have_files)
        return 0;
    dist_run_refuse(path, "counted",
                    d.input == SIZE_MAX ? "this gather" : cli_quote_file(gr->files[d.input]), &d,
                    "the directory holds the run of other inputs, or an input changed since; "
                    "rerun every step");
    return -1;
}

/* D/count.I, read and checked (check_count).  0, or -1 after a message. */
static int read_count(const struct gather_opts *o, struct gather_run *gr, unsigned i,
                      struct dist_run *count)
{
    char path[4096], why[128], *text;
    size_t len, used;
    if (dist_path(&o->d, path, sizeof path, "count.%u", i) != 0)
        return -1;
    snprintf(why, sizeof why, "run `riffle scatter --count --task=%u` first", i);
    if (dist_read_small(path, why, &text, &len) != 0)
        return -1;
    const int p = dist_run_parse(text, len, DIST_STEP_COUNT, count, &used);
    free(text);
    if (p < 0)
        return -1;
    if (p > 0 || used != len || count->task != i) {
        if (p == 0)
            dist_run_free(count);
        cli_error("%s: not the count of task %u of this version of riffle: %s", path, i, why);
        return -1;
    }
    if (check_count(o, gr, path, i, count) == 0)
        return 0;
    dist_run_free(count);
    return -1;
}

/* The run at the head of part i's packets (or of D/header, part 0's)
 * against the gather's key and the part's count.  0, or -1 after a
 * message. */
static int check_scattered(const struct gather_opts *o, const struct gather_run *gr,
                           const char *path, unsigned i, const struct dist_run *file,
                           const struct dist_run *count)
{
    char hint[200];
    struct dist_diff d;
    if (dist_run_diff(file, &gr->here, DIST_CMP_KEY, &d) != DIST_SAME) {
        snprintf(hint, sizeof hint, "give every scatter and gather the same %s (rerun `riffle "
                 "scatter --task=%u` with this gather's, or give the gather the scatter's)",
                 d.kind == DIST_DIFF_KEY ? "key" : "--rng", i);
        dist_run_refuse(path, "scattered", d.kind == DIST_DIFF_KEY ? "this gather's" : "this gather",
                        &d, hint);
        return -1;
    }
    if (dist_run_diff(file, count, DIST_CMP_RUN, &d) != DIST_SAME) {
        char other[4200];
        snprintf(other, sizeof other, "%s/count.%u", o->d.dir, i);
        snprintf(hint, sizeof hint, "the counts were made again since; rerun `riffle scatter "
                 "--task=%u`", i);
        dist_run_refuse(path, "scattered", other, &d, hint);
        return -1;
    }
    if (file->step == DIST_STEP_PACKETS &&
        (file->first != gr->first || file->records != count->records)) {
        cli_error("%s: scattered as records %llu to %llu, but the counts say %llu to %llu: "
                  "rerun `riffle scatter --task=%u`", path, (unsigned long long)file->first,
                  (unsigned long long)(file->first + file->records),
                  (unsigned long long)gr->first, (unsigned long long)(gr->first + count->records),
                  i);
        return -1;
    }
    return 0;
}

/* The packets of bytes[0..len) after their run's text, checked; *off is
 * where the library's frames start. */
static int packets_run(const struct gather_opts *o, const struct gather_run *gr,
                       const char *path, unsigned i, const struct dist_run *count,
                       const void *bytes, size_t len, size_t *off, int *refs, int *direct)
{
    struct dist_run file;
    const int p = dist_run_parse(bytes, len, DIST_STEP_PACKETS, &file, off);
    if (p < 0)
        return -1;
    if (p > 0) {
        cli_error("%s: not packets of this version of riffle: rerun `riffle scatter --task=%u`",
                  path, i);
        return -1;
    }
    int r = -1;
    if (file.tasks != o->d.tasks) {
        struct dist_diff d;
        (void)dist_run_diff(&file, &gr->here, DIST_CMP_RUN, &d);
        dist_run_refuse(path, "scattered", "this gather", &d, "give every step the same --tasks");
    } else if (file.task != i || file.owner != o->d.task)
        cli_error("%s: not packets of task %u for task %llu of %llu", path, i,
                  (unsigned long long)o->d.task, (unsigned long long)o->d.tasks);
    else
        r = check_scattered(o, gr, path, i, &file, count);
    *refs = file.refs;
    *direct = file.direct;
    if (r == 0 && file.direct && *off != len) {
        cli_error("%s: packets of `riffle scatter --direct` hold no records: rerun `riffle "
                  "scatter --task=%u`", path, i);
        r = -1;
    }
    dist_run_free(&file);
    return r;
}

/* Part i's packets, mapped and their run checked: the gather reads them
 * where they lie (rf_engine_gather_hold), so the mapping stays until the
 * gather is closed (unmap_parts). */
static int map_part(const struct gather_opts *o, struct gather_run *gr, unsigned i,
                    const struct dist_run *count)
{
    char path[4096];
    if (dist_path(&o->d, path, sizeof path, "%u.to.%llu", i, (unsigned long long)o->d.task) != 0)
        return -1;
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        if (e == ENOENT)
            cli_error("%s: %s (run `riffle scatter --task=%u` first)", path, strerror(e), i);
        else
            cli_error("%s: %s", path, strerror(e));
        return -1;
    }
    struct stat st;
    void *m = NULL;
    int status = -1;
    if (fstat(fd, &st) != 0) {
        cli_error("%s: %s", path, strerror(errno));
    } else if (st.st_size > 0 &&
               (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
        cli_error("%s: %s", path, strerror(errno));
        m = NULL;
    } else {
        gr->maps[i] = m;
        gr->map_len[i] = m ? (size_t)st.st_size : 0;
        status = packets_run(o, gr, path, i, count, m ? m : "", gr->map_len[i], &gr->off[i],
                             &gr->refs[i], &gr->direct[i]);
    }
    close(fd);
    return status;
}

/* Part i's mapped packets, given to the gather. */
static int hold_part(const struct gather_opts *o, struct gather_run *gr, rf_engine_gather *g,
                     unsigned i)
{
    char path[4096];
    if (dist_path(&o->d, path, sizeof path, "%u.to.%llu", i, (unsigned long long)o->d.task) != 0)
        return -1;
    rf_engine_error err;
    const char *p = gr->maps[i] ? (const char *)gr->maps[i] + gr->off[i] : "";
    const rf_status st = rf_engine_gather_hold(g, i, p, gr->map_len[i] - gr->off[i], &err);
    unsigned owner, owners;
    const int mine = !rf_engine_gather_owner(g, &owner, &owners) ||
                     (owner == o->d.task && owners == o->d.tasks);
    if (st == RF_EINVAL && gr->refs[i] && mine)
        /* The FILEs passed check_count, which compares what the frames'
         * identity holds (inode, size, time): what the library sees beyond
         * it is a rewrite that kept the size and times but moved the
         * record boundaries it checks at each frame's ends. */
        cli_error("%s: references into the inputs as task %u saw them, which these FILEs are "
                  "not (a rewrite that kept their sizes and times?): rerun every step",
                  path, i);
    else if (st == RF_EINVAL || !mine)
        cli_error("%s: not packets of task %u for task %llu of %llu", path, i,
                  (unsigned long long)o->d.task, (unsigned long long)o->d.tasks);
    else if (st != RF_OK)
        dist_engine_error(&err);
    return st == RF_OK && mine ? 0 : -1;
}

/* The FILEs as the library reads them (gr->in, kept until the end), and
 * *ro: eo with the run's --header and -z (the counts'; the frames'
 * identity covers where the header ends).  0, or -1 after a message. */
static int run_inputs(const struct gather_opts *o, struct gather_run *gr,
                      const rf_engine_options *eo, rf_engine_options *ro)
{
    gr->in = shuf_file_inputs(o->files, o->n_files, &gr->n_in);
    if (!gr->in) {
        cli_error("memory exhausted");
        return -1;
    }
    *ro = *eo;
    ro->header = gr->count0.header;
    ro->delim = gr->count0.zero ? '\0' : '\n';
    return 0;
}

/* Packets by reference (any part's) need the inputs mapped before any
 * packets are added (run_inputs).  0, or -1 after a message. */
static int refer_inputs(const struct gather_opts *o, struct gather_run *gr, rf_engine_gather *g,
                        const rf_engine_options *eo)
{
    unsigned i = 0;
    while (i < (unsigned)o->d.tasks && !gr->refs[i])
        i++;
    if (i == (unsigned)o->d.tasks)
        return 0;
    if (!gr->have_files) {
        cli_error("%s/%u.to.%llu: packets of task %u are references into the inputs: give "
                  "`riffle gather` the same FILEs as the scatters", o->d.dir, i,
                  (unsigned long long)o->d.task, i);
        return -1;
    }
    rf_engine_options ro;
    if (run_inputs(o, gr, eo, &ro) != 0)
        return -1;
    rf_engine_error err;
    if (rf_engine_gather_inputs(g, &ro, gr->in, gr->n_in, &err) != RF_OK) {
        dist_engine_error(&err);
        return -1;
    }
    return 0;
}

/* Task 0's header, checked, into the output first. */
static int put_header(const struct gather_opts *o, const struct gather_run *gr,
                      struct cli_output *out)
{
    char path[4096];
    char *bytes;
    size_t len, used;
    if (dist_path(&o->d, path, sizeof path, "header") != 0 ||
        dist_read_small(path, "run `riffle scatter --task=0` first", &bytes, &len) != 0)
        return -1;
    struct dist_run file;
    const int p = dist_run_parse(bytes, len, DIST_STEP_HEADER, &file, &used);
    int r = -1;
    if (p > 0)
        cli_error("%s: not the header of this version of riffle: rerun `riffle scatter "
                  "--task=0`", path);
    else if (p == 0 && file.task != 0)
        cli_error("%s: not the header of task 0: rerun `riffle scatter --task=0`", path);
    else if (p == 0 && check_scattered(o, gr, path, 0, &file, &gr->count0) == 0)
        r = output_set_header(out, bytes + used, len - used);
    if (p == 0)
        dist_run_free(&file);
    free(bytes);
    return r;
}

/* Packets of `riffle scatter --direct` from every task (all or none: 1;
 * none: 0; -1 after a message for a mixture): the gather *gp becomes one
 * that reads the one FILE itself, with the run's --header and -z. */
static int direct_inputs(const struct gather_opts *o, struct gather_run *gr,
                         rf_engine_gather **gp, const rf_engine_options *eo)
{
    const unsigned tasks = (unsigned)o->d.tasks;
    unsigned n = 0, other = 0;
    for (unsigned i = 0; i < tasks; i++) {
        n += gr->direct[i] != 0;
        if (!gr->direct[i])
            other = i;
    }
    if (n == 0)
        return 0;
    if (n < tasks) {
        cli_error("%s/%u.to.%llu: packets of task %u hold records, those of other tasks none "
                  "(`riffle scatter --direct`): rerun every scatter the same way", o->d.dir,
                  other, (unsigned long long)o->d.task, other);
        return -1;
    }
    if (!gr->have_files) {
        cli_error("%s/0.to.%llu: the scatters wrote no records (`--direct`): give `riffle "
                  "gather` the FILE they were given", o->d.dir, (unsigned long long)o->d.task);
        return -1;
    }
    rf_engine_options ro;
    if (run_inputs(o, gr, eo, &ro) != 0)
        return -1;
    rf_engine_error err;
    rf_engine_gather_close(*gp);
    if (rf_engine_gather_direct(gp, &ro, gr->in, gr->n_in, (unsigned)o->d.task, tasks, &err) !=
        RF_OK) {
        *gp = NULL;
        dist_engine_error(&err);
        return -1;
    }
    return 1;
}

/* The packet files' mappings, once the gather that held them is closed. */
static void unmap_parts(struct gather_run *gr, unsigned tasks)
{
    for (unsigned i = 0; gr->maps && i < tasks; i++)
        if (gr->maps[i])
            munmap(gr->maps[i], gr->map_len[i]);
    free(gr->maps);
    free(gr->map_len);
    free(gr->off);
    free(gr->refs);
    free(gr->direct);
    free(gr->in);
    gr->maps = NULL;
    gr->map_len = NULL;
    gr->off = NULL;
    gr->refs = NULL;
    gr->direct = NULL;
    gr->in = NULL;
}

/* Every part's count, checked (all of them first: counts of two runs are
 * the first thing to say), then its packets, checked, then (the inputs
 * first when some are references) added. */
static int add_parts(const struct gather_opts *o, struct gather_run *gr, rf_engine_gather **gp,
                     const rf_engine_options *eo)
{
    const unsigned tasks = (unsigned)o->d.tasks;
    uint64_t *records = malloc(tasks * sizeof *records);
    gr->maps = calloc(tasks, sizeof *gr->maps);
    gr->map_len = calloc(tasks, sizeof *gr->map_len);
    gr->off = calloc(tasks, sizeof *gr->off);
    gr->refs = calloc(tasks, sizeof *gr->refs);
    gr->direct = calloc(tasks, sizeof *gr->direct);
    if (!records || !gr->maps || !gr->map_len || !gr->off || !gr->refs || !gr->direct) {
        free(records);
        cli_error("memory exhausted");
        return -1;
    }
    int r = 0;
    for (unsigned i = 0; i < tasks && r == 0; i++) {
        struct dist_run count;
        r = read_count(o, gr, i, i == 0 ? &gr->count0 : &count);
        if (r == 0)
            records[i] = i == 0 ? gr->count0.records : count.records;
        if (r == 0 && i > 0)
            dist_run_free(&count);
    }
    /* every count's run is D/count.0's now */
    struct dist_run count = gr->count0;
    for (unsigned i = 0; i < tasks && r == 0; i++) {
        count.records = records[i];
        r = map_part(o, gr, i, &count);
        gr->first += records[i];
    }
    free(records);
    const int direct = r == 0 ? direct_inputs(o, gr, gp, eo) : -1;
    if (direct != 0)
        return direct < 0 ? -1 : 0;
    r = refer_inputs(o, gr, *gp, eo);
    for (unsigned i = 0; i < tasks && r == 0; i++)
        r = hold_part(o, gr, *gp, i);
    return r;
}

/* What this gather knows of its run (gather_run). */
static int this_run(const struct gather_opts *o, const rf_engine_options *eo,
                    struct gather_run *gr)
{
    memset(gr, 0, sizeof *gr);
    gr->here.tasks = o->d.tasks;
    gr->here.rng = eo->rng;
    gr->have_files = o->n_files > 0;
    gr->files = o->files;
    if (dist_run_key(&gr->here, eo->key) != 0)
        return -1;
    if (!gr->have_files)
        return 0;
    size_t n;
    rf_engine_input *in = shuf_file_inputs(o->files, o->n_files, &n);
    if (!in) {
        cli_error("memory exhausted");
        return -1;
    }
    const int r = dist_run_stamp(&gr->here, in, n);
    free(in);
    return r;
}

/* Every part's packets, then the records to out.  Returns 0; 1 for a write
 * error of the output (output_close reports it); -1 after a message. */
static int gather_all(const struct gather_opts *o, const rf_engine_options *eo,
                      struct cli_output *out)
{
    rf_engine_gather *g;
    rf_engine_error err;
    if (rf_engine_gather_open(&g, eo, (unsigned)o->d.tasks, &err) != RF_OK) {
        dist_engine_error(&err);
        return -1;
    }
    struct gather_run gr;
    int status = -1;
    if (this_run(o, eo, &gr) != 0)
        goto end;
    const int added =
        add_parts(o, &gr, &g, eo) == 0 && (o->d.task != 0 || put_header(o, &gr, out) == 0);
    dist_run_free(&gr.here);
    dist_run_free(&gr.count0);
    if (!added)
        goto end;
    const rf_engine_sink sink = output_sink(out, out_begin);
    if (rf_engine_gather_write(g, RF_ENGINE_ALL, &sink, &err) != RF_OK) {
        /* A write error of the output is output_close's to report (a closed
         * pipe as the shuf mode words it); a sink error of -1 was printed. */
        if (err.op == RF_ENGINE_OP_OUTPUT && err.err > 0 && output_writer(out)->err)
            status = 1;
        else if (err.op != RF_ENGINE_OP_OUTPUT || err.err != -1)
            dist_engine_error(&err);
        goto end;
    }
    status = 0;
end:
    rf_engine_gather_close(g);
    unmap_parts(&gr, (unsigned)o->d.tasks);
    return status;
}

int cmd_gather(int argc, char **argv)
{
    struct gather_opts o;
    const int r = parse_gather(argc, argv, &o);
    if (r != CLI_CONTINUE)
        return r;
    (void)cleanup_init();
    rf_engine_options eo;
    rf_engine_options_init(&eo);
    if (dist_key(&o.d, &eo) != 0)
        return CLI_FAIL;
    eo.memory = o.memory;
    eo.tmpdir = o.tmpdir;
    eo.threads = o.threads;
    eo.temp = cleanup_engine_temp;
    eo.named_temps = cli_named_temps();
    const struct cli_output_spec spec = {o.output, NULL, CLI_CODEC_BY_NAME,
                                         cli_threads_resolve(o.threads)};
    struct cli_output out;
    int status = CLI_FAIL;
    if (output_open(&out, &spec) == 0) {
        const int g = gather_all(&o, &eo, &out);
        if (g >= 0) /* done, or a write error that output_close reports */
            status = output_close(&out);
        else
            output_abort(&out);
    }
    sodium_memzero(eo.key, sizeof eo.key);
    return status;
}
