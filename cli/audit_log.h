/*
 * audit_log.h -- the decks a game recorded, for `riffle audit --from-log`
 * (audit_log.c: the format, and the messages that name a bad line).
 */
#ifndef RIFFLE_AUDIT_LOG_H
#define RIFFLE_AUDIT_LOG_H

#include <stdint.h>

#include "audit.h"

typedef struct audit_log {
    size_t n;          /* cards per deck */
    uint64_t decks;
    uint64_t cap;      /* decks the storage holds */
    uint16_t *cards;   /* decks x n, 0-based, in the file's order */
} audit_log;

/* Read every deck of the file at path ("-": standard input).  Returns 0, or
 * -1 after a message on stderr naming the file and line (nothing kept). */
int audit_log_load(const char *path, audit_log *log);
/* Add the decks to acc (acc->n == log->n), in order: one stream of games.
 * Returns 0, or -1 if out of memory. */
int audit_log_feed(const audit_log *log, audit_acc *acc);
void audit_log_free(audit_log *log);

#endif /* RIFFLE_AUDIT_LOG_H */
