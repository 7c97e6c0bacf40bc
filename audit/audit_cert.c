/*
 * audit_cert.c -- the certification section of the reports (audit_cert.h).
 *
 * The facts are those of riffle's production path (what `riffle deal` and
 * `riffle` use without --seed): the header riffle.h states each as a
 * contract, and the section repeats them for a lab beside the evidence.  The
 * subject audited may be something else (an external command, a game's log):
 * the section says which.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "audit_cert.h"

#define KEY_BITS 256
#define FACTS 12

typedef struct fact {
    const char *label, *key; /* in the text and HTML, in JSON */
    char text[512];
} fact;

int audit_sha256_file(const char *path, char hex[AUDIT_SHA256_HEX])
{
    unsigned char buf[1 << 16], digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256_state st;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    crypto_hash_sha256_init(&st);
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        crypto_hash_sha256_update(&st, buf, got);
    const int bad = ferror(f);
    const int saved = errno;
    fclose(f);
    if (bad) {
        errno = saved ? saved : EIO;
        return -1;
    }
    crypto_hash_sha256_final(&st, digest);
    sodium_bin2hex(hex, AUDIT_SHA256_HEX, digest, sizeof digest);
    return 0;
}

double audit_log2_factorial(size_t n)
{
    return audit_lgamma((double)n + 1.0) / log(2.0);
}

static void subject_fact(fact *x, const audit_result *r)
{
    if (strcmp(r->kind, "builtin") == 0)
        snprintf(x->text, sizeof x->text, "built-in algorithm %s (%s); the lines below "
                 "are riffle's own shuffle (fisher-yates, deck)", r->subject,
                 r->algo != NULL && r->algo->fair ? "a correct shuffle"
                                                   : "DELIBERATELY WRONG reference");
    else if (strcmp(r->kind, "log") == 0)
        snprintf(x->text, sizeof x->text, "decks recorded by a game in %s: the game's "
                 "shuffler and generator, whatever they are", r->subject);
    else
        snprintf(x->text, sizeof x->text, "an external command, with its own algorithm "
                 "and generator (the facts below are riffle's own)");
}

static void key_fact(fact *x, const audit_result *r)
{
    size_t used = (size_t)snprintf(x->text, sizeof x->text, "%d bits; log2(n!) =",
                                   KEY_BITS);
    int all = 1;
    int has52 = 0;
    for (size_t i = 0; i < r->nsizes; i++)
        has52 |= r->sizes[i].n == 52;
    for (size_t i = 0; i < r->nsizes + !has52 && used < sizeof x->text; i++) {
        const size_t n = i < r->nsizes ? r->sizes[i].n : 52;
        const double bits = audit_log2_factorial(n);
        all &= bits <= KEY_BITS;
        used += (size_t)snprintf(x->text + used, sizeof x->text - used, "%s %.1f (n = %zu)",
                                 i ? "," : "", bits, n);
    }
    if (used < sizeof x->text)
        snprintf(x->text + used, sizeof x->text - used, "%s",
                 all ? ": the key can reach every ordering"
                     : ": beyond 256 bits (n >= 58) one key reaches at most 2^256 orderings");
}

static void trials_fact(fact *x, const audit_result *r)
{
    if (strcmp(r->kind, "builtin") == 0 && strcmp(r->mode, "exact") == 0)
        snprintf(x->text, sizeof x->text, "none: every sequence of draws enumerated");
    else if (strcmp(r->kind, "builtin") == 0)
        snprintf(x->text, sizeof x->text, "xoshiro256++ streams keyed from seed %llu "
                 "(reproducible); production draws from ChaCha20 as above",
                 (unsigned long long)r->seed);
    else
        snprintf(x->text, sizeof x->text, "the %s's own",
                 strcmp(r->kind, "log") == 0 ? "game" : "command");
}

/* The facts in order; returns their count. */
static size_t facts(fact *x, const audit_result *r, const audit_cert *c)
{
    size_t k = 0;
    x[k].label = "subject", x[k].key = "subject";
    subject_fact(&x[k++], r);
    x[k].label = "algorithm", x[k].key = "algorithm";
    snprintf(x[k++].text, sizeof x->text, "Fisher-Yates (Durstenfeld, CACM 7(7) 1964): from "
             "the last position down, each position takes a uniform draw among the cards "
             "not yet placed (rf_shuffle_u32; rf_deck deals with the same draws)");
    x[k].label = "generator", x[k].key = "generator";
    snprintf(x[k++].text, sizeof x->text, "ChaCha20 (Bernstein 2008) through libsodium %s: "
             "256-bit key, 64-bit nonce = stream number, keystream read 8 bytes at a time, "
             "little-endian", c != NULL && c->sodium_version ? c->sodium_version : "");
    x[k].label = "seeding", x[k].key = "seeding";
    snprintf(x[k++].text, sizeof x->text, "without --seed, 32 bytes from the operating "
             "system (getrandom(2); /dev/urandom where it is missing) key each generator, "
             "once per process; --seed derives the key by BLAKE2b for reproducible tests, "
             "and --production (or RIFFLE_PRODUCTION) refuses it");
    x[k].label = "key size", x[k].key = "key_size";
    key_fact(&x[k++], r);
    x[k].label = "fork and reseed", x[k].key = "fork_and_reseed";
    snprintf(x[k++].text, sizeof x->text, "an OS-keyed generator lives in memory the kernel "
             "wipes in a fork()ed child (MADV_WIPEONFORK), which rekeys from the OS before "
             "its first draw; without wipe-on-fork the process id is checked at every "
             "512-byte refill; no reseeding within a process");
    x[k].label = "scaling", x[k].key = "scaling";
    snprintf(x[k++].text, sizeof x->text, "unbiased bounded integers by rejection (Lemire, "
             "ACM TOMACS 2019, nearly divisionless): no modulo of raw words, no floating "
             "point");
    x[k].label = "stream contract", x[k].key = "stream_contract";
    snprintf(x[k++].text, sizeof x->text, "version %d (riffle %s): for a key and stream the "
             "words, draws and shuffles are fixed, pinned by golden tests; a change is a "
             "major version", RF_VERSION_MAJOR, rf_version());
    x[k].label = "this audit's draws", x[k].key = "audit_draws";
    trials_fact(&x[k++], r);
    x[k].label = "command line", x[k].key = "command_line";
    snprintf(x[k++].text, sizeof x->text, "%s",
             c != NULL && c->command_line ? c->command_line : "(not recorded)");
    return k;
}

/* ---- the three formats ------------------------------------------------------ */

void audit_cert_text(FILE *f, const audit_result *r, const audit_cert *c)
{
    fact x[FACTS];
    const size_t k = facts(x, r, c);
    fputs("certification:\n", f);
    for (size_t i = 0; i < k; i++) {
        fprintf(f, "  %-19s ", x[i].label);
        audit_fput_text(f, x[i].text);
        fputc('\n', f);
    }
    for (size_t i = 0; c != NULL && i < c->nfiles; i++) {
        const audit_cert_file *fl = &c->files[i];
        fprintf(f, "  sha256 %-12s %s  ", fl->what, fl->sha256[0] ? fl->sha256 : "-");
        audit_fput_text(f, fl->path);
        if (fl->note[0])
            fprintf(f, " (%s)", fl->note);
        fputc('\n', f);
    }
}

/* A JSON string: well-formed UTF-8 kept, any other byte as \u00HH (as the
 * reports' writers do). */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        const size_t len = audit_utf8_char(p);
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f || len == 0)
            fprintf(f, "\\u%04x", *p);
        else
            fwrite(p, 1, len, f);
        p += len ? len : 1;
    }
    fputc('"', f);
}

void audit_cert_json(FILE *f, const audit_result *r, const audit_cert *c)
{
    fact x[FACTS];
    const size_t k = facts(x, r, c);
    fputs("{", f);
    for (size_t i = 0; i < k; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, x[i].key);
        fputs(": ", f);
        json_string(f, x[i].text);
    }
    fprintf(f, ", \"key_bits\": %d, \"log2_factorial_52\": %.4f, \"files\": [", KEY_BITS,
            audit_log2_factorial(52));
    for (size_t i = 0; c != NULL && i < c->nfiles; i++) {
        const audit_cert_file *fl = &c->files[i];
        fputs(i ? ", {\"what\": " : "{\"what\": ", f);
        json_string(f, fl->what);
        fputs(", \"path\": ", f);
        json_string(f, fl->path);
        fputs(", \"sha256\": ", f);
        if (fl->sha256[0])
            json_string(f, fl->sha256);
        else
            fputs("null", f);
        fputs(", \"note\": ", f);
        json_string(f, fl->note);
        fputc('}', f);
    }
    fputs("]}", f);
}

static void html_string(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        const size_t len = audit_utf8_char(p);
        if (*p == '<')
            fputs("&lt;", f);
        else if (*p == '>')
            fputs("&gt;", f);
        else if (*p == '&')
            fputs("&amp;", f);
        else if (*p == '"' || *p == '\'')
            fprintf(f, "&#%d;", *p);
        else if (*p < 0x20 || *p == 0x7f || len == 0)
            fputs("&#xfffd;", f);
        else
            fwrite(p, 1, len, f);
        p += len ? len : 1;
    }
}

void audit_cert_html(FILE *f, const audit_result *r, const audit_cert *c)
{
    fact x[FACTS];
    const size_t k = facts(x, r, c);
    fputs("<h2>Certification</h2>\n<table>\n", f);
    for (size_t i = 0; i < k; i++) {
        fprintf(f, "<tr><th>%s</th><td>", x[i].label);
        html_string(f, x[i].text);
        fputs("</td></tr>\n", f);
    }
    for (size_t i = 0; c != NULL && i < c->nfiles; i++) {
        const audit_cert_file *fl = &c->files[i];
        fprintf(f, "<tr><th>SHA-256 of %s</th><td><code>%s</code> ", fl->what,
                fl->sha256[0] ? fl->sha256 : "-");
        html_string(f, fl->path);
        if (fl->note[0]) {
            fputs(" (", f);
            html_string(f, fl->note);
            fputc(')', f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}
