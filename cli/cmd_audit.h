/*
 * cmd_audit.h -- `riffle audit`: measure how fair a shuffler is, exactly (by
 * enumerating every draw sequence) or statistically (built-in algorithms
 * in-process, or any external line shuffler with --cmd).
 */
#ifndef RIFFLE_CMD_AUDIT_H
#define RIFFLE_CMD_AUDIT_H

/* Entry point of the `audit` subcommand; argv[0] is "audit".  Prints its report
 * on stdout and its diagnostics on stderr.  Returns the process exit status:
 * 0 when no test finds bias, 2 when the shuffler is biased or broken, 1 on a
 * usage or I/O error. */
int cmd_audit(int argc, char **argv);

#endif /* RIFFLE_CMD_AUDIT_H */
