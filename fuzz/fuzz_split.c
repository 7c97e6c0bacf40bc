/* libFuzzer target: the texts every front end passes to the library as given
 * by its user -- split specs, output patterns, memory budgets.
 * Always-on checks: every status is a documented one and a refusal leaves
 * nothing allocated; a plan's bounds start at 0, end at n and never go down;
 * equal parts differ by at most one, larger first; counts are the parts'
 * sizes; a percentage bound b(i) is n c(i) / 100 rounded half up
 * (2Hb - H <= 2nc < 2Hb + H, H = 100% in units), also for percentages made
 * from the bytes to add up to 100; names are non-empty and distinct, a list
 * gives back its own text; a budget is at least one byte. */
#include <riffle.h>
#include <riffle_engine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) abort(); } while (0)

typedef unsigned __int128 u128;

static void check_message(const rf_split_error *e)
{
    char msg[256];
    const size_t n = rf_split_error_message(e, msg, sizeof msg);
    CHECK(n < sizeof msg && n == strlen(msg));
}

static void check_bounds(const rf_split *s, uint64_t n)
{
    uint64_t *b = malloc((s->parts + 1) * sizeof *b);
    CHECK(b);
    rf_split_error e;
    const rf_status st = rf_split_bounds(s, n, b, &e);
    if (st != RF_OK) {
        CHECK(st == RF_EINVAL && s->kind == RF_SPLIT_COUNTS);
        CHECK(e.problem == (s->rest ? RF_SPLIT_COUNTS_EXCEED : RF_SPLIT_COUNTS_DIFFER));
        CHECK(e.total == n && (s->rest ? e.sum > n : e.sum != n));
        check_message(&e);
        free(b);
        return;
    }
    CHECK(b[0] == 0 && b[s->parts] == n);
    const u128 hundred = 100 * (u128)RF_SPLIT_PERCENT_UNIT;
    u128 cum = 0;
    for (size_t i = 0; i < s->parts; i++) {
        CHECK(b[i] <= b[i + 1]);
        const uint64_t size = b[i + 1] - b[i];
        if (s->kind == RF_SPLIT_EQUAL) {
            CHECK(size == n / s->parts || size == n / s->parts + 1);
            CHECK(i == 0 || size <= b[i] - b[i - 1]);
        } else if (s->kind == RF_SPLIT_COUNTS) {
            CHECK((s->rest && i + 1 == s->parts) || size == s->value[i]);
        } else {
            cum += s->value[i];
            const u128 twice = 2 * (u128)n * cum, bound = 2 * hundred * b[i + 1];
            CHECK(bound <= twice + hundred && twice < bound + hundred);
        }
    }
    free(b);
}

static void fuzz_spec(const char *text, uint64_t n)
{
    rf_split s;
    rf_split_error e;
    const rf_status st = rf_split_parse(&s, text, &e);
    if (st != RF_OK) {
        CHECK(st == RF_EINVAL || st == RF_ENOMEM);
        CHECK(s.parts == 0 && s.value == NULL);
        if (st == RF_EINVAL)
            CHECK(e.problem >= RF_SPLIT_BAD_SPEC && e.problem <= RF_SPLIT_COUNTS_OVERFLOW);
        check_message(&e);
        return;
    }
    CHECK(s.parts >= 1 && s.parts <= RF_SPLIT_MAX_PARTS);
    CHECK(s.kind == RF_SPLIT_EQUAL ? s.value == NULL : s.value != NULL);
    check_bounds(&s, n);
    check_bounds(&s, 0);
    rf_split_free(&s);
}

static void fuzz_names(const char *pattern, size_t parts)
{
    char **names;
    rf_split_error e;
    const rf_status st = rf_split_names(pattern, parts, &names, &e);
    if (st != RF_OK) {
        CHECK(st == RF_EINVAL || st == RF_ENOMEM);
        CHECK(names == NULL);
        if (st == RF_EINVAL)
            CHECK(e.problem >= RF_SPLIT_PATTERN_WIDTH && e.problem <= RF_SPLIT_NAME_TWICE);
        check_message(&e);
        return;
    }
    const size_t plen = strlen(pattern);
    size_t total = 0;
    for (size_t i = 0; i < parts; i++) {
        const size_t len = strlen(names[i]);
        CHECK(len > 0 && len <= plen + 40);
        total += len + 1;
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(names[i], names[j]) != 0);
    }
    if (!strchr(pattern, '%')) { /* a list: the names joined are the text */
        char *joined = malloc(total);
        CHECK(joined);
        size_t at = 0;
        for (size_t i = 0; i < parts; i++) {
            const size_t len = strlen(names[i]);
            memcpy(joined + at, names[i], len);
            at += len;
            joined[at++] = i + 1 < parts ? ',' : '\0';
        }
        CHECK(strcmp(joined, pattern) == 0);
        free(joined);
    }
    rf_split_names_free(names, parts);
}

static void fuzz_memory(const char *text)
{
    uint64_t bytes = 0;
    const rf_status st = rf_engine_memory_parse(text, &bytes);
    CHECK(st == RF_OK || st == RF_EINVAL || st == RF_ERANGE);
    if (st == RF_OK)
        CHECK(bytes > 0 && text[0] >= '0' && text[0] <= '9');
    if (st == RF_ERANGE)
        CHECK(strchr(text, '%') != NULL);
}

/* Percentages that add up to 100, drawn from the bytes (random texts seldom
 * do): up to 8 parts, each a 32-bit share of what is left, the last part the
 * rest, written with 9 decimals. */
static void fuzz_percentages(const uint8_t *data, size_t size, uint64_t n)
{
    const uint64_t hundred = 100 * RF_SPLIT_PERCENT_UNIT;
    const size_t parts = 1 + (size > 0 ? data[0] % 8 : 0);
    char spec[8 * 24];
    size_t at = 0;
    uint64_t left = hundred;
    for (size_t i = 0; i < parts; i++) {
        uint64_t v = left;
        if (i + 1 < parts) {
            uint32_t r = 0;
            for (size_t j = 0; j < 4; j++) {
                const size_t k = 1 + 4 * i + j;
                r = r << 8 | (k < size ? data[k] : 0);
            }
            v = left / 0xffffffffu * r + left % 0xffffffffu * r / 0xffffffffu;
        }
        left -= v;
        memcpy(spec + at, i ? "," : "", i ? 1 : 0);
        at += i ? 1 : 0;
        char part[24];
        const int len = snprintf(part, sizeof part, "%llu.%09llu%%",
                                 (unsigned long long)(v / RF_SPLIT_PERCENT_UNIT),
                                 (unsigned long long)(v % RF_SPLIT_PERCENT_UNIT));
        CHECK(len > 0 && (size_t)len < sizeof part);
        memcpy(spec + at, part, (size_t)len);
        at += (size_t)len;
    }
    spec[at] = '\0';
    rf_split s;
    CHECK(rf_split_parse(&s, spec, NULL) == RF_OK);
    CHECK(s.kind == RF_SPLIT_PERCENT && s.parts == parts);
    rf_split_free(&s);
    fuzz_spec(spec, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10)
        return 0;
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n |= (uint64_t)data[1 + i] << (8 * i);
    char *text = malloc(size - 9 + 1);
    CHECK(text);
    memcpy(text, data + 9, size - 9);
    text[size - 9] = '\0'; /* a NUL inside ends the text early, as in argv */
    switch (data[0] % 4) {
    case 0:
        fuzz_spec(text, n % 4 == 0 ? n : n % 100000);
        break;
    case 1:
        fuzz_names(text, 1 + (size_t)(n % 64));
        break;
    case 2:
        fuzz_memory(text);
        break;
    default:
        fuzz_percentages(data + 9, size - 9, n % 4 == 0 ? n : n % 100000);
        break;
    }
    free(text);
    return 0;
}
