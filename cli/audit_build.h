/*
 * audit_build.h -- the command line and the files an audit report names
 * (audit_build.c), for the certification section (audit_cert.h).
 */
#ifndef RIFFLE_AUDIT_BUILD_H
#define RIFFLE_AUDIT_BUILD_H

#include "audit_cert.h"

/* Fill c for the command argv[0..argc) (argv[0] "riffle audit").  Returns 0,
 * or -1 if out of memory; a file that cannot be read is noted in c, not an
 * error.  Free with audit_build_free. */
int audit_build_cert(audit_cert *c, int argc, char **argv);
void audit_build_free(audit_cert *c);

#endif /* RIFFLE_AUDIT_BUILD_H */
