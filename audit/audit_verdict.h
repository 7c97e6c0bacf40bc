/*
 * audit_verdict.h -- the verdict of a statistical audit: fair, biased, broken
 * or inconclusive, from the tests of every deck size (audit.h), with the
 * multiple-test adjustment and the power behind a verdict that found nothing.
 * Any front end judges an audit_result through here.
 */
#ifndef RIFFLE_AUDIT_VERDICT_H
#define RIFFLE_AUDIT_VERDICT_H

#include "audit.h"

/* The most deck sizes one result may hold. */
#define AUDIT_MAX_SIZES 16

/* Judge r (r->nsizes <= AUDIT_MAX_SIZES) after a look at the data: Holm-adjust
 * every applicable test of every size (sets each test's `adjusted` and
 * `detectable_w`), then set r->verdict, r->reason and the power fields, at
 * the level r->alpha / looks (Bonferroni over the looks of the audit).
 * Returns 1 when the verdict is final (biased or broken): more trials cannot
 * change it. */
int audit_verdict(audit_result *r, size_t looks);

#endif /* RIFFLE_AUDIT_VERDICT_H */
