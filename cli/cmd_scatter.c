/*
 * cmd_scatter.c -- `riffle scatter`: steps 1 and 2 of the file transport
 * (dist.h, docs/distributed.md) for schedulers that run one binary per task.
 *
 *   riffle scatter --count --task=I --tasks=P --dir=D FILE...
 *       writes D/count.I: the record count of part I (rf_engine_part_count);
 *   riffle scatter --task=I --tasks=P --dir=D --seed=S FILE...
 *       reads D/count.0 .. D/count.(I-1) for its first record number, and
 *       writes D/I.to.J for every task J (rf_engine_scatter), and task 0
 *       D/header;
 *   riffle scatter --by-reference ... FILE...
 *       the same, but D/I.to.J holds references into the FILEs
 *       (rf_engine_scatter_refer), for gathers that map the FILEs themselves;
 *   riffle scatter --direct ... FILE
 *       D/I.to.J holds the run's identity alone: each gather reads every
 *       record of the one FILE itself and keeps its own
 *       (rf_engine_gather_direct).
 *
 * Each file begins with the run's identity (dist_run.h); step 2 refuses
 * counts of other inputs or options than its own.
 *
 * Every file is written atomically; on any error every file this run made is
 * removed again, and those of an earlier run stay as they were.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sodium.h>

#include "cleanup.h"
#include "cli_options.h"
#include "commands.h"
#include "dist.h"
#include "dist_run.h"
#include "shuf_engine.h"

enum { OPT_COUNT = DIST_OPT_FIRST_FREE, OPT_HEADER, OPT_BY_REFERENCE, OPT_DIRECT, OPT_HELP };

struct scatter_opts {
    struct dist_opts d;
    int count;
    int by_ref; /* --by-reference */
    int direct; /* --direct */
    uint64_t header;
    const char *header_arg; /* as given (cli_set_once) */
    unsigned char delim;
    char **files;
    int n_files;
};

static const struct option scatter_longopts[] = {
    {"count", no_argument, NULL, OPT_COUNT},
    DIST_PLACE_LONGOPTS,
    {"header", required_argument, NULL, OPT_HEADER},
    {"zero-terminated", no_argument, NULL, 'z'},
    DIST_KEY_LONGOPTS,
    {"by-reference", no_argument, NULL, OPT_BY_REFERENCE},
    {"direct", no_argument, NULL, OPT_DIRECT},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_scatter_options = {"scatter", 0, "z", scatter_longopts};

static int scatter_help(void)
{
    return cli_print_stdout(
        "Usage: riffle scatter --count --task=I --tasks=P --dir=D [OPTION]... [FILE]...\n"
        "  or:  riffle scatter --task=I --tasks=P --dir=D --seed=S [OPTION]... [FILE]...\n"
        "Shuffle FILEs as P tasks that share the directory D (a scheduler's array job,\n"
        "one task per process or machine); `riffle gather` finishes the run.  The\n"
        "outputs of `riffle gather --task=0` .. `--task=P-1`, concatenated in order,\n"
        "are exactly the output of `riffle --seed=S FILE...`.\n"
        "\n"
        "Step 1, every task: `--count` writes D/count.I, the run's identity and the\n"
        "  number of records of part I (the records whose first byte lies in the\n"
        "  I-th P-th of the input).\n"
        "Step 2, every task, once every count exists: writes D/I.to.J, the records of\n"
        "  part I for task J, for every J; task 0 also writes D/header.\n"
        "Step 3: `riffle gather --task=J` (see `riffle gather --help`).\n"
        "Every file is replaced atomically: a retried task writes the same bytes.\n"
        "Every file begins with the run's identity (each input's size, modification\n"
        "time and inode; P, --header, -z; --rng and a hash of the key), and each\n"
        "step refuses files of another run, other options or a changed input.\n"
        "\n"
        "      --count              step 1: count the part's records\n"
        "      --task=I             this task's number, 0 <= I < P\n"
        "      --tasks=P            the number of tasks (at most 4000)\n"
        "      --dir=D              the directory every task shares\n"
        "      --header=K           the first K lines are a header, kept first\n"
        "  -z, --zero-terminated    records end with NUL, not newline\n"
        "      --seed=S             the key, as riffle's --seed (required in step 2)\n"
        "      --random-source=FILE the key: the first 32 bytes of FILE\n"
        "      --rng=NAME           chacha20 (default), xoshiro256++ or pcg64\n"
        "      --by-reference       step 2: write references into the FILEs (about 3\n"
        "                             bytes a record) instead of the records, for\n"
        "                             gathers that read the same FILEs in place\n"
        "                             (then given to `riffle gather` too)\n"
        "      --direct             step 2: write no records at all; each gather reads\n"
        "                             all of the one FILE itself (given to it too) and\n"
        "                             keeps its own, for tasks that share one machine\n"
        "                             or a fast file system\n"
        "      --help               display this help and exit\n"
        "\n"
        "Every scatter (both steps, every task) must be given the same FILEs, -z and\n"
        "--header, and the scatters and gathers the same --seed or --random-source and\n"
        "--rng.  With no FILE, or when FILE is -, read standard input (whole, in\n"
        "every task).\n");
}

/* An option that is not every step's (dist_getopt). */
static int on_scatter_option(void *ctx, int c, const char *arg)
{
    struct scatter_opts *o = ctx;
    int over;
    switch (c) {
    case OPT_COUNT:
        o->count = 1;
        return CLI_CONTINUE;
    case OPT_HEADER:
        if (cli_set_once(&o->header_arg, arg, "header line counts") != CLI_CONTINUE)
            return CLI_FAIL;
        if (cli_parse_u64(arg, &o->header, &over) != 0)
            return cli_usage("scatter", "invalid header line count %s", cli_quote(arg));
        return CLI_CONTINUE;
    case 'z':
        o->delim = '\0';
        return CLI_CONTINUE;
    case OPT_BY_REFERENCE:
        o->by_ref = 1;
        return CLI_CONTINUE;
    case OPT_DIRECT:
        o->direct = 1;
        return CLI_CONTINUE;
    case OPT_HELP:
        return scatter_help();
    default:
        return cli_try_help("scatter");
    }
}

static int parse_scatter(int argc, char **argv, struct scatter_opts *o)
{
    memset(o, 0, sizeof *o);
    o->d.cmd = "scatter";
    o->delim = '\n';
    const int r = dist_getopt(&o->d, argc, argv, &cli_scatter_options, on_scatter_option, o);
    if (r != CLI_CONTINUE)
        return r;
    o->files = argv + optind;
    o->n_files = argc - optind;
    if (o->count && (o->by_ref || o->direct))
        return cli_usage("scatter", "%s is an option of step 2, not of --count",
                         o->by_ref ? "--by-reference" : "--direct");
    if (o->by_ref && o->direct)
        return cli_usage("scatter", "--by-reference and --direct exclude each other");
    return dist_check(&o->d, !o->count);
}

/* Write a run's text and then `body` to D/NAME atomically. */
static int write_small(const struct scatter_opts *o, const char *name, const struct dist_run *run,
                       const void *body, size_t len)
{
    char path[4096], *text;
    size_t text_len;
    struct dist_file f;
    if (dist_path(&o->d, path, sizeof path, "%s", name) != 0 ||
        dist_run_text(run, &text, &text_len) != 0)
        return -1;
    if (dist_file_open(&f, path) != 0) {
        free(text);
        return -1;
    }
    int e = dist_file_write(&f, text, text_len);
    if (!e)
        e = dist_file_write(&f, body, len);
    free(text);
    if (e) {
        cli_error("%s: %s", path, strerror(e));
        dist_file_abort(&f);
        return -1;
    }
    return dist_file_commit(&f, path);
}

/* D/count.K's run against this step's `here`; 0, or -1 after a message
 * that says what differs and which step to run again. */
static int check_count(const char *path, const struct dist_run *file, const struct dist_run *here,
                       const rf_engine_input *in)
{
    struct dist_diff d;
    switch (dist_run_diff(file, here, DIST_CMP_RUN, &d)) {
    case DIST_SAME:
        return 0;
    case DIST_DIFF_INPUTS:
        if (d.input != SIZE_MAX) {
            dist_run_refuse(path, "counted", cli_quote_file(in[d.input].name), &d,
                            "the count is of other inputs, or the input changed since it was "
                            "counted; rerun `riffle scatter --count` on every task");
            return -1;
        }
        dist_run_refuse(path, "counted", "this scatter", &d,
                        "give every step the same FILEs, or rerun `riffle scatter --count` "
                        "on every task");
        return -1;
    default:
        dist_run_refuse(path, "counted", "this scatter", &d,
                        "give every step the same options, or rerun `riffle scatter --count` "
                        "with these on every task");
        return -1;
    }
}

/* D/count.K: its record count, once its run is this one. */
static int read_count(const struct scatter_opts *o, const struct dist_run *here,
                      const rf_engine_input *in, uint64_t task, uint64_t *count)
{
    char path[4096], why[128];
    char *text;
    size_t len, used;
    if (dist_path(&o->d, path, sizeof path, "count.%llu", (unsigned long long)task) != 0)
        return -1;
    snprintf(why, sizeof why, "run `riffle scatter --count --task=%llu` first",
             (unsigned long long)task);
    if (dist_read_small(path, why, &text, &len) != 0)
        return -1;
    struct dist_run file;
    const int p = dist_run_parse(text, len, DIST_STEP_COUNT, &file, &used);
    const int whole = p == 0 && used == len && file.task == task;
    free(text);
    if (p < 0)
        return -1;
    int r = -1;
    if (!whole)
        cli_error("%s: not the count of task %llu of this version of riffle: %s", path,
                  (unsigned long long)task, why);
    else if (check_count(path, &file, here, in) == 0) {
        *count = file.records;
        r = 0;
    }
    dist_run_free(&file);
    return r;
}

/* The inputs as `run` recorded them at the start of this step, still; 0, or
 * -1 after "FILE: file changed as we read it" (an edit that the library's
 * own check at the end of the step may have missed, between the stamps
 * above and its opening of the file). */
static int inputs_unchanged(const struct dist_run *run, const rf_engine_input *in, size_t n)
{
    struct dist_run now = *run;
    if (dist_run_stamp(&now, in, n) != 0)
        return -1;
    struct dist_diff d;
    const int same = dist_run_diff(run, &now, DIST_CMP_RUN, &d) == DIST_SAME;
    if (!same)
        cli_error("%s: file changed as we read it",
                  d.input < n ? cli_quote_file(in[d.input].name) : "an input");
    dist_run_free(&now);
    return same ? 0 : -1;
}

static int run_count(const struct scatter_opts *o, const rf_engine_options *eo,
                     const rf_engine_input *in, size_t n, struct dist_run *run)
{
    uint64_t records;
    rf_engine_error err;
    if (rf_engine_part_count(eo, in, n, (unsigned)o->d.task, (unsigned)o->d.tasks, &records, NULL,
                             &err) != RF_OK) {
        dist_engine_error(&err);
        return CLI_FAIL;
    }
    if (inputs_unchanged(run, in, n) != 0)
        return CLI_FAIL;
    char name[40];
    snprintf(name, sizeof name, "count.%llu", (unsigned long long)o->d.task);
    run->step = DIST_STEP_COUNT;
    run->records = records;
    return write_small(o, name, run, "", 0) == 0 ? CLI_OK : CLI_FAIL;
}

/* Task 0's D/header. */
static int write_header(const struct scatter_opts *o, const rf_engine_options *eo,
                        const rf_engine_input *in, size_t n, const struct dist_run *run)
{
    void *bytes;
    size_t len;
    rf_engine_error err;
    if (rf_engine_header(eo, in, n, &bytes, &len, &err) != RF_OK) {
        dist_engine_error(&err);
        return -1;
    }
    struct dist_run h = *run;
    h.step = DIST_STEP_HEADER;
    const int r = write_small(o, "header", &h, bytes ? bytes : "", len);
    free(bytes);
    return r;
}

/* Packets per task and round: 1 MiB, less when there are many tasks (a round
 * holds one frame per task, all about equally full: 256 MiB in all), but at
 * least 16 KiB (a frame's own 40 bytes stay negligible). */
static size_t round_room(uint64_t tasks)
{
    const size_t room = (size_t)((256u << 20) / tasks);
    return room > (1u << 20) ? (1u << 20) : room < (16u << 10) ? (16u << 10) : room;
}

/* Every packet file is open until the end: room for them under the soft
 * RLIMIT_NOFILE, raised towards the hard limit when needed.  Returns 0, or
 * -1 after a message. */
static int ensure_fds(uint64_t tasks)
{
    struct rlimit rl;
    const rlim_t need = (rlim_t)tasks + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        cli_error("%llu tasks need %llu open files, more than the limit of %llu",
                  (unsigned long long)tasks, (unsigned long long)need,
                  (unsigned long long)rl.rlim_max);
        return -1;
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        cli_error("cannot raise the open-file limit to %llu: %s", (unsigned long long)need,
                  strerror(errno));
        return -1;
    }
    return 0;
}

/* The rounds of s into the files (temporaries until committed). */
static int scatter_rounds(const struct scatter_opts *o, rf_engine_scatter *s,
                          struct dist_file *files, char (*paths)[4096])
{
    const unsigned tasks = (unsigned)o->d.tasks;
    const void **out = malloc(tasks * sizeof *out);
    size_t *len = malloc(tasks * sizeof *len);
    int done = 0, status = -1;
    if (!out || !len) {
        cli_error("memory exhausted");
        goto end;
    }
    while (!done) {
        rf_engine_error err;
        if (rf_engine_scatter_next(s, round_room(tasks), out, len, &done, &err) != RF_OK) {
            dist_engine_error(&err);
            goto end;
        }
        for (unsigned j = 0; j < tasks; j++) {
            const int e = len[j] ? dist_file_write(&files[j], out[j], len[j]) : 0;
            if (e) {
                cli_error("%s: %s", paths[j], strerror(e));
                goto end;
            }
        }
    }
    status = 0;
end:
    free(out);
    free(len);
    return status;
}

/* The first record number of this task's part (the counts before it), and
 * its own count when step 1 left it (else UINT64_MAX): every count of this
 * run. */
static int read_counts(const struct scatter_opts *o, const struct dist_run *run,
                       const rf_engine_input *in, uint64_t *first, uint64_t *mine)
{
    uint64_t count;
    *first = 0;
    *mine = UINT64_MAX;
    for (uint64_t i = 0; i < o->d.task; i++) {
        if (read_count(o, run, in, i, &count) != 0)
            return -1;
        *first += count;
    }
    char path[4096];
    if (dist_path(&o->d, path, sizeof path, "count.%llu", (unsigned long long)o->d.task) != 0)
        return -1;
    return access(path, F_OK) == 0 ? read_count(o, run, in, o->d.task, mine) : 0;
}

/* D/I.to.J for every J, opened, each starting with the run's text for its
 * owner. */
static int open_packets(const struct scatter_opts *o, const struct dist_run *run,
                        struct dist_file *files, char (*paths)[4096])
{
    struct dist_run p = *run;
    p.step = DIST_STEP_PACKETS;
    for (unsigned j = 0; j < (unsigned)o->d.tasks; j++) {
        char *text;
        size_t len;
        p.owner = j;
        if (dist_path(&o->d, paths[j], sizeof paths[j], "%llu.to.%u",
                      (unsigned long long)o->d.task, j) != 0 ||
            dist_run_text(&p, &text, &len) != 0)
            return -1;
        const int e = dist_file_open(&files[j], paths[j]) != 0 ? -1
                                                                : dist_file_write(&files[j], text, len);
        free(text);
        if (e > 0)
            cli_error("%s: %s", paths[j], strerror(e));
        if (e)
            return -1;
    }
    return 0;
}

/* --by-reference: every owner's frames are references. */
static int refer_all(rf_engine_scatter *s, unsigned tasks)
{
    for (unsigned j = 0; j < tasks; j++) {
        rf_engine_error err;
        if (rf_engine_scatter_refer(s, j, &err) != RF_OK) {
            dist_engine_error(&err);
            return -1;
        }
    }
    return 0;
}

/* D/I.to.J for every J, each the run's text for its owner and then, from
 * s (NULL for --direct: nothing), the rounds of its frames; task 0's
 * D/header; then, the inputs checked once more, all committed -- or, on
 * any failure, none.  The header before the packets: a gather that finds
 * task 0's packets finds the header too. */
static int write_packets(const struct scatter_opts *o, const rf_engine_options *eo,
                         const rf_engine_input *in, size_t n, const struct dist_run *run,
                         rf_engine_scatter *s)
{
    const unsigned tasks = (unsigned)o->d.tasks;
    struct dist_file *files = calloc(tasks, sizeof *files);
    char (*paths)[4096] = malloc(tasks * sizeof *paths);
    int status = CLI_FAIL;
    if (!files || !paths)
        cli_error("memory exhausted");
    else if (open_packets(o, run, files, paths) == 0 &&
             (!s || scatter_rounds(o, s, files, paths) == 0) &&
             inputs_unchanged(run, in, n) == 0 &&
             (o->d.task != 0 || write_header(o, eo, in, n, run) == 0)) {
        status = CLI_OK;
        for (unsigned j = 0; j < tasks && status == CLI_OK; j++)
            if (dist_file_commit(&files[j], paths[j]) != 0)
                status = CLI_FAIL;
    }
    if (files)
        for (unsigned j = 0; j < tasks; j++)
            dist_file_abort(&files[j]);
    free(files);
    free(paths);
    return status;
}

static int run_scatter(const struct scatter_opts *o, const rf_engine_options *eo,
                       const rf_engine_input *in, size_t n, struct dist_run *run)
{
    const unsigned task = (unsigned)o->d.task, tasks = (unsigned)o->d.tasks;
    uint64_t first, mine;
    if (read_counts(o, run, in, &first, &mine) != 0)
        return CLI_FAIL;
    rf_engine_scatter *s;
    rf_engine_error err;
    if (rf_engine_scatter_open(&s, eo, in, n, task, tasks, first, tasks, &err) != RF_OK) {
        dist_engine_error(&err);
        return CLI_FAIL;
    }
    uint64_t total;
    (void)rf_engine_scatter_records(s, &total);
    if (mine != UINT64_MAX && mine != total) {
        cli_error("part %u has %llu records, but %s/count.%u says %llu: the input changed since "
                  "it was counted", task, (unsigned long long)total, o->d.dir, task,
                  (unsigned long long)mine);
        rf_engine_scatter_close(s);
        return CLI_FAIL;
    }
    if (ensure_fds(tasks) != 0) {
        rf_engine_scatter_close(s);
        return CLI_FAIL;
    }
    if (o->by_ref && refer_all(s, tasks) != 0) {
        rf_engine_scatter_close(s);
        return CLI_FAIL;
    }
    run->first = first;
    run->records = total;
    run->refs = o->by_ref;
    const int status = write_packets(o, eo, in, n, run, s);
    rf_engine_scatter_close(s);
    return status;
}

/* --direct: the part's count (step 1's, whose run -- the inputs' stamps
 * included -- read_counts has checked; counted here when task I's step 1
 * was skipped), and D/I.to.J for every J holding the run's identity alone;
 * task 0's D/header. */
static int run_direct(const struct scatter_opts *o, const rf_engine_options *eo,
                      const rf_engine_input *in, size_t n, struct dist_run *run)
{
    const unsigned task = (unsigned)o->d.task, tasks = (unsigned)o->d.tasks;
    uint64_t first, total;
    rf_engine_error err;
    if (read_counts(o, run, in, &first, &total) != 0)
        return CLI_FAIL;
    if (total == UINT64_MAX &&
        rf_engine_part_count(eo, in, n, task, tasks, &total, NULL, &err) != RF_OK) {
        dist_engine_error(&err);
        return CLI_FAIL;
    }
    if (ensure_fds(tasks) != 0)
        return CLI_FAIL;
    run->first = first;
    run->records = total;
    run->direct = 1;
    return write_packets(o, eo, in, n, run, NULL);
}

/* This step's run: the options and the inputs as they are now; with a key
 * for step 2. */
static int this_run(const struct scatter_opts *o, const rf_engine_options *eo,
                    const rf_engine_input *in, size_t n, struct dist_run *run)
{
    memset(run, 0, sizeof *run);
    run->tasks = o->d.tasks;
    run->header = o->header;
    run->zero = o->delim == '\0';
    run->task = o->d.task;
    run->rng = eo->rng;
    if (dist_run_stamp(run, in, n) != 0)
        return -1;
    if (!o->count && dist_run_key(run, eo->key) != 0) {
        dist_run_free(run);
        return -1;
    }
    return 0;
}

/* The tasks read the inputs in place, at their own offsets, and
 * decompress none: a compressed input would be shuffled as bytes.  (A file
 * that cannot be opened is the engine's to report.) */
static int refuse_compressed(const struct scatter_opts *o)
{
    for (int i = 0; i < o->n_files; i++) {
        rf_compression c;
        if (strcmp(o->files[i], "-") != 0 && rf_compression_of_path(o->files[i], &c) == 0 &&
            c != RF_COMPRESSION_NONE) {
            cli_error("%s: %s-compressed input is not read by 'riffle scatter': decompress it "
                      "first (riffle reads it as it is)",
                      o->files[i], rf_compression_name(c));
            return -1;
        }
    }
    return 0;
}

/* --by-reference and --direct: each gather opens and maps the inputs by
 * their names (rf_engine_gather_inputs, _direct), so each must be a regular
 * file, named; --direct reads one.  Refused before any file is written. */
static int refuse_unreferable(const struct scatter_opts *o, const struct dist_run *run,
                              const rf_engine_input *in, size_t n)
{
    const char *opt = o->direct ? "--direct" : "--by-reference";
    if (o->direct && n != 1) {
        cli_error("--direct reads one FILE (each gather reads all of it), not %zu: scatter "
                  "without it, or give one file", n);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (in[i].fd < 0 && run->inputs[i].regular)
            continue;
        cli_error("%s: %s: %s needs regular files that every gather opens itself "
                  "(scatter without it to send the records)",
                  cli_quote_file(in[i].name),
                  in[i].fd >= 0 ? "standard input" : "not a regular file", opt);
        return -1;
    }
    return 0;
}

int cmd_scatter(int argc, char **argv)
{
    struct scatter_opts o;
    const int r = parse_scatter(argc, argv, &o);
    if (r != CLI_CONTINUE)
        return r;
    if (refuse_compressed(&o) != 0)
        return CLI_FAIL;
    (void)cleanup_init();
    rf_engine_options eo;
    rf_engine_options_init(&eo);
    eo.delim = o.delim;
    eo.header = o.header;
    if (!o.count && dist_key(&o.d, &eo) != 0)
        return CLI_FAIL;
    size_t n;
    rf_engine_input *in = shuf_file_inputs(o.files, o.n_files, &n);
    struct dist_run run;
    int status = CLI_FAIL;
    if (!in)
        cli_error("memory exhausted");
    else if (this_run(&o, &eo, in, n, &run) == 0) {
        if ((o.by_ref || o.direct) && refuse_unreferable(&o, &run, in, n) != 0)
            status = CLI_FAIL;
        else if (o.count)
            status = run_count(&o, &eo, in, n, &run);
        else
            status = o.direct ? run_direct(&o, &eo, in, n, &run) : run_scatter(&o, &eo, in, n, &run);
        dist_run_free(&run);
    }
    sodium_memzero(eo.key, sizeof eo.key);
    free(in);
    return status;
}
