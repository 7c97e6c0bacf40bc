/*
 * audit_cert.h -- the certification section of the audit's reports: what a
 * test lab asks of a card shuffler (algorithm, generator, seeding, key size
 * against log2(n!), fork and reseed policy, scaling, stream contract) and
 * what ties the report to one build (the command line, SHA-256 of the
 * program and its libraries).  The front end finds the files and the command
 * line; the facts about riffle's shuffle are stated here, beside the tests.
 */
#ifndef RIFFLE_AUDIT_CERT_H
#define RIFFLE_AUDIT_CERT_H

#include <stddef.h>
#include <stdio.h>

#include "audit.h"

#define AUDIT_SHA256_HEX 65 /* 64 hex digits and a NUL */

/* One file the report ties itself to: its path and SHA-256, or why not. */
typedef struct audit_cert_file {
    const char *what;            /* "program", "libriffle", "libsodium" */
    char path[4096];
    char sha256[AUDIT_SHA256_HEX]; /* "" when not hashed */
    char note[128];              /* e.g. "linked into the program" */
} audit_cert_file;

typedef struct audit_cert {
    char *command_line;          /* the exact command line, shell-quoted */
    audit_cert_file files[3];
    size_t nfiles;
    const char *sodium_version;  /* libsodium's, as linked */
} audit_cert;

/* SHA-256 of the file at path (libsodium's crypto_hash_sha256) as 64
 * lowercase hex digits into hex.  Returns 0, or -1 with errno set. */
int audit_sha256_file(const char *path, char hex[AUDIT_SHA256_HEX]);

/* log2(n!), the bits a generator's key needs for every ordering of n cards
 * to be reachable (225.58 for 52). */
double audit_log2_factorial(size_t n);

/* The section in each report format, for the result r (its subject, deck
 * sizes and generator of the trials) and the build facts c. */
void audit_cert_text(FILE *f, const audit_result *r, const audit_cert *c);
void audit_cert_json(FILE *f, const audit_result *r, const audit_cert *c);
void audit_cert_html(FILE *f, const audit_result *r, const audit_cert *c);

#endif /* RIFFLE_AUDIT_CERT_H */
