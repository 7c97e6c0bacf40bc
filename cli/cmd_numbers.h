/*
 * cmd_numbers.h -- what the files of `riffle perm`, `riffle rank`, `riffle
 * unrank` and `riffle sample` share: tokens, card names, the write check.
 * Their entry points are in commands.h.
 */
#ifndef RIFFLE_CMD_NUMBERS_H
#define RIFFLE_CMD_NUMBERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"

/* Blank-separated tokens of a stream (commas separate too when `commas`).
 * nums_token returns the next token (valid until the next call) or NULL at
 * the end of the stream or on an error: *err is then the errno value of a
 * failed read, EILSEQ for a byte no token may hold (NUL, a control byte that
 * is not a blank), else 0.  nums_token_error reports the error: the line and
 * column (bytes, from 1) of a bad byte, "-: reason" otherwise. */
struct nums_tokens {
    FILE *f;
    int commas;
    char *buf;
    size_t cap;
    uint64_t line; /* of the last byte read, from 1 */
    size_t col;
    int last;      /* the last byte read */
    int bad;       /* the byte refused, or -1 */
    char where[48]; /* "-:LINE:COLUMN" of the token returned */
};
void nums_tokens_init(struct nums_tokens *t, FILE *f, int commas);
const char *nums_token(struct nums_tokens *t, int *err);
void nums_token_error(const struct nums_tokens *t, int err);
void nums_tokens_free(struct nums_tokens *t);

/* Cards in `riffle deal`'s deck order: card c < 52 is rank c % 13 (A 2 .. 10
 * J Q K) of suit c / 13 (S H D C); 52 is the black joker BJ, 53 the red RJ. */
#define NUMS_DECK 52
#define NUMS_DECK_JOKERS 54
#define NUMS_CARD_NAME 8
/* Parse a card name as deal prints it (ASCII or -u symbols); letters in any
 * case, T for 10.  Returns 0 and the card number, or -1. */
int nums_card_parse(const char *s, size_t *card);
/* The name of card c < 54 into buf[NUMS_CARD_NAME]. */
void nums_card_name(size_t card, int unicode, char *buf);

/* Write error check of stdout as the other commands do it: returns 0, or 1
 * after "riffle: write error: ..." (EPIPE included: SIGPIPE was ignored). */
int nums_write_failed(int err);

#endif /* RIFFLE_CMD_NUMBERS_H */
