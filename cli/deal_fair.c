/*
 * deal_fair.c -- `riffle deal --commit` and `riffle verify`: commit and
 * reveal (riffle_fair.h, docs/provably-fair.md).
 *
 * deal --commit draws a 32-byte server seed from the operating system, saves
 * it as 64 hexadecimal digits and a newline to --save-seed's file (created
 * with mode 0600, never over an existing file, and removed again if the run
 * fails, so no seed is kept whose commitment was not published), prints
 * `commit: HEX` (SHA-256 of the seed) and then the deal, dealt from
 * ChaCha20 keyed by the seed, --client-seed and --nonce.
 *
 * verify takes the revealed seed (--server-seed=HEX or --server-seed-file),
 * checks SHA-256 of it against the commitment (--commit, or the `commit:`
 * line of the --deal text), deals again with the same deck options, and
 * compares with --deal's text, naming the first card that differs.
 * Without --deal it prints the deal as deal --commit printed it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "cleanup.h"
#include "deal_fair.h"

#define HEX_DIGITS (2 * RF_FAIR_SEED_BYTES)
/* A --deal text larger than this is not a printed deal. */
#define MAX_DEAL_TEXT (16u << 20)

static const char *cmd_of(const struct deal_fair *f)
{
    return f->verify ? "verify" : "deal";
}

int deal_fair_option(struct deal_fair *f, int opt, const char *arg)
{
    switch (opt) {
    case FAIR_OPT_COMMIT:
        f->commit = 1;
        return arg ? cli_set_once(&f->commit_hex, arg, "commitments") : CLI_CONTINUE;
    case FAIR_OPT_CLIENT_SEED:
        return cli_set_once(&f->client_seed, arg, "client seeds");
    case FAIR_OPT_NONCE:
        return cli_set_once(&f->nonce_arg, arg, "nonces");
    case FAIR_OPT_SAVE_SEED:
        return cli_set_once(&f->save_seed, arg, "seed files");
    case FAIR_OPT_SERVER_SEED:
        return cli_set_once(&f->server_hex, arg, "server seeds");
    case FAIR_OPT_SERVER_SEED_FILE:
        return cli_set_once(&f->server_file, arg, "server seed files");
    case FAIR_OPT_DEAL:
        return cli_set_once(&f->deal_file, arg, "deals");
    default:
        return DEAL_NOT_MORE;
    }
}

int deal_fair_wanted(const struct deal_fair *f)
{
    return f->verify || f->commit;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Exactly 2 * RF_FAIR_SEED_BYTES hexadecimal digits (either case) into out;
 * 0, or -1. */
static int parse_hex(const char *s, size_t len, uint8_t out[RF_FAIR_SEED_BYTES])
{
    if (len != HEX_DIGITS)
        return -1;
    for (size_t i = 0; i < RF_FAIR_SEED_BYTES; i++) {
        const int hi = hex_value((unsigned char)s[2 * i]);
        const int lo = hex_value((unsigned char)s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static void to_hex(char out[HEX_DIGITS + 1], const uint8_t bytes[RF_FAIR_SEED_BYTES])
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < RF_FAIR_SEED_BYTES; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[HEX_DIGITS] = '\0';
}

/* All of a file ("-": standard input) into a new string; NULL after a
 * message. */
static char *read_text(const char *path, size_t *len)
{
    const int std = strcmp(path, "-") == 0;
    FILE *in = std ? stdin : fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int err = in ? 0 : errno;
    errno = 0;
    while (!err) {
        char *more = n + 1 >= cap ? cli_grow(buf, &cap, 1, 4096) : buf;
        if (!more)
            err = ENOMEM;
        else
            buf = more;
        const size_t k = err ? 0 : fread(buf + n, 1, cap - n - 1, in);
        n += k;
        if (!err && k == 0)
            err = ferror(in) ? (errno ? errno : EIO) : -1;
        if (n > MAX_DEAL_TEXT)
            err = EFBIG;
    }
    if (in && !std)
        fclose(in);
    if (err != -1) {
        cli_error("%s: %s", cli_quote_file(path), strerror(err));
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The first line of s (its length, less a trailing CR) and where the next
 * begins. */
static size_t line_of(const char *s, const char **next)
{
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    *next = nl ? nl + 1 : s + len;
    if (len && s[len - 1] == '\r')
        len--;
    return len;
}

/* verify --deal: the text, less a first line `commit: HEX`, whose
 * commitment is taken. */
static int read_given_deal(struct deal_fair *f)
{
    char *text = read_text(f->deal_file, &f->given_len);
    if (!text)
        return CLI_FAIL;
    f->given = text;
    if (strncmp(text, "commit:", 7) != 0)
        return CLI_CONTINUE;
    const char *next, *hex = text + 7;
    hex += strspn(hex, " ");
    const size_t len = line_of(hex, &next);
    if (parse_hex(hex, len, f->commitment) != 0) {
        cli_error("%s: line 1: invalid commitment (64 hexadecimal digits)",
                  cli_quote_file(f->deal_file));
        return CLI_FAIL;
    }
    f->have_commitment = 1;
    f->commit_line = 1;
    f->given_len -= (size_t)(next - text);
    memmove(text, next, f->given_len + 1);
    return CLI_CONTINUE;
}

static int check_commit_options(const struct deal_fair *f, const struct cli_rng_opts *r)
{
    if (!f->commit) {
        const char *lone = f->client_seed ? "--client-seed" : f->nonce_arg ? "--nonce"
                         : f->save_seed ? "--save-seed" : NULL;
        return lone ? cli_usage("deal", "%s needs --commit", lone) : CLI_CONTINUE;
    }
    if (r->seed)
        return cli_usage("deal", "--seed cannot be combined with --commit: the server seed "
                                 "comes from the operating system");
    if (cli_rng_kind(r) != RF_RNG_CHACHA20)
        return cli_usage("deal", "--commit deals with chacha20 only");
    if (!f->save_seed)
        return cli_usage("deal", "--commit needs --save-seed=FILE (the server seed, to reveal "
                                 "after the game)");
    return CLI_CONTINUE;
}

static int check_verify_options(struct deal_fair *f)
{
    if (!f->server_hex == !f->server_file)
        return cli_usage("verify", f->server_hex ? "--server-seed and --server-seed-file "
                                                   "cannot be combined"
                                                 : "the server seed is missing: give "
                                                   "--server-seed=HEX or --server-seed-file=FILE");
    if (f->server_hex && parse_hex(f->server_hex, strlen(f->server_hex), f->server) != 0)
        return cli_usage("verify", "invalid server seed %s (64 hexadecimal digits)",
                         cli_quote(f->server_hex));
    uint8_t c[RF_FAIR_COMMIT_BYTES];
    if (f->commit_hex && parse_hex(f->commit_hex, strlen(f->commit_hex), c) != 0)
        return cli_usage("verify", "invalid commitment %s (64 hexadecimal digits)",
                         cli_quote(f->commit_hex));
    if (f->deal_file && read_given_deal(f) != CLI_CONTINUE)
        return CLI_FAIL;
    if (f->commit_hex && f->have_commitment && memcmp(c, f->commitment, sizeof c) != 0) {
        cli_error("commitment mismatch: --commit is not the commitment of %s",
                  cli_quote_file(f->deal_file));
        return CLI_FAIL;
    }
    if (f->commit_hex)
        memcpy(f->commitment, c, sizeof c), f->have_commitment = 1;
    if (!f->have_commitment)
        return cli_usage("verify", "no commitment to check: give --commit=HEX or a --deal "
                                   "that begins with its commit line");
    return CLI_CONTINUE;
}

int deal_fair_check(struct deal_fair *f, const struct cli_rng_opts *r, const char *conflict)
{
    f->guard = -1;
    if (f->nonce_arg) {
        int over;
        if (cli_parse_u64(f->nonce_arg, &f->nonce, &over) != 0 || over)
            return cli_usage(cmd_of(f), "invalid nonce %s (0 to 2^64-1)",
                             cli_quote(f->nonce_arg));
    }
    if (deal_fair_wanted(f) && conflict)
        return f->verify ? cli_usage("verify", "%s cannot be verified", conflict)
                         : cli_usage("deal", "%s cannot be combined with --commit", conflict);
    return f->verify ? check_verify_options(f) : check_commit_options(f, r);
}

/* The server seed file: 64 hexadecimal digits, then at most a newline. */
static int read_seed_file(struct deal_fair *f)
{
    size_t len;
    char *text = read_text(f->server_file, &len);
    if (!text)
        return -1;
    const char *next;
    const size_t digits = line_of(text, &next);
    const int bad = *next != '\0' || parse_hex(text, digits, f->server) != 0;
    sodium_memzero(text, len);
    free(text);
    if (bad)
        cli_error("%s: not a server seed (64 hexadecimal digits)",
                  cli_quote_file(f->server_file));
    return bad ? -1 : 0;
}

static int check_commitment(struct deal_fair *f)
{
    uint8_t c[RF_FAIR_COMMIT_BYTES];
    if (f->server_file && read_seed_file(f) != 0)
        return -1;
    const rf_status s = rf_fair_commit(c, f->server);
    if (s != RF_OK) {
        cli_error("cannot hash the server seed: %s", rf_strerror(s));
        return -1;
    }
    if (memcmp(c, f->commitment, sizeof c) == 0)
        return 0;
    char got[HEX_DIGITS + 1], want[HEX_DIGITS + 1];
    to_hex(got, c);
    to_hex(want, f->commitment);
    cli_error("commitment mismatch: SHA-256 of the server seed is %s, the commitment is %s",
              got, want);
    return -1;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        const ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        p += k, n -= (size_t)k;
    }
    return 0;
}

/* The seed, as hex and a newline, into a new file of mode 0600, guarded
 * against signals until the run ends. */
static int save_seed(struct deal_fair *f)
{
    char line[HEX_DIGITS + 2];
    to_hex(line, f->server);
    line[HEX_DIGITS] = '\n';
    (void)cleanup_init();
    sigset_t old;
    cleanup_hold(&old);
    const int fd = open(f->save_seed, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int err = fd < 0 ? errno : 0;
    if (!err) {
        f->seed_saved = 1;
        f->guard = cleanup_add(f->save_seed);
        err = f->guard < 0 ? ENAMETOOLONG : 0;
    }
    cleanup_release(&old);
    if (!err)
        err = write_all(fd, line, HEX_DIGITS + 1);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (fd >= 0 && close(fd) != 0 && !err)
        err = errno;
    sodium_memzero(line, sizeof line);
    if (err)
        cli_error("%s: %s", cli_quote_file(f->save_seed), strerror(err));
    return err ? -1 : 0;
}

rf_rng *deal_fair_rng(struct deal_fair *f, rf_rng *storage)
{
    rf_status s = RF_OK;
    if (f->verify) {
        if (check_commitment(f) != 0)
            return NULL;
    } else {
        s = rf_entropy(f->server, sizeof f->server);
        if (s == RF_OK)
            s = rf_fair_commit(f->commitment, f->server);
        if (s == RF_OK && save_seed(f) != 0)
            return NULL;
    }
    const char *client = f->client_seed ? f->client_seed : "";
    if (s == RF_OK)
        s = rf_fair_rng_init(storage, f->server, client, strlen(client), f->nonce);
    if (s != RF_OK) {
        cli_error("cannot start the random generator: %s", rf_strerror(s));
        return NULL;
    }
    return storage;
}

FILE *deal_fair_open(struct deal_fair *f)
{
    if (f->verify) {
        FILE *m = open_memstream(&f->dealt, &f->dealt_len);
        if (!m)
            cli_error("memory exhausted");
        return m;
    }
    if (f->commit) {
        char hex[HEX_DIGITS + 1];
        to_hex(hex, f->commitment);
        printf("commit: %s\n", hex);
    }
    return stdout;
}

/* A line's label (up to its first ':') and its cards, the words after. */
struct words {
    const char *p, *end;
};

static int next_word(struct words *w, const char **word, size_t *len)
{
    while (w->p < w->end && *w->p == ' ')
        w->p++;
    if (w->p == w->end)
        return 0;
    *word = w->p;
    while (w->p < w->end && *w->p != ' ')
        w->p++;
    *len = (size_t)(w->p - *word);
    return 1;
}

/* Two lines that differ: which card, or the label, or the count. */
static void report_line(const char *file, size_t line_no, const char *got, size_t got_len,
                        const char *want, size_t want_len)
{
    const char *gc = memchr(got, ':', got_len), *wc = memchr(want, ':', want_len);
    if (!gc || !wc || gc - got != wc - want || memcmp(got, want, (size_t)(gc - got)) != 0) {
        cli_error("%s: deal mismatch: line %zu is '%.*s', the seeds deal '%.*s'", file, line_no,
                  (int)got_len, got, (int)want_len, want);
        return;
    }
    const int label = (int)(wc - want);
    struct words g = {gc + 1, got + got_len}, w = {wc + 1, want + want_len};
    const char *a, *b;
    size_t alen, blen;
    for (size_t card = 1;; card++) {
        const int has_a = next_word(&g, &a, &alen), has_b = next_word(&w, &b, &blen);
        if (!has_a && !has_b)
            break;
        if (has_a && has_b && alen == blen && memcmp(a, b, alen) == 0)
            continue;
        if (!has_b)
            cli_error("%s: deal mismatch: %.*s has more than the %zu cards the seeds deal", file, label, want,
                      card - 1);
        else if (!has_a)
            cli_error("%s: deal mismatch: %.*s has %zu cards, the seeds deal more", file, label, want,
                      card - 1);
        else
            cli_error("%s: deal mismatch: %.*s card %zu is '%.*s', the seeds deal '%.*s'", file, label,
                      want, card, (int)alen, a, (int)blen, b);
        return;
    }
    cli_error("%s: deal mismatch: line %zu is '%.*s', the seeds deal '%.*s'", file, line_no,
              (int)got_len, got, (int)want_len, want);
}

/* The given deal against the one dealt again, line by line. */
static int compare_deals(const struct deal_fair *f)
{
    const char *file = cli_quote_file(f->deal_file);
    const char *g = f->given, *w = f->dealt;
    for (size_t line_no = f->commit_line ? 2 : 1;; line_no++) {
        if (!*g && !*w)
            return CLI_OK;
        const char *gn, *wn;
        const size_t glen = line_of(g, &gn), wlen = line_of(w, &wn);
        if (!*g || !*w) {
            cli_error(*g ? "%s: deal mismatch: line %zu, '%.*s', is more than the seeds deal"
                         : "%s: deal mismatch: the deal ends before line %zu, '%.*s', of the "
                           "seeds' deal",
                      file, line_no, (int)(*g ? glen : wlen), *g ? g : w);
            return CLI_FAIL;
        }
        if (glen != wlen || memcmp(g, w, glen) != 0) {
            report_line(file, line_no, g, glen, w, wlen);
            return CLI_FAIL;
        }
        g = gn, w = wn;
    }
}

int deal_fair_close(struct deal_fair *f, FILE *out)
{
    if (!f->verify)
        return CLI_OK;
    if (fclose(out) != 0) {
        cli_error("memory exhausted");
        return CLI_FAIL;
    }
    if (f->deal_file) {
        if (compare_deals(f) != CLI_OK)
            return CLI_FAIL;
        char hex[HEX_DIGITS + 1];
        to_hex(hex, f->commitment);
        printf("verified: commitment %s\n", hex);
        return CLI_OK;
    }
    char hex[HEX_DIGITS + 1];
    to_hex(hex, f->commitment);
    printf("commit: %s\n", hex);
    fwrite(f->dealt, 1, f->dealt_len, stdout);
    return CLI_OK;
}

void deal_fair_finish(struct deal_fair *f, int status)
{
    if (f->seed_saved && status != CLI_OK)
        unlink(f->save_seed);
    cleanup_remove(f->guard);
    sodium_memzero(f->server, sizeof f->server);
    free(f->given);
    free(f->dealt);
}
