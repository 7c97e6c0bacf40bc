/* dist_run.c -- a run's identity in the file transport's files
 * (dist_run.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "cli.h"
#include "dist_run.h"
#include "riffle_io.h"

#define RUN_MAGIC "riffle run 1"

static const char *const step_names[] = {"count", "packets", "header"};

int dist_run_stamp(struct dist_run *r, const rf_engine_input *in, size_t n)
{
    r->inputs = calloc(n ? n : 1, sizeof *r->inputs);
    r->n_inputs = n;
    if (!r->inputs) {
        cli_error("memory exhausted");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        rf_file_stamp s;
        const int e = in[i].fd >= 0 ? rf_file_stamp_fd(in[i].fd, &s)
                                    : rf_file_stamp_path(in[i].name, &s);
        if (e) {
            cli_error("%s: %s", cli_quote_file(in[i].name), strerror(e));
            dist_run_free(r);
            return -1;
        }
        struct dist_input_id *id = &r->inputs[i];
        id->regular = s.regular;
        if (s.regular) {
            id->size = (uint64_t)s.size;
            id->ino = s.ino;
            id->mtime_sec = s.mtime_sec;
            id->mtime_nsec = s.mtime_nsec;
        }
    }
    return 0;
}

int dist_run_key(struct dist_run *r, const uint8_t key[RF_KEY_BYTES])
{
    /* BLAKE2b's personalisation (RFC 7693 sec. 2.5) keeps this hash apart
     * from any other use of the same key. */
    static const unsigned char personal[crypto_generichash_blake2b_PERSONALBYTES] =
        "riffle run key 1";
    static const unsigned char salt[crypto_generichash_blake2b_SALTBYTES] = {0};
    if (sodium_init() < 0 ||
        crypto_generichash_blake2b_salt_personal(r->key, sizeof r->key, key, RF_KEY_BYTES, NULL,
                                                 0, salt, personal) != 0) {
        cli_error("cannot hash the key: libsodium failed");
        return -1;
    }
    return 0;
}

void dist_run_free(struct dist_run *r)
{
    free(r->inputs);
    r->inputs = NULL;
    r->n_inputs = 0;
}

/* ---- writing ---- */

static void put_input(FILE *f, const struct dist_input_id *id)
{
    if (!id->regular)
        fputs("input stream\n", f);
    else
        fprintf(f, "input file %" PRIu64 " %" PRId64 ".%09ld %" PRIu64 "\n", id->size,
                id->mtime_sec, id->mtime_nsec, id->ino);
}

static void put_run(FILE *f, const struct dist_run *r)
{
    fprintf(f, RUN_MAGIC "\nstep %s\ntasks %" PRIu64 "\nheader %" PRIu64 "\ndelimiter %s\n",
            step_names[r->step], r->tasks, r->header, r->zero ? "nul" : "newline");
    fprintf(f, "inputs %zu\n", r->n_inputs);
    for (size_t i = 0; i < r->n_inputs; i++)
        put_input(f, &r->inputs[i]);
    if (r->step != DIST_STEP_COUNT) {
        char hex[2 * DIST_KEY_HASH + 1];
        sodium_bin2hex(hex, sizeof hex, r->key, sizeof r->key);
        fprintf(f, "rng %s\nkey %s\n", rf_rng_kind_name(r->rng), hex);
    }
    fprintf(f, "task %" PRIu64 "\n", r->task);
    if (r->step == DIST_STEP_PACKETS)
        fprintf(f, "owner %" PRIu64 "\nfirst %" PRIu64 "\n%s%s", r->owner, r->first,
                r->refs ? "references\n" : "", r->direct ? "direct\n" : "");
    if (r->step != DIST_STEP_HEADER)
        fprintf(f, "records %" PRIu64 "\n", r->records);
    fputs("end\n", f);
}

int dist_run_text(const struct dist_run *r, char **text, size_t *len)
{
    *text = NULL;
    FILE *f = open_memstream(text, len);
    if (!f) {
        cli_error("memory exhausted");
        return -1;
    }
    put_run(f, r);
    const int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(*text);
        *text = NULL;
        cli_error("memory exhausted");
        return -1;
    }
    return 0;
}

/* ---- reading ---- */

struct cursor {
    const char *p, *end;
};

/* The next line "NAME VALUE" (VALUE may be empty for a bare NAME) into
 * val[0..*vlen).  1 when it is there, else 0. */
static int take_line(struct cursor *c, const char *name, const char **val, size_t *vlen)
{
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    const size_t n = strlen(name);
    if (!nl || (size_t)(nl - c->p) < n || memcmp(c->p, name, n) != 0)
        return 0;
    const char *v = c->p + n;
    if (v < nl && *v++ != ' ')
        return 0;
    *val = v;
    *vlen = (size_t)(nl - v);
    c->p = nl + 1;
    return 1;
}

/* Decimal digits only, no sign, no overflow. */
static int parse_dec(const char *s, size_t n, uint64_t *v)
{
    if (n == 0 || n > 20)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || x > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
            return 0;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return 1;
}

static int take_u64(struct cursor *c, const char *name, uint64_t *v)
{
    const char *s;
    size_t n;
    return take_line(c, name, &s, &n) && parse_dec(s, n, v);
}

static int take_word(struct cursor *c, const char *name, const char *word)
{
    const char *s;
    size_t n;
    return take_line(c, name, &s, &n) && n == strlen(word) && memcmp(s, word, n) == 0;
}

/* "SIZE SECONDS.NANOSECONDS INODE" */
static int parse_file_id(const char *s, size_t n, struct dist_input_id *id)
{
    const char *end = s + n, *sp1 = memchr(s, ' ', n);
    const char *dot = sp1 ? memchr(sp1, '.', (size_t)(end - sp1)) : NULL;
    const char *sp2 = dot ? memchr(dot, ' ', (size_t)(end - dot)) : NULL;
    uint64_t sec, nsec;
    if (!sp2 || !parse_dec(s, (size_t)(sp1 - s), &id->size) ||
        !parse_dec(sp1 + 1, (size_t)(dot - sp1 - 1), &sec) || sec > INT64_MAX ||
        dot + 10 != sp2 || !parse_dec(dot + 1, 9, &nsec) ||
        !parse_dec(sp2 + 1, (size_t)(end - sp2 - 1), &id->ino))
        return 0;
    id->regular = 1;
    id->mtime_sec = (int64_t)sec;
    id->mtime_nsec = (long)nsec;
    return 1;
}

static int take_input(struct cursor *c, struct dist_input_id *id)
{
    const char *s;
    size_t n;
    if (!take_line(c, "input", &s, &n))
        return 0;
    if (n == 6 && memcmp(s, "stream", 6) == 0) {
        *id = (struct dist_input_id){0};
        return 1;
    }
    return n > 5 && memcmp(s, "file ", 5) == 0 && parse_file_id(s + 5, n - 5, id);
}

static int take_inputs(struct cursor *c, struct dist_run *r)
{
    uint64_t n;
    /* every input takes a line of at least 13 bytes: a count beyond that
     * is garbage, not a reason to allocate */
    if (!take_u64(c, "inputs", &n) || n > (uint64_t)(c->end - c->p) / 13)
        return 0;
    r->inputs = calloc(n ? (size_t)n : 1, sizeof *r->inputs);
    if (!r->inputs)
        return -1;
    r->n_inputs = (size_t)n;
    for (size_t i = 0; i < r->n_inputs; i++)
        if (!take_input(c, &r->inputs[i]))
            return 0;
    return 1;
}

static int take_key(struct cursor *c, struct dist_run *r)
{
    const char *s;
    size_t n, bin;
    char hex[2 * DIST_KEY_HASH + 1];
    if (!take_line(c, "rng", &s, &n) || n >= sizeof hex)
        return 0;
    memcpy(hex, s, n);
    hex[n] = '\0';
    if (rf_rng_kind_parse(hex, &r->rng) != RF_OK || !take_line(c, "key", &s, &n) ||
        n != 2 * DIST_KEY_HASH)
        return 0;
    return sodium_hex2bin(r->key, sizeof r->key, s, n, NULL, &bin, NULL) == 0 &&
           bin == sizeof r->key;
}

/* The lines after the magic; 1, 0 (not a run of that step), -1 (memory). */
static int take_run(struct cursor *c, enum dist_step step, struct dist_run *r)
{
    const char *s;
    size_t n;
    if (!take_word(c, "step", step_names[step]) || !take_u64(c, "tasks", &r->tasks) ||
        !take_u64(c, "header", &r->header) || !take_line(c, "delimiter", &s, &n))
        return 0;
    if (n == 3 && memcmp(s, "nul", 3) == 0)
        r->zero = 1;
    else if (n != 7 || memcmp(s, "newline", 7) != 0)
        return 0;
    const int in = take_inputs(c, r);
    if (in != 1)
        return in;
    if (step != DIST_STEP_COUNT && !take_key(c, r))
        return 0;
    if (!take_u64(c, "task", &r->task))
        return 0;
    if (step == DIST_STEP_PACKETS &&
        (!take_u64(c, "owner", &r->owner) || !take_u64(c, "first", &r->first)))
        return 0;
    if (step == DIST_STEP_PACKETS && take_line(c, "references", &s, &n)) {
        if (n != 0)
            return 0;
        r->refs = 1;
    }
    if (step == DIST_STEP_PACKETS && take_line(c, "direct", &s, &n)) {
        if (n != 0)
            return 0;
        r->direct = 1;
    }
    if (step != DIST_STEP_HEADER && !take_u64(c, "records", &r->records))
        return 0;
    return take_line(c, "end", &s, &n) && n == 0;
}

int dist_run_parse(const void *bytes, size_t len, enum dist_step step, struct dist_run *r,
                   size_t *used)
{
    memset(r, 0, sizeof *r);
    r->step = step;
    struct cursor c = {bytes, (const char *)bytes + len};
    const char *s;
    size_t n;
    int ok = take_line(&c, RUN_MAGIC, &s, &n) && n == 0;
    if (ok)
        ok = take_run(&c, step, r);
    if (ok != 1) {
        dist_run_free(r);
        if (ok < 0)
            cli_error("memory exhausted");
        return ok < 0 ? -1 : 1;
    }
    *used = (size_t)(c.p - (const char *)bytes);
    return 0;
}

/* ---- comparing ---- */

static enum dist_diff_kind option(struct dist_diff *d, const char *what, const char *a,
                                  const char *b)
{
    d->kind = DIST_DIFF_OPTION;
    snprintf(d->what, sizeof d->what, "%s", what);
    snprintf(d->a, sizeof d->a, "%s", a);
    snprintf(d->b, sizeof d->b, "%s", b);
    return d->kind;
}

static enum dist_diff_kind option_u64(struct dist_diff *d, const char *what, uint64_t a,
                                      uint64_t b)
{
    char sa[48], sb[48];
    snprintf(sa, sizeof sa, "%s=%" PRIu64, what, a);
    snprintf(sb, sizeof sb, "%s=%" PRIu64, what, b);
    return option(d, what, sa, sb);
}

static void input_value(const struct dist_input_id *id, int field, char *buf, size_t len)
{
    if (field == 0)
        /* read as "counted with input 1 (type regular file), but F has
         * type stream (a pipe or device)" */
        snprintf(buf, len, "type %s", id->regular ? "regular file" : "stream (a pipe or device)");
    else if (field == 1)
        snprintf(buf, len, "size %" PRIu64, id->size);
    else if (field == 2)
        snprintf(buf, len, "inode %" PRIu64, id->ino);
    else {
        const time_t t = (time_t)id->mtime_sec;
        struct tm tm;
        char when[32];
        if (!gmtime_r(&t, &tm) || !strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm))
            snprintf(when, sizeof when, "%" PRId64, id->mtime_sec);
        snprintf(buf, len, "modified %s.%09ld UTC", when, id->mtime_nsec);
    }
}

/* Which of an input's fields differ first (0 kind, 1 size, 2 inode, 3
 * mtime), or -1. */
static int input_field(const struct dist_input_id *a, const struct dist_input_id *b)
{
    if (a->regular != b->regular)
        return 0;
    if (!a->regular)
        return -1;
    if (a->size != b->size)
        return 1;
    if (a->ino != b->ino)
        return 2;
    return a->mtime_sec != b->mtime_sec || a->mtime_nsec != b->mtime_nsec ? 3 : -1;
}

static enum dist_diff_kind diff_inputs(const struct dist_run *a, const struct dist_run *b,
                                       struct dist_diff *d)
{
    d->kind = DIST_DIFF_INPUTS;
    d->input = SIZE_MAX;
    if (a->n_inputs != b->n_inputs) {
        snprintf(d->what, sizeof d->what, "inputs");
        snprintf(d->a, sizeof d->a, "%zu input%s", a->n_inputs, a->n_inputs == 1 ? "" : "s");
        snprintf(d->b, sizeof d->b, "%zu", b->n_inputs);
        return d->kind;
    }
    for (size_t i = 0; i < a->n_inputs; i++) {
        const int f = input_field(&a->inputs[i], &b->inputs[i]);
        if (f < 0)
            continue;
        d->input = i;
        snprintf(d->what, sizeof d->what, "input %zu", i + 1);
        input_value(&a->inputs[i], f, d->a, sizeof d->a);
        input_value(&b->inputs[i], f, d->b, sizeof d->b);
        return d->kind;
    }
    return d->kind = DIST_SAME;
}

enum dist_diff_kind dist_run_diff(const struct dist_run *a, const struct dist_run *b, int cmp,
                                  struct dist_diff *d)
{
    memset(d, 0, sizeof *d);
    if ((cmp & DIST_CMP_RUN) && a->tasks != b->tasks)
        return option_u64(d, "--tasks", a->tasks, b->tasks);
    if ((cmp & DIST_CMP_RUN) && a->header != b->header)
        return option_u64(d, "--header", a->header, b->header);
    if ((cmp & DIST_CMP_RUN) && a->zero != b->zero)
        return option(d, "-z", a->zero ? "-z" : "no -z", b->zero ? "-z" : "no -z");
    const int keys = cmp & DIST_CMP_KEY;
    if (keys && a->rng != b->rng) {
        char sa[48], sb[48];
        snprintf(sa, sizeof sa, "--rng=%s", rf_rng_kind_name(a->rng));
        snprintf(sb, sizeof sb, "--rng=%s", rf_rng_kind_name(b->rng));
        return option(d, "--rng", sa, sb);
    }
    if (keys && sodium_memcmp(a->key, b->key, sizeof a->key) != 0) {
        snprintf(d->what, sizeof d->what, "--seed or --random-source");
        return d->kind = DIST_DIFF_KEY;
    }
    return (cmp & DIST_CMP_RUN) ? diff_inputs(a, b, d) : DIST_SAME;
}

void dist_run_refuse(const char *path, const char *verb, const char *who,
                     const struct dist_diff *d, const char *hint)
{
    if (d->kind == DIST_DIFF_KEY)
        cli_error("%s: %s with another --seed or --random-source than %s: %s", path, verb, who,
                  hint);
    else if (d->kind == DIST_DIFF_INPUTS && d->input != SIZE_MAX)
        cli_error("%s: %s with %s (%s), but %s has %s: %s", path, verb, d->what, d->a, who, d->b,
                  hint);
    else
        cli_error("%s: %s with %s, but %s has %s: %s", path, verb, d->a, who, d->b, hint);
}
