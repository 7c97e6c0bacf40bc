/*
 * audit_log.c -- the decks of `riffle audit --from-log=FILE` (docs/audit.md,
 * "Decks from a game's log"): one deck per line, its cards in dealt order,
 * separated by blanks or commas; a card is a name of the standard deck (AS,
 * 10H, QD, the suit symbols, the jokers BJ and RJ: `riffle deal`'s names) or
 * a number 1..n.  Every deck holds the same cards; blank lines and lines
 * starting with '#' are skipped, and so is a first line card1,card2,...,cardN
 * (the header of `riffle deal --count=N --csv --header`).  The whole file is read and checked before
 * any test runs: a bad line is named and nothing is reported.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "audit_log.h"
#include "cli.h"
#include "cmd_numbers.h"

#define MAX_CARDS 65536 /* decks are stored as 16-bit cards */

enum { KIND_UNKNOWN = 0, KIND_NAMES, KIND_NUMBERS };

typedef struct reader {
    const char *path;
    uint64_t line;
    int kind;
    size_t n;             /* cards per deck, from the first deck */
    uint32_t *deck;       /* MAX_CARDS + 1 */
    unsigned char *seen;  /* MAX_CARDS + 1 */
} reader;

static int bad_line(const reader *r, const char *fmt, const char *token, size_t len)
{
    fprintf(stderr, "riffle: audit: ");
    audit_fput_text(stderr, r->path);
    fprintf(stderr, ":%llu: ", (unsigned long long)r->line);
    if (token != NULL) {
        char *t = strndup(token, len);
        const char *at = strstr(fmt, "%s");
        fwrite(fmt, 1, (size_t)(at - fmt), stderr);
        audit_fput_text(stderr, t ? t : "");
        fputs(at + 2, stderr);
        free(t);
    } else {
        fputs(fmt, stderr);
    }
    fputc('\n', stderr);
    return -1;
}

/* One token as a 0-based card, or -1 with the line named. */
static long parse_card(reader *r, const char *tok, size_t len)
{
    char buf[32];
    if (len >= sizeof buf)
        return bad_line(r, "'%s' is not a card", tok, len);
    memcpy(buf, tok, len);
    buf[len] = '\0';
    size_t i = 0;
    while (i < len && isdigit((unsigned char)buf[i]))
        i++;
    const int kind = i == len ? KIND_NUMBERS : KIND_NAMES;
    if (r->kind != KIND_UNKNOWN && kind != r->kind)
        return bad_line(r, "'%s': card names and numbers mixed in one log", tok, len);
    r->kind = kind;
    if (kind == KIND_NUMBERS) {
        const long v = len <= 6 ? strtol(buf, NULL, 10) : 0;
        if (v < 1 || v > MAX_CARDS)
            return bad_line(r, "card number '%s' is not in 1..65536", tok, len);
        return v - 1;
    }
    size_t card;
    if (nums_card_parse(buf, &card) != 0)
        return bad_line(r, "'%s' is not a card (a name such as AS or 10H, or a number)",
                        tok, len);
    return (long)card;
}

static int is_separator(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n';
}

/* The cards of one line into r->deck; their count, or -1. */
static long read_cards(reader *r, const char *s, size_t len)
{
    size_t count = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && is_separator(s[i]))
            i++;
        const size_t start = i;
        while (i < len && !is_separator(s[i]))
            i++;
        if (i == start)
            break;
        if (count == MAX_CARDS)
            return bad_line(r, "more than 65536 cards", NULL, 0);
        const long card = parse_card(r, s + start, i - start);
        if (card < 0)
            return -1;
        r->deck[count++] = (uint32_t)card;
    }
    return (long)count;
}

/* The line's cards are the deck's: n of them, each once. */
static int check_deck(reader *r, size_t count)
{
    if (r->n == 0) {
        if (r->kind == KIND_NAMES && count != NUMS_DECK && count != NUMS_DECK_JOKERS)
            return bad_line(r, "card names need the whole deck of 52 (or 54 with jokers); "
                               "number the cards 1..n for other decks", NULL, 0);
        r->n = count;
    }
    if (count != r->n) {
        fprintf(stderr, "riffle: audit: ");
        audit_fput_text(stderr, r->path);
        fprintf(stderr, ":%llu: %zu cards, but the first deck has %zu\n",
                (unsigned long long)r->line, count, r->n);
        return -1;
    }
    memset(r->seen, 0, r->n);
    for (size_t i = 0; i < count; i++) {
        if (r->deck[i] >= r->n)
            return bad_line(r, r->kind == KIND_NAMES ? "a joker in a deck of 52"
                                                     : "a card number above the deck's size",
                            NULL, 0);
        if (r->seen[r->deck[i]]++)
            return bad_line(r, "a card appears twice", NULL, 0);
    }
    return 0;
}

static int keep_deck(audit_log *log, const reader *r)
{
    if (log->decks == log->cap) {
        const uint64_t cap = log->cap ? 2 * log->cap : 1024;
        uint16_t *more = realloc(log->cards, (size_t)cap * r->n * sizeof *more);
        if (more == NULL)
            return -1;
        log->cards = more;
        log->cap = cap;
    }
    uint16_t *to = log->cards + (size_t)log->decks * r->n;
    for (size_t i = 0; i < r->n; i++)
        to[i] = (uint16_t)r->deck[i];
    log->decks++;
    return 0;
}

/* Whether the line is the header "card1,card2,...": each token "card" and
 * its own number, counting from 1. */
static int is_header(const char *s, size_t len)
{
    size_t tokens = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && is_separator(s[i]))
            i++;
        if (i == len)
            break;
        if (len - i < 5 || memcmp(s + i, "card", 4) != 0 || !isdigit((unsigned char)s[i + 4]))
            return 0;
        char *end;
        const unsigned long number = strtoul(s + i + 4, &end, 10);
        if (number != ++tokens || (end < s + len && !is_separator(*end)))
            return 0;
        i = (size_t)(end - s);
    }
    return tokens > 0;
}

static int read_lines(FILE *f, reader *r, audit_log *log)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int status = 0;
    while (status == 0 && (got = getline(&line, &cap, f)) >= 0) {
        r->line++;
        size_t i = 0;
        while (i < (size_t)got && is_separator(line[i]))
            i++;
        if (i == (size_t)got || line[i] == '#')
            continue;
        if (log->decks == 0 && r->n == 0 && is_header(line, (size_t)got))
            continue;
        const long count = read_cards(r, line, (size_t)got);
        if (count < 0 || check_deck(r, (size_t)count) != 0)
            status = -1;
        else if (keep_deck(log, r) != 0) {
            fprintf(stderr, "riffle: audit: out of memory\n");
            status = -1;
        }
    }
    if (status == 0 && ferror(f)) {
        fprintf(stderr, "riffle: audit: ");
        audit_fput_text(stderr, r->path);
        fprintf(stderr, ": %s\n", strerror(errno));
        status = -1;
    }
    free(line);
    return status;
}

int audit_log_load(const char *path, audit_log *log)
{
    memset(log, 0, sizeof *log);
    reader r = {.path = path};
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "riffle: audit: ");
        audit_fput_text(stderr, path);
        fprintf(stderr, ": %s\n", strerror(errno));
        return -1;
    }
    r.deck = malloc((MAX_CARDS + 1) * sizeof *r.deck);
    r.seen = malloc(MAX_CARDS + 1);
    int status = r.deck && r.seen ? read_lines(f, &r, log) : -1;
    if (!r.deck || !r.seen)
        fprintf(stderr, "riffle: audit: out of memory\n");
    if (f != stdin)
        fclose(f);
    free(r.deck);
    free(r.seen);
    if (status == 0 && log->decks == 0) {
        fprintf(stderr, "riffle: audit: ");
        audit_fput_text(stderr, path);
        fprintf(stderr, ": no decks\n");
        status = -1;
    }
    log->n = r.n;
    if (status != 0)
        audit_log_free(log);
    return status;
}

int audit_log_feed(const audit_log *log, audit_acc *acc)
{
    uint32_t *deck = malloc((log->n + 1) * sizeof *deck);
    if (deck == NULL)
        return -1;
    for (uint64_t d = 0; d < log->decks; d++) {
        const uint16_t *from = log->cards + (size_t)d * log->n;
        for (size_t i = 0; i < log->n; i++)
            deck[i] = from[i];
        audit_acc_add(acc, deck);
    }
    free(deck);
    return 0;
}

void audit_log_free(audit_log *log)
{
    free(log->cards);
    memset(log, 0, sizeof *log);
}
