/*
 * cmd_gather.c -- `riffle gather`: step 3 of the file transport (dist.h,
 * docs/distributed.md).  Task J reads D/0.to.J .. D/(P-1).to.J in part
 * order, puts owner J's records in the keyed order (rf_engine_gather, which
 * spills to -T beyond --memory) and writes them to standard output or -o
 * (replaced atomically, as in the shuf mode: output.h); task 0 writes
 * D/header first.
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
#include "output.h"
#include "shuf.h"

enum { OPT_MEMORY = DIST_OPT_FIRST_FREE, OPT_THREADS, OPT_HELP };

struct gather_opts {
    struct dist_opts d;
    const char *output;
    uint64_t memory;
    const char *tmpdir;
    unsigned threads;
    const char *memory_arg, *threads_arg; /* as given (cli_set_once) */
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
        "Usage: riffle gather --task=J --tasks=P --dir=D --seed=S [OPTION]...\n"
        "Step 3 of a run of P tasks (see `riffle scatter --help`): read D/0.to.J ..\n"
        "D/(P-1).to.J and write task J's share of the shuffled records; task 0 writes\n"
        "the header (D/header) first.  The outputs of tasks 0 .. P-1, concatenated in\n"
        "order, are exactly the output of `riffle --seed=S FILE...`.\n"
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
    if (optind < argc)
        return cli_usage("gather", "extra operand %s", cli_quote(argv[optind]));
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

/* ---- the run ---- */

/* Part i's packets for this task, mapped and added: the gather copies
 * them, so the file's pages are only read. */
static int add_part(const struct gather_opts *o, rf_engine_gather *g, unsigned i)
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
        rf_engine_error err;
        const rf_status st2 = rf_engine_gather_add(g, i, m, m ? (size_t)st.st_size : 0, &err);
        unsigned owner, owners;
        const int mine = !rf_engine_gather_owner(g, &owner, &owners) ||
                         (owner == o->d.task && owners == o->d.tasks);
        if (st2 == RF_EINVAL || !mine)
            cli_error("%s: not packets of task %u for task %llu of %llu", path, i,
                      (unsigned long long)o->d.task, (unsigned long long)o->d.tasks);
        else if (st2 != RF_OK)
            dist_engine_error(&err);
        status = st2 == RF_OK && mine ? 0 : -1;
    }
    if (m)
        munmap(m, (size_t)st.st_size);
    close(fd);
    return status;
}

/* Task 0's header, into the output first. */
static int put_header(const struct gather_opts *o, struct cli_output *out)
{
    char path[4096];
    char *bytes;
    size_t len;
    if (dist_path(&o->d, path, sizeof path, "header") != 0 ||
        dist_read_small(path, "run `riffle scatter --task=0` first", &bytes, &len) != 0)
        return -1;
    const int r = output_set_header(out, bytes, len);
    free(bytes);
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
    int status = -1;
    for (unsigned i = 0; i < (unsigned)o->d.tasks; i++)
        if (add_part(o, g, i) != 0)
            goto end;
    if (o->d.task == 0 && put_header(o, out) != 0)
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
    struct shuf_opts so;
    memset(&so, 0, sizeof so);
    so.output = o.output;
    struct cli_output out;
    int status = CLI_FAIL;
    if (output_open(&out, &so) == 0) {
        const int g = gather_all(&o, &eo, &out);
        if (g >= 0) /* done, or a write error that output_close reports */
            status = output_close(&out);
        else
            output_abort(&out);
    }
    sodium_memzero(eo.key, sizeof eo.key);
    return status;
}
