/*
 * commands.h -- the subcommands of riffle (`riffle NAME ...`), all with one
 * entry point signature so that main.c dispatches them from one table.
 */
#ifndef RIFFLE_COMMANDS_H
#define RIFFLE_COMMANDS_H

/* A subcommand's entry point.  argv[0] is the name messages use ("riffle
 * deal", so that getopt's own messages read "riffle deal: ..."); the options
 * and operands follow.  Returns the process exit status: 0 on success, 1 on a
 * usage, input or output error (after a message); `audit` also returns 2 when
 * the shuffler is biased or broken. */
typedef int cli_command_fn(int argc, char **argv);

cli_command_fn cmd_deal;   /* cmd_deal.c */
cli_command_fn cmd_sample; /* cmd_sample.c */
cli_command_fn cmd_perm;   /* cmd_perm.c */
cli_command_fn cmd_rank;   /* cmd_rank.c */
cli_command_fn cmd_unrank; /* cmd_rank.c */
cli_command_fn cmd_audit;  /* cmd_audit.c */
cli_command_fn cmd_scatter; /* cmd_scatter.c */
cli_command_fn cmd_gather;  /* cmd_gather.c */
cli_command_fn cmd_rng;     /* cmd_rng.c */
cli_command_fn cmd_verify;  /* cmd_verify.c */

#endif /* RIFFLE_COMMANDS_H */
