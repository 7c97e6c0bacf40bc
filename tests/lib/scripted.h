/* A scripted generator that walks every possible sequence of bounded draws.
 *
 * An algorithm that draws through rf_below (or any riffle function that takes
 * an rf_rng) is run once per draw sequence: the first run answers 0 to every
 * draw; after each run the script advances like an odometer from the deepest
 * draw, so the runs visit each sequence (d_1, d_2, ...) with d_i in [0, b_i)
 * exactly once.  A sequence has probability 1 / (b_1 * b_2 * ...), which
 * rf_script_den() gives for the run just made.  Used by the exact fairness
 * tests of every permutation algorithm.  The walk is the audit's odometer
 * (audit/audit_odometer.c), the one `riffle audit --exact` uses. */
#ifndef RF_TEST_SCRIPTED_H
#define RF_TEST_SCRIPTED_H

#include "audit.h"
#include "riffle.h"

typedef struct rf_script {
    audit_odometer odo;
    int error; /* a run asked for too many draws or for a raw word, asked for a
                * different bound on a replayed prefix, or stopped short of it */
} rf_script;

void rf_script_init(rf_script *s);
/* A generator whose bounded draws follow the script (raw words are refused),
 * for the next run. */
void rf_script_rng(rf_script *s, rf_rng *g);
/* Advance to the next draw sequence; 0 when every sequence has been run or
 * after a run with an error. */
int rf_script_next(rf_script *s);
/* Product of the bounds drawn by the run just made (the inverse of its
 * probability); 0 if it does not fit 64 bits. */
uint64_t rf_script_den(const rf_script *s);

/* Lexicographic rank of a permutation of 0..n-1 (n <= 20), for counting. */
size_t rf_test_perm_rank(const size_t *p, size_t n);
uint64_t rf_test_factorial(unsigned n);

#endif
