/* split.c -- the split plan and the split sink (riffle_engine.h, "Splits"):
 * parsing a spec, the part sizes for a total, the part names from a pattern,
 * and a sink that writes the parts to descriptors.
 *
 * The arithmetic is the program's --split since it was introduced; seeded
 * splits must never change, so neither may the rounding below. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

typedef unsigned __int128 u128;

#define HUNDRED (100 * RF_SPLIT_PERCENT_UNIT)

static rf_status refuse(rf_split_error *err, rf_split_problem why)
{
    if (err) {
        memset(err, 0, sizeof *err);
        err->problem = why;
    }
    return RF_EINVAL;
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

static const char *token_end(const char *s)
{
    const char *c = strchr(s, ',');
    return c ? c : s + strlen(s);
}

/* ------------------------------------------------------------------------ */
/* Parsing a spec                                                           */
/* ------------------------------------------------------------------------ */

/* "12", "12.5", "0.125" followed by '%' and the end of the token [s, end),
 * into RF_SPLIT_PERCENT_UNITs (10^-9 %).  Returns 0 or -1. */
static int take_percent(const char *s, const char *end, uint64_t *units)
{
    uint64_t whole, frac = 0;
    if (take_u64(&s, &whole) != 0 || whole > 100)
        return -1;
    if (*s == '.') {
        s++;
        uint64_t scale = RF_SPLIT_PERCENT_UNIT;
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
    *units = whole * RF_SPLIT_PERCENT_UNIT + frac;
    return 0;
}

/* One token [s, end) of a counts list: digits, or '*' if it is the last. */
static int take_count(const char *s, const char *end, int last, uint64_t *v, int *rest)
{
    if (last && *s == '*' && s + 1 == end) {
        *rest = 1;
        *v = 0;
        return 0;
    }
    return take_u64(&s, v) == 0 && s == end ? 0 : -1;
}

static rf_status parse_values(rf_split *s, const char *spec, rf_split_error *err)
{
    const char *p = spec;
    uint64_t sum = 0;
    for (size_t i = 0; i < s->parts; i++) {
        const char *end = token_end(p);
        const int last = i + 1 == s->parts;
        int bad;
        if (s->kind == RF_SPLIT_PERCENT)
            bad = take_percent(p, end, &s->value[i]);
        else
            bad = take_count(p, end, last, &s->value[i], &s->rest);
        if (bad)
            return refuse(err, RF_SPLIT_BAD_SPEC);
        if (sum > UINT64_MAX - s->value[i])
            return refuse(err, RF_SPLIT_COUNTS_OVERFLOW);
        sum += s->value[i];
        p = end + 1;
    }
    if (s->kind == RF_SPLIT_PERCENT && sum != HUNDRED) {
        refuse(err, RF_SPLIT_PERCENT_SUM);
        if (err)
            err->sum = sum;
        return RF_EINVAL;
    }
    return RF_OK;
}

/* "N": N equal parts. */
static rf_status parse_equal(rf_split *s, const char *spec, rf_split_error *err)
{
    uint64_t n = 0;
    if (take_u64(&spec, &n) != 0 || *spec)
        return refuse(err, RF_SPLIT_BAD_SPEC);
    if (n == 0)
        return refuse(err, RF_SPLIT_NO_PARTS);
    if (n > RF_SPLIT_MAX_PARTS)
        return refuse(err, RF_SPLIT_TOO_MANY);
    s->kind = RF_SPLIT_EQUAL;
    s->parts = (size_t)n;
    return RF_OK;
}

rf_status rf_split_parse(rf_split *s, const char *spec, rf_split_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!s)
        return RF_EINVAL;
    memset(s, 0, sizeof *s);
    if (!spec)
        return refuse(err, RF_SPLIT_BAD_SPEC);
    size_t parts = 1;
    for (const char *c = spec; *c; c++)
        parts += *c == ',';
    if (parts > RF_SPLIT_MAX_PARTS)
        return refuse(err, RF_SPLIT_TOO_MANY);
    if (parts == 1 && is_digit(*spec) && !strchr(spec, '%'))
        return parse_equal(s, spec, err);
    s->kind = strchr(spec, '%') ? RF_SPLIT_PERCENT : RF_SPLIT_COUNTS;
    s->parts = parts;
    s->value = calloc(parts, sizeof *s->value);
    if (!s->value) {
        memset(s, 0, sizeof *s);
        return RF_ENOMEM;
    }
    const rf_status st = parse_values(s, spec, err);
    if (st != RF_OK)
        rf_split_free(s);
    return st;
}

void rf_split_free(rf_split *s)
{
    if (!s)
        return;
    free(s->value);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------------ */
/* The plan                                                                 */
/* ------------------------------------------------------------------------ */

static void plan_equal(uint64_t *b, size_t parts, uint64_t n)
{
    const uint64_t q = n / parts, r = n % parts;
    for (size_t i = 0; i <= parts; i++)
        b[i] = i * q + (i < r ? i : r);
}

/* b(i) = round(n * c(i) / 100), halves up, exactly in 128 bits (n < 2^64,
 * c <= 10^11 < 2^37). */
static void plan_percent(uint64_t *b, const rf_split *s, uint64_t n)
{
    u128 cum = 0;
    b[0] = 0;
    for (size_t i = 0; i < s->parts; i++) {
        cum += s->value[i];
        b[i + 1] = (uint64_t)(((u128)n * cum * 2 + HUNDRED) / (2 * (u128)HUNDRED));
    }
}

static rf_status plan_counts(uint64_t *b, const rf_split *s, uint64_t n, rf_split_error *err)
{
    uint64_t cum = 0; /* no overflow: rf_split_parse checked the sum */
    b[0] = 0;
    for (size_t i = 0; i < s->parts; i++) {
        cum += s->value[i];
        b[i + 1] = cum;
    }
    if (s->rest ? cum > n : cum != n) {
        refuse(err, s->rest ? RF_SPLIT_COUNTS_EXCEED : RF_SPLIT_COUNTS_DIFFER);
        if (err) {
            err->sum = cum;
            err->total = n;
        }
        return RF_EINVAL;
    }
    b[s->parts] = n;
    return RF_OK;
}

rf_status rf_split_bounds(const rf_split *s, uint64_t n, uint64_t *b, rf_split_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!s || !b || s->parts == 0 || (s->kind != RF_SPLIT_EQUAL && !s->value))
        return RF_EINVAL;
    switch (s->kind) {
    case RF_SPLIT_EQUAL:
        plan_equal(b, s->parts, n);
        return RF_OK;
    case RF_SPLIT_PERCENT:
        plan_percent(b, s, n);
        return RF_OK;
    case RF_SPLIT_COUNTS:
        return plan_counts(b, s, n, err);
    }
    return RF_EINVAL;
}

/* ------------------------------------------------------------------------ */
/* Names                                                                    */
/* ------------------------------------------------------------------------ */

/* A pattern's one conversion: where it is and how to print the number. */
struct conversion {
    size_t at, len; /* the "%03d" in the pattern */
    unsigned width;
    char pad;
};

/* Find the single %d of pattern.  Returns RF_SPLIT_OK or the problem. */
static rf_split_problem find_conversion(const char *pattern, struct conversion *cv)
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
        if (is_digit(*q) && (take_u64(&q, &w) != 0 || w > 20))
            return RF_SPLIT_PATTERN_WIDTH;
        if (*q != 'd')
            return RF_SPLIT_PATTERN_CONVERSION;
        if (found++)
            return RF_SPLIT_PATTERN_TWO;
        cv->at = (size_t)(p - pattern);
        cv->len = (size_t)(q + 1 - p);
        cv->width = (unsigned)w;
        p = q;
    }
    return found ? RF_SPLIT_OK : RF_SPLIT_PATTERN_NONE;
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

/* The name of part `number`: at most 20 digits of padding and 20 of number
 * replace the conversion (at least 2 bytes). */
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

static rf_status names_from_pattern(char **names, size_t parts, const char *pattern,
                                    rf_split_error *err)
{
    struct conversion cv;
    const rf_split_problem why = find_conversion(pattern, &cv);
    if (why != RF_SPLIT_OK)
        return refuse(err, why);
    for (size_t i = 0; i < parts; i++)
        if (!(names[i] = pattern_name(pattern, &cv, i)))
            return RF_ENOMEM;
    return RF_OK;
}

static rf_status names_from_list(char **names, size_t parts, const char *list,
                                 rf_split_error *err)
{
    size_t count = 1;
    for (const char *c = list; *c; c++)
        count += *c == ',';
    if (count != parts) {
        refuse(err, RF_SPLIT_NAMES_COUNT);
        if (err) {
            err->names = count;
            err->parts = parts;
        }
        return RF_EINVAL;
    }
    const char *p = list;
    for (size_t i = 0; i < parts; i++) {
        const char *end = token_end(p);
        const size_t len = (size_t)(end - p);
        if (len == 0)
            return refuse(err, RF_SPLIT_NAME_EMPTY);
        if (!(names[i] = malloc(len + 1)))
            return RF_ENOMEM;
        memcpy(names[i], p, len);
        names[i][len] = '\0';
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[j], names[i]) == 0)
                return refuse(err, RF_SPLIT_NAME_TWICE);
        p = end + 1;
    }
    return RF_OK;
}

rf_status rf_split_names(const char *pattern, size_t parts, char ***names, rf_split_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!pattern || !names || parts == 0 || parts > RF_SPLIT_MAX_PARTS)
        return RF_EINVAL;
    *names = NULL;
    char **v = calloc(parts, sizeof *v);
    if (!v)
        return RF_ENOMEM;
    const rf_status st = strchr(pattern, '%') ? names_from_pattern(v, parts, pattern, err)
                                              : names_from_list(v, parts, pattern, err);
    if (st != RF_OK) {
        rf_split_names_free(v, parts);
        return st;
    }
    *names = v;
    return RF_OK;
}

void rf_split_names_free(char **names, size_t parts)
{
    if (!names)
        return;
    for (size_t i = 0; i < parts; i++)
        free(names[i]);
    free(names);
}

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */
/* ------------------------------------------------------------------------ */

/* The sum of percentages as written: "90", "99.9", "100.000000001". */
static size_t percent_message(const rf_split_error *e, char *buf, size_t len)
{
    char frac[16];
    snprintf(frac, sizeof frac, "%09llu",
             (unsigned long long)(e->sum % RF_SPLIT_PERCENT_UNIT));
    size_t n = strlen(frac);
    while (n > 0 && frac[n - 1] == '0')
        frac[--n] = '\0';
    const int k = snprintf(buf, len, "the percentages add up to %llu%s%s%%, not 100%%",
                           (unsigned long long)(e->sum / RF_SPLIT_PERCENT_UNIT), n ? "." : "",
                           frac);
    return k > 0 ? (size_t)k : 0;
}

size_t rf_split_error_message(const rf_split_error *e, char *buf, size_t len)
{
    const char *text = "";
    int k;
    switch (e ? e->problem : RF_SPLIT_OK) {
    case RF_SPLIT_OK:
    case RF_SPLIT_BAD_SPEC:
        break;
    case RF_SPLIT_NO_PARTS:
        text = "no parts";
        break;
    case RF_SPLIT_TOO_MANY:
        k = snprintf(buf, len, "more than %d parts", RF_SPLIT_MAX_PARTS);
        return k > 0 ? (size_t)k : 0;
    case RF_SPLIT_PERCENT_SUM:
        return percent_message(e, buf, len);
    case RF_SPLIT_COUNTS_OVERFLOW:
        text = "the counts add up to more than 2^64-1";
        break;
    case RF_SPLIT_COUNTS_DIFFER:
        k = snprintf(buf, len, "the counts add up to %llu, but %llu records are output",
                     (unsigned long long)e->sum, (unsigned long long)e->total);
        return k > 0 ? (size_t)k : 0;
    case RF_SPLIT_COUNTS_EXCEED:
        k = snprintf(buf, len, "the counts add up to %llu, more than the %llu records output",
                     (unsigned long long)e->sum, (unsigned long long)e->total);
        return k > 0 ? (size_t)k : 0;
    case RF_SPLIT_PATTERN_WIDTH:
        text = "the width of %d is at most 20";
        break;
    case RF_SPLIT_PATTERN_CONVERSION:
        text = "the only conversions are %d (with an optional width, e.g. %03d) and %%";
        break;
    case RF_SPLIT_PATTERN_TWO:
        text = "more than one %d";
        break;
    case RF_SPLIT_PATTERN_NONE:
        text = "no %d (or, without any %, a comma-separated list of names)";
        break;
    case RF_SPLIT_NAMES_COUNT:
        k = snprintf(buf, len, "%zu name%s for %zu part%s", e->names, e->names == 1 ? "" : "s",
                     e->parts, e->parts == 1 ? "" : "s");
        return k > 0 ? (size_t)k : 0;
    case RF_SPLIT_NAME_EMPTY:
        text = "an empty name";
        break;
    case RF_SPLIT_NAME_TWICE:
        text = "a name given twice";
        break;
    }
    k = snprintf(buf, len, "%s", text);
    return k > 0 ? (size_t)k : 0;
}

/* ------------------------------------------------------------------------ */
/* The split sink                                                           */
/* ------------------------------------------------------------------------ */

/* Make part i current (i >= cur): flush the current part, point the writer
 * at part i and start it with the header.  A failed flush keeps the failing
 * part current (the caller names it) and the error in the writer. */
static int enter(rf_split_sink *s, size_t i)
{
    if (i != s->cur) {
        if (rf_writer_flush(&s->w) != 0)
            return s->w.err;
        rf_writer_init(&s->w, s->fds[i], s->buf, s->cap);
        s->cur = i;
        s->started = 0;
    }
    if (!s->started) {
        s->started = 1;
        rf_writer_put(&s->w, s->header, s->header_len);
    }
    return s->w.err;
}

/* The part that takes record `done`: the first one not yet full (or the
 * last). */
static size_t part_of_next(const rf_split_sink *s)
{
    size_t j = s->cur;
    while (j + 1 < s->split.parts && s->bounds[j + 1] <= s->done)
        j++;
    return j;
}

static int settle(rf_split_sink *s)
{
    const size_t j = part_of_next(s);
    for (size_t i = s->cur; i <= j; i++) {
        const int e = enter(s, i);
        if (e)
            return e;
    }
    return 0;
}

/* A caller broke the protocol: fail the output rather than write a wrong
 * split. */
static int misuse(rf_split_sink *s)
{
    if (!s->w.err)
        s->w.err = EINVAL;
    return EINVAL;
}

static int split_begin(void *ctx, const void *header, size_t len, uint64_t records)
{
    rf_split_sink *s = ctx;
    if (s->planned)
        return misuse(s);
    if (rf_split_bounds(&s->split, records, s->bounds, &s->error) != RF_OK)
        return EINVAL;
    if (len > 0) {
        if (!header)
            return misuse(s);
        free(s->header);
        if (!(s->header = malloc(len)))
            return ENOMEM;
        memcpy(s->header, header, len);
    }
    s->header_len = len;
    s->total = records;
    s->planned = 1;
    return 0;
}

static rf_writer *split_writer(void *ctx)
{
    rf_split_sink *s = ctx;
    if (!s->w.err) {
        if (!s->planned)
            misuse(s);
        else
            settle(s);
    }
    return &s->w;
}

static uint64_t split_room(void *ctx)
{
    const rf_split_sink *s = ctx;
    if (!s->planned)
        return 0;
    return s->bounds[part_of_next(s) + 1] - s->done;
}

static int split_advance(void *ctx, uint64_t records)
{
    rf_split_sink *s = ctx;
    if (records > split_room(s))
        return misuse(s);
    s->done += records;
    if (!s->w.err)
        settle(s);
    return s->w.err;
}

rf_status rf_split_sink_init(rf_split_sink *s, const rf_split *split, const int *fds, void *buf,
                             size_t cap)
{
    if (!s)
        return RF_EINVAL;
    memset(s, 0, sizeof *s);
    if (!split || split->parts == 0 || split->parts > RF_SPLIT_MAX_PARTS || !fds || !buf ||
        cap == 0 || (split->kind != RF_SPLIT_EQUAL && !split->value))
        return RF_EINVAL;
    const size_t parts = split->parts;
    s->split = *split;
    s->split.value = NULL;
    s->fds = malloc(parts * sizeof *s->fds);
    s->bounds = malloc((parts + 1) * sizeof *s->bounds);
    if (split->value && (s->split.value = malloc(parts * sizeof *split->value)))
        memcpy(s->split.value, split->value, parts * sizeof *split->value);
    if (!s->fds || !s->bounds || (split->value && !s->split.value)) {
        rf_split_sink_free(s);
        return RF_ENOMEM;
    }
    memcpy(s->fds, fds, parts * sizeof *fds);
    s->buf = buf;
    s->cap = cap;
    rf_writer_init(&s->w, s->fds[0], s->buf, s->cap);
    s->sink = (rf_engine_sink){split_begin, split_writer, split_room, split_advance, s};
    return RF_OK;
}

int rf_split_sink_finish(rf_split_sink *s)
{
    int e = s->w.err;
    if (!e && (!s->planned || s->done != s->total))
        e = misuse(s);
    for (size_t i = s->cur; i < s->split.parts && !e; i++)
        e = enter(s, i);
    if (!e)
        e = rf_writer_flush(&s->w);
    return e;
}

void rf_split_sink_free(rf_split_sink *s)
{
    if (!s)
        return;
    free(s->fds);
    free(s->bounds);
    free(s->header);
    rf_split_free(&s->split);
    s->fds = NULL;
    s->bounds = NULL;
    s->header = NULL;
}
