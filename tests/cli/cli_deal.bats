#!/usr/bin/env bats
# riffle deal: decks, hands, kitty, presets, output forms, seeds, errors.
# "Every card exactly once" is checked against the full deck each time.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

# The 52 standard cards, one per line, sorted.
deck52() {
    for s in S H D C; do for r in A 2 3 4 5 6 7 8 9 10 J Q K; do echo "$r$s"; done; done | sort
}
# Cards of a text deal (the part after "label:"), one per line, sorted.
cards_of() { sed 's/^[^:]*://' | tr ' ' '\n' | sed '/^$/d' | sort; }

@test "no arguments: a 52-card deck to 4 hands of 13" {
    run "$RIFFLE" deal
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 4 ]
    for i in 0 1 2 3; do
        [[ "${lines[$i]}" == "hand $((i + 1)): "* ]]
        [ "$(echo "${lines[$i]}" | cards_of | wc -l)" -eq 13 ]
    done
    cmp <(deck52) <(printf '%s\n' "$output" | cards_of)
}

@test "golden: a seeded deal is pinned" {
    run "$RIFFLE" deal --seed=2026
    [ "${lines[0]}" = "hand 1: KC QH 4D 7C 9S 2S 9H 3H 6H 10H JH JD 5S" ]
    [ "${lines[1]}" = "hand 2: 7S JC 6S 8D 3D 4H 7H 6C 8S 10D AH 3S 4S" ]
    [ "${lines[2]}" = "hand 3: 10C QD 5D AS JS 9D AD 2D KS 10S 9C 5C 6D" ]
    [ "${lines[3]}" = "hand 4: 8C 7D 4C 2H KH 5H 8H KD QC AC 3C QS 2C" ]
}

@test "deal order: round the table, then the kitty" {
    # One hand of 52 is the whole dealt sequence; with H hands, card j of that
    # sequence goes to hand j mod H, and the kitty takes the cards after.
    read -r -a order <<< "$("$RIFFLE" deal --seed=11 -H 1 | sed 's/^[^:]*: //')"
    [ "${#order[@]}" -eq 52 ]
    expect=""
    for h in 0 1 2; do
        line="hand $((h + 1)):"
        for c in $(seq 0 4); do line+=" ${order[$((c * 3 + h))]}"; done
        expect+="$line"$'\n'
    done
    expect+="kitty:  ${order[*]:15:4}"
    [ "$("$RIFFLE" deal --seed=11 -H 3 -c 5 -k 4)" = "$expect" ]
    # a custom deck of the same size deals the same positions
    read -r -a custom <<< "$("$RIFFLE" deal --seed=11 -H 1 $(seq 0 51) | sed 's/^[^:]*: //')"
    names=(); for s in S H D C; do for r in A 2 3 4 5 6 7 8 9 10 J Q K; do names+=("$r$s"); done; done
    for j in $(seq 0 51); do [ "${names[${custom[$j]}]}" = "${order[$j]}" ]; done
}

@test "--rank: riffle unrank gives the dealt order back" {
    for seed in 1 2026 hello; do
        order=$("$RIFFLE" deal --seed=$seed -H 1 | sed 's/^[^:]*: //')
        run "$RIFFLE" deal --seed=$seed -H 1 --rank
        [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 2 ]
        [ "${lines[0]}" = "hand 1: $order" ]
        [[ "${lines[1]}" =~ ^rank:\ [0-9]+$ ]]
        rank=${lines[1]#rank: }
        [ "$("$RIFFLE" unrank --cards "$rank" | tr '\n' ' ' | sed 's/ $//')" = "$order" ]
        # the rank is of the whole dealt deck, however it is split into hands
        [ "$("$RIFFLE" deal --seed=$seed --rank | tail -n 1)" = "rank: $rank" ]
    done
    # 54 cards; a custom deck ranks the deck positions
    run "$RIFFLE" deal --seed=4 -d 54 -H 1 --rank
    [ "$("$RIFFLE" unrank --cards --size=54 "${lines[1]#rank: }" | tr '\n' ' ' | sed 's/ $//')" = \
      "${lines[0]#hand 1: }" ]
    run "$RIFFLE" deal --seed=4 -H 1 --rank a b c d e
    [ "$("$RIFFLE" unrank --size=5 "${lines[1]#rank: }" | tr '\n' ' ' | tr 01234 abcde | sed 's/ $//')" = \
      "${lines[0]#hand 1: }" ]
}

@test "--rank: the dealt cards are unchanged, the rank is pinned" {
    cmp <("$RIFFLE" deal --seed=2026 --rank | head -n 4) <("$RIFFLE" deal --seed=2026)
    cmp <("$RIFFLE" deal --seed=5 -p holdem --rank | head -n 7) <("$RIFFLE" deal --seed=5 -p holdem)
    [ "$("$RIFFLE" deal --seed=2026 --rank | tail -n 1)" = \
      "rank: 79318695050898768220501746059485322689373731962159261783190614934014" ]
}

@test "--rank with --json: a \"rank\" string" {
    command -v python3 >/dev/null || skip "python3 (the JSON checker) not installed"
    "$RIFFLE" deal --json --rank --seed=2026 > "$T/out.json"
    text=$("$RIFFLE" deal --rank --seed=2026 | tail -n 1)
    python3 - "$T/out.json" "${text#rank: }" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d["rank"], str) and d["rank"] == sys.argv[2]
assert [len(h["cards"]) for h in d["hands"]] == [13] * 4
PY
    # without --rank, no rank field
    "$RIFFLE" deal --json --seed=2026 > "$T/plain.json"
    python3 -c 'import json,sys; assert "rank" not in json.load(open(sys.argv[1]))' "$T/plain.json"
}

@test "bridge: North East South West, 13 cards each, every card once" {
    run "$RIFFLE" deal --preset=bridge --seed=1
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 4 ]
    [[ "${lines[0]}" == "North: "* ]] && [[ "${lines[1]}" == "East:  "* ]]
    [[ "${lines[2]}" == "South: "* ]] && [[ "${lines[3]}" == "West:  "* ]]
    cmp <(deck52) <(printf '%s\n' "$output" | cards_of)
}

@test "hold'em: N players x 2 and a 5-card board" {
    for n in 2 6 9 23; do
        run "$RIFFLE" deal -p holdem --players "$n"
        [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq $((n + 1)) ]
        [[ "${lines[$n]}" == "board: "* ]]
        [ "$(echo "${lines[$n]}" | cards_of | wc -l)" -eq 5 ]
        [ "$(echo "${lines[0]}" | cards_of | wc -l)" -eq 2 ]
        [ "$(printf '%s\n' "$output" | cards_of | sort -u | wc -l)" -eq $((2 * n + 5)) ]
        [ -z "$(comm -23 <(printf '%s\n' "$output" | cards_of) <(deck52))" ]
    done
    run "$RIFFLE" deal -p holdem
    [ "${#lines[@]}" -eq 7 ]   # 6 players by default
    run "$RIFFLE" deal -p holdem --players 24
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: cannot deal 24 hands of 2 cards and a kitty of 5 from a deck of 52" ]
}

@test "dou dizhu: 54 cards, 3 x 17 and a kitty of 3, every card once" {
    run "$RIFFLE" deal --preset=doudizhu
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 4 ]
    for i in 0 1 2; do [ "$(echo "${lines[$i]}" | cards_of | wc -l)" -eq 17 ]; done
    [[ "${lines[3]}" == "kitty: "* ]]
    [ "$(echo "${lines[3]}" | cards_of | wc -l)" -eq 3 ]
    cmp <({ deck52; echo BJ; echo RJ; } | sort) <(printf '%s\n' "$output" | cards_of)
}

@test "54-card deck, --hands, --cards and the remainder as kitty" {
    run "$RIFFLE" deal --deck=54 --hands=5 --cards=10
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 6 ]
    [[ "${lines[5]}" == "kitty: "* ]]
    [ "$(echo "${lines[5]}" | cards_of | wc -l)" -eq 4 ]
    cmp <({ deck52; echo BJ; echo RJ; } | sort) <(printf '%s\n' "$output" | cards_of)
    # default cards per hand: the deck divided evenly, the rest to the kitty
    run "$RIFFLE" deal -H 5
    [ "$(echo "${lines[0]}" | cards_of | wc -l)" -eq 10 ]
    [ "$(echo "${lines[5]}" | cards_of | wc -l)" -eq 2 ]
    # an explicit kitty smaller than the remainder: the rest stay undealt
    run "$RIFFLE" deal -H 2 -c 5 -k 3
    [ "${#lines[@]}" -eq 3 ]
    [ "$(printf '%s\n' "$output" | cards_of | sort -u | wc -l)" -eq 13 ]
    run "$RIFFLE" deal -H 4 -c 13 -k 0
    [ "${#lines[@]}" -eq 4 ]
    # a kitty and no --cards: the hands share what the kitty leaves
    run "$RIFFLE" deal -H 3 -k 4
    [ "$status" -eq 0 ] && [ "$(echo "${lines[0]}" | cards_of | wc -l)" -eq 16 ]
    [ "$(echo "${lines[3]}" | cards_of | wc -l)" -eq 4 ]
}

@test "custom deck from arguments and from a file" {
    run "$RIFFLE" deal --hands=2 --seed=1 red green blue cyan 'two words'
    [ "$status" -eq 0 ]
    [ "$(printf '%s\n' "${lines[@]:0:2}" | sed 's/^[^:]*: //' | tr ' ' '\n' | wc -l)" -eq 5 ]
    [[ "${lines[2]}" == "kitty: "* ]]
    printf 'a\nb\n\nc\nd\ne\nf' > "$T/deck"
    run "$RIFFLE" deal --deck-file="$T/deck" -H 3
    [ "$status" -eq 0 ] && [ "${#lines[@]}" -eq 3 ]
    cmp <(printf 'a\nb\nc\nd\ne\nf\n') <(printf '%s\n' "$output" | cards_of)
}

@test "--unicode uses suit symbols and joker cards" {
    run "$RIFFLE" deal --unicode --seed=4 -d 54
    [ "$status" -eq 0 ]
    [[ "$output" == *"♠"* ]] && [[ "$output" == *"♥"* ]] && [[ "$output" == *"♦"* ]] && [[ "$output" == *"♣"* ]]
    [[ "$output" == *"🃏"* ]] && [[ "$output" == *"🂿"* ]]
    [[ "$output" != *S\ * ]]
    # the same seed deals the same cards whatever the notation
    cmp <("$RIFFLE" deal --seed=4 -d 54 -u | sed 's/♠/S/g; s/♥/H/g; s/♦/D/g; s/♣/C/g; s/🃏/BJ/g; s/🂿/RJ/g') \
        <("$RIFFLE" deal --seed=4 -d 54)
}

@test "--json: valid JSON with the same deal" {
    command -v python3 >/dev/null || skip "python3 (the JSON checker) not installed"
    "$RIFFLE" deal --json --seed=8 -p holdem --players 3 > "$T/out.json"
    python3 - "$T/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["deck"] == 52
assert [h["name"] for h in d["hands"]] == ["player 1", "player 2", "player 3"]
assert all(len(h["cards"]) == 2 for h in d["hands"])
assert d["kitty"]["name"] == "board" and len(d["kitty"]["cards"]) == 5
cards = [c for h in d["hands"] for c in h["cards"]] + d["kitty"]["cards"]
assert len(set(cards)) == 11
PY
    text=$("$RIFFLE" deal --seed=8 -p holdem --players 3 | cards_of)
    json=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("\n".join(sorted([c for h in d["hands"] for c in h["cards"]] + d["kitty"]["cards"])))' "$T/out.json")
    [ "$text" = "$json" ]
    # custom card names are escaped
    "$RIFFLE" deal --json -H 1 'say "hi"' 'back\slash' > "$T/esc.json"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert sorted(d["hands"][0]["cards"]) == ["back\\slash", "say \"hi\""]' "$T/esc.json"
}

@test "usage errors of deal" {
    check() { run "$RIFFLE" deal "$@"; [ "$status" -eq 1 ]; [ "${lines[1]}" = "Try 'riffle deal --help' for more information." ]; }
    check --hands=0
    [ "${lines[0]}" = "riffle: the number of hands must be at least 1" ]
    check --hands=x
    [ "${lines[0]}" = "riffle: invalid number of hands: 'x'" ]
    check --hands=5 --cards=11
    [ "${lines[0]}" = "riffle: cannot deal 5 hands of 11 cards and a kitty of 0 from a deck of 52" ]
    check --hands=4 --cards=12 --kitty=5
    [ "${lines[0]}" = "riffle: cannot deal 4 hands of 12 cards and a kitty of 5 from a deck of 52" ]
    check --deck=53
    [ "${lines[0]}" = "riffle: invalid deck: '53' (52 or 54)" ]
    check --preset=poker
    [ "${lines[0]}" = "riffle: unknown preset 'poker' (bridge, holdem, doudizhu, blackjack or baccarat)" ]
    check --bogus
    [ "${lines[0]}" = "riffle deal: unrecognized option '--bogus'" ]
    check --deck=54 a b
    check --rng=nope
}

@test "deal: a missing deck file, an empty deck, --help, a write error" {
    run "$RIFFLE" deal --deck-file="$T/none"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: $T/none: No such file or directory" ]
    printf '\n\n' > "$T/empty"
    run "$RIFFLE" deal --deck-file="$T/empty"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: the deck is empty" ]
    run "$RIFFLE" deal --help
    [ "$status" -eq 0 ] && [[ "${lines[0]}" == "Usage: riffle deal "* ]]
    run bash -c '"$0" deal > /dev/full' "$RIFFLE"
    [ "$status" -eq 1 ] && [ "$output" = "riffle: write error: No space left on device" ]
}

@test "make demo's command works: riffle deal" {
    run "$RIFFLE" deal
    [ "$status" -eq 0 ] && [ -n "$output" ]
}
