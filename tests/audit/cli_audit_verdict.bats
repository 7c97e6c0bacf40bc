#!/usr/bin/env bats
# `riffle audit`: what is refused before any work (a draw tree too large to
# walk, an output that cannot be written), and the sequential verdict of the
# statistical mode.  Every statistical run has a fixed seed.

bats_require_minimum_version 1.5.0
load ../lib/audit_setup

setup() {
    audit_setup
}

@test "--exact refuses a draw tree too large at once, naming the largest n that fits" {
    run --separate-stderr "$RIFFLE" audit --exact sort-keys
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [[ "$stderr" == *"more than 134217728"*"the largest n that fits is 3" ]]
    run --separate-stderr "$RIFFLE" audit sort-keys:8 --walk
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [[ "$stderr" == *"at n = 8"*"the largest n that fits is 3" ]]
    run --separate-stderr "$RIFFLE" audit naive --walk --n=9
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"the largest n that fits is 8" ]]
    # The n it names is walked.
    run "$RIFFLE" audit sort-keys:8 --walk --n=3
    [ "$status" -eq 2 ]
    [[ "$output" == *"verdict: biased"* ]]
}

@test "--exact: a tree too large even at n = 1 says so" {
    run --separate-stderr "$RIFFLE" audit --exact sort-keys:40 --n=2
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"even at n = 1" ]]
}

@test "an unwritable --report is refused before the audit, with nothing on stdout" {
    run --separate-stderr "$RIFFLE" audit splice --n=1000 --seed=1 --report="$T/no/such/dir/r.html"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [ "$stderr" = "riffle: $T/no/such/dir/r.html: No such file or directory" ]
    mkdir "$T/d"
    run --separate-stderr "$RIFFLE" audit --exact naive --n=4 --report="$T/d"
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [[ "$stderr" == *"$T/d: Is a directory" ]]
}

@test "--report is left as it was when the audit fails, and no temporary stays" {
    echo old > "$T/r.html"
    run "$RIFFLE" audit --exact sort-keys --report="$T/r.html"
    [ "$status" -eq 1 ]
    [ "$(cat "$T/r.html")" = old ]
    [ "$(ls -A "$T")" = r.html ]
    run "$RIFFLE" audit --exact naive --n=4 --report="$T/r.html"
    [ "$status" -eq 2 ]
    grep -q '<!DOCTYPE html>' "$T/r.html"
    [ "$(ls -A "$T")" = r.html ]
}
