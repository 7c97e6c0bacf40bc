/*
 * cmd_verify.c -- `riffle verify`: check a provably fair deal after the
 * server seed is revealed.  The command is deal's (cmd_deal.c) with the
 * revealed seed in place of a generator and a comparison in place of the
 * output; deal_fair.c does both.  Its table holds deal's deck options, so
 * that the deal is dealt and printed as `riffle deal --commit` printed it.
 */
#include <getopt.h>
#include <stddef.h>

#include "cli_options.h"
#include "commands.h"
#include "deal_fair.h"

int verify_help(void)
{
    return cli_print_stdout(
        "Usage: riffle verify --server-seed=HEX [OPTION]... [CARD]...\n"
        "  or:  riffle verify --server-seed-file=FILE [OPTION]... [CARD]...\n"
        "Check a deal of `riffle deal --commit` after its server seed is revealed.\n"
        "\n"
        "The server seed must hash (SHA-256) to the commitment; the deal is dealt again\n"
        "from the server seed, the client seed and the nonce, and must be the deal\n"
        "given, card for card.  Exit status 0 when both hold, 1 with a message naming\n"
        "the commitment or the first card that differs.\n"
        "\n"
        "      --server-seed=HEX       the revealed server seed: 64 hexadecimal digits\n"
        "      --server-seed-file=FILE the server seed from a --save-seed file\n"
        "      --commit=HEX            the commitment published before the game\n"
        "                                (default: the commit line of --deal)\n"
        "      --client-seed=S         the client seed of the deal (default: empty)\n"
        "      --nonce=N               the nonce of the deal (default 0)\n"
        "      --deal=FILE             the deal as `riffle deal --commit` printed it\n"
        "                                (- for standard input); without it, print\n"
        "                                the deal the seeds give\n"
        "\n"
        "The deck and the hands as `riffle deal` takes them:\n"
        "  -d, --deck=N, -f, --deck-file=FILE, -H, --hands=N, --players=N,\n"
        "  -c, --cards=N, -k, --kitty=N, -p, --preset=NAME (bridge, holdem, doudizhu),\n"
        "  -u, --unicode, --rank, and CARD arguments\n"
        "      --help                  display this help and exit\n"
        "\n"
        "docs/provably-fair.md gives the derivation, to check a deal without riffle.\n");
}

static const struct option verify_longopts[] = {
    {"server-seed", required_argument, NULL, FAIR_OPT_SERVER_SEED},
    {"server-seed-file", required_argument, NULL, FAIR_OPT_SERVER_SEED_FILE},
    {"commit", required_argument, NULL, FAIR_OPT_COMMIT},
    {"client-seed", required_argument, NULL, FAIR_OPT_CLIENT_SEED},
    {"nonce", required_argument, NULL, FAIR_OPT_NONCE},
    {"deal", required_argument, NULL, FAIR_OPT_DEAL},
    {"deck", required_argument, NULL, 'd'},
    {"deck-file", required_argument, NULL, 'f'},
    {"hands", required_argument, NULL, 'H'},
    {"players", required_argument, NULL, DEAL_OPT_PLAYERS},
    {"cards", required_argument, NULL, 'c'},
    {"kitty", required_argument, NULL, 'k'},
    {"preset", required_argument, NULL, 'p'},
    {"unicode", no_argument, NULL, 'u'},
    {"rank", no_argument, NULL, DEAL_OPT_RANK},
    {"help", no_argument, NULL, DEAL_OPT_HELP},
    {NULL, 0, NULL, 0},
};
const struct cli_options cli_verify_options = {"verify", 0, "d:f:H:c:k:p:u", verify_longopts};

int cmd_verify(int argc, char **argv)
{
    return deal_command(argc, argv, 1);
}
