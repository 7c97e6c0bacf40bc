#!/usr/bin/env bats
# Standard input is a stream read once, whichever engine runs: named twice
# ("- -") it is read the first time and found at its end the second time, as
# `cat - -` does, so the seeded output does not depend on the engine; and a
# regular file given as standard input is left positioned after what riffle
# consumed (its end), as GNU shuf leaves it, so a command that goes on
# reading it finds nothing read twice.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
    mkdir -p "$T/tmp"
    seq 250000 > "$T/in"
}

# the engines: in memory, external (a budget far below the input), the
# streamed head (a count)
engines() {
    printf '%s\n' "" "--memory=256K -T $T/tmp" "-n 1000000"
}

@test "- - reads standard input once, on every engine: the same output" {
    "$RIFFLE" --seed=1 - < "$T/in" > "$T/once"
    [ "$(wc -l < "$T/once")" -eq 250000 ]
    engines | while read -r e; do
        "$RIFFLE" --seed=1 $e - - < "$T/in" > "$T/twice"
        cmp "$T/once" "$T/twice"
    done
    [ -z "$(ls -A "$T/tmp")" ]
}

@test "a regular file as standard input is left at its end, on every engine" {
    engines | while read -r e; do
        for n in "" "-n 5"; do
            left=$( { "$RIFFLE" --seed=2 $e $n - > /dev/null; wc -l; } < "$T/in" )
            [ "$left" -eq 0 ]
        done
    done
}
