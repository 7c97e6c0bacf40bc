#!/usr/bin/env bats
# The parsers of riffle's input and options held to their grammar: a byte no
# number or card may hold (NUL above all) is an error naming its line and
# column, never the silent end of a token; tiny and huge weights drawn as
# their ratios say; JSON that is always valid UTF-8; the equivalences the
# documentation promises between `riffle perm` and `riffle -i`; shuf's
# quoting and repeated-option rules; and the CLI cases of sanitizer reports.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

flat() { tr '\n' ' ' | sed 's/ $//'; }

# ---- bytes outside the grammar ----

@test "rank: a NUL inside the input is an error at its line and column" {
    run bash -c "printf '1 0\\0002\\n' | '$RIFFLE' rank"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:4: invalid byte '\\000'" ]
    # the same items without the NUL byte: the rank of 1 0 2 is 2
    [ "$(printf '1 0 2\n' | "$RIFFLE" rank)" = 2 ]
    run bash -c "printf '0 1\\n2,\\0013\\n' | '$RIFFLE' rank"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:3: invalid byte '\\001'" ]
}

@test "perm: a NUL ends no index silently" {
    run bash -c "printf '3\\000x\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:2: invalid byte '\\000'" ]
    # what came before the bad line is printed, as for any bad index
    run bash -c "printf '3\\n\\n 4\\000\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "$("$RIFFLE" perm -s 10 --seed=1 3)" ]
    [ "${lines[1]}" = "riffle: -:3:3: invalid byte '\\000'" ]
    run bash -c "printf '3\\177\\n' | '$RIFFLE' perm -s 10 --seed=1"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:2: invalid byte '\\177'" ]
}

@test "unrank: a NUL after the rank is an error" {
    run bash -c "printf '1\\0009\\n' | '$RIFFLE' unrank -s 3"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:1:2: invalid byte '\\000'" ]
    # blanks of every kind (CR included) still separate
    [ "$(printf '1 0 2\r\n' | "$RIFFLE" rank)" = 2 ]
    [ "$(printf '\t1\r\n' | "$RIFFLE" unrank -s 3 | flat)" = "0 2 1" ]
}

@test "sample: a NUL in a weight field is an error at its line and column" {
    run bash -c "printf 'a 1\\nb 3\\000x\\n' | '$RIFFLE' sample -n 2 -w 2 --seed=1"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: -:2:4: invalid byte '\\000'" ]
    printf 'a,1\nb,\0002\n' > "$T/w"
    run "$RIFFLE" sample -n 1 -w 2 -d , --seed=1 "$T/w"
    [ "$status" -eq 1 ]
    [ "$output" = "riffle: $T/w:2:3: invalid byte '\\000'" ]
    # a NUL elsewhere in the record is data, not a weight
    printf 'a\0b 1\n' > "$T/d"
    "$RIFFLE" sample -n 1 -w 2 --seed=1 "$T/d" | cmp - "$T/d"
}

# ---- weights at the ends of the double range ----

@test "sample: two equal subnormal weights are drawn half and half" {
    printf 'a 1e-310\nb 1e-310\n' > "$T/w"
    # fixed seeds: a binomial(200, 1/2) count, 70..130 is beyond 4 sigma
    a=$(for s in $(seq 1 200); do "$RIFFLE" sample -n 1 -w 2 --seed=$s "$T/w"; done | grep -c '^a')
    echo "first item chosen $a times of 200"
    [ "$a" -ge 70 ]
    [ "$a" -le 130 ]
    # a huge weight first, then the tiny ones in their own ratio
    printf 'h 1e308\nt 1e-310\n' > "$T/m"
    [ "$("$RIFFLE" sample -n 2 -w 2 --seed=1 "$T/m" | flat)" = "h 1e308 t 1e-310" ]
}
