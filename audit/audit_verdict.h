/*
 * audit_verdict.h -- the verdict of a statistical audit: fair, biased, broken
 * or inconclusive, from the tests of every deck size (audit.h), with the
 * multiple-test adjustment, the design of the looks, and the deviation a
 * verdict that found nothing has ruled out.  Any front end judges an
 * audit_result through here.
 */
#ifndef RIFFLE_AUDIT_VERDICT_H
#define RIFFLE_AUDIT_VERDICT_H

#include "audit.h"

/* The most deck sizes one result may hold. */
#define AUDIT_MAX_SIZES 16
/* The probability with which a verdict's "ruled out" deviations would have
 * been found. */
#define AUDIT_POWER 0.9
/* The item-position bias the sequential audit rules out by default: 1%. */
#define AUDIT_DEFAULT_DEVIATION 0.01

/* The family-wise level spent at look k >= 1 of a sequential audit:
 * alpha / (k (k + 1)).  These sum to alpha over k = 1, 2, ... whatever the
 * number of looks, so an audit may look as often as it likes, and stop at any
 * look, with its false-alarm rate still below alpha. */
double audit_look_level(double alpha, size_t look);

/* Judge r (r->nsizes <= AUDIT_MAX_SIZES; r->alpha, r->sequential, r->look,
 * r->nlooks and r->deviation set) after a look at the data: Holm-adjust every
 * applicable test of every size at the level of the look (sets each test's
 * `adjusted` and `detectable_w`, each size's ruled-out deviations), then set
 * r->verdict, r->reason and the power fields.  Returns 1 when the verdict is
 * final -- biased, broken, or (sequential) the deviation ruled out at every
 * size --, 0 when more trials could change it. */
int audit_verdict(audit_result *r);

#endif /* RIFFLE_AUDIT_VERDICT_H */
