/* deal_fair.h -- provably fair dealing in the riffle program: `riffle deal
 * --commit` (a fresh server seed, its commitment printed before the deal,
 * the seed saved for the reveal) and `riffle verify` (the deal dealt again
 * from the revealed seed and checked), on riffle_fair.h.  Both run
 * cmd_deal.c's deck, options and printing; deal_fair.c holds what is theirs
 * alone, cmd_verify.c the verify command's table and help. */
#ifndef RIFFLE_DEAL_FAIR_H
#define RIFFLE_DEAL_FAIR_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "cli_options.h"
#include "deal.h"
#include "riffle_fair.h"

/* Deal's own long-only options (cmd_deal.c), here so that verify's table
 * shares them. */
enum deal_table_code { DEAL_OPT_HELP = CLI_OPT_FIRST_FREE, DEAL_OPT_PLAYERS, DEAL_OPT_RANK };

/* The getopt codes of the fair options, clear of deal.h's. */
enum deal_fair_code {
    FAIR_OPT_COMMIT = CLI_OPT_FIRST_FREE + 96,
    FAIR_OPT_CLIENT_SEED,
    FAIR_OPT_NONCE,
    FAIR_OPT_SAVE_SEED,
    FAIR_OPT_SERVER_SEED,
    FAIR_OPT_SERVER_SEED_FILE,
    FAIR_OPT_DEAL
};

/* In deal's table: --commit takes no argument there. */
#define DEAL_FAIR_LONGOPTS                                                                     \
    {"commit", no_argument, NULL, FAIR_OPT_COMMIT},                                            \
        {"client-seed", required_argument, NULL, FAIR_OPT_CLIENT_SEED},                        \
        {"nonce", required_argument, NULL, FAIR_OPT_NONCE},                                    \
        {"save-seed", required_argument, NULL, FAIR_OPT_SAVE_SEED}

struct deal_fair {
    int verify;              /* riffle verify */
    int commit;              /* deal --commit */
    const char *commit_hex;  /* verify --commit */
    const char *client_seed; /* NULL: the empty string */
    const char *nonce_arg, *save_seed, *server_hex, *server_file, *deal_file;
    uint64_t nonce;
    uint8_t server[RF_FAIR_SEED_BYTES];
    uint8_t commitment[RF_FAIR_COMMIT_BYTES];
    int have_commitment;
    int guard;      /* the seed file's cleanup slot, -1: none */
    int seed_saved; /* the seed file was created */
    char *given;    /* verify: the --deal text, less its commit line */
    int commit_line; /* the --deal text began with one */
    size_t given_len;
    char *dealt; /* verify: the deal dealt again, as printed */
    size_t dealt_len;
};

/* Take getopt's `opt` if it is one of the fair options: CLI_CONTINUE,
 * CLI_FAIL after a usage message, or DEAL_NOT_MORE. */
int deal_fair_option(struct deal_fair *f, int opt, const char *arg);
/* Whether the run is a fair deal: deal --commit, or verify. */
int deal_fair_wanted(const struct deal_fair *f);
/* The fair options against each other and the rest; `conflict` names a
 * given option that a fair deal does not combine with (--json, --count, a
 * shoe), or NULL.  verify reads its --deal here, before anything is dealt.
 * Returns CLI_CONTINUE or CLI_FAIL after a message. */
int deal_fair_check(struct deal_fair *f, const struct cli_rng_opts *r, const char *conflict);
/* The deal's generator: deal --commit draws a server seed from the operating
 * system and saves it (mode 0600, never over an existing file); verify
 * checks the revealed seed against the commitment first.  NULL after a
 * message. */
rf_rng *deal_fair_rng(struct deal_fair *f, rf_rng *storage);
/* Where the deal is printed: standard output after the `commit: HEX` line
 * (deal --commit), or a memory stream (verify).  NULL after a message. */
FILE *deal_fair_open(struct deal_fair *f);
/* The end of the printing: verify compares the deal with --deal's, or
 * prints it; returns CLI_OK, or CLI_FAIL after a message naming the
 * mismatch.  Closes a memory stream; stdout stays open. */
int deal_fair_close(struct deal_fair *f, FILE *out);
/* The end of the run: a seed file is removed unless status is CLI_OK (no
 * commitment was published for it); the secrets are wiped. */
void deal_fair_finish(struct deal_fair *f, int status);

/* riffle deal and riffle verify (cmd_deal.c): verify nonzero for verify. */
int deal_command(int argc, char **argv, int verify);
/* riffle verify --help (cmd_verify.c). */
int verify_help(void);

#endif /* RIFFLE_DEAL_FAIR_H */
