#!/usr/bin/env bats
# riffle rank / riffle unrank: permutations as numbers and back -- identity 0,
# reversed n!-1 on both sides of the 64-bit limit (n = 20, 21) and for the
# 52-card deck, round trips, card names as riffle deal prints them, and every
# error path.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

flat() { tr '\n' ' ' | sed 's/ $//'; }

# Factorials, a table from mathematics (OEIS A000142), minus one.
F20_1=2432902008176639999
F21_1=51090942171709439999
F52_1=80658175170943878571660636856403766975289505440883277823999999999999
F52=80658175170943878571660636856403766975289505440883277824000000000000

# The 52 cards in riffle deal's deck order (spades, hearts, diamonds, clubs;
# A 2 .. 10 J Q K): card number i is the i-th of them.
deal_order() {
    for s in S H D C; do for r in A 2 3 4 5 6 7 8 9 10 J Q K; do printf '%s ' "$r$s"; done; done |
        sed 's/ $//'
}
reverse_words() { echo "$(cat)" | tr ' ' '\n' | tac | flat; }

@test "--help of rank and unrank" {
    run "$RIFFLE" rank --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle rank [OPTION]... [ITEM]..." ]]
    [[ "$output" == *"--one-based"* && "$output" == *"--cards"* ]]
    run "$RIFFLE" unrank --help
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Usage: riffle unrank --size=N [OPTION]... [RANK]" ]]
    [[ "$output" == *"--unicode"* ]]
}

@test "identity is 0 and the reversed permutation n!-1" {
    [ "$("$RIFFLE" rank 0)" = 0 ]
    [ "$("$RIFFLE" rank 0 1 2 3 4)" = 0 ]
    [ "$("$RIFFLE" rank 4 3 2 1 0)" = 119 ]
    [ "$("$RIFFLE" rank $(seq 0 19))" = 0 ]
    [ "$("$RIFFLE" rank $(seq 19 -1 0))" = $F20_1 ]
    [ "$("$RIFFLE" rank $(seq 0 20))" = 0 ]
    [ "$("$RIFFLE" rank $(seq 20 -1 0))" = $F21_1 ]
    [ "$("$RIFFLE" unrank --size 21 $F21_1 | flat)" = "$(seq 20 -1 0 | flat)" ]
    [ "$("$RIFFLE" unrank --size 21 0 | flat)" = "$(seq 0 20 | flat)" ]
}

@test "all 24 permutations of 4, in lexicographic order" {
    for r in $(seq 0 23); do "$RIFFLE" unrank --size 4 $r; done > "$T/all"
    [ "$(sort -u "$T/all" | wc -l)" -eq 24 ]
    sort "$T/all" | cmp - "$T/all"
    i=0
    while read -r line; do
        [ "$("$RIFFLE" rank $line)" = $i ]
        i=$((i + 1))
    done < "$T/all"
}

@test "the 52-card deck: deal order is 0, reversed is 52!-1" {
    [ "$("$RIFFLE" unrank --cards 0)" = "$(deal_order)" ]
    [ "$("$RIFFLE" rank $(deal_order))" = 0 ]
    [ "$("$RIFFLE" rank $(deal_order | reverse_words))" = $F52_1 ]
    [ "$("$RIFFLE" unrank --cards $F52_1)" = "$(deal_order | reverse_words)" ]
    run "$RIFFLE" unrank --cards $F52
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: rank '$F52' is out of range for size 52: it must be less than 52!" ]
}

@test "a dealt deck round-trips through its rank" {
    for seed in 1 2 hello; do
        deck=$("$RIFFLE" deal --seed=$seed -H 1 | sed 's/^[^:]*: //')
        r=$("$RIFFLE" rank $deck)
        [[ "$r" =~ ^[0-9]+$ ]]
        [ "$("$RIFFLE" unrank --cards "$r")" = "$deck" ]
        [ "$(echo "$deck" | "$RIFFLE" rank)" = "$r" ]
    done
}

@test "54 cards with jokers, unicode names, T and lower case" {
    deck=$("$RIFFLE" deal --deck 54 --seed=5 -H 1 | sed 's/^[^:]*: //')
    r=$("$RIFFLE" rank $deck)
    [ "$("$RIFFLE" unrank --cards --size 54 "$r")" = "$deck" ]
    [ "$("$RIFFLE" unrank --cards --size 54 0 | tr ' ' '\n' | tail -2 | flat)" = "BJ RJ" ]
    uni=$("$RIFFLE" deal -u --seed=5 -H 1 | sed 's/^[^:]*: //')
    r=$("$RIFFLE" rank $uni)
    [ "$r" = "$("$RIFFLE" rank $("$RIFFLE" deal --seed=5 -H 1 | sed 's/^[^:]*: //'))" ]
    [ "$("$RIFFLE" unrank --cards -u "$r")" = "$uni" ]
    # T is 10, letters in any case
    lower=$(deal_order | reverse_words | sed 's/10/T/g' | tr 'A-Z' 'a-z')
    [ "$("$RIFFLE" rank $lower)" = $F52_1 ]
    [ "$("$RIFFLE" rank --cards $lower)" = $F52_1 ]
}

@test "round trips at random ranks, small and big n" {
    for n in 3 10 20 21 60 200; do
        p=$("$RIFFLE" perm --size $n --seed=$n $(seq 0 $((n - 1))) | flat)
        r=$("$RIFFLE" rank $p)
        [ "$("$RIFFLE" unrank --size $n "$r" | flat)" = "$p" ]
        # --size agrees, and standard input with newlines and commas too
        [ "$("$RIFFLE" rank --size $n $p)" = "$r" ]
        [ "$(echo "$p" | tr ' ' ',' | "$RIFFLE" rank)" = "$r" ]
        [ "$(echo "$p" | tr ' ' '\n' | "$RIFFLE" rank)" = "$r" ]
        # and from the pipe into unrank
        [ "$(echo "$r" | "$RIFFLE" unrank --size $n | flat)" = "$p" ]
    done
}

@test "one argument may hold the whole permutation; leading zeros in a rank" {
    [ "$("$RIFFLE" rank "2 0 1")" = 4 ]
    [ "$("$RIFFLE" rank "2,0,1")" = 4 ]
    [ "$("$RIFFLE" unrank --size 3 0004)" = "2 0 1" ]
}

@test "--one-based numbers 1..n" {
    [ "$("$RIFFLE" rank -1 1 2 3)" = 0 ]
    [ "$("$RIFFLE" rank --one-based 3 1 2)" = 4 ]
    [ "$("$RIFFLE" unrank --one-based --size 3 4)" = "3 1 2" ]
    run "$RIFFLE" rank -1 0 1 2
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid permutation: item 1 is '0', not in 1..3" ]
    run "$RIFFLE" rank 1 2 3
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid permutation: item 3 is '3', not in 0..2" ]
}

@test "invalid permutations: repeats, out of range, wrong count" {
    run "$RIFFLE" rank 0 2 1 2
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid permutation: item 4 ('2') repeats item 2" ]
    run "$RIFFLE" rank 0 1 99999999999999999999999
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid permutation: item 3 is '99999999999999999999999', not in 0..2" ]
    run "$RIFFLE" rank --size 4 0 1 2
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid permutation: 3 items, expected 4" ]
    run "$RIFFLE" rank 0 x 1
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid number 'x' (item 2)" ]
    run "$RIFFLE" rank 0 -- -1
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid number '-1' (item 2)" ]
    run "$RIFFLE" rank < /dev/null
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: no permutation given" ]
}

@test "invalid decks: unknown, repeated and missing cards, jokers in 52" {
    run "$RIFFLE" rank AS KH 10D
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid deck: 3 cards, expected 52 (or 54 with jokers)" ]
    run "$RIFFLE" rank AS XX
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid card 'XX' (item 2)" ]
    run "$RIFFLE" rank --cards 1 2
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid card '1' (item 1)" ]
    deck=$(deal_order | sed 's/KC/AS/')
    run "$RIFFLE" rank $deck
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid permutation: item 52 ('AS') repeats item 1" ]
    deck=$(deal_order | sed 's/KC/BJ/')
    run "$RIFFLE" rank $deck
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid permutation: item 52 is 'BJ', not in a 52-card deck" ]
}

@test "unrank errors" {
    run "$RIFFLE" unrank 3
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: missing --size=N" ]
    [ "${lines[1]}" = "Try 'riffle unrank --help' for more information." ]
    run "$RIFFLE" unrank --size 3 6
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: rank '6' is out of range for size 3: it must be less than 3!" ]
    run "$RIFFLE" unrank --size 3 x
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid rank 'x'" ]
    run "$RIFFLE" unrank --size 3 -- -1
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: invalid rank '-1'" ]
    run "$RIFFLE" unrank --size 0 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size '0': at least 1" ]
    run "$RIFFLE" unrank --size y 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size 'y'" ]
    run "$RIFFLE" unrank --size 99999999999999999999 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid size '99999999999999999999': too large" ]
    run "$RIFFLE" unrank --size 3 1 2
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: extra operand '2'" ]
    run "$RIFFLE" unrank --cards --size 53 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --cards needs --size=52 or --size=54" ]
    run "$RIFFLE" unrank --size 3 -u 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --unicode needs --cards" ]
    run "$RIFFLE" unrank --size 3 < /dev/null
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: no rank given" ]
    run bash -c "echo 1 2 | '$RIFFLE' unrank --size 3"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:3: extra input '2' after the rank" ]
    run "$RIFFLE" rank -u 0
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle rank: invalid option -- 'u'" ]
    [ "${lines[1]}" = "Try 'riffle rank --help' for more information." ]
}

@test "write errors are reported" {
    [ -w /dev/full ] || skip "no /dev/full"
    run bash -c "'$RIFFLE' rank 1 0 > /dev/full"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: write error: "* ]]
    run bash -c "'$RIFFLE' unrank --size 3 1 > /dev/full"
    [ "$status" -eq 1 ]
    [[ "$output" == "riffle: write error: "* ]]
}
