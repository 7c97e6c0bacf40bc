#!/usr/bin/env bats
# `riffle audit`: the tests the gaming rules name (runs, serial correlation,
# poker, gap, coupon collector), each catching a corpus shuffler that the
# permutation tests pass; --from-log on recorded decks, its bad lines; the
# certification section of the three reports.  Fixed seeds throughout.

load ../lib/audit_setup

setup() {
    audit_setup
}

# The p-value and the 99% mark of each test, "name level p" per line.
tests_of() {
    python3 -c '
import json, sys
d = json.load(sys.stdin)
for t in d["sizes"][0]["statistical"]["tests"]:
    print(t["name"], t["p_value"], t["level_99"].replace(" ", "-"))'
}

# The six permutation tests find nothing at alpha's level: the shuffler's
# decks, one at a time, are uniform.
old_tests_pass() {
    printf '%s\n' "$1" | awk '$1 ~ /^(orderings|item-position|fixed-points|rising-sequences|successions|duplicate-orderings)$/ && $2 + 0 < 0.001 { bad = 1; print "caught by " $0 } END { exit bad }'
}

# Test $2's p-value is below $3 in the listing $1.
caught_by() {
    printf '%s\n' "$1" | awk -v t="$2" -v lim="$3" '$1 == t { found = 1; if (!($2 + 0 < lim + 0) || $3 != "fail") { print "not caught: " $0; exit 1 } } END { exit !found }'
}

@test "--list names the new corpus shufflers" {
    run "$RIFFLE" audit --list
    [ "$status" -eq 0 ]
    for name in repeat-deck top-bag top-no-repeat sweetened; do
        printf '%s\n' "$output" | grep -q "^$name  *WRONG: "
    done
}

@test "runs: repeating the previous deck 1 time in 50 is caught; the permutation tests pass" {
    run "$RIFFLE" audit repeat-deck --n=8 --trials=4000 --seed=7 --json
    [ "$status" -eq 2 ]
    [[ "$output" == *'"reason": "runs at n = 8 rejects uniformity'* ]]
    listing=$(printf '%s\n' "$output" | tests_of)
    caught_by "$listing" runs 1e-6
    old_tests_pass "$listing"
}

@test "serial correlation: the same repeating shuffler, with more games" {
    run "$RIFFLE" audit repeat-deck --n=8 --trials=30000 --seed=7 --json
    [ "$status" -eq 2 ]
    listing=$(printf '%s\n' "$output" | tests_of)
    caught_by "$listing" serial-correlation 1e-4
    old_tests_pass "$listing"
}

@test "coupon collector: every card on top once per n games" {
    run "$RIFFLE" audit top-bag --n=8 --trials=4000 --seed=7 --json
    [ "$status" -eq 2 ]
    [[ "$output" == *'"reason": "coupon-collector at n = 8 rejects'* ]]
    listing=$(printf '%s\n' "$output" | tests_of)
    caught_by "$listing" coupon-collector 1e-10
    old_tests_pass "$listing"
}

@test "gap: no card on top twice within 3 games" {
    run "$RIFFLE" audit top-no-repeat --n=8 --trials=4000 --seed=7 --json
    [ "$status" -eq 2 ]
    [[ "$output" == *'"reason": "gap at n = 8 rejects'* ]]
    listing=$(printf '%s\n' "$output" | tests_of)
    caught_by "$listing" gap 1e-10
    old_tests_pass "$listing"
}

@test "poker: a first hand given a pair 1 time in 20, on 52 cards" {
    run "$RIFFLE" audit sweetened --n=52 --trials=20000 --seed=7 --json --report="$T/r.html"
    [ "$status" -eq 2 ]
    [[ "$output" == *'"reason": "poker at n = 52 rejects'* ]]
    listing=$(printf '%s\n' "$output" | tests_of)
    caught_by "$listing" poker 1e-8
    old_tests_pass "$listing"
    # every first hand counted once; more pairs than the exact 42.26 %
    printf '%s\n' "$output" | python3 -c '
import json, sys
c = json.load(sys.stdin)["sizes"][0]["statistical"]["poker_counts"]
assert sum(c) == 20000 and c[1] > 0.43 * 20000, c'
    grep -q '<caption>The first five cards of 20000 deals (4 suits x 13 ranks)</caption>' "$T/r.html"
}

@test "a fair shuffle passes every test at the 99% level, in the text report" {
    run "$RIFFLE" audit fisher-yates --n=52 --trials=20000 --seed=7
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" | grep -q '^  test .* adjusted  99% detect-w'
    for t in runs serial-correlation poker gap coupon-collector; do
        printf '%s\n' "$output" | grep -qE "^  $t +[0-9.e+-]+ +[0-9]+ +[0-9.e-]+ +[0-9.e-]+ pass "
    done
    ! printf '%s\n' "$output" | grep -q ' FAIL '
}

@test "--cmd: an external shuffler that deals its previous deck again every 5th game" {
    cat > "$T/repeat.sh" <<EOF
k=\$(cat "$T/count" 2>/dev/null || echo 0)
k=\$((k + 1))
echo \$k > "$T/count"
if [ \$((k % 5)) -ne 0 ] || [ ! -f "$T/last" ]; then
    "$RIFFLE" --seed=\$k > "$T/last"
fi
cat "$T/last"
EOF
    run "$RIFFLE" audit --cmd="sh $T/repeat.sh" --n=8 --trials=400 --jobs=1 --json
    [ "$status" -eq 2 ]
    listing=$(printf '%s\n' "$output" | tests_of)
    caught_by "$listing" runs 1e-6
}

# A game's log: decks of 52 named cards (or numbered 1..n), shuffled by
# Python's generator from a fixed seed; every EVERY-th deck repeats the last.
make_log() { # seed decks n every names|numbers
    python3 - "$@" <<'EOF'
import random, sys
seed, decks, n, every, kind = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ranks = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
name = (lambda c: ranks[c % 13] + "SHDC"[c // 13]) if kind == "names" else (lambda c: str(c + 1))
random.seed(seed)
print("# game 1, table 3")
deck = None
for t in range(decks):
    if not (every and deck and t % every == every - 1):
        deck = list(range(n))
        random.shuffle(deck)
    print(" ".join(name(c) for c in deck))
EOF
}

@test "--from-log: a fair game's log is fair at the deviation it rules out, with the certification section" {
    make_log 1 3000 52 0 names > "$T/game.log"
    # 3000 decks of 52 cannot rule out the default 1% item-position bias:
    # inconclusive, naming the bias ruled out and the decks that would decide
    run "$RIFFLE" audit --from-log="$T/game.log"
    [ "$status" -eq 3 ]
    printf '%s\n' "$output" | grep -q '^verdict: inconclusive -- no test rejects uniformity; the log ended before a bias of 1% was ruled out'
    printf '%s\n' "$output" | grep -q 'a log of about [0-9]* decks would decide'
    # a deviation these decks can rule out: fair
    run "$RIFFLE" audit --from-log="$T/game.log" --deviation=0.6
    [ "$status" -eq 0 ]
    printf '%s\n' "$output" | grep -q "^riffle audit: $T/game.log (log, statistical, alpha 0.001)"
    printf '%s\n' "$output" | grep -q '^n = 52: 3000 trials'
    printf '%s\n' "$output" | grep -q '^  this audit.s draws  the game.s own'
    printf '%s\n' "$output" | grep -q '^verdict: fair .*ruled out with 90% power at every size: an item-position bias of'
}

@test "--from-log: a log that repeats a deck every 20 games is biased: runs, serial, duplicates" {
    make_log 2 3000 52 20 names > "$T/game.log"
    run "$RIFFLE" audit --from-log="$T/game.log" --json
    [ "$status" -eq 2 ]
    listing=$(printf '%s\n' "$output" | tests_of)
    caught_by "$listing" runs 1e-10
    caught_by "$listing" serial-correlation 1e-10
    caught_by "$listing" duplicate-orderings 1e-10
}

@test "--from-log: numbered cards, commas, CRLF, and standard input" {
    make_log 3 500 6 0 numbers | sed 's/ /,/g; s/$/\r/' > "$T/six.log"
    run "$RIFFLE" audit --from-log="$T/six.log" --json
    [ "$status" -ne 1 ]
    [[ "$output" == *'"kind": "log"'* ]]
    [[ "$output" == *'"sizes": [{"n": 6, '* ]]
    run "$RIFFLE" audit --from-log=- --json < "$T/six.log"
    [ "$status" -ne 1 ]
    [[ "$output" == *'"trials": 500'* ]]
}

@test "--from-log: the CSV of riffle deal --count=N --csv, with or without its header, reads as the plain log" {
    make_log 6 400 52 0 names | grep -v '^#' > "$T/plain.log"
    sed 's/ /,/g' "$T/plain.log" > "$T/deals.csv"
    { seq 52 | sed 's/^/card/' | paste -sd,; cat "$T/deals.csv"; } > "$T/header.csv"
    run "$RIFFLE" audit --from-log="$T/plain.log" --json
    [ "$status" -ne 1 ]
    plain=$(printf '%s\n' "$output" | tests_of)
    [[ "$output" == *'"trials": 400'* ]]
    for f in deals.csv header.csv; do
        run "$RIFFLE" audit --from-log="$T/$f" --json
        [ "$status" -ne 1 ]
        [[ "$output" == *'"trials": 400'* ]]
        [ "$(printf '%s\n' "$output" | tests_of)" = "$plain" ]
    done
    # a header that does not count from card1 is a bad line, not a header
    { seq 2 53 | sed 's/^/card/' | paste -sd,; cat "$T/deals.csv"; } > "$T/bad.csv"
    run "$RIFFLE" audit --from-log="$T/bad.csv"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: audit: $T/bad.csv:1: 'card2' is not a card (a name such as AS or 10H, or a number)" ]
}

@test "--from-log: a bad line is named, and nothing is reported" {
    make_log 4 5 52 0 names > "$T/good.log"
    check() { # expected message, then the log's text
        printf '%s' "$2" > "$T/bad.log"
        run "$RIFFLE" audit --from-log="$T/bad.log"
        [ "$status" -eq 1 ]
        [ "$output" = "riffle: audit: $T/bad.log:$1" ]
    }
    { head -2 "$T/good.log"; sed -n 3p "$T/good.log" | sed 's/^[^ ]*/ZZ/'; } > "$T/x"
    check "3: 'ZZ' is not a card (a name such as AS or 10H, or a number)" "$(cat "$T/x")"
    { head -2 "$T/good.log"; sed -n 3p "$T/good.log" | cut -d' ' -f2-; } > "$T/x"
    check "3: 51 cards, but the first deck has 52" "$(cat "$T/x")"
    { head -1 "$T/good.log"; sed -n 2p "$T/good.log" | awk '{$2 = $1; print}'; } > "$T/x"
    check "2: a card appears twice" "$(cat "$T/x")"
    check "2: '1': card names and numbers mixed in one log" "$(printf '%s\n%s\n' \
        "$(sed -n 2p "$T/good.log")" "$(seq 52 | paste -sd' ')")"
    check "1: card number '0' is not in 1..65536" "0 1 2"
    check "2: a card number above the deck's size" "$(printf '1 2 3\n1 2 4\n')"
    check "1: card names need the whole deck of 52 (or 54 with jokers); number the cards 1..n for other decks" "AS 2S"
    check " no decks" "# nothing but a comment"
    run "$RIFFLE" audit --from-log="$T/missing.log"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: audit: $T/missing.log: No such file or directory" ]
}

@test "--from-log takes no algorithm, command or trial options" {
    make_log 5 10 52 0 names > "$T/game.log"
    for extra in fisher-yates --cmd=cat --n=52 --trials=5 --seed=1 --exact; do
        run "$RIFFLE" audit --from-log="$T/game.log" "$extra"
        [ "$status" -eq 1 ]
        [[ "$output" == *"Try 'riffle audit --help'"* ]]
    done
}

@test "certification: key size against log2(n!), the command line, SHA-256 of the program" {
    run "$RIFFLE" audit fisher-yates --n=52 --trials=2000 --seed=3
    printf '%s\n' "$output" | grep -q '^certification:$'
    printf '%s\n' "$output" | grep -q '^  key size            256 bits; log2(n!) = 225.6 (n = 52): the key can reach every ordering$'
    printf '%s\n' "$output" | grep -q "^  command line        riffle audit fisher-yates --n=52 --trials=2000 --seed=3$"
    printf '%s\n' "$output" | grep -q '^  scaling             unbiased bounded integers by rejection'
    sum=$(sha256sum "$RIFFLE" | cut -d' ' -f1)
    printf '%s\n' "$output" | grep -q "^  sha256 program      $sum  "
    run "$RIFFLE" audit fisher-yates --n=60 --trials=200 --seed=3
    printf '%s\n' "$output" | grep -q '^  key size  .* 272.1 (n = 60).*one key reaches at most 2^256 orderings$'
}

@test "certification in JSON and HTML; an odd command line stays valid JSON" {
    run "$RIFFLE" audit --cmd="$RIFFLE audit --as-shuffler=fisher-yates # 'é' \"q\"" \
        --n=4 --trials=30 --json --report="$T/r.html"
    printf '%s\n' "$output" | python3 -c '
import json, sys
c = json.load(sys.stdin)["certification"]
assert c["key_bits"] == 256 and abs(c["log2_factorial_52"] - 225.581) < 1e-3, c
assert c["command_line"].startswith("riffle audit --cmd="), c["command_line"]
assert "\"q\"" in c["command_line"] and "é" in c["command_line"], c["command_line"]
prog = [f for f in c["files"] if f["what"] == "program"][0]
assert len(prog["sha256"]) == 64, prog
assert "external command" in c["subject"], c["subject"]'
    grep -q '<h2>Certification</h2>' "$T/r.html"
    grep -q '<tr><th>SHA-256 of program</th><td><code>[0-9a-f]\{64\}</code>' "$T/r.html"
    grep -q '<th>99 %</th>' "$T/r.html"
}
