/*
 * deal_count.c -- `riffle deal --count=N`: N deals of the whole deck, one a
 * line, for a test lab's scaled-output data set (the shuffled decks its
 * chi-square battery reads).
 *
 * Stream contract: every deal starts from the deck in its order, as a single
 * `riffle deal` does, and deals all of it with rf_deck_deal_n -- the code
 * path of a single deal -- from the one generator the command made; deal
 * k + 1 draws from that generator where deal k left it.  So with --seed the
 * first line is the dealt order of `riffle deal --seed=S -H 1`, and --count=K
 * prints the first K lines of any larger count.
 *
 * Each card's text (with CSV quoting or JSON escaping, and its separator) is
 * made once; a deal is then written by copying those bytes into a large
 * buffer -- a fixed 16-byte copy per card when every card's text fits --
 * which goes out with write(2): no stdio call per card or per deal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deal.h"

/* Output buffer: 1 MiB, written when it has less room than one line. */
#define OUT_BUF (1u << 20)
/* Card texts up to this long (separator included) are copied as one fixed
 * block; the block may run past the text, into room the buffer keeps. */
#define SLOT 16
/* Room for the JSON line's head: {"deal":N,"cards":[ with 20 digits. */
#define HEAD_MAX 40

enum count_format { FMT_TEXT, FMT_CSV, FMT_JSON };

/* The texts of the cards, by card number. */
struct card_texts {
    char **text;          /* each card's text and its separator */
    size_t *len;
    unsigned char *slots; /* n blocks of SLOT bytes, when every text fits */
    size_t n;
    size_t line_max;      /* bytes of a whole line, at most */
};

static int number(const char *arg, uint64_t *v)
{
    int over;
    if (cli_parse_u64(arg, v, &over) != 0 || over)
        return cli_usage("deal", "invalid count: %s", cli_quote(arg));
    return CLI_CONTINUE;
}

int deal_count_option(struct deal_more *m, int opt, const char *arg)
{
    switch (opt) {
    case DEAL_OPT_COUNT:
        if (cli_set_once(&m->count_arg, arg, "counts") != CLI_CONTINUE)
            return CLI_FAIL;
        return number(arg, &m->count);
    case DEAL_OPT_CSV:
        m->csv = 1;
        return CLI_CONTINUE;
    case DEAL_OPT_HEADER:
        m->header = 1;
        return CLI_CONTINUE;
    default:
        return DEAL_NOT_MORE;
    }
}

int deal_count_wanted(const struct deal_more *m)
{
    return m->count_arg || m->csv || m->header;
}

int deal_count_check(const struct deal_more *m)
{
    if (!m->count_arg)
        return cli_usage("deal", "--%s needs --count", m->csv ? "csv" : "header");
    if (m->header && !m->csv)
        return cli_usage("deal", "--header needs --csv");
    return CLI_CONTINUE;
}

/* A CSV field as RFC 4180 (section 2) writes one: in double quotes, each
 * quote doubled, when it holds a comma, a quote or a line break. */
static void csv_field(FILE *f, const char *name)
{
    if (!strpbrk(name, ",\"\r\n")) {
        fputs(name, f);
        return;
    }
    fputc('"', f);
    for (const char *s = name; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The text of one card in format fmt, with its separator; NULL when out of
 * memory. */
static char *card_text(const char *name, enum count_format fmt, size_t *len)
{
    char *s = NULL;
    FILE *m = open_memstream(&s, len);
    if (!m)
        return NULL;
    if (fmt == FMT_JSON)
        json_string(m, name);
    else if (fmt == FMT_CSV)
        csv_field(m, name);
    else
        fputs(name, m);
    fputc(fmt == FMT_TEXT ? ' ' : ',', m);
    if (fclose(m) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void free_texts(struct card_texts *c)
{
    for (size_t i = 0; c->text && i < c->n; i++)
        free(c->text[i]);
    free(c->text);
    free(c->len);
    free(c->slots);
}

/* Fixed blocks for the copy loop when every text fits one. */
static int make_slots(struct card_texts *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->len[i] > SLOT)
            return 0;
    if (c->n > SIZE_MAX / SLOT || !(c->slots = calloc(c->n, SLOT)))
        return -1;
    for (size_t i = 0; i < c->n; i++)
        memcpy(c->slots + i * SLOT, c->text[i], c->len[i]);
    return 0;
}

static int make_texts(struct card_texts *c, char *const *names, size_t n,
                      enum count_format fmt)
{
    memset(c, 0, sizeof *c);
    c->text = calloc(n, sizeof *c->text);
    c->len = calloc(n, sizeof *c->len);
    if (!c->text || !c->len)
        return -1;
    c->n = n;
    c->line_max = HEAD_MAX + SLOT + 3; /* head, a block's overrun, "]}\n" */
    for (size_t i = 0; i < n; i++) {
        if (!(c->text[i] = card_text(names[i], fmt, &c->len[i])))
            return -1;
        c->line_max += c->len[i]; /* each card once a line */
    }
    return make_slots(c);
}

/* Decimal digits of v at p; returns the end. */
static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
    unsigned char digits[20];
    size_t k = 0;
    do
        digits[k++] = (unsigned char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (k > 0)
        *p++ = digits[--k];
    return p;
}

static unsigned char *put_cards(unsigned char *p, const struct card_texts *c,
                                const size_t *dealt)
{
    if (c->slots) {
        for (size_t i = 0; i < c->n; i++) {
            memcpy(p, c->slots + dealt[i] * SLOT, SLOT);
            p += c->len[dealt[i]];
        }
    } else {
        for (size_t i = 0; i < c->n; i++) {
            memcpy(p, c->text[dealt[i]], c->len[dealt[i]]);
            p += c->len[dealt[i]];
        }
    }
    return p;
}

/* Line `k` (from 1) of the output for the dealt order; returns its end. */
static unsigned char *put_line(unsigned char *p, const struct card_texts *c,
                               enum count_format fmt, const size_t *dealt, uint64_t k)
{
    static const char head[] = "{\"deal\":", mid[] = ",\"cards\":[";
    if (fmt == FMT_JSON) {
        memcpy(p, head, sizeof head - 1);
        p = put_u64(p + sizeof head - 1, k);
        memcpy(p, mid, sizeof mid - 1);
        p += sizeof mid - 1;
    }
    p = put_cards(p, c, dealt) - 1; /* over the last separator */
    if (fmt == FMT_JSON) {
        *p++ = ']';
        *p++ = '}';
    }
    *p++ = '\n';
    return p;
}

/* "card1,card2,...,cardN" */
static unsigned char *put_header(unsigned char *p, size_t n)
{
    for (size_t i = 1; i <= n; i++) {
        memcpy(p, "card", 4);
        p = put_u64(p + 4, i);
        *p++ = i < n ? ',' : '\n';
    }
    return p;
}

/* Deal and write; 0, 1 when the reader went away, -1 after a message. */
static int deal_lines(const struct card_texts *c, enum count_format fmt, int header,
                      uint64_t count, unsigned char *buf, size_t cap, rf_rng *g)
{
    size_t *cards = malloc(c->n * sizeof *cards), *dealt = malloc(c->n * sizeof *dealt);
    unsigned char *p = buf;
    int w = -1;
    if (!cards || !dealt) {
        cli_error("memory exhausted");
        goto done;
    }
    if (header)
        p = put_header(p, c->n);
    for (uint64_t k = 1; k <= count; k++) {
        if ((size_t)(buf + cap - p) < c->line_max) {
            if ((w = cli_write_stdout(buf, (size_t)(p - buf))) != 0)
                goto done;
            p = buf;
        }
        rf_deck deck;
        rf_deck_init(&deck, cards, c->n);
        const rf_status s = rf_deck_deal_n(&deck, g, c->n, dealt);
        if (s != RF_OK) {
            cli_error("%s", rf_strerror(s));
            w = -1;
            goto done;
        }
        p = put_line(p, c, fmt, dealt, k);
    }
    w = cli_write_stdout(buf, (size_t)(p - buf));
done:
    free(cards);
    free(dealt);
    return w;
}

int deal_count_run(char *const *names, size_t n, const struct deal_more *m, int json,
                   rf_rng *g)
{
    const enum count_format fmt = json ? FMT_JSON : m->csv ? FMT_CSV : FMT_TEXT;
    struct card_texts c;
    unsigned char *buf = NULL;
    int status = CLI_FAIL;
    if (make_texts(&c, names, n, fmt) != 0)
        goto oom;
    /* room for two lines, or for the header (at most "card" and 20 digits
     * and a separator a card) and a line */
    size_t cap = 2 * c.line_max > OUT_BUF ? 2 * c.line_max : OUT_BUF;
    if (m->header && 25 * n + c.line_max > cap)
        cap = 25 * n + c.line_max;
    if (!(buf = malloc(cap)))
        goto oom;
    /* A reader that stops reading is the normal end of a long data set:
     * see it as EPIPE, and stop quietly. */
    signal(SIGPIPE, SIG_IGN);
    status = deal_lines(&c, fmt, m->header, m->count, buf, cap, g) < 0 ? CLI_FAIL : CLI_OK;
    goto done;
oom:
    cli_error("memory exhausted");
done:
    free(buf);
    free_texts(&c);
    return status;
}
