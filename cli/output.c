/*
 * output.c -- standard output, -o FILE and --split parts (output.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cleanup.h"
#include "output.h"
#include "same_file.h"
#include "shuf.h"

/* Output buffer: 1 MiB makes a thousand write(2) calls per GB, so their cost
 * disappears against the gather; it is also the usual pipe-max-size.  One
 * buffer serves every split part in turn: parts are written one after
 * another, never interleaved. */
#define OUT_BUFFER ((size_t)1 << 20)

typedef unsigned __int128 u128;

/* ------------------------------------------------------------------------ */
/* --split=SPEC                                                             */
/* ------------------------------------------------------------------------ */

static int bad_split(const char *spec, const char *why)
{
    if (why)
        return cli_usage(NULL, "invalid split %s: %s", cli_quote(spec), why);
    return cli_usage(NULL, "invalid split %s", cli_quote(spec));
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Decimal digits from *p (at least one) into *v; advances *p.  Returns 0, or
 * -1 for no digit or overflow. */
static int take_u64(const char **p, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    if (!is_digit(*s))
        return -1;
    for (; is_digit(*s); s++) {
        const unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *p = s;
    *v = x;
    return 0;
}

/* "12", "12.5", "0.125" followed by '%' and the end of the token, into
 * SPLIT_PERCENT_UNITs (10^-9 %).  Returns 0 or -1. */
static int take_percent(const char *s, const char *end, uint64_t *units)
{
    uint64_t whole, frac = 0;
    if (take_u64(&s, &whole) != 0 || whole > 100)
        return -1;
    if (*s == '.') {
        s++;
        uint64_t scale = SPLIT_PERCENT_UNIT;
        if (!is_digit(*s))
            return -1;
        for (; is_digit(*s); s++) {
            if (scale == 1)
                return -1; /* more than 9 decimals */
            scale /= 10;
            frac += (uint64_t)(*s - '0') * scale;
        }
    }
    if (*s != '%' || s + 1 != end)
        return -1;
    *units = whole * SPLIT_PERCENT_UNIT + frac;
    return 0;
}

/* One token [s, end) of a counts list: digits, or '*' if it may be the rest. */
static int take_count(const char *s, const char *end, int last, uint64_t *v, int *rest)
{
    if (last && *s == '*' && s + 1 == end) {
        *rest = 1;
        *v = 0;
        return 0;
    }
    return take_u64(&s, v) == 0 && s == end ? 0 : -1;
}

static const char *token_end(const char *s)
{
    const char *c = strchr(s, ',');
    return c ? c : s + strlen(s);
}

static int percent_sum_error(const char *spec, uint64_t sum)
{
    char why[96];
    char frac[16];
    snprintf(frac, sizeof frac, "%09llu", (unsigned long long)(sum % SPLIT_PERCENT_UNIT));
    size_t n = strlen(frac);
    while (n > 0 && frac[n - 1] == '0')
        frac[--n] = '\0';
    snprintf(why, sizeof why, "the percentages add up to %llu%s%s%%, not 100%%",
             (unsigned long long)(sum / SPLIT_PERCENT_UNIT), n ? "." : "", frac);
    return bad_split(spec, why);
}

static int parse_values(struct cli_split *s, const char *spec)
{
    const char *p = spec;
    uint64_t sum = 0;
    for (size_t i = 0; i < s->parts; i++) {
        const char *end = token_end(p);
        const int last = i + 1 == s->parts;
        int bad;
        if (s->kind == SPLIT_PERCENT)
            bad = take_percent(p, end, &s->value[i]);
        else
            bad = take_count(p, end, last, &s->value[i], &s->rest);
        if (bad)
            return bad_split(spec, NULL);
        if (sum > UINT64_MAX - s->value[i])
            return bad_split(spec, "the counts add up to more than 2^64-1");
        sum += s->value[i];
        p = end + 1;
    }
    if (s->kind == SPLIT_PERCENT && sum != SPLIT_HUNDRED)
        return percent_sum_error(spec, sum);
    return CLI_CONTINUE;
}

int split_parse(struct cli_split *s, const char *spec)
{
    split_free(s);
    size_t parts = 1;
    for (const char *c = spec; *c; c++)
        parts += *c == ',';
    if (parts > SPLIT_MAX_PARTS)
        return bad_split(spec, "more than 4096 parts");
    if (parts == 1 && is_digit(*spec) && !strchr(spec, '%')) {
        const char *p = spec;
        uint64_t n = 0;
        if (take_u64(&p, &n) != 0 || *p)
            return bad_split(spec, NULL);
        if (n == 0)
            return bad_split(spec, "no parts");
        if (n > SPLIT_MAX_PARTS)
            return bad_split(spec, "more than 4096 parts");
        s->kind = SPLIT_EQUAL;
        s->parts = (size_t)n;
        return CLI_CONTINUE;
    }
    s->kind = strchr(spec, '%') ? SPLIT_PERCENT : SPLIT_COUNTS;
    s->parts = parts;
    s->value = calloc(parts, sizeof *s->value);
    if (!s->value) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    return parse_values(s, spec);
}

void split_free(struct cli_split *s)
{
    if (s->names)
        for (size_t i = 0; i < s->parts; i++)
            free(s->names[i]);
    free(s->names);
    free(s->value);
    s->names = NULL;
    s->value = NULL;
}

/* ------------------------------------------------------------------------ */
/* --output-pattern=PATTERN                                                 */
/* ------------------------------------------------------------------------ */

static int bad_pattern(const char *pattern, const char *why)
{
    return cli_usage(NULL, "invalid output pattern %s: %s", cli_quote(pattern), why);
}

/* A pattern's one conversion: where it is and how to print the number. */
struct conversion {
    size_t at, len; /* the "%03d" in the pattern */
    unsigned width;
    char pad;
};

/* Find the single %d of pattern.  Returns 0, or -1 with *why set. */
static int find_conversion(const char *pattern, struct conversion *cv, const char **why)
{
    int found = 0;
    for (const char *p = pattern; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        const char *q = p + 1;
        cv->pad = *q == '0' ? '0' : ' ';
        q += *q == '0';
        uint64_t w = 0;
        if (is_digit(*q) && (take_u64(&q, &w) != 0 || w > 20)) {
            *why = "the width of %d is at most 20";
            return -1;
        }
        if (*q != 'd') {
            *why = "the only conversions are %d (with an optional width, e.g. %03d) and %%";
            return -1;
        }
        if (found++) {
            *why = "more than one %d";
            return -1;
        }
        cv->at = (size_t)(p - pattern);
        cv->len = (size_t)(q + 1 - p);
        cv->width = (unsigned)w;
        p = q;
    }
    if (!found) {
        *why = "no %d (or, without any %, a comma-separated list of names)";
        return -1;
    }
    return 0;
}

/* Append src[0..len) to dst at *k, turning "%%" into "%". */
static void put_literal(char *dst, size_t *k, const char *src, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        dst[(*k)++] = src[i];
        if (src[i] == '%' && i + 1 < len && src[i + 1] == '%')
            i++;
    }
}

static char *pattern_name(const char *pattern, const struct conversion *cv, size_t number)
{
    const size_t plen = strlen(pattern);
    char *name = malloc(plen + 48);
    if (!name)
        return NULL;
    char digits[24];
    size_t nd = 0;
    do {
        digits[nd++] = (char)('0' + number % 10);
        number /= 10;
    } while (number);
    size_t k = 0;
    put_literal(name, &k, pattern, cv->at);
    for (size_t i = nd; i < cv->width; i++)
        name[k++] = cv->pad;
    while (nd)
        name[k++] = digits[--nd];
    put_literal(name, &k, pattern + cv->at + cv->len, plen - cv->at - cv->len);
    name[k] = '\0';
    return name;
}

static int names_from_pattern(struct cli_split *s, const char *pattern)
{
    struct conversion cv;
    const char *why = NULL;
    if (find_conversion(pattern, &cv, &why) != 0)
        return bad_pattern(pattern, why);
    for (size_t i = 0; i < s->parts; i++)
        if (!(s->names[i] = pattern_name(pattern, &cv, i))) {
            cli_error("memory exhausted");
            return CLI_FAIL;
        }
    return CLI_CONTINUE;
}

static int names_from_list(struct cli_split *s, const char *list)
{
    size_t count = 1;
    for (const char *c = list; *c; c++)
        count += *c == ',';
    if (count != s->parts) {
        char why[96];
        snprintf(why, sizeof why, "%zu name%s for %zu part%s", count, count == 1 ? "" : "s",
                 s->parts, s->parts == 1 ? "" : "s");
        return bad_pattern(list, why);
    }
    const char *p = list;
    for (size_t i = 0; i < s->parts; i++) {
        const char *end = token_end(p);
        const size_t len = (size_t)(end - p);
        if (len == 0)
            return bad_pattern(list, "an empty name");
        if (!(s->names[i] = malloc(len + 1))) {
            cli_error("memory exhausted");
            return CLI_FAIL;
        }
        memcpy(s->names[i], p, len);
        s->names[i][len] = '\0';
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->names[j], s->names[i]) == 0)
                return bad_pattern(list, "a name given twice");
        p = end + 1;
    }
    return CLI_CONTINUE;
}

int split_set_pattern(struct cli_split *s, const char *pattern)
{
    s->names = calloc(s->parts, sizeof *s->names);
    if (!s->names) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    if (strchr(pattern, '%'))
        return names_from_pattern(s, pattern);
    return names_from_list(s, pattern);
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */
/* ------------------------------------------------------------------------ */

/* Guard a's temporary against signals, with cleanup.h (the library's own
 * guard covers one file, a split needs several).  No temporary when the
 * target is written in place (a device, a FIFO). */
static int guard_file(const rf_atomic_file *a, int *slot)
{
    *slot = -1;
    const char *tmp = rf_atomic_temp_path(a);
    if (!tmp)
        return 0;
    *slot = cleanup_add(tmp);
    return *slot >= 0 ? 0 : ENAMETOOLONG;
}

/* rf_atomic_open, its temporary registered before any signal can see it
 * unregistered.  Returns 0 or an errno value (nothing left behind). */
static int open_guarded(rf_atomic_file *a, const char *name, int *slot)
{
    sigset_t old;
    cleanup_hold(&old);
    int e = cli_named_temps() ? rf_atomic_open_named(a, name) : rf_atomic_open(a, name);
    if (!e && (e = guard_file(a, slot)) != 0)
        rf_atomic_abort(a);
    cleanup_release(&old);
    return e;
}

static void unguard_abort(rf_atomic_file *a, int *slot)
{
    rf_atomic_abort(a);
    cleanup_remove(*slot);
    *slot = -1;
}

/* Every part is an open file until the end: make room under the soft
 * RLIMIT_NOFILE (the hard limit allows it on usual systems). */
static int ensure_fds(size_t parts)
{
    struct rlimit rl;
    const rlim_t need = (rlim_t)parts + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
        return 0;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        cli_error("%zu output files exceed the limit of open files (%llu)", parts,
                  (unsigned long long)rl.rlim_max);
        return -1;
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        cli_error("cannot raise the limit of open files: %s", strerror(errno));
        return -1;
    }
    return 0;
}

static void abort_parts(struct cli_output *o, size_t from)
{
    for (size_t i = from; i < o->split->parts; i++)
        unguard_abort(&o->parts[i].file, &o->parts[i].guard);
}

static void free_all(struct cli_output *o)
{
    free(o->buf);
    free(o->parts);
    free(o->bounds);
    free(o->header);
    o->buf = NULL;
    o->parts = NULL;
    o->bounds = NULL;
    o->header = NULL;
}

static int open_parts(struct cli_output *o, const struct cli_split *s)
{
    o->split = s;
    size_t a, b;
    if (same_file_pair(s->names, s->parts, &a, &b)) {
        cli_error("%s and %s are the same file", cli_quote(s->names[a]), cli_quote(s->names[b]));
        return -1;
    }
    if (ensure_fds(s->parts) != 0)
        return -1;
    o->parts = calloc(s->parts, sizeof *o->parts);
    if (!o->parts) {
        cli_error("memory exhausted");
        return -1;
    }
    for (size_t i = 0; i < s->parts; i++) {
        struct cli_output_part *p = &o->parts[i];
        const int e = open_guarded(&p->file, s->names[i], &p->guard);
        if (e) {
            cli_error("%s: %s", s->names[i], strerror(e));
            for (size_t j = 0; j < i; j++)
                unguard_abort(&o->parts[j].file, &o->parts[j].guard);
            return -1;
        }
    }
    rf_writer_init(&o->w, o->parts[0].file.fd, o->buf, OUT_BUFFER);
    return 0;
}

static int open_single(struct cli_output *o, const char *name)
{
    o->name = name;
    int fd = STDOUT_FILENO;
    if (name) {
        const int e = open_guarded(&o->file, name, &o->guard);
        if (e) {
            cli_error("%s: %s", name, strerror(e));
            return -1;
        }
        fd = o->file.fd;
    }
    rf_writer_init(&o->w, fd, o->buf, OUT_BUFFER);
    return 0;
}

int output_open(struct cli_output *o, const struct shuf_opts *opts)
{
    memset(o, 0, sizeof *o);
    o->guard = -1;
    o->buf = malloc(OUT_BUFFER);
    if (!o->buf) {
        cli_error("memory exhausted");
        return -1;
    }
    const int r = opts->split.kind != SPLIT_NONE ? open_parts(o, &opts->split)
                                                  : open_single(o, opts->output);
    if (r != 0)
        free_all(o);
    return r;
}

int output_splitting(const struct cli_output *o)
{
    return o->split != NULL;
}

/* ------------------------------------------------------------------------ */
/* Planning                                                                 */
/* ------------------------------------------------------------------------ */

static void plan_equal(uint64_t *b, size_t parts, uint64_t n)
{
    const uint64_t q = n / parts, r = n % parts;
    for (size_t i = 0; i <= parts; i++)
        b[i] = i * q + (i < r ? i : r);
}

/* b(i) = round(n * c(i) / 100), halves up, exactly in 128 bits (n < 2^64,
 * c <= 10^11 < 2^37). */
static void plan_percent(uint64_t *b, const struct cli_split *s, uint64_t n)
{
    u128 cum = 0;
    b[0] = 0;
    for (size_t i = 0; i < s->parts; i++) {
        cum += s->value[i];
        b[i + 1] = (uint64_t)(((u128)n * cum * 2 + SPLIT_HUNDRED) / (2 * (u128)SPLIT_HUNDRED));
    }
}

static int plan_counts(uint64_t *b, const struct cli_split *s, uint64_t n)
{
    uint64_t cum = 0; /* no overflow: split_parse checked the sum */
    b[0] = 0;
    for (size_t i = 0; i < s->parts; i++) {
        cum += s->value[i];
        b[i + 1] = cum;
    }
    if (s->rest && cum > n) {
        cli_error("the --split counts add up to %llu, more than the %llu records output",
                  (unsigned long long)cum, (unsigned long long)n);
        return -1;
    }
    if (!s->rest && cum != n) {
        cli_error("the --split counts add up to %llu, but %llu records are output",
                  (unsigned long long)cum, (unsigned long long)n);
        return -1;
    }
    b[s->parts] = n;
    return 0;
}

int output_set_total(struct cli_output *o, uint64_t n)
{
    o->total = n;
    if (!o->split)
        return 0;
    const struct cli_split *s = o->split;
    free(o->bounds);
    o->bounds = malloc((s->parts + 1) * sizeof *o->bounds);
    if (!o->bounds) {
        cli_error("memory exhausted");
        return -1;
    }
    if (s->kind == SPLIT_EQUAL)
        plan_equal(o->bounds, s->parts, n);
    else if (s->kind == SPLIT_PERCENT)
        plan_percent(o->bounds, s, n);
    else if (plan_counts(o->bounds, s, n) != 0)
        return -1;
    o->planned = 1;
    return 0;
}

int output_set_header(struct cli_output *o, const void *bytes, size_t len)
{
    if (len == 0)
        return 0; /* bytes may be NULL */
    if (!o->split) {
        rf_writer_put(&o->w, bytes, len);
        return 0;
    }
    free(o->header);
    o->header = malloc(len ? len : 1);
    if (!o->header) {
        cli_error("memory exhausted");
        return -1;
    }
    memcpy(o->header, bytes, len);
    o->header_len = len;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* Make part i current (i >= cur): flush the current part, point the writer
 * at part i and start it with the header.  A failed flush keeps the failing
 * part current (its name goes in the message) and the error in the writer. */
static int enter(struct cli_output *o, size_t i)
{
    if (i != o->cur) {
        if (rf_writer_flush(&o->w) != 0)
            return o->w.err;
        rf_writer_init(&o->w, o->parts[i].file.fd, o->buf, OUT_BUFFER);
        o->cur = i;
    }
    if (!o->parts[i].started) {
        o->parts[i].started = 1;
        if (o->header_len)
            rf_writer_put(&o->w, o->header, o->header_len);
    }
    return o->w.err;
}

/* The part that takes record `done`: the first one not yet full (or the
 * last). */
static size_t part_of_next(const struct cli_output *o)
{
    size_t j = o->cur;
    while (j + 1 < o->split->parts && o->bounds[j + 1] <= o->done)
        j++;
    return j;
}

static int settle(struct cli_output *o)
{
    const size_t j = part_of_next(o);
    for (size_t i = o->cur; i <= j; i++) {
        const int e = enter(o, i);
        if (e)
            return e;
    }
    return 0;
}

/* A caller broke the protocol (records before output_set_total, or more than
 * planned): fail the output rather than write a wrong split. */
static int misuse(struct cli_output *o, const char *what)
{
    if (!o->err) {
        cli_error("internal error: %s", what);
        o->err = -1;
    }
    if (!o->w.err)
        o->w.err = EINVAL;
    return EINVAL;
}

rf_writer *output_writer(struct cli_output *o)
{
    if (o->split && !o->w.err) {
        if (!o->planned)
            misuse(o, "split output written before its size was known");
        else
            settle(o);
    }
    return &o->w;
}

uint64_t output_room(const struct cli_output *o)
{
    if (!o->split)
        return UINT64_MAX;
    if (!o->planned)
        return 0;
    return o->bounds[part_of_next(o) + 1] - o->done;
}

int output_advance(struct cli_output *o, uint64_t records)
{
    if (o->split && records > output_room(o))
        return misuse(o, "more records written than planned");
    o->done += records;
    if (o->split && !o->w.err)
        settle(o);
    return o->w.err;
}

int output_records(struct cli_output *o, const rf_records *r, const uint64_t *offs, size_t count)
{
    while (count > 0) {
        rf_writer *w = output_writer(o);
        if (w->err)
            return w->err;
        const uint64_t room = output_room(o);
        if (room == 0)
            return misuse(o, "more records written than planned");
        const size_t k = room < count ? (size_t)room : count;
        const int werr = rf_records_write(r, offs, k, w);
        if (werr)
            return werr;
        const int e = output_advance(o, k);
        if (e)
            return e;
        offs += k;
        count -= k;
    }
    return o->w.err;
}

/* ------------------------------------------------------------------------ */
/* Closing                                                                  */
/* ------------------------------------------------------------------------ */

static int close_single(struct cli_output *o)
{
    int e = rf_writer_flush(&o->w);
    int status = CLI_OK;
    if (o->name) {
        if (e) {
            unguard_abort(&o->file, &o->guard);
        } else {
            /* Unguarded after the rename: a signal in between unlinks a name
             * that no longer exists, which is harmless. */
            const int c = rf_atomic_commit(&o->file);
            cleanup_remove(o->guard);
            if (c) {
                cli_error("%s: %s", o->name, strerror(c));
                status = CLI_FAIL;
            }
        }
    } else if (!e && close(STDOUT_FILENO) != 0 && errno != EBADF) {
        e = errno;
    }
    free_all(o);
    /* EPIPE included: SIGPIPE is ignored (it would have ended the process),
     * and shuf then says "write error: Broken pipe" too. */
    if (e) {
        cli_error("write error: %s", strerror(e));
        return CLI_FAIL;
    }
    return status;
}

/* Write every part to the end and fsync them all, so that the renames that
 * follow are the only step left.  Returns 0 or an errno value (reported). */
static int finish_parts(struct cli_output *o)
{
    const size_t parts = o->split->parts;
    int e = o->w.err;
    if (!e && o->done != o->total)
        return misuse(o, "fewer records written than planned");
    for (size_t i = o->cur; i < parts && !e; i++)
        e = enter(o, i);
    if (!e)
        e = rf_writer_flush(&o->w);
    if (e) {
        if (o->err >= 0)
            cli_error("%s: %s", o->split->names[o->cur], strerror(e));
        return e;
    }
    for (size_t i = 0; i < parts; i++) {
        const rf_atomic_file *a = &o->parts[i].file;
        if (rf_atomic_staged(a) && fsync(a->fd) != 0) {
            e = errno;
            cli_error("%s: %s", o->split->names[i], strerror(e));
            return e;
        }
    }
    return 0;
}

static int close_parts(struct cli_output *o)
{
    const size_t parts = o->split->parts;
    if (!o->planned && !o->err)
        misuse(o, "split output closed before its size was known");
    if (o->err || finish_parts(o) != 0) {
        abort_parts(o, 0);
        free_all(o);
        return CLI_FAIL;
    }
    for (size_t i = 0; i < parts; i++) {
        const int e = rf_atomic_commit(&o->parts[i].file);
        cleanup_remove(o->parts[i].guard);
        o->parts[i].guard = -1;
        if (e) {
            cli_error("%s: %s", o->split->names[i], strerror(e));
            if (i > 0)
                cli_error("%zu of %zu parts were already in place", i, parts);
            abort_parts(o, i + 1);
            free_all(o);
            return CLI_FAIL;
        }
    }
    free_all(o);
    return CLI_OK;
}

int output_close(struct cli_output *o)
{
    return o->split ? close_parts(o) : close_single(o);
}

void output_abort(struct cli_output *o)
{
    if (o->split && o->parts)
        abort_parts(o, 0);
    else if (o->name)
        unguard_abort(&o->file, &o->guard);
    free_all(o);
}
