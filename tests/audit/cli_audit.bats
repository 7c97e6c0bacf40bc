#!/usr/bin/env bats
# `riffle audit`: exact mode, statistical mode in-process and through --cmd
# (with a fair, a biased and a line-losing shuffler), exit statuses, JSON and
# HTML reports.  Every test skips, saying why, if this riffle has no audit
# subcommand wired in.

load ../lib/audit_setup

setup() {
    audit_setup
}

@test "--list names every built-in algorithm with a description" {
    run "$RIFFLE" audit --list
    [ "$status" -eq 0 ]
    for name in fisher-yates partial deck naive sattolo except-last insertion-cmp \
        merge-cmp sort-keys pick-unused splice transpositions rand15-mod gsr seed32; do
        printf '%s\n' "$output" | grep -q "^$name  *[^ ]"
    done
}

@test "exact naive n=3: three orderings at 5/27, three at 4/27" {
    run "$RIFFLE" audit naive --exact --n=3
    [ "$status" -eq 2 ]
    # the listing: rank, ordering, probability
    [ "$(printf '%s\n' "$output" | grep -cE '^ +[0-5]  [123] [123] [123]  5/27 = ')" -eq 3 ]
    [ "$(printf '%s\n' "$output" | grep -cE '^ +[0-5]  [123] [123] [123]  4/27 = ')" -eq 3 ]
    printf '%s\n' "$output" | grep -qE '^ +1  1 3 2  5/27 = 0.185185$'
    printf '%s\n' "$output" | grep -qE '^ +0  1 2 3  4/27 = 0.148148$'
    printf '%s\n' "$output" | grep -q '^verdict: biased'
}

@test "exact: Fisher-Yates is uniform, exit 0" {
    run "$RIFFLE" audit fisher-yates --exact --n=1,2,3,4,5,6
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" | grep -q '^verdict: fair'
}

@test "exact: Sattolo reaches only the (n-1)! cycles" {
    run "$RIFFLE" audit sattolo --exact --n=5
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | grep -q 'orderings: 120, reachable 24,'
    printf '%s\n' "$output" | grep -q 'expected fixed points: 0 '
}

@test "exact: naive n=7 walks all 7^7 paths; its DP agrees" {
    run "$RIFFLE" audit naive --exact --walk --n=7
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | grep -q '823543 draw paths'
    walked=$(printf '%s\n' "$output" | grep 'total variation')
    run "$RIFFLE" audit naive --exact --n=7
    [ "$(printf '%s\n' "$output" | grep 'total variation')" = "$walked" ]
}

@test "exact: naive n=8 (8^8 paths) by dynamic programme" {
    run "$RIFFLE" audit naive --exact --n=8
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | grep -q 'orderings: 40320, reachable 40320,'
}

@test "exact: 52 cards, naive leaves 0.8999 in place, Fisher-Yates exactly 1" {
    run "$RIFFLE" audit naive --exact --n=52
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | grep -q '^  expected fixed points: .* = 0.899916 '
    run "$RIFFLE" audit fy-textbook --exact --n=52
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" | grep -q '^  expected fixed points: 1 = 1 '
}

@test "exact mode refuses an unbounded draw tree" {
    run "$RIFFLE" audit pick-unused --exact --n=4
    [ "$status" -eq 1 ]
    [[ "$output" == *"unbounded draw tree"* ]]
}

@test "statistical in-process: fair passes, naive fails (fixed seed)" {
    run "$RIFFLE" audit fisher-yates --n=6 --trials=50000 --seed=1
    [ "$status" -eq 0 ]
    run "$RIFFLE" audit naive --n=6 --trials=50000 --seed=1
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | grep -q '^verdict: biased'
}

@test "--cmd: a fair external shuffler is called fair" {
    run "$RIFFLE" audit --cmd="$RIFFLE audit --as-shuffler=fisher-yates" --n=5 \
        --trials=400 --alpha=1e-6
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" | grep -q 'ms per trial'
    printf '%s\n' "$output" | grep -q '^verdict: fair'
}

# Sattolo never leaves a card in place (a uniform shuffle does with probability
# 1 - 1/e): 200 trials leave no doubt.  The naive shuffle, which needs about
# 3000 processes, is in scripts/audit-selfcheck.sh.
@test "--cmd: a deliberately wrong external shuffler is called biased" {
    run "$RIFFLE" audit --cmd="$RIFFLE audit --as-shuffler=sattolo" --n=6 --trials=200
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | grep -q '^verdict: biased'
}

@test "--cmd: a line-losing shuffler is broken, with an example" {
    run "$RIFFLE" audit --cmd="$RIFFLE audit --as-shuffler=fisher-yates | sed 1d" \
        --n=5 --trials=20
    [ "$status" -eq 2 ]
    printf '%s\n' "$output" | grep -q "^broken outputs: 20 (first: trial .*: 4 lines out for 5 in; line '.' is missing)"
    printf '%s\n' "$output" | grep -q '^verdict: broken'
}

@test "--cmd: a duplicating shuffler is broken" {
    run "$RIFFLE" audit --cmd='sed 2p' --n=4 --trials=5
    [ "$status" -eq 2 ]
    [[ "$output" == *"line '2' appears twice"* ]]
}

@test "--as-shuffler shuffles lines from stdin" {
    seq 100 > "$T/in"
    "$RIFFLE" audit --as-shuffler=fisher-yates < "$T/in" > "$T/out"
    cmp <(sort "$T/in") <(sort "$T/out")
}

@test "--json: one document with the pinned schema" {
    run "$RIFFLE" audit naive --exact --n=3 --json
    [ "$status" -eq 2 ]
    [ "$(printf '%s\n' "$output" | wc -l)" -eq 1 ]
    [[ "$output" == '{"schema": "riffle-audit/1", "subject": "naive", '* ]]
    [[ "$output" == *'"numerators": ["4", "5", "5", "5", "4", "4"]'* ]]
    if command -v python3 > /dev/null; then
        printf '%s\n' "$output" | python3 -m json.tool > /dev/null
    fi
}

@test "--report writes a self-contained HTML page with three figures" {
    run "$RIFFLE" audit naive --n=5 --trials=20000 --seed=2 --report="$T/r.html"
    [ "$status" -eq 2 ]
    [ "$(grep -c '<svg ' "$T/r.html")" -eq 3 ]
    ! grep -q '<script' "$T/r.html"
}

@test "usage errors exit 1" {
    run "$RIFFLE" audit no-such-algorithm
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown algorithm"* ]]
    run "$RIFFLE" audit --cmd=cat --exact
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit naive --n=0
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit
    [ "$status" -eq 1 ]
    run "$RIFFLE" audit --cmd=/nonexistent/shuffler --trials=3
    [ "$status" -eq 1 ]
}
