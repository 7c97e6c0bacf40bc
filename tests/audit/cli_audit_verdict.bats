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

@test "sequential default: Fisher-Yates over a 15-bit rand() % m is caught at n = 1000 and 2000" {
    run "$RIFFLE" audit rand15-mod --n=1000 --seed=1
    [ "$status" -eq 2 ]
    [[ "$output" == *"verdict: biased -- item-position at n = 1000 rejects uniformity"* ]]
    [[ "$output" == *"spent as alpha / (k (k + 1)) at look k = "* ]]
    # About 10^4 trials: the looks double from 1024.
    trials=$(printf '%s\n' "$output" | sed -n 's/^n = 1000: \([0-9]*\) trials$/\1/p')
    [ "$trials" -ge 1024 ] && [ "$trials" -le 65536 ]
    run "$RIFFLE" audit rand15-mod --n=2000 --seed=2
    [ "$status" -eq 2 ]
    [[ "$output" == *"verdict: biased"* ]]
}

@test "sequential default: a correct shuffler is not rejected, and the bias ruled out is stated" {
    for seed in 1 2 3 4; do
        run "$RIFFLE" audit fisher-yates --n=5 --seed="$seed"
        [ "$status" -eq 0 ]
        [[ "$output" == *"verdict: fair -- no test rejects uniformity"*"ruled out with 90% power at every size: an item-position bias of "*"% or more"* ]]
        [[ "$output" == *"  ruled out with 90% power: an item-position bias of "*"(any item, any position); a total variation of "*"among the 120 orderings"* ]]
    done
    run "$RIFFLE" audit fisher-yates --n=5 --seed=1 --report="$T/r.html"
    [ "$status" -eq 0 ]
    grep -q '<p>Ruled out with 90% power: an item-position bias of [0-9.]*% or more; a total variation of ' "$T/r.html"
}

@test "a bias below the budget: the report says which deviation was ruled out" {
    # The 15-bit modulo shuffler at n = 52 needs ~10^10 trials to be seen.
    run "$RIFFLE" audit rand15-mod --n=52 --seed=1 --max-trials=200000
    [ "$status" -eq 3 ]
    [[ "$output" == *"verdict: inconclusive -- no test rejects uniformity; the budget ended before a bias of 1% was ruled out; ruled out with 90% power: an item-position bias of "*"% or more"* ]]
    [[ "$output" == *"ruled out with 90% power: an item-position bias of "*"(over blocks of items and positions)"* ]]
    run "$RIFFLE" audit rand15-mod --n=52 --seed=1 --deviation=0.05
    [ "$status" -eq 0 ]
    [[ "$output" == *"verdict: fair -- "*"ruled out with 90% power at every size: an item-position bias of "* ]]
    [[ "$output" == *"an item-position bias of 5% is ruled out at every size"* ]]
}

@test "the sequential design in JSON: design, look, level and what each size ruled out" {
    run "$RIFFLE" audit fisher-yates --n=4 --seed=1 --deviation=0.2 --json
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["power"]
assert p["design"] == "sequential" and p["look"] >= 1 and p["deviation"] == 0.2, p
assert abs(p["look_level"] - d["alpha"] / (p["look"] * (p["look"] + 1))) < 1e-15, p
r = d["sizes"][0]["statistical"]["ruled_out"]
assert 0 < r["item_position_bias"] <= 0.2 and r["total_variation"] > 0, r'
    run "$RIFFLE" audit fisher-yates --n=4 --seed=1 --trials=1000 --json
    printf '%s\n' "$output" | python3 -c '
import json, sys
p = json.load(sys.stdin)["power"]
assert p["design"] == "fixed" and p["deviation"] is None, p'
}

@test "--budget, --deviation and --max-trials: their combinations checked" {
    run "$RIFFLE" audit fisher-yates --trials=100 --deviation=0.1
    [ "$status" -eq 1 ]
    [[ "$output" == *"--deviation applies to the sequential mode only"* ]]
    run "$RIFFLE" audit fisher-yates --deviation=1.5
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit fisher-yates --budget=1 --time-limit=2
    [ "$status" -eq 1 ]
    [[ "$output" == *"multiple time limits specified"* ]]
    run "$RIFFLE" audit fisher-yates --exact --budget=5
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit fisher-yates --trials=10 --max-trials=20
    [ "$status" -eq 1 ]
}
