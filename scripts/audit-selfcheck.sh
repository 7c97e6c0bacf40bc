#!/bin/sh
# audit-selfcheck.sh -- the statistical self-check of `riffle audit`: every
# built-in algorithm, run as an external line shuffler through --cmd, must be
# called "fair" if it is fair and "biased" if it is deliberately wrong, within
# the trial budget stated in the table below (docs/BENCHMARKS_AUDIT.md records
# a run).  Slow (a few minutes: one process per trial), so not part of
# `make check`.  Usage: scripts/audit-selfcheck.sh [RIFFLE] [--quick]
# (--quick skips seed32, whose duplicate-ordering test needs 200000 trials).
# repeat-deck, top-bag and top-no-repeat remember earlier games: one process
# per trial has none, so they are not here (tests/audit/cli_audit_rules.bats
# checks them in-process, and through a --cmd that keeps its state).
set -u
riffle=${1:-build/riffle}
quick=${2:-}
# name            n      trials   expected
plan='
fisher-yates      6      2000     fair
shuffle-bytes     6      2000     fair
partial           6      2000     fair
deck              6      2000     fair
swap-callback     6      2000     fair
fy-textbook       6      2000     fair
pick-unused       6      2000     fair
splice            6      2000     fair
naive             6      3000     biased
sattolo           6      2000     biased
except-last       6      2000     biased
insertion-cmp     6      2000     biased
merge-cmp         6      2000     biased
sort-keys         1000   2000     biased
transpositions    6      2000     biased
rand15-mod        40000  200      biased
gsr               52     2000     biased
seed32            52     200000   biased
sweetened         52     20000    biased
'
fail=0
echo "$plan" | while read -r name n trials want; do
    [ -n "$name" ] || continue
    if [ "$name" = seed32 ] && [ "$quick" = --quick ]; then
        echo "skip $name (--quick)"
        continue
    fi
    start=$(date +%s)
    out=$("$riffle" audit --cmd="$riffle audit --as-shuffler=$name" --n="$n" \
        --trials="$trials" 2>&1)
    status=$?
    got=$(printf '%s\n' "$out" | sed -n 's/^verdict: \([a-z]*\).*/\1/p')
    secs=$(( $(date +%s) - start ))
    if [ "$got" = "$want" ]; then
        echo "ok   $name n=$n trials=$trials: $got (exit $status, ${secs}s)"
    else
        echo "FAIL $name n=$n trials=$trials: got '$got', want $want (exit $status)"
        printf '%s\n' "$out" | sed 's/^/    /'
        fail=1
    fi
    [ $fail -eq 0 ] || exit 1
done
