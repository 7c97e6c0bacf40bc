/*
 * cli_options.c -- the list of the commands' getopt tables (cli_options.h).
 */
#include <stddef.h>

#include "cli_options.h"

const struct cli_options *const cli_all_options[] = {
    &cli_riffle_options, &cli_shuf_options,   &cli_deal_options,   &cli_sample_options,
    &cli_perm_options,   &cli_rank_options,   &cli_unrank_options, &cli_scatter_options,
    &cli_gather_options, &cli_audit_options, &cli_rng_options, &cli_verify_options, NULL,
};
