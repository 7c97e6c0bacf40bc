#!/usr/bin/env bats
# riffle deal --preset=blackjack / baccarat: casino shoes of --decks decks,
# burn cards, the cut card (--cut), text and JSON; the refusals.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# The 52 standard cards, each $1 times, one per line, sorted.
shoe_cards() {
    for i in $(seq "$1"); do
        for s in S H D C; do for r in A 2 3 4 5 6 7 8 9 10 J Q K; do echo "$r$s"; done; done
    done | sort
}
# The cards of one section ("burn:", "play:", "after cut:") of a text shoe.
section() { # label file
    grep "^$1" "$2" | sed "s/^$1//" | tr ' ' '\n' | sed '/^$/d'
}
# Baccarat's value of a card: ace 1, two to nine their pips, the rest 10.
value() {
    case ${1%?} in A) echo 1 ;; [2-9]) echo "${1%?}" ;; *) echo 10 ;; esac
}

@test "shoes: every card of the 52 exactly D times, burn + play + after cut" {
    for game in blackjack baccarat; do
        for d in 1 2 6 8; do
            "$RIFFLE" deal -p $game --decks=$d --seed=$d > "$T/shoe"
            [ "$(wc -l < "$T/shoe")" -eq 3 ]
            cmp <(shoe_cards $d) \
                <({ section burn: "$T/shoe"; section play: "$T/shoe"; section 'after cut:' "$T/shoe"; } | sort)
        done
    done
    # the defaults: blackjack 6 decks, baccarat 8; and without a seed
    "$RIFFLE" deal -p blackjack > "$T/bj"
    cmp <(shoe_cards 6) <(sed 's/^[^:]*://' "$T/bj" | tr ' ' '\n' | sed '/^$/d' | sort)
    "$RIFFLE" deal -p baccarat > "$T/bac"
    cmp <(shoe_cards 8) <(sed 's/^[^:]*://' "$T/bac" | tr ' ' '\n' | sed '/^$/d' | sort)
}

@test "burn: blackjack one card, baccarat the first card and as many more as its value" {
    for seed in $(seq 1 40); do
        "$RIFFLE" deal -p blackjack --seed=$seed > "$T/bj"
        [ "$(section burn: "$T/bj" | wc -l)" -eq 1 ]
        "$RIFFLE" deal -p baccarat --seed=$seed > "$T/bac"
        first=$(section burn: "$T/bac" | head -n 1)
        [ "$(section burn: "$T/bac" | wc -l)" -eq $((1 + $(value "$first"))) ] ||
            { echo "seed $seed: first $first"; cat "$T/bac"; false; }
    done
    # every burn size from 2 (an ace) to 11 (a ten or a face) occurs
    for seed in $(seq 1 200); do
        "$RIFFLE" deal -p baccarat --decks=1 --seed=$seed | grep '^burn:' | wc -w
    done | sort -nu > "$T/sizes"
    [ "$(paste -sd' ' "$T/sizes")" = "3 4 5 6 7 8 9 10 11 12" ] # the label is a word
}

@test "cut: --cut cards after the cut card; defaults a quarter (blackjack) and 16 (baccarat)" {
    "$RIFFLE" deal -p blackjack --seed=4 > "$T/s"
    [ "$(section 'after cut:' "$T/s" | wc -l)" -eq 78 ]
    "$RIFFLE" deal -p blackjack --decks=8 --seed=4 > "$T/s"
    [ "$(section 'after cut:' "$T/s" | wc -l)" -eq 104 ]
    "$RIFFLE" deal -p baccarat --seed=4 > "$T/s"
    [ "$(section 'after cut:' "$T/s" | wc -l)" -eq 16 ]
    for cut in 0 1 14 200; do
        "$RIFFLE" deal -p baccarat --cut=$cut --seed=4 > "$T/c"
        [ "$(section 'after cut:' "$T/c" | wc -l)" -eq "$cut" ]
        # the cut card moves where the shoe is split, not how it is dealt
        cmp <(sed 's/^[^:]*://' "$T/s" | tr ' ' '\n' | sed '/^$/d') \
            <(sed 's/^[^:]*://' "$T/c" | tr ' ' '\n' | sed '/^$/d')
    done
    run "$RIFFLE" deal -p blackjack --decks=1 --cut=0 --seed=4
    [ "${lines[2]}" = "after cut:" ]
    # the largest cuts: all but the most a game burns
    run "$RIFFLE" deal -p blackjack --decks=1 --cut=51 --seed=4
    [ "$status" -eq 0 ] && [ "${lines[1]}" = "play:" ]
    run "$RIFFLE" deal -p baccarat --decks=1 --cut=41 --seed=4
    [ "$status" -eq 0 ]
}

@test "golden: seeded shoes are pinned; a one-deck shoe deals the single deal's order" {
    run "$RIFFLE" deal -p blackjack --decks=1 --seed=2026
    [ "${lines[0]}" = "burn:      KC" ]
    [ "${lines[1]}" = "play:      7S 10C 8C QH JC QD 7D 4D 6S 5D 4C 7C 8D AS 2H 9S 3D JS KH 2S 4H 9D 5H 9H 7H AD 8H 3H 6C 2D KD 6H 8S KS QC 10H 10D 10S" ]
    [ "${lines[2]}" = "after cut: AC JH AH 9C 3C JD 3S 5C QS 5S 4S 6D 2C" ]
    [ "$(sed 's/^[^:]*: *//' <<< "$output" | paste -sd' ')" = \
      "$("$RIFFLE" deal --seed=2026 -H 1 | sed 's/^[^:]*: //')" ]
    run "$RIFFLE" deal -p baccarat --seed=2026
    [ "${lines[0]}" = "burn:      6C 9C KH 7S 8H 4D 5D" ]
    [ "${lines[2]}" = "after cut: 10S AH 9C QC JS 2S 10S 4C QH AD 5H QD 6S 9S 9H 5H" ]
}

@test "--json and --unicode shoes: the same cards" {
    command -v python3 >/dev/null || skip "python3 (the JSON checker) not installed"
    "$RIFFLE" deal -p baccarat --decks=6 --cut=20 --seed=11 --json > "$T/j"
    "$RIFFLE" deal -p baccarat --decks=6 --cut=20 --seed=11 > "$T/t"
    python3 - "$T/j" "$T/t" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["game", "decks", "cut", "burn", "play", "after_cut"], list(d)
assert d["game"] == "baccarat" and d["decks"] == 6 and d["cut"] == 20
text = {}
for line in open(sys.argv[2]):
    label, _, cards = line.partition(":")
    text[label] = cards.split()
assert d["burn"] == text["burn"] and d["play"] == text["play"]
assert d["after_cut"] == text["after cut"] and len(d["after_cut"]) == 20
assert len(d["burn"] + d["play"] + d["after_cut"]) == 6 * 52
PY
    cmp <("$RIFFLE" deal -p blackjack -u --seed=3 | sed 's/♠/S/g; s/♥/H/g; s/♦/D/g; s/♣/C/g') \
        <("$RIFFLE" deal -p blackjack --seed=3)
}

@test "shoes: usage errors" {
    check() { # message args...
        want=$1; shift
        run "$RIFFLE" deal "$@"
        [ "$status" -eq 1 ] || { echo "status $status for $*"; false; }
        [ "${lines[0]}" = "$want" ] || { echo "got: ${lines[0]}"; false; }
        [ "${lines[1]}" = "Try 'riffle deal --help' for more information." ]
        [ "${#lines[@]}" -eq 2 ]
    }
    check "riffle: invalid number of decks: '0' (1 to 8)" -p blackjack --decks=0
    check "riffle: invalid number of decks: '9' (1 to 8)" -p baccarat --decks=9
    check "riffle: invalid number of decks: 'six'" -p baccarat --decks=six
    check "riffle: invalid cut: 'x'" -p baccarat --cut=x
    check "riffle: invalid cut: '52' (at most 51 cards from the end of 52)" -p blackjack --decks=1 --cut=52
    check "riffle: invalid cut: '42' (at most 41 cards from the end of 52)" -p baccarat --decks=1 --cut=42
    check "riffle: --decks needs --preset=blackjack or --preset=baccarat" --decks=6
    check "riffle: --cut needs --preset=blackjack or --preset=baccarat" --cut=16 -p bridge
    check "riffle: --count cannot be combined with --preset=baccarat" -p baccarat --count=3
    check "riffle: --csv cannot be combined with --preset=blackjack" -p blackjack --csv
    check "riffle: --hands cannot be combined with --preset=blackjack" -p blackjack -H 3
    check "riffle: --kitty cannot be combined with --preset=baccarat" -p baccarat -k 3
    check "riffle: --rank cannot be combined with --preset=baccarat" -p baccarat --rank
    check "riffle: --deck cannot be combined with --preset=blackjack" -p blackjack -d 54
    check "riffle: --deck-file cannot be combined with --preset=blackjack" -p blackjack -f /dev/null
    check "riffle: CARD arguments cannot be combined with --preset=blackjack" -p blackjack a b
    check "riffle: unknown preset 'poker' (bridge, holdem, doudizhu, blackjack or baccarat)" -p poker
    run "$RIFFLE" deal --production --seed=1 -p blackjack
    [ "$status" -eq 1 ] && [[ "${lines[0]}" == "riffle: "*seed* ]]
    run bash -c '"$0" deal -p baccarat > /dev/full' "$RIFFLE"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: write error: No space left on device" ]
}
