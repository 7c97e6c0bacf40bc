/*
 * cmd_deal.c -- `riffle deal`: deal a freshly shuffled deck to hands with the
 * library's deck (rf_deck_deal_n).
 *
 * Deal order (part of the seeded output contract, pinned by
 * tests/cli/cli_deal.bats): the deck starts in order -- spades, hearts,
 * diamonds, clubs, each A 2 .. 10 J Q K, then the black and the red joker --
 * or in the order of a custom deck; cards are dealt one at a time round the
 * table, card j of the deal going to hand j mod H for the first H*C cards,
 * and the next K cards go to the kitty (the board in hold'em).  Any fixed assignment of a
 * uniformly dealt sequence is uniform; round the table is how people deal.
 *
 * --rank deals the rest of the deck too (after the same first cards) and
 * prints the lexicographic rank (riffle_perm.h) of the whole dealt order as a
 * permutation of the deck positions: the deal as one number, which
 * `riffle unrank` turns back into the order.
 *
 * --count (deal_count.c) deals the whole deck many times, one deal a line;
 * the blackjack and baccarat presets (deal_shoe.c) deal casino shoes.
 *
 * --commit (deal_fair.c) deals from a fresh server seed and prints its
 * commitment first; `riffle verify` (cmd_verify.c) runs this command with
 * the revealed seed and checks the deal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_options.h"
#include "commands.h"
#include "deal.h"
#include "deal_fair.h"
#include "riffle_io.h"
#include "riffle_perm.h"

#define STD_CARDS 52
#define MAX_NAME 32

enum { OPT_HELP = DEAL_OPT_HELP, OPT_PLAYERS = DEAL_OPT_PLAYERS, OPT_RANK = DEAL_OPT_RANK };

struct deal_opts {
    unsigned deck;          /* 52 or 54 for the standard decks, 0 custom */
    const char *deck_file;
    char **cards;           /* custom cards from the arguments */
    int n_cards;
    uint64_t hands, per_hand, kitty;
    int have_hands, have_per_hand, have_kitty;
    const char *preset;
    const char *deck_arg, *hands_arg, *per_hand_arg, *kitty_arg; /* as given */
    int unicode, json, rank;
    struct cli_rng_opts rng;
    struct deal_more more; /* --count, --csv, --header, --decks, --cut */
    struct deal_fair fair; /* --commit; riffle verify */
};

/* A deck ready to deal: names of the cards in deck order. */
struct table {
    char **names;
    size_t n;
    rf_records custom; /* storage of a --deck-file deck */
    const char *hand_label; /* "hand" / "player"; NULL: seat names */
    const char *kitty_label;
};

static const char *const seats[4] = {"North", "East", "South", "West"};

/* The command in usage messages: "deal", or "verify" (deal_command). */
static const char *deal_name = "deal";

static int deal_help(void)
{
    return cli_print_stdout(
        "Usage: riffle deal [OPTION]... [CARD]...\n"
        "Deal a freshly shuffled deck of cards to hands.\n"
        "\n"
        "With no options, deal a 52-card deck to 4 hands of 13 cards.  CARD arguments\n"
        "make a custom deck of those cards.\n"
        "\n"
        "  -d, --deck=N           52 (default) or 54 (with two jokers: BJ and RJ)\n"
        "  -f, --deck-file=FILE   custom deck: one card per line of FILE (LF or CRLF)\n"
        "  -H, --hands=N          number of hands (default 4)\n"
        "      --players=N        the same as --hands\n"
        "  -c, --cards=N          cards per hand (default: the deck, less any --kitty,\n"
        "                           divided evenly)\n"
        "  -k, --kitty=N          cards dealt to the kitty after the hands\n"
        "                           (default: all the cards left over)\n"
        "  -p, --preset=NAME      bridge     4 hands of 13 (North East South West)\n"
        "                         holdem     --players (default 6) x 2, and a 5-card board\n"
        "                         doudizhu   54 cards: 3 hands of 17 and a 3-card kitty\n"
        "                         blackjack  a shoe of 6 decks: 1 card burned, the cut card\n"
        "                                      a quarter of the shoe from the end\n"
        "                         baccarat   a shoe of 8 decks: the first card and as many\n"
        "                                      more as its value burned, the cut card 16\n"
        "                                      cards from the end\n"
        "      --decks=N          a blackjack or baccarat shoe of N decks (1 to 8)\n"
        "      --cut=N            the cut card N cards from the end of the shoe\n"
        "  -u, --unicode          suit symbols: A\u2660 K\u2665 10\u2666 2\u2663\n"
        "  -j, --json             JSON output (valid UTF-8: a byte of a card name\n"
        "                           that is not UTF-8 is written as \\ufffd)\n"
        "      --rank             also print the number of the deal: the lexicographic\n"
        "                           rank of the whole deck in dealt order (`rank: N`,\n"
        "                           or \"rank\" in JSON, a string); `riffle unrank\n"
        "                           --cards N` gives the order back (a custom deck:\n"
        "                           `riffle unrank --size=CARDS N`, positions from 0)\n"
        "      --count=N          deal the whole deck N times, one deal a line: its\n"
        "                           cards in dealt order, separated by spaces (with\n"
        "                           --json: one JSON object a line)\n"
        "      --csv              with --count: cards separated by commas (RFC 4180)\n"
        "      --header           with --csv: first the line card1,card2,...\n"
        "      --seed=S           reproducible deal (S: decimal integer or any string)\n"
        "      --rng=NAME         generator: chacha20 (default), xoshiro256++, pcg64\n"
        "      --production       refuse --seed (also when the environment has\n"
        "                           RIFFLE_PRODUCTION=1)\n"
        "      --commit           provably fair: deal from a fresh server seed and\n"
        "                           print its commitment first (`commit: HEX`);\n"
        "                           `riffle verify` checks the deal after the game\n"
        "      --save-seed=FILE   with --commit (required): the server seed, written\n"
        "                           to a new FILE of mode 0600\n"
        "      --client-seed=S    with --commit: the player's seed (default: empty)\n"
        "      --nonce=N          with --commit: the game's number (default 0)\n"
        "      --help             display this help and exit\n"
        "\n"
        "Cards are dealt one at a time round the table, then to the kitty.  Without\n"
        "--seed the deck is shuffled by ChaCha20 keyed from the operating system.\n"
        "With --count, deal k+1 continues the generator where deal k left it; the\n"
        "first is the order `riffle deal -H 1` deals.  A shoe prints the burned cards,\n"
        "the cards before the cut card and the cards after it.\n");
}

static const struct option deal_longopts[] = {
    {"deck", required_argument, NULL, 'd'},
    {"deck-file", required_argument, NULL, 'f'},
    {"hands", required_argument, NULL, 'H'},
    {"players", required_argument, NULL, OPT_PLAYERS},
    {"cards", required_argument, NULL, 'c'},
    {"kitty", required_argument, NULL, 'k'},
    {"preset", required_argument, NULL, 'p'},
    {"unicode", no_argument, NULL, 'u'},
    {"json", no_argument, NULL, 'j'},
    {"rank", no_argument, NULL, OPT_RANK},
    {"seed", required_argument, NULL, CLI_OPT_SEED},
    {"rng", required_argument, NULL, CLI_OPT_RNG},
    {"production", no_argument, NULL, CLI_OPT_PRODUCTION},
    {"help", no_argument, NULL, OPT_HELP},
    DEAL_MORE_LONGOPTS,
    DEAL_FAIR_LONGOPTS,
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_deal_options = {"deal", 0, "d:f:H:c:k:p:uj", deal_longopts};

static int number(const char *arg, const char *what, uint64_t *v, int *have)
{
    int over;
    if (cli_parse_u64(arg, v, &over) != 0 || over)
        return cli_usage(deal_name, "invalid %s: %s", what, cli_quote(arg));
    *have = 1;
    return CLI_CONTINUE;
}

static int on_deal_option(struct deal_opts *o, int c, const char *arg)
{
    const int r = cli_rng_option(&o->rng, c, arg);
    if (r != CLI_NOT_RNG)
        return r;
    int m = deal_count_option(&o->more, c, arg);
    if (m == DEAL_NOT_MORE)
        m = deal_shoe_option(&o->more, c, arg);
    if (m == DEAL_NOT_MORE)
        m = deal_fair_option(&o->fair, c, arg);
    if (m != DEAL_NOT_MORE)
        return m;
    uint64_t v;
    int dummy;
    switch (c) {
    case 'd':
        if (cli_set_once(&o->deck_arg, arg, "decks") != CLI_CONTINUE ||
            number(arg, "deck", &v, &dummy) != CLI_CONTINUE)
            return CLI_FAIL;
        if (v != 52 && v != 54)
            return cli_usage(deal_name, "invalid deck: %s (52 or 54)", cli_quote(arg));
        o->deck = (unsigned)v;
        return CLI_CONTINUE;
    case 'f':
        return cli_set_once(&o->deck_file, arg, "deck files");
    case 'H':
    case OPT_PLAYERS:
        if (cli_set_once(&o->hands_arg, arg, "hand counts") != CLI_CONTINUE)
            return CLI_FAIL;
        return number(arg, "number of hands", &o->hands, &o->have_hands);
    case 'c':
        if (cli_set_once(&o->per_hand_arg, arg, "card counts") != CLI_CONTINUE)
            return CLI_FAIL;
        return number(arg, "number of cards", &o->per_hand, &o->have_per_hand);
    case 'k':
        if (cli_set_once(&o->kitty_arg, arg, "kitty sizes") != CLI_CONTINUE)
            return CLI_FAIL;
        return number(arg, "kitty size", &o->kitty, &o->have_kitty);
    case 'p':
        return cli_set_once(&o->preset, arg, "presets");
    case 'u':
        o->unicode = 1;
        return CLI_CONTINUE;
    case 'j':
        o->json = 1;
        return CLI_CONTINUE;
    case OPT_RANK:
        o->rank = 1;
        return CLI_CONTINUE;
    case OPT_HELP:
        return o->fair.verify ? verify_help() : deal_help();
    default:
        return cli_try_help(deal_name);
    }
}

/* Presets fill what the user did not set. */
static int apply_preset(struct deal_opts *o, struct table *t)
{
    t->hand_label = "hand";
    t->kitty_label = "kitty";
    if (!o->preset)
        return CLI_CONTINUE;
    uint64_t hands, per, kitty;
    if (strcmp(o->preset, "bridge") == 0) {
        o->deck = o->deck ? o->deck : 52;
        hands = 4, per = 13, kitty = 0;
        t->hand_label = NULL;
    } else if (strcmp(o->preset, "holdem") == 0) {
        o->deck = o->deck ? o->deck : 52;
        hands = 6, per = 2, kitty = 5;
        t->hand_label = "player";
        t->kitty_label = "board";
    } else if (strcmp(o->preset, "doudizhu") == 0) {
        o->deck = o->deck ? o->deck : 54;
        hands = 3, per = 17, kitty = 3;
        t->hand_label = "player";
    } else {
        return cli_usage(deal_name,
                         "unknown preset %s (bridge, holdem, doudizhu, blackjack or baccarat)",
                         cli_quote(o->preset));
    }
    if (!o->have_hands)
        o->hands = hands, o->have_hands = 1;
    if (!o->have_per_hand)
        o->per_hand = per, o->have_per_hand = 1;
    if (!o->have_kitty)
        o->kitty = kitty, o->have_kitty = 1;
    if (o->hands != 4)
        t->hand_label = t->hand_label ? t->hand_label : "hand";
    return CLI_CONTINUE;
}

static char *standard_name(size_t card, int unicode)
{
    static const char *const ranks[13] = {"A", "2", "3", "4", "5", "6", "7",
                                          "8", "9", "10", "J", "Q", "K"};
    static const char *const letters[4] = {"S", "H", "D", "C"};
    static const char *const symbols[4] = {"\u2660", "\u2665", "\u2666", "\u2663"};
    char buf[MAX_NAME];
    if (card >= STD_CARDS) {
        const int red = card > STD_CARDS;
        if (unicode) /* U+1F0CF PLAYING CARD BLACK JOKER, U+1F0BF ... RED JOKER */
            snprintf(buf, sizeof buf, "%s", red ? "\U0001F0BF" : "\U0001F0CF");
        else
            snprintf(buf, sizeof buf, "%s", red ? "RJ" : "BJ");
    } else {
        snprintf(buf, sizeof buf, "%s%s", ranks[card % 13],
                 unicode ? symbols[card / 13] : letters[card / 13]);
    }
    return strdup(buf);
}

static int standard_deck(struct table *t, unsigned n, int unicode)
{
    t->names = calloc(n, sizeof *t->names);
    if (!t->names)
        return -1;
    t->n = n;
    for (size_t i = 0; i < n; i++)
        if (!(t->names[i] = standard_name(i, unicode)))
            return -1;
    return 0;
}

static int names_from_args(struct table *t, char **cards, int n)
{
    t->names = calloc((size_t)n, sizeof *t->names);
    if (!t->names)
        return -1;
    for (int i = 0; i < n; i++)
        if (!(t->names[t->n++] = strdup(cards[i])))
            return -1;
    return 0;
}

/* One card per line; a line may end in CRLF (the CR is not part of the
 * name); empty lines are skipped. */
static int names_from_file(struct table *t, const char *path)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    int e = fd < 0 ? errno : rf_records_add_fd(&t->custom, fd);
    if (fd >= 0)
        close(fd);
    if (!e)
        e = rf_records_index(&t->custom);
    if (!e && !(t->names = calloc(t->custom.n ? t->custom.n : 1, sizeof *t->names)))
        e = ENOMEM;
    for (size_t i = 0; !e && i < t->custom.n; i++) {
        const uint64_t off = t->custom.offs[i];
        size_t len = rf_records_length(&t->custom, off);
        if (len && t->custom.data[off + len - 1] == '\r')
            len--;
        if (len == 0)
            continue;
        if (!(t->names[t->n++] = strndup((const char *)t->custom.data + off, len)))
            e = ENOMEM;
    }
    if (e)
        cli_error("%s: %s", cli_quote_file(path), strerror(e));
    return e ? -2 : 0;
}

static int build_deck(struct deal_opts *o, struct table *t)
{
    int r;
    if (o->deck_file)
        r = names_from_file(t, o->deck_file);
    else if (o->n_cards > 0)
        r = names_from_args(t, o->cards, o->n_cards);
    else
        r = standard_deck(t, o->deck ? o->deck : STD_CARDS, o->unicode);
    if (r == -1)
        cli_error("memory exhausted");
    if (r == 0 && t->n == 0) {
        cli_error("the deck is empty");
        r = -1;
    }
    return r == 0 ? 0 : -1;
}

static void free_table(struct table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
    rf_records_free(&t->custom);
}

/* Hands, cards per hand and kitty against the deck size. */
static int plan(struct deal_opts *o, size_t deck)
{
    if (!o->have_hands)
        o->hands = 4;
    if (o->hands == 0)
        return cli_usage(deal_name, "the number of hands must be at least 1");
    const uint64_t kitty = o->have_kitty ? o->kitty : 0;
    if (!o->have_per_hand) /* what is left after the kitty, evenly */
        o->per_hand = (kitty <= deck ? deck - kitty : 0) / o->hands;
    if (o->hands > deck || o->per_hand > deck || kitty > deck ||
        o->hands * o->per_hand + kitty > deck)
        return cli_usage(deal_name,
                         "cannot deal %llu hands of %llu cards and a kitty of %llu "
                         "from a deck of %zu",
                         (unsigned long long)o->hands, (unsigned long long)o->per_hand,
                         (unsigned long long)kitty, deck);
    if (!o->have_kitty)
        o->kitty = deck - o->hands * o->per_hand;
    return CLI_CONTINUE;
}

static void hand_name(const struct table *t, const struct deal_opts *o, size_t h, char *buf,
                      size_t len)
{
    if (!t->hand_label && o->hands == 4)
        snprintf(buf, len, "%s", seats[h]);
    else
        snprintf(buf, len, "%s %zu", t->hand_label ? t->hand_label : "hand", h + 1);
}

/* The length of the well-formed UTF-8 sequence at s (RFC 3629, section 4:
 * no overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_length(const unsigned char *s)
{
    const unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* A JSON string (RFC 8259) that is always valid UTF-8: '"', '\\' and the
 * control bytes escaped, well-formed UTF-8 copied, and each byte that is not
 * part of well-formed UTF-8 (a card name from a Latin-1 file, say) written as
 * \ufffd, U+FFFD REPLACEMENT CHARACTER -- as the Unicode Standard (section
 * 3.9, "U+FFFD Substitution of Maximal Subparts") replaces them, one per
 * byte here. */
void json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        const unsigned char c = *s;
        const size_t n = utf8_length(s);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (n == 0)
            fputs("\\ufffd", f);
        else
            fwrite(s, 1, n, f);
        s += n ? n : 1;
    }
    fputc('"', f);
}

/* The cards of hand h (or of the kitty when h == hands) from the dealt order. */
static void print_cards(FILE *f, const struct table *t, const struct deal_opts *o,
                        const size_t *dealt, size_t h, int json)
{
    const size_t hands = (size_t)o->hands;
    const size_t count = h < hands ? (size_t)o->per_hand : (size_t)o->kitty;
    for (size_t i = 0; i < count; i++) {
        const size_t j = h < hands ? i * hands + h : hands * (size_t)o->per_hand + i;
        if (i)
            fputs(json ? ", " : " ", f);
        if (json)
            json_string(f, t->names[dealt[j]]);
        else
            fputs(t->names[dealt[j]], f);
    }
}

static void print_text(FILE *f, const struct table *t, const struct deal_opts *o,
                       const size_t *dealt)
{
    char name[MAX_NAME];
    int width = (int)strlen(t->kitty_label);
    for (size_t h = 0; h < o->hands; h++) {
        hand_name(t, o, h, name, sizeof name);
        width = (int)strlen(name) > width ? (int)strlen(name) : width;
    }
    for (size_t h = 0; h <= o->hands; h++) {
        if (h == o->hands && o->kitty == 0)
            break;
        if (h < o->hands)
            hand_name(t, o, h, name, sizeof name);
        else
            snprintf(name, sizeof name, "%s", t->kitty_label);
        fprintf(f, "%s:%*s", name, width + 1 - (int)strlen(name), "");
        print_cards(f, t, o, dealt, h, 0);
        fputc('\n', f);
    }
}

static void print_json(const struct table *t, const struct deal_opts *o, const size_t *dealt,
                       const char *rank)
{
    char name[MAX_NAME];
    printf("{\n  \"deck\": %zu,\n  \"hands\": [\n", t->n);
    for (size_t h = 0; h < o->hands; h++) {
        hand_name(t, o, h, name, sizeof name);
        printf("    {\"name\": \"%s\", \"cards\": [", name);
        print_cards(stdout, t, o, dealt, h, 1);
        printf("]}%s\n", h + 1 < o->hands ? "," : "");
    }
    printf("  ],\n  \"kitty\": {\"name\": \"%s\", \"cards\": [", t->kitty_label);
    print_cards(stdout, t, o, dealt, (size_t)o->hands, 1);
    printf("]}%s\n", rank ? "," : "");
    if (rank)
        printf("  \"rank\": \"%s\"\n", rank);
    printf("}\n");
}

/* --rank: the decimal rank of the whole dealt order into a new string, or
 * NULL after a message.  The order is a permutation of the deck positions
 * 0..n-1, so its rank is the deal as one number below n!. */
static char *deal_rank(const size_t *dealt, size_t n)
{
    const size_t len = rf_rank_string_size(n);
    char *buf = len != SIZE_MAX ? malloc(len) : NULL;
    if (!buf) {
        cli_error("memory exhausted");
        return NULL;
    }
    const rf_status s = rf_rank_string(dealt, n, buf, len, NULL, NULL, 0);
    if (s != RF_OK) {
        cli_error("cannot rank the deal: %s", rf_strerror(s));
        free(buf);
        return NULL;
    }
    return buf;
}

static int deal_and_print(const struct table *t, struct deal_opts *o, rf_rng *g)
{
    /* --rank deals the whole deck: the deck deals one card at a time, so the
     * first `total` cards are the ones dealt without it. */
    const size_t total = (size_t)(o->hands * o->per_hand + o->kitty);
    const size_t count = o->rank ? t->n : total;
    size_t *deck_cards = malloc(t->n * sizeof *deck_cards);
    size_t *dealt = malloc((count ? count : 1) * sizeof *dealt);
    char *rank = NULL;
    int status = CLI_FAIL;
    if (!deck_cards || !dealt) {
        cli_error("memory exhausted");
        goto done;
    }
    rf_deck deck;
    rf_deck_init(&deck, deck_cards, t->n);
    const rf_status s = rf_deck_deal_n(&deck, g, count, dealt);
    if (s != RF_OK) {
        cli_error("%s", rf_strerror(s));
        goto done;
    }
    if (o->rank && !(rank = deal_rank(dealt, t->n)))
        goto done;
    if (o->json) {
        print_json(t, o, dealt, rank);
    } else {
        FILE *out = deal_fair_open(&o->fair); /* stdout but for a fair deal */
        if (!out)
            goto done;
        print_text(out, t, o, dealt);
        if (rank)
            fprintf(out, "rank: %s\n", rank);
        if (deal_fair_close(&o->fair, out) != CLI_OK)
            goto done;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("write error: %s", strerror(errno));
        goto done;
    }
    status = CLI_OK;
done:
    free(rank);
    free(deck_cards);
    free(dealt);
    return status;
}

static int parse_deal(int argc, char **argv, struct deal_opts *o, int verify)
{
    const struct cli_options *table = verify ? &cli_verify_options : &cli_deal_options;
    deal_name = verify ? "verify" : "deal";
    memset(o, 0, sizeof *o);
    o->fair.verify = verify;
    o->fair.guard = -1;
    for (;;) {
        const int c = getopt_long(argc, argv, table->shortopts, table->longopts, NULL);
        if (c == -1)
            break;
        const int r = on_deal_option(o, c, optarg);
        if (r != CLI_CONTINUE)
            return r;
    }
    o->cards = argv + optind;
    o->n_cards = argc - optind;
    if (o->n_cards > 0 && (o->deck_file || o->deck))
        return cli_usage(deal_name, "CARD arguments cannot be combined with --deck or --deck-file");
    if (o->deck_file && o->deck)
        return cli_usage(deal_name, "--deck and --deck-file cannot be combined");
    if (cli_rng_check(&o->rng, "deal") != CLI_OK ||
        cli_production_check(&o->rng, "deal") != CLI_OK)
        return CLI_FAIL;
    return CLI_CONTINUE;
}

/* The first of the options set in o that --count (shoe 0) or a shoe preset
 * (shoe 1) does not combine with, or NULL. */
static const char *not_with_mode(const struct deal_opts *o, int shoe)
{
    if (o->hands_arg)
        return "--hands";
    if (o->per_hand_arg)
        return "--cards";
    if (o->kitty_arg)
        return "--kitty";
    if (o->rank)
        return "--rank";
    if (!shoe)
        return o->preset ? "--preset" : NULL;
    if (o->deck_arg)
        return "--deck";
    if (o->deck_file)
        return "--deck-file";
    return o->n_cards > 0 ? "CARD arguments" : NULL;
}

/* --count and the shoes against the other options. */
static int check_modes(struct deal_opts *o)
{
    const int shoe = deal_shoe_preset(o->preset);
    if (deal_shoe_check(&o->more, o->preset) != CLI_CONTINUE)
        return CLI_FAIL;
    if (!shoe && deal_count_wanted(&o->more) &&
        deal_count_check(&o->more) != CLI_CONTINUE)
        return CLI_FAIL;
    if (o->more.csv && o->json)
        return cli_usage(deal_name, "--csv and --json cannot be combined");
    const char *unfair = o->json ? "--json" : o->more.count_arg ? "--count" : NULL;
    if (deal_fair_check(&o->fair, &o->rng, shoe ? "--preset" : unfair) != CLI_CONTINUE)
        return CLI_FAIL;
    const char *bad = shoe || o->more.count_arg ? not_with_mode(o, shoe) : NULL;
    if (bad && shoe)
        return cli_usage(deal_name, "%s cannot be combined with --preset=%s", bad, o->preset);
    if (bad)
        return cli_usage(deal_name, "--count cannot be combined with %s", bad);
    return CLI_CONTINUE;
}

static int deal_mode(const struct table *t, struct deal_opts *o, rf_rng *g)
{
    if (deal_shoe_preset(o->preset))
        return deal_shoe_run(t->names, &o->more, o->preset, o->json, g);
    if (o->more.count_arg)
        return deal_count_run(t->names, t->n, &o->more, o->json, g);
    return deal_and_print(t, o, g);
}

int cmd_deal(int argc, char **argv)
{
    return deal_command(argc, argv, 0);
}

int deal_command(int argc, char **argv, int verify)
{
    struct deal_opts o;
    struct table t;
    memset(&t, 0, sizeof t);
    rf_records_init(&t.custom, '\n');
    int status = parse_deal(argc, argv, &o, verify);
    if (status == CLI_CONTINUE)
        status = check_modes(&o);
    const int mode = deal_shoe_preset(o.preset) || o.more.count_arg;
    if (status == CLI_CONTINUE && !mode)
        status = apply_preset(&o, &t);
    if (status != CLI_CONTINUE) {
        deal_fair_finish(&o.fair, status);
        return status;
    }
    status = CLI_FAIL;
    if (build_deck(&o, &t) != 0 || (!mode && plan(&o, t.n) != CLI_CONTINUE))
        goto done;
    rf_rng storage;
    rf_rng *g = deal_fair_wanted(&o.fair) ? deal_fair_rng(&o.fair, &storage)
                                          : cli_rng_make(&o.rng, &storage);
    if (g) {
        status = deal_mode(&t, &o, g);
        cli_rng_release(g, &storage);
    }
done:
    deal_fair_finish(&o.fair, status);
    free_table(&t);
    return status;
}
