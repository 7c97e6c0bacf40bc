#!/usr/bin/env bats
# riffle deal --count: many whole-deck deals, one a line (text, --csv,
# --json lines), on the stream of a single deal; the refusals; a closed pipe.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# The 52 standard cards, one per line, sorted.
deck52() {
    for s in S H D C; do for r in A 2 3 4 5 6 7 8 9 10 J Q K; do echo "$r$s"; done; done | sort
}
# Every line of the file a whole deck of 52 (fields split by $2): each of the
# 52 cards exactly once.
each_line_a_deck() { # file separator
    awk -F"$2" -v deck="$(deck52 | paste -sd' ')" '
        BEGIN { n = split(deck, d, " "); for (i = 1; i <= n; i++) card[d[i]] = 1 }
        {
            if (NF != n) { print "line " NR ": " NF " cards"; bad = 1; exit }
            split("", seen)
            for (i = 1; i <= NF; i++) {
                if (!($i in card) || ($i in seen)) { print "line " NR ": " $i; bad = 1; exit }
                seen[$i] = 1
            }
        }
        END { exit bad }' "$1"
}

@test "--count: the first deal is the single deal's order, the rest continue the stream" {
    for seed in 1 2026 hello; do
        for rng in chacha20 xoshiro256++ pcg64; do
            order=$("$RIFFLE" deal --seed=$seed --rng=$rng -H 1 | sed 's/^[^:]*: //')
            [ "$("$RIFFLE" deal --seed=$seed --rng=$rng --count=1)" = "$order" ]
            "$RIFFLE" deal --seed=$seed --rng=$rng --count=40 > "$T/40"
            [ "$(head -n 1 "$T/40")" = "$order" ]
            # --count=K is the first K lines of any larger count
            cmp "$T/40" <("$RIFFLE" deal --seed=$seed --rng=$rng --count=1000 | head -n 40)
            # the deals differ from each other
            [ "$(sort -u "$T/40" | wc -l)" -eq 40 ]
        done
    done
    # the seeded single deals are as they were (cli_deal.bats pins them too)
    [ "$("$RIFFLE" deal --seed=2026 --count=1 | cut -d' ' -f1-4)" = "KC 7S 10C 8C" ]
}

@test "golden: the deals after the first are pinned" {
    run "$RIFFLE" deal --seed=2026 --count=3
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 3 ]
    [ "${lines[1]}" = "10S 4H 3S 2D 5S 6C 4D AD AS 3C 2S 4S 3H 7S JH 2C 5H 5C 4C QS AH QC KS 5D 8D JS JD 7D 10D 8S QD 8H 9S 9D 6S 10C 3D 8C AC 6H KC 2H 6D 7H 10H QH 7C KH 9H JC 9C KD" ]
    [ "${lines[2]}" = "4D 5S QC 9S 2H JS AD JC 9D QD 9H 4C 6S 3C 5D 6D AH 10D JD 2S 10H 2C KH 6H KD 5H JH 5C 8S 8H 3D 3H QH 2D 8D 7S 7D 3S 7C QS AS KC 10C 4S AC 8C 7H 9C 6C 4H KS 10S" ]
}

@test "text and --csv: every line a whole deck, the same deals" {
    "$RIFFLE" deal --seed=7 --count=300 > "$T/text"
    "$RIFFLE" deal --seed=7 --count=300 --csv > "$T/csv"
    [ "$(wc -l < "$T/text")" -eq 300 ] && [ "$(wc -l < "$T/csv")" -eq 300 ]
    each_line_a_deck "$T/text" ' '
    each_line_a_deck "$T/csv" ','
    cmp "$T/csv" <(tr ' ' ',' < "$T/text")
    # without a seed: whole decks too, and not the same deals twice
    "$RIFFLE" deal --count=50 --csv > "$T/os1"
    "$RIFFLE" deal --count=50 --csv > "$T/os2"
    each_line_a_deck "$T/os1" ','
    ! cmp -s "$T/os1" "$T/os2"
}

@test "--csv --header: card1..cardN, then the deals; RFC 4180 quoting of custom names" {
    run "$RIFFLE" deal --seed=3 --count=2 --csv --header
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 3 ]
    [ "${lines[0]}" = "$(seq -f 'card%g' 1 52 | paste -sd,)" ]
    [ "${lines[1]}" = "$("$RIFFLE" deal --seed=3 --count=1 --csv)" ]
    command -v python3 >/dev/null || skip "python3 (the CSV reader) not installed"
    "$RIFFLE" deal --seed=3 --count=20 --csv --header 'a,b' 'say "hi"' plain ' sp ' > "$T/q.csv"
    python3 - "$T/q.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["card1", "card2", "card3", "card4"], rows[0]
assert len(rows) == 21
for r in rows[1:]:
    assert sorted(r) == sorted(["a,b", 'say "hi"', "plain", " sp "]), r
PY
}

@test "--json: one JSON object a line, numbered, the same deals" {
    command -v python3 >/dev/null || skip "python3 (the JSON checker) not installed"
    "$RIFFLE" deal --seed=9 --count=200 --json > "$T/j"
    "$RIFFLE" deal --seed=9 --count=200 > "$T/t"
    python3 - "$T/j" "$T/t" <<'PY'
import json, sys
text = [l.split() for l in open(sys.argv[2])]
lines = open(sys.argv[1]).read().split("\n")
assert lines[-1] == "" and len(lines) == 201
for k, line in enumerate(lines[:-1], 1):
    d = json.loads(line)
    assert set(d) == {"deal", "cards"} and d["deal"] == k
    assert d["cards"] == text[k - 1]
PY
    # names that need escaping, and the 54-card deck with --unicode
    "$RIFFLE" deal --count=3 --json 'back\slash' 'say "hi"' > "$T/esc"
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    assert sorted(json.loads(line)["cards"]) == ["back\\slash", "say \"hi\""]' "$T/esc"
    "$RIFFLE" deal --count=3 --json -d 54 -u > "$T/u"
    python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    c = json.loads(line)["cards"]
    assert len(c) == 54 and len(set(c)) == 54 and "A\u2660" in c' "$T/u"
}

@test "--count with custom decks: --deck=54, --deck-file, CARD arguments" {
    "$RIFFLE" deal --seed=5 --count=10 -d 54 > "$T/54"
    [ "$(head -n 1 "$T/54")" = "$("$RIFFLE" deal --seed=5 -d 54 -H 1 | sed 's/^[^:]*: //')" ]
    while read -r line; do
        [ "$(printf '%s\n' $line | sort -u | wc -l)" -eq 54 ]
    done < "$T/54"
    printf 'one\r\ntwo\n\nthree\n' > "$T/deck"
    run "$RIFFLE" deal --seed=5 --count=4 --deck-file="$T/deck"
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 4 ]
    for l in "${lines[@]}"; do [ "$(printf '%s\n' $l | sort | paste -sd' ')" = "one three two" ]; done
    [ "$("$RIFFLE" deal --seed=5 --count=4 one two three)" = "$output" ]
    # one card: every deal is that card
    [ "$("$RIFFLE" deal --count=3 --csv solo)" = $'solo\nsolo\nsolo' ]
}

@test "--count=0: nothing, or the header alone" {
    run "$RIFFLE" deal --count=0
    [ "$status" -eq 0 ] && [ -z "$output" ]
    run "$RIFFLE" deal --count=0 --json
    [ "$status" -eq 0 ] && [ -z "$output" ]
    run "$RIFFLE" deal --count=0 --csv --header a b
    [ "$status" -eq 0 ] && [ "$output" = "card1,card2" ]
}

@test "--count: bad counts and the options it does not combine with" {
    check() { # message args...
        want=$1; shift
        run "$RIFFLE" deal "$@"
        [ "$status" -eq 1 ] || { echo "status $status for $*"; false; }
        [ "${lines[0]}" = "$want" ] || { echo "got: ${lines[0]}"; false; }
        [ "${lines[1]}" = "Try 'riffle deal --help' for more information." ]
        [ "${#lines[@]}" -eq 2 ]
    }
    check "riffle: invalid count: 'x'" --count=x
    check "riffle: invalid count: '-1'" --count=-1
    check "riffle: invalid count: ''" --count=
    check "riffle: invalid count: '99999999999999999999'" --count=99999999999999999999
    run "$RIFFLE" deal --count=1 --count=2
    [ "$status" -eq 1 ] && [ "$output" = "riffle: multiple counts specified" ]
    check "riffle: --csv needs --count" --csv
    check "riffle: --header needs --count" --header
    check "riffle: --header needs --csv" --count=2 --header
    check "riffle: --header needs --csv" --count=2 --header --json
    check "riffle: --csv and --json cannot be combined" --count=2 --csv --json
    check "riffle: --count cannot be combined with --hands" --count=2 -H 2
    check "riffle: --count cannot be combined with --hands" --count=2 --players=2
    check "riffle: --count cannot be combined with --cards" --count=2 -c 5
    check "riffle: --count cannot be combined with --kitty" --count=2 -k 5
    check "riffle: --count cannot be combined with --rank" --count=2 --rank
    check "riffle: --count cannot be combined with --preset" --count=2 -p bridge
    # the same value twice is not an error
    run "$RIFFLE" deal --count=2 --count=2
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
}

@test "--count in production mode: no seed, dealt from the operating system" {
    run "$RIFFLE" deal --production --seed=1 --count=5
    [ "$status" -eq 1 ] && [[ "${lines[0]}" == "riffle: "*seed* ]]
    run env RIFFLE_PRODUCTION=1 "$RIFFLE" deal --seed=1 --count=5 --csv
    [ "$status" -eq 1 ] && [[ "${lines[0]}" == "riffle: "*seed* ]]
    "$RIFFLE" deal --production --count=20 --csv > "$T/p"
    [ "$(wc -l < "$T/p")" -eq 20 ]
    each_line_a_deck "$T/p" ','
}

@test "--count: a reader that stops reading ends the deals quietly" {
    for fmt in "" --csv --json; do
        run bash -c '"$0" deal --count=100000000 $1 2> "$2" | head -n 2 > /dev/null; echo "${PIPESTATUS[0]}"' \
            "$RIFFLE" "$fmt" "$T/err"
        [ "$output" = 0 ] || { echo "status $output with '$fmt'"; false; }
        [ ! -s "$T/err" ] || { cat "$T/err"; false; }
    done
}

@test "--count: a write error is reported, status 1" {
    run bash -c '"$0" deal --count=100000 --csv > /dev/full' "$RIFFLE"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: write error: No space left on device" ]
}
