#!/usr/bin/env bats
# The seed contract of riffle: with --seed the output
# is a function of the seed and the input only -- not of where the input comes
# from -- and -n K is the head of the full shuffle.  Golden outputs pin the
# stream (the keyed order, riffle.h): they were generated once by this
# implementation, the ChaCha20 integer-seed one agrees with the independent
# tests/keyed_reference.py, and they must never change without a major
# version.

setup() {
    : "${RIFFLE:=${BUILD:-build}/riffle}"
    export LC_ALL=C
    T="$BATS_TEST_TMPDIR"
}

flat() { tr '\n' ' ' | sed 's/ $//'; }

@test "golden: integer seed, ChaCha20 (the default)" {
    [ "$(seq 20 | "$RIFFLE" --seed=42 | flat)" = \
      "18 12 15 20 13 4 10 6 16 17 1 19 7 5 3 11 8 9 14 2" ]
}

@test "golden: string seed" {
    [ "$(seq 20 | "$RIFFLE" --seed=hello | flat)" = \
      "4 17 5 7 1 3 13 12 15 2 20 6 8 11 14 10 18 16 9 19" ]
}

@test "golden: --rng=xoshiro256++ and --rng=pcg64" {
    [ "$(seq 20 | "$RIFFLE" --seed=42 --rng=xoshiro256++ | flat)" = \
      "10 18 4 19 3 1 13 2 6 14 7 15 9 16 11 17 12 20 5 8" ]
    [ "$(seq 20 | "$RIFFLE" --seed=42 --rng=pcg64 | flat)" = \
      "18 15 11 2 5 13 4 8 14 12 6 10 3 19 7 1 16 20 9 17" ]
}

@test "golden: the largest integer seed; one more is a string seed" {
    [ "$("$RIFFLE" --seed=18446744073709551615 -i 1-20 | flat)" = \
      "2 9 3 20 5 8 12 6 4 15 19 14 18 11 13 1 17 10 16 7" ]
    [ "$("$RIFFLE" --seed=18446744073709551616 -i 1-20 | flat)" = \
      "13 6 1 16 20 11 12 8 17 2 19 9 15 4 18 5 10 7 14 3" ]
}

@test "golden: -r draws record rf_below(n) each time" {
    [ "$("$RIFFLE" --seed=7 -r -n 10 -i 1-1000 | flat)" = \
      "863 805 743 762 300 638 918 425 59 236" ]
}

@test "golden: --random-source uses the file's first 32 bytes as the key" {
    printf 'ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`' > "$T/key"
    [ "$(wc -c < "$T/key")" -eq 32 ]
    [ "$("$RIFFLE" --random-source="$T/key" -i 1-20 | flat)" = \
      "17 19 20 9 18 8 6 11 14 13 7 12 16 2 5 3 10 1 15 4" ]
    # bytes after the 32nd are not read
    { cat "$T/key"; echo trailing; } > "$T/key2"
    cmp <("$RIFFLE" --random-source="$T/key" -i 1-50) <("$RIFFLE" --random-source="$T/key2" -i 1-50)
}

@test "a short --random-source is an error; a missing one too" {
    printf 'short' > "$T/key"
    run "$RIFFLE" --random-source="$T/key" -i 1-3
    [ "$status" -eq 1 ] && [ "$output" = "riffle: '$T/key': end of file" ]
    run "$RIFFLE" --random-source=/dev/null -e a
    [ "$status" -eq 1 ] && [ "$output" = "riffle: '/dev/null': end of file" ]
    run "$RIFFLE" --random-source="$T/none" -e a
    [ "$status" -eq 1 ] && [ "$output" = "riffle: $T/none: No such file or directory" ]
    run "$RIFFLE" --random-source="$T" -e a
    [ "$status" -eq 1 ] && [ "$output" = "riffle: '$T': read error: Is a directory" ]
}

@test "file, stdin, pipe, -e and -i give the same output" {
    seq 1000 > "$T/in"
    "$RIFFLE" --seed=99 "$T/in" > "$T/file"
    "$RIFFLE" --seed=99 < "$T/in" > "$T/stdin"
    cat "$T/in" | "$RIFFLE" --seed=99 > "$T/pipe"
    "$RIFFLE" --seed=99 -e $(seq 1000) > "$T/echo"
    "$RIFFLE" --seed=99 -i 1-1000 > "$T/range"
    for f in stdin pipe echo range; do cmp "$T/file" "$T/$f"; done
    ! cmp -s "$T/file" "$T/in"
}

@test "-n K is exactly the first K lines of the full shuffle" {
    seq 5000 > "$T/in"
    "$RIFFLE" --seed=abc "$T/in" > "$T/full"
    for k in 1 2 10 999 4999 5000 7000; do
        cmp <("$RIFFLE" --seed=abc -n "$k" "$T/in") <(head -n "$k" "$T/full")
        cmp <("$RIFFLE" --seed=abc -n "$k" < "$T/in") <(head -n "$k" "$T/full")
        cmp <("$RIFFLE" --seed=abc -n "$k" -i 1-5000) <(head -n "$k" "$T/full")
    done
}

@test "-z gives the same order as lines" {
    seq 300 > "$T/in"
    seq 300 | tr '\n' '\0' > "$T/inz"
    cmp <("$RIFFLE" --seed=5 "$T/in") <("$RIFFLE" --seed=5 -z "$T/inz" | tr '\0' '\n')
}

@test "--header: the rest is the seeded shuffle of the lines after the header" {
    { echo name; seq 100; } > "$T/in"
    seq 100 > "$T/body"
    cmp <("$RIFFLE" --seed=3 --header=1 "$T/in" | tail -n +2) <("$RIFFLE" --seed=3 "$T/body")
    cmp <("$RIFFLE" --seed=3 --header=1 -n 5 "$T/in" | tail -n +2) <("$RIFFLE" --seed=3 -n 5 "$T/body")
}

@test "the same seed and input give the same output; other seeds differ" {
    seq 100 > "$T/in"
    cmp <("$RIFFLE" --seed=1 "$T/in") <("$RIFFLE" --seed=1 "$T/in")
    ! cmp -s <("$RIFFLE" --seed=1 "$T/in") <("$RIFFLE" --seed=2 "$T/in")
    # decimal integers: leading zeros do not matter
    cmp <("$RIFFLE" --seed=7 "$T/in") <("$RIFFLE" --seed=007 "$T/in")
    # a non-decimal seed is a string seed, distinct from the integer
    ! cmp -s <("$RIFFLE" --seed=7 "$T/in") <("$RIFFLE" --seed=+7 "$T/in")
}

@test "without a seed, runs differ (OS entropy)" {
    seq 100 > "$T/in"
    # two equal orders of 100 lines by chance: probability 1/100!
    ! cmp -s <("$RIFFLE" "$T/in") <("$RIFFLE" "$T/in")
    ! cmp -s <("$RIFFLE" --rng=pcg64 "$T/in") <("$RIFFLE" --rng=pcg64 "$T/in")
}

@test "--rng: names, aliases, and an unknown name" {
    seq 50 > "$T/in"
    cmp <("$RIFFLE" --seed=1 --rng=xoshiro "$T/in") <("$RIFFLE" --seed=1 --rng=xoshiro256++ "$T/in")
    cmp <("$RIFFLE" --seed=1 --rng=chacha "$T/in") <("$RIFFLE" --seed=1 "$T/in")
    run "$RIFFLE" --rng=mt19937 -e a
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: invalid generator 'mt19937' (chacha20, xoshiro256++ or pcg64)" ]
    [ "${lines[1]}" = "Try 'riffle --help' for more information." ]
}

@test "--seed with --random-source, and two different seeds, are errors" {
    run "$RIFFLE" --seed=1 --random-source=/dev/urandom -e a
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "riffle: --seed and --random-source cannot be combined" ]
    run "$RIFFLE" --seed=1 --seed=2 -e a
    [ "$status" -eq 1 ] && [ "$output" = "riffle: multiple seeds specified" ]
}

@test "golden: -i over 2^20 numbers is a seeded keyed permutation" {
    [ "$("$RIFFLE" -i 0-999999999999 -n 5 --seed=1 | flat)" = \
      "30749850352 258405798329 821598148682 679500113918 689124661856" ]
    [ "$("$RIFFLE" -i 0-18446744073709551615 -n 3 --seed=1 | flat)" = \
      "890583628705677739 16117906322084680832 2741769386602134356" ]
    [ "$("$RIFFLE" -i 1-1048581 --seed=3 -n 8 | flat)" = \
      "509090 663517 612151 254927 745547 594518 191213 802834" ]
}

@test "-i over 2^20 numbers: -n K is the head of the full output" {
    cmp <("$RIFFLE" -i 0-999999999999 -n 5 --seed=1) \
        <("$RIFFLE" -i 0-999999999999 --seed=1 | head -n 5)
    for k in 1 511 512 513 1500; do
        cmp <("$RIFFLE" -i 7-1048583 -n "$k" --seed=abc) \
            <("$RIFFLE" -i 7-1048583 --seed=abc | head -n "$k")
    done
}

@test "-i over 2^20 numbers is LO + riffle perm's p(i), keyed as --seed keys" {
    # the same key rule (integer and string seeds), whatever --rng says
    for seed in 1 hello 18446744073709551616; do
        want=$("$RIFFLE" perm --size 1000000000000 --seed=$seed $(seq 0 9) |
               while read -r v; do echo $((v + 5)); done | flat)
        [ "$("$RIFFLE" -i 5-1000000000004 -n 10 --seed=$seed | flat)" = "$want" ]
        [ "$("$RIFFLE" -i 5-1000000000004 -n 10 --seed=$seed --rng=pcg64 | flat)" = "$want" ]
    done
    # just above the threshold (2^20 + 1) -i is the cipher, as perm is
    [ "$("$RIFFLE" -i 0-1048576 -n 4 --seed=5 | flat)" = \
      "$("$RIFFLE" perm --size 1048577 --seed=5 0 1 2 3 | flat)" ]
    # 2^20 numbers are still shuffled in memory: the keyed order of seq's lines
    cmp <("$RIFFLE" -i 1-1048576 --seed=9 | head -n 1000) <(seq 1048576 | "$RIFFLE" --seed=9 | head -n 1000)
}

@test "-i over 2^20 numbers with --random-source: its first 32 bytes are the key" {
    printf 'ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`' > "$T/key"
    { cat "$T/key"; echo trailing; } > "$T/key2"
    printf 'abcdefghijklmnopqrstuvwxyz{|}~!?' > "$T/key3"
    a=$("$RIFFLE" --random-source="$T/key" -i 1-5000000 -n 20 | flat)
    [ "$(echo "$a" | wc -w)" -eq 20 ]
    [ "$("$RIFFLE" --random-source="$T/key2" -i 1-5000000 -n 20 | flat)" = "$a" ]
    [ "$("$RIFFLE" --random-source="$T/key3" -i 1-5000000 -n 20 | flat)" != "$a" ]
    [ "$("$RIFFLE" --random-source="$T/key" -i 1-5000000 -n 3 | flat)" = "3417355 475760 2904114" ]
    printf 'short' > "$T/short"
    run "$RIFFLE" --random-source="$T/short" -i 1-5000000
    [ "$status" -eq 1 ] && [ "$output" = "riffle: '$T/short': end of file" ]
    # without a seed: OS entropy, two runs differ
    [ "$("$RIFFLE" -i 0-18446744073709551615 -n 4 | flat)" != "$("$RIFFLE" -i 0-18446744073709551615 -n 4 | flat)" ]
}
